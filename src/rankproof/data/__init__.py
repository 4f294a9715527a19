"""Data: `Run` and `Qrels`, and readers/writers for every supported format."""

from rankproof.data._model import Qrels, Run
from rankproof.data._trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run

__all__ = [
    "Qrels",
    "Run",
    "read_trec_qrels",
    "read_trec_run",
    "write_trec_qrels",
    "write_trec_run",
]
