"""rankproof: did that change make retrieval better, or did the number just move?

The flat namespace holds what most scripts need; the subpackages hold the rest:
``rankproof.data`` (formats, corpus, judgments), ``rankproof.measures``,
``rankproof.stats``, ``rankproof.retrieval``, ``rankproof.harness``,
``rankproof.targets``.
"""

from rankproof._errors import ConfigError, InputError, PairingError, RankproofError, TargetError
from rankproof._version import __version__
from rankproof.data import Qrels, Run, load_qrels, load_run, read_trec_qrels, read_trec_run
from rankproof.measures import Measure, PerQuery, evaluate, parse
from rankproof.stats import Comparison, PairedResult, compare, correct, paired_test

__all__ = [
    "Comparison",
    "ConfigError",
    "InputError",
    "Measure",
    "PairedResult",
    "PairingError",
    "PerQuery",
    "Qrels",
    "RankproofError",
    "Run",
    "TargetError",
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
