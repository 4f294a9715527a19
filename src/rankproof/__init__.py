"""rankproof: did that change make retrieval better, or did the number just move?

The flat namespace holds what most scripts need; the subpackages hold the rest:
``rankproof.data`` (runs, qrels and their formats), ``rankproof.corpus``
(documents, judgments, collections), ``rankproof.measures`` (the one metric
namespace), ``rankproof.stats``, ``rankproof.comparison``, ``rankproof.retrieval``,
``rankproof.targets``, ``rankproof.harness``, ``rankproof.gate`` and
``rankproof.report``.

Names are imported on first use (PEP 562), so ``import rankproof`` — which
pytest does in every session through the ``rankproof_gate`` plugin — costs
only the exception classes until something is actually used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from rankproof._errors import (
    ConfigError,
    InputError,
    MissingExtraError,
    NotComputedError,
    PairingError,
    RankproofError,
    TargetError,
    UserCodeError,
)
from rankproof._version import __version__

if TYPE_CHECKING:
    from rankproof.comparison import Comparison, compare
    from rankproof.data import Qrels, Run, load_qrels, load_run, read_trec_qrels, read_trec_run
    from rankproof.measures import Measure, PerQuery, evaluate, parse
    from rankproof.stats import PairedResult, StatSettings, correct, paired_test

_LAZY = {
    "Qrels": "rankproof.data", "Run": "rankproof.data", "load_qrels": "rankproof.data",
    "load_run": "rankproof.data", "read_trec_qrels": "rankproof.data",
    "read_trec_run": "rankproof.data",
    "Measure": "rankproof.measures", "PerQuery": "rankproof.measures",
    "evaluate": "rankproof.measures", "parse": "rankproof.measures",
    "Comparison": "rankproof.comparison", "PairedResult": "rankproof.stats",
    "compare": "rankproof.comparison", "correct": "rankproof.stats",
    "paired_test": "rankproof.stats", "StatSettings": "rankproof.stats",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rankproof' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Comparison",
    "ConfigError",
    "InputError",
    "Measure",
    "MissingExtraError",
    "NotComputedError",
    "PairedResult",
    "PairingError",
    "PerQuery",
    "Qrels",
    "RankproofError",
    "Run",
    "StatSettings",
    "TargetError",
    "UserCodeError",
    "__version__",
    "compare",
    "correct",
    "evaluate",
    "load_qrels",
    "load_run",
    "paired_test",
    "parse",
    "read_trec_qrels",
    "read_trec_run",
]
