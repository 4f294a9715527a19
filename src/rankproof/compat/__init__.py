"""Migration layers: the seed systems' APIs, spelled as they spell them, over rankproof's own.

* `rankproof.compat.evalkit` — paired-evalkit's ``run``, ``paired_bootstrap``
  (``seed=42``), ``register_metric``/``register_aggregate``, golden sets,
  targets and checks;
* `rankproof.compat.groundkit` — groundkit's ``paired_bootstrap``
  (``seed=7``, achieved-significance-level p, interval-decided
  ``significant``), ``compare_report_stages`` and ``adapt_beir_dataset``;
* `rankproof.compat.ireval` — ir.eval's capability-discovery calls (seed 004)
  over `rankproof.discovery`: its modes (``lexical``), surfaces, search
  keywords and dict-shaped results.

Each is a *thin* layer: argument and field names are translated, and the
seeds' semantics are selected where rankproof's core offers them as named
options (``bootstrap_p="asl"``, ``layout="groundkit"``,
``query_ids="refuse"``, ``family_word=True``); nothing is computed a second
time here. What differs from the seeds, and why, is in ``docs/compat.md``.

Nothing in rankproof imports this package, and importing it loads nothing:
the two modules are imported on first access (``rankproof.compat.evalkit``
or ``from rankproof.compat import groundkit``).
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["evalkit", "groundkit", "ireval"]


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
