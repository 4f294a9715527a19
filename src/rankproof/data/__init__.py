"""Data: `Run` and `Qrels`, their readers and writers for every supported format, and
trec_eval's rank order (a property of a run, so it lives with the run).

It also holds the project's one reader stack, which `rankproof.corpus` and
the packages above use too: `Input` (bytes → gunzip by content → BOM →
UTF-8 → lines; ``-`` for standard input), `read_jsonl` (one policy for JSON
Lines), `read_model` (JSON/YAML files validated by a pydantic model) and
`load_yaml` (YAML within the depth, alias and integer bounds of
``rankproof._limits``, for readers that track lines themselves).

Corpora, chunking, judgments and collections live in `rankproof.corpus`.
"""

from rankproof.data._beir import read_beir_qrels, read_beir_run, write_beir_qrels, write_beir_run
from rankproof.data._bounds import (
    LinedDict,
    YamlBoundError,
    load_lined_yaml,
    load_yaml,
    read_config_text,
)
from rankproof.data._canonical import canonical_run, check_canonical, is_canonical
from rankproof.data._files import parse_document, read_document, read_model, validate_model
from rankproof.data._frames import (
    qrels_from_arrow,
    qrels_from_pandas,
    run_from_arrow,
    run_from_pandas,
)
from rankproof.data._irds import (
    IRDS_PREFIX,
    irds_documents,
    irds_files,
    irds_qrels_input,
    irds_queries,
    is_irds,
    max_irds_docs,
)
from rankproof.data._jsondoc import read_json_qrels, read_json_run
from rankproof.data._jsonio import (
    read_jsonl_qrels,
    read_jsonl_run,
    write_json_qrels,
    write_json_run,
    write_jsonl_qrels,
    write_jsonl_run,
)
from rankproof.data._jsonl import check_keys, read_jsonl
from rankproof.data._load import (
    QRELS_FORMATS,
    RUN_FORMATS,
    Format,
    load_qrels,
    load_run,
    read_qrels_rows,
    sniff_format,
)
from rankproof.data._memory import as_qrels, as_run
from rankproof.data._model import Dedupe, Qrels, Run
from rankproof.data._msmarco import read_msmarco_run, write_msmarco_run
from rankproof.data._order import (
    Order,
    RankedOrder,
    rank_column_problems,
    ranked_order,
    tie_keys,
    top_k,
)
from rankproof.data._pairs import match_pairs, string_index
from rankproof.data._parquet import is_parquet, read_parquet_run, write_parquet_run
from rankproof.data._partitions import (
    DEFAULT_PARTITION_BYTES,
    PartitionStats,
    RunPartitions,
    run_size,
    stream_run,
)
from rankproof.data._prefs import (
    PrefJudgment,
    Prefs,
    QrelsJG,
    read_prefs,
    read_qrels_jg,
    read_qrels_prefs,
)
from rankproof.data._ranges import (
    MIN_RANGE_BYTES,
    TopicRanges,
    lines_before,
    read_run_range,
    topic_ranges,
)
from rankproof.data._read_options import ReadOptions, parse_size
from rankproof.data._strings import arrow_indices, to_numpy, to_numpy_filled
from rankproof.data._subtopics import SubtopicQrels, read_subtopic_qrels
from rankproof.data._text import STDIN, ExtraColumns, Input, default_run_name
from rankproof.data._trec import (
    QrelsRows,
    int_refusal,
    parse_int,
    read_trec_qrels,
    read_trec_run,
    write_trec_qrels,
    write_trec_run,
)

__all__ = [
    "DEFAULT_PARTITION_BYTES",
    "IRDS_PREFIX",
    "MIN_RANGE_BYTES",
    "QRELS_FORMATS",
    "RUN_FORMATS",
    "STDIN",
    "Dedupe",
    "ExtraColumns",
    "Format",
    "Input",
    "LinedDict",
    "Order",
    "PartitionStats",
    "PrefJudgment",
    "Prefs",
    "Qrels",
    "QrelsJG",
    "QrelsRows",
    "RankedOrder",
    "ReadOptions",
    "Run",
    "RunPartitions",
    "SubtopicQrels",
    "TopicRanges",
    "YamlBoundError",
    "arrow_indices",
    "as_qrels",
    "as_run",
    "canonical_run",
    "check_canonical",
    "check_keys",
    "default_run_name",
    "int_refusal",
    "irds_documents",
    "irds_files",
    "irds_qrels_input",
    "irds_queries",
    "is_canonical",
    "is_irds",
    "is_parquet",
    "lines_before",
    "load_lined_yaml",
    "load_qrels",
    "load_run",
    "load_yaml",
    "match_pairs",
    "max_irds_docs",
    "parse_document",
    "parse_int",
    "parse_size",
    "qrels_from_arrow",
    "qrels_from_pandas",
    "rank_column_problems",
    "ranked_order",
    "read_beir_qrels",
    "read_beir_run",
    "read_config_text",
    "read_document",
    "read_json_qrels",
    "read_json_run",
    "read_jsonl",
    "read_jsonl_qrels",
    "read_jsonl_run",
    "read_model",
    "read_msmarco_run",
    "read_parquet_run",
    "read_prefs",
    "read_qrels_jg",
    "read_qrels_prefs",
    "read_qrels_rows",
    "read_run_range",
    "read_subtopic_qrels",
    "read_trec_qrels",
    "read_trec_run",
    "run_from_arrow",
    "run_from_pandas",
    "run_size",
    "sniff_format",
    "stream_run",
    "string_index",
    "tie_keys",
    "to_numpy",
    "to_numpy_filled",
    "top_k",
    "topic_ranges",
    "validate_model",
    "write_beir_qrels",
    "write_beir_run",
    "write_json_qrels",
    "write_json_run",
    "write_jsonl_qrels",
    "write_jsonl_run",
    "write_msmarco_run",
    "write_parquet_run",
    "write_trec_qrels",
    "write_trec_run",
]
