"""Shared test data and test doubles for the retrieval tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

DOCS: list[tuple[str, str]] = [
    ("bees", "Honey bees pollinate flowers and produce honey in their hives."),
    ("volcano", "A volcano erupts when magma rises through the crust and lava flows out."),
    ("python", "Python is a programming language; programmers write Python code."),
    ("trains", "High-speed trains connect the cities, running on electrified railways."),
    ("bread", "Bakers knead dough, let it rise, and bake the bread in hot ovens."),
    ("chess", "Chess players plan openings, and a grandmaster calculates many moves ahead."),
    ("rivers", "Rivers carry water from the mountains down to the sea."),
    ("stars", "Stars shine because nuclear fusion burns hydrogen into helium in their cores."),
]

QUERIES: list[tuple[str, str]] = [
    ("q-honey", "how do bees make honey"),
    ("q-lava", "lava flowing from an erupting volcano"),
    ("q-code", "writing code in a programming language"),
    ("q-bake", "baking bread"),
    ("q-none", "the and of"),  # stop words only: BM25 retrieves nothing
]


class TableEmbedder:
    """A test double that returns given vectors: exact, hand-chosen geometry."""

    notes: tuple[str, ...] = ("table embedder (test)",)

    def __init__(self, table: dict[str, npt.NDArray[np.float32]], dim: int,
                 model_id: str = "table") -> None:
        self.table = table
        self.dim = dim
        self.model_id = model_id
        self.calls = 0

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
        self.calls += 1
        return np.stack([self.table[t] for t in texts]).astype(np.float32)
