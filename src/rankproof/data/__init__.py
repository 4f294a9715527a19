"""Data: `Run` and `Qrels`, and readers/writers for every supported format."""

from rankproof.data._beir import read_beir_qrels, read_beir_run, write_beir_qrels, write_beir_run
from rankproof.data._beir_adapt import BeirAdaptation, adapt_beir
from rankproof.data._collections import (
    Collection,
    golden_corpus,
    load_collection,
    read_glasgow,
    read_vaswani,
)
from rankproof.data._corpus import Chunk, Corpus, Document, read_corpus
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
from rankproof.data._judgments import (
    Gold,
    JudgedQuery,
    Judgments,
    read_judgments,
    write_judgments,
)
from rankproof.data._load import Format, load_qrels, load_run, sniff_format
from rankproof.data._model import Qrels, Run
from rankproof.data._trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run

__all__ = [
    "BeirAdaptation",
    "Chunk",
    "Collection",
    "Corpus",
    "Document",
    "Format",
    "Gold",
    "JudgedQuery",
    "Judgments",
    "Qrels",
    "Run",
    "adapt_beir",
    "golden_corpus",
    "load_collection",
    "load_qrels",
    "load_run",
    "qrels_from_arrow",
    "qrels_from_pandas",
    "read_beir_qrels",
    "read_beir_run",
    "read_corpus",
    "read_glasgow",
    "read_json_qrels",
    "read_json_run",
    "read_jsonl_qrels",
    "read_jsonl_run",
    "read_judgments",
    "read_trec_qrels",
    "read_trec_run",
    "read_vaswani",
    "run_from_arrow",
    "run_from_pandas",
    "sniff_format",
    "write_beir_qrels",
    "write_beir_run",
    "write_json_qrels",
    "write_json_run",
    "write_jsonl_qrels",
    "write_jsonl_run",
    "write_judgments",
    "write_trec_qrels",
    "write_trec_run",
]
