"""One entry point per kind of input: `load_run` and `load_qrels`.

The CLI and the harness call these instead of picking a reader themselves,
so that every command accepts the same formats and names them the same way.
The input is a path, ``-`` (standard input, read once) or an object already
in memory (see `as_run` / `as_qrels`). The format comes from ``format=``
when given (the CLI's ``--run-format``/``--qrels-format``), otherwise from
the **content**, never the file name (`sniff_format`; the name decides only
for a file with no data line):

=============================== ==========================================
content                         format
=============================== ==========================================
``PAR1`` magic bytes            parquet (runs only)
first data line ``{``/``[``     jsonl (one flat object), else json
BEIR's header                   beir
six or more columns             trec (a run)
three, the third an integer     msmarco (a run: ``qid docid rank``)
four columns                    trec (qrels; MS MARCO's qrels are these)
anything else                   refused, naming the file, the line and
                                every format tried
=============================== ==========================================

Compression is always detected by content, never by the name. Every input
is opened once (`Input.open`): a FIFO or ``<(…)`` is read whole on that
open, so sniffing its first line never consumes what the reader needs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, get_args

from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof.data._beir import beir_qrels_rows, is_beir_header, read_beir_qrels, read_beir_run
from rankproof.data._bounds import json_loads
from rankproof.data._irds import irds_qrels_input, is_irds
from rankproof.data._jsondoc import read_json_qrels, read_json_run
from rankproof.data._jsonio import read_jsonl_qrels, read_jsonl_run
from rankproof.data._memory import as_qrels, as_run
from rankproof.data._model import Dedupe, Qrels, Run
from rankproof.data._msmarco import is_msmarco_line, read_msmarco_run
from rankproof.data._parquet import PARQUET_MAGIC, read_parquet_run
from rankproof.data._text import ExtraColumns, Input
from rankproof.data._trec import QrelsRows, read_trec_qrels, read_trec_run, trec_qrels_rows

Format = Literal["trec", "beir", "json", "jsonl", "msmarco", "parquet"]
#: Every format `load_run` reads (the CLI builds ``--format`` choices from it).
RUN_FORMATS: tuple[Format, ...] = get_args(Format)
#: Every format `load_qrels` reads (MS MARCO's qrels are TREC qrels).
QRELS_FORMATS: tuple[Format, ...] = ("trec", "beir", "json", "jsonl")
FORMATS = RUN_FORMATS


Kind = Literal["run", "qrels"]

#: What `sniff_format` tries, in order, as its refusal names them.
_TRIED = {
    "run": ("Parquet (PAR1 magic bytes)", "JSON document", "JSONL", "BEIR TSV (header "
            "query-id corpus-id score)", "TREC run (qid Q0 docid rank score tag)",
            "MS MARCO run (qid docid rank)"),
    "qrels": ("JSON document", "JSONL", "BEIR TSV (header query-id corpus-id score)",
              "TREC qrels (qid iter docid rel)"),
}
_EXPECTED = {"run": "expected 6 columns 'qid Q0 docid rank score tag'",
             "qrels": "expected 4 columns 'qid iter docno rel'"}
_SUFFIX_FORMATS: tuple[tuple[tuple[str, ...], Format], ...] = (
    ((".jsonl", ".ndjson"), "jsonl"), ((".json",), "json"), ((".parquet",), "parquet"))


def _json_kind(line: bytes) -> Format:
    """JSONL when the first data line is one flat object, else a JSON document."""
    try:  # one line: too short to overflow the parser's stack in practice, and caught
        first = json_loads(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return "json"  # a document spread over several lines
    if isinstance(first, dict) and first and not any(
            isinstance(v, dict) for v in first.values()):
        return "jsonl"
    return "json"


def _first_data_line(src: Input) -> tuple[bytes, int]:
    """The first line that is neither blank nor a ``#`` comment (stripped), and its number."""
    for number, raw in enumerate(src.head().splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith(b"#"):
            return line, number
    return b"", 0


def _by_name(src: Input) -> Format:
    """The format an empty input's name gives (nothing else says): its readers word the
    emptiness in their own terms."""
    name = Path(src.label).name.lower().removesuffix(".gz") if not src.is_stdin else ""
    for suffixes, fmt in _SUFFIX_FORMATS:
        if name.endswith(suffixes):
            return fmt
    return "trec"


def sniff_format(path: PathLike | Input, *, kind: Kind | None = None) -> Format:
    """The format a file's **content** says it has (``kind``: ``"run"`` or ``"qrels"``,
    as `load_run` and `load_qrels` ask; None: either).

    The name is not consulted unless the file has no data line: a
    three-column MS MARCO run named ``x.run`` is MS MARCO, a JSON document
    named ``run.txt`` is JSON. In order: Parquet's magic bytes (``PAR1``);
    a first data line starting with ``{`` or ``[`` (JSONL when it is one flat
    object, else a JSON document); BEIR's header; then the columns of the
    first data line — six or more: a TREC run; three, the third an integer:
    an MS MARCO run; four: TREC qrels. Anything else, or a shape of the other
    kind (a qrels file given as a run), is refused with an `InputError`
    naming the file, the line, and every format tried; ``format=`` (the
    CLI's ``--run-format``/``--qrels-format``) reads it as one regardless.
    Compression is detected by content before any of this.
    """
    src = Input.open(path)
    if kind is not None and kind not in _TRIED:
        raise InputError(f"kind must be 'run' or 'qrels', got {kind!r}", field="kind")
    head = src.head(8)
    if head.startswith(PARQUET_MAGIC):
        if kind == "qrels":
            raise InputError("a Parquet file is read as a run, not as qrels (rankproof writes "
                             "and reads runs as Parquet); give the qrels as TREC, BEIR, JSON "
                             "or JSONL", path=src.label)
        return "parquet"
    line, number = _first_data_line(src)
    if not line:
        return _by_name(src)
    if line.startswith((b"{", b"[")):
        return _json_kind(line)
    if is_beir_header(src.first_line()):
        return "beir"
    fields = line.split()
    if kind != "qrels":
        if len(fields) >= 6 or (kind is None and len(fields) == 4):
            return "trec"
        if is_msmarco_line(line):
            return "msmarco"
    elif len(fields) == 4 or (len(fields) > 4 and len(fields) != 6):
        return "trec"  # TREC qrels (extra columns are the reader's to refuse)
    looks = ""
    if kind == "run" and len(fields) == 4:
        looks = " (four columns are TREC qrels: is this the qrels file?)"
    elif kind == "qrels" and len(fields) == 6:
        looks = " (six columns are a TREC run: is this the run?)"
    elif kind == "qrels" and is_msmarco_line(line):
        looks = " (qid docid rank is an MS MARCO run: is this the run?)"
    told = kind or "run"
    option = "--run-format" if told == "run" else "--qrels-format"
    tried = _TRIED[told] if kind else (*_TRIED["run"], _TRIED["qrels"][-1])
    raise InputError(
        f"cannot tell which {kind or 'run or qrels'} format this is from its content: "
        f"{_EXPECTED[told]}, found {len(fields)}{looks}; formats tried: {', '.join(tried)}; "
        f"{option} FORMAT (format= in Python) reads it as one", path=src.label, line=number,
        field="columns")


def _resolve_format(src: Input, format: str | None, allowed: tuple[Format, ...],
                    kind: Kind) -> Format:
    if format is None:
        return sniff_format(src, kind=kind)
    if format not in allowed:
        raise InputError(f"unknown format {format!r}; expected one of {list(allowed)}",
                         field="format")
    return format


def _is_path(obj: Any) -> bool:
    return isinstance(obj, str | os.PathLike | Input)


def load_run(
    path: PathLike | Any,
    *,
    format: Format | None = None,
    name: str | None = None,
    dedupe: Dedupe | None = None,
    extra_columns: ExtraColumns = "error",
) -> Run:
    """Read a run in any supported format (see the module docstring).

    ``path`` may also be a `Run`, a ``{qid: {docid: score}}`` dict, a pandas
    DataFrame or a pyarrow Table (see `as_run`). ``name`` defaults to the
    file name without ``.gz`` and its format suffix (``stdin`` for ``-``).
    ``extra_columns="ignore"`` accepts trailing TREC/BEIR/MS MARCO columns
    and unknown JSONL keys; the JSON document format has no extra columns to
    ignore. ``dedupe`` keeps the first or highest-scoring of duplicate
    (qid, docid) rows, which are otherwise an error.
    """
    if not _is_path(path):
        return as_run(path, name=name, dedupe=dedupe)
    src = Input.open(path)
    fmt = _resolve_format(src, format, RUN_FORMATS, "run")
    if fmt == "trec":
        return read_trec_run(src, name=name, dedupe=dedupe, extra_columns=extra_columns)
    if fmt == "beir":
        return read_beir_run(src, name=name, dedupe=dedupe, extra_columns=extra_columns)
    if fmt == "msmarco":
        return read_msmarco_run(src, name=name, dedupe=dedupe, extra_columns=extra_columns)
    if fmt == "json":
        return read_json_run(src, name=name, dedupe=dedupe)
    if fmt == "parquet":
        if src.path is None:
            raise InputError("a Parquet run is read from a file, not from standard input or a "
                             "pipe", path=src.label)
        return read_parquet_run(src.path, name=name, dedupe=dedupe)
    return read_jsonl_run(src, name=name, dedupe=dedupe, extra_columns=extra_columns)


def load_qrels(
    path: PathLike | Any, *, format: Format | None = None, dedupe: Dedupe | None = None
) -> Qrels:
    """Read qrels in any supported format (see the module docstring).

    ``path`` may also be a `Qrels`, a ``{qid: {docid: rel}}`` dict, a pandas
    DataFrame or a pyarrow Table (see `as_qrels`). ``irds:ID`` reads an ir_datasets
    dataset's qrels from its local cache, never downloading (`rankproof.data._irds`).
    """
    if not _is_path(path):
        return as_qrels(path, dedupe=dedupe)
    if is_irds(path):  # an ir_datasets dataset, read from its local cache only
        if format not in (None, "trec"):
            raise InputError(f"format {format!r} does not apply to {path}: an ir_datasets "
                             "dataset's qrels are read as TREC qrels", field="format")
        return read_trec_qrels(irds_qrels_input(str(path)), dedupe=dedupe)
    src = Input.open(path)
    fmt = _resolve_format(src, format, QRELS_FORMATS, "qrels")
    if fmt in ("trec", "msmarco"):  # a three-column file is a malformed TREC qrels file
        return read_trec_qrels(src, dedupe=dedupe)
    if fmt == "beir":
        return read_beir_qrels(src, dedupe=dedupe)
    if fmt == "json":
        return read_json_qrels(src, dedupe=dedupe)
    return read_jsonl_qrels(src, dedupe=dedupe)


def read_qrels_rows(
    path: PathLike | Input,
    *,
    format: Literal["trec", "beir"] = "trec",
    allow_empty: bool = False,
) -> QrelsRows:
    """The parsed rows of a TREC or BEIR qrels file, each with its line (`QrelsRows`).

    For readers that check qrels against something else first (a collection's
    documents and queries) and must name the line of a stray row; everyone
    else wants `load_qrels`. ``allow_empty`` returns no rows instead of
    raising for a file with no data lines.
    """
    src = Input.open(path)
    if format == "trec":
        return trec_qrels_rows(src, allow_empty=allow_empty)
    if format == "beir":
        return beir_qrels_rows(src, allow_empty=allow_empty)
    raise InputError(f"unknown format {format!r}; expected 'trec' or 'beir'", field="format")

