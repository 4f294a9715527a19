"""rankproof: did that change make retrieval better, or did the number just move?"""

from rankproof._errors import ConfigError, InputError, PairingError, RankproofError, TargetError
from rankproof._version import __version__
from rankproof.data import Qrels, Run, read_trec_qrels, read_trec_run
from rankproof.measures import Measure, PerQuery, evaluate, parse

__all__ = [
    "ConfigError",
    "InputError",
    "Measure",
    "PairingError",
    "PerQuery",
    "Qrels",
    "RankproofError",
    "Run",
    "TargetError",
    "__version__",
    "evaluate",
    "parse",
    "read_trec_qrels",
    "read_trec_run",
]
