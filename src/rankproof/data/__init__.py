"""Data: `Run` and `Qrels`, their readers and writers for every supported format, and
trec_eval's rank order (a property of a run, so it lives with the run).

Corpora, chunking, judgments and collections live in `rankproof.corpus`.
"""

from rankproof.data._beir import read_beir_qrels, read_beir_run, write_beir_qrels, write_beir_run
from rankproof.data._frames import (
    qrels_from_arrow,
    qrels_from_pandas,
    run_from_arrow,
    run_from_pandas,
)
from rankproof.data._jsonio import (
    read_json_qrels,
    read_json_run,
    read_jsonl_qrels,
    read_jsonl_run,
    write_json_qrels,
    write_json_run,
    write_jsonl_qrels,
    write_jsonl_run,
)
from rankproof.data._load import Format, load_qrels, load_run, sniff_format
from rankproof.data._model import Qrels, Run
from rankproof.data._order import RankedOrder, ranked_order
from rankproof.data._trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run

__all__ = [
    "Format",
    "Qrels",
    "RankedOrder",
    "Run",
    "load_qrels",
    "load_run",
    "qrels_from_arrow",
    "qrels_from_pandas",
    "ranked_order",
    "read_beir_qrels",
    "read_beir_run",
    "read_json_qrels",
    "read_json_run",
    "read_jsonl_qrels",
    "read_jsonl_run",
    "read_trec_qrels",
    "read_trec_run",
    "run_from_arrow",
    "run_from_pandas",
    "sniff_format",
    "write_beir_qrels",
    "write_beir_run",
    "write_json_qrels",
    "write_json_run",
    "write_jsonl_qrels",
    "write_jsonl_run",
    "write_trec_qrels",
    "write_trec_run",
]
