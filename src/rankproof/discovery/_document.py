"""The versioned JSON document `rankproof discover` writes, and the bundled example's paths.

One document holds whatever was asked for (the discovery report, the
calibrated floor, the selector sweep, the distractor curve) beside the
provenance block every rankproof report carries (tool and package versions,
git state, machine, seed) and the identity of what was searched, so a number
is always read with the configuration that produced it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rankproof._manifest import provenance
from rankproof.stats import Result

KIND = "rankproof.discovery"
SCHEMA_VERSION = 1
EXAMPLE_DIR = Path(__file__).resolve().parent / "example"
"""The bundled example: ``catalog.jsonl`` (153 tools), ``cases.jsonl``, ``themes.jsonl``."""
EXAMPLE_CATALOG = EXAMPLE_DIR / "catalog.jsonl"
EXAMPLE_CASES = EXAMPLE_DIR / "cases.jsonl"
EXAMPLE_THEMES = EXAMPLE_DIR / "themes.jsonl"


def discovery_document(*, identity: dict[str, Any], seed: int = 0,
                       inputs: dict[str, str | Path] | None = None,
                       **parts: Result | None) -> dict[str, Any]:
    """``{"kind", "schema_version", "provenance", "identity", <part>: ...}`` for the parts given.

    ``parts`` are results by name (``discovery=``, ``calibration=``,
    ``sweep=``, ``curve=``, ``comparison=``); None ones are left out.
    """
    doc: dict[str, Any] = {"kind": KIND, "schema_version": SCHEMA_VERSION,
                           "provenance": provenance(seed=seed, inputs=inputs),
                           "identity": identity}
    for name, part in parts.items():
        if part is not None:
            doc[name] = part.to_dict()
    return doc
