"""What the discovery benchmarks run on: the bundled example, or a generated catalogue."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rankproof.discovery import (
    EXAMPLE_CASES,
    EXAMPLE_CATALOG,
    Catalog,
    CatalogItem,
    DiscoveryCase,
    load_cases,
    load_catalog,
)


def generated(seed: int = 0, n_items: int = 200, n_cases: int = 100,
              abstain_every: int | None = None) -> tuple[Catalog, list[DiscoveryCase], str]:
    """Items share a common vocabulary plus two words of their own; queries mix both.

    With ``abstain_every``, every such case (the last of each group) is an abstention
    case made of common words only.
    """
    rng = np.random.default_rng(seed)
    common = [f"w{i}" for i in range(300)]
    items = []
    for i in range(n_items):
        words = [*rng.choice(common, 30).tolist(), f"own{i}a", f"own{i}b"]
        items.append(CatalogItem(f"tool-{i:03d}", f"Tool {i}", " ".join(words), (f"t{i % 7}",)))
    cases = []
    for j in range(n_cases):
        if abstain_every and j % abstain_every == abstain_every - 1:
            cases.append(DiscoveryCase(" ".join(rng.choice(common, 4).tolist()) + " nothing"))
            continue
        i = int(rng.integers(n_items))
        cases.append(DiscoveryCase(" ".join(rng.choice(items[i].text.split(), 5).tolist()),
                                   (items[i].id,)))
    return Catalog(tuple(items), name="generated"), cases, f"generated (seed {seed})"


def data(**fallback: int) -> tuple[Catalog, list[DiscoveryCase], str]:
    """The bundled example when it is there, else `generated` with ``fallback``'s sizes."""
    if Path(EXAMPLE_CATALOG).is_file() and Path(EXAMPLE_CASES).is_file():
        return load_catalog(EXAMPLE_CATALOG), load_cases(EXAMPLE_CASES), "bundled example"
    return generated(**fallback)  # type: ignore[arg-type]
