"""One entry point per kind of input: `load_run` and `load_qrels`.

The CLI and the harness call these instead of picking a reader themselves,
so that every command accepts the same formats and names them the same way.
The input is a path, ``-`` (standard input, read once) or an object already
in memory (see `as_run` / `as_qrels`). The format comes from ``format=``
when given, otherwise from the file name and, where the name leaves it
open, from the first data line:

=========================== ============================================
name (``.gz`` stripped)     format
=========================== ============================================
``*.json``                  json
``*.jsonl``, ``*.ndjson``   jsonl
``*.tsv`` with BEIR header  beir
``*.tsv``, ``*.txt`` whose  msmarco (runs only: ``qid docid rank``)
first data line has three
fields, the third an integer
``-`` (standard input), a  by content: ``{`` → json or jsonl, BEIR
pipe named without one of   header → beir, three fields → msmarco,
the suffixes above          otherwise trec
(``<(cat run)``)
anything else               trec
=========================== ============================================

Compression is always detected by content, never by the name. Every input
is opened once (`Input.open`): a FIFO or ``<(…)`` is read whole on that
open, so sniffing its first line never consumes what the reader needs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal, get_args

from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof.data._beir import beir_qrels_rows, is_beir_header, read_beir_qrels, read_beir_run
from rankproof.data._irds import irds_qrels_input, is_irds
from rankproof.data._jsondoc import read_json_qrels, read_json_run
from rankproof.data._jsonio import read_jsonl_qrels, read_jsonl_run
from rankproof.data._memory import as_qrels, as_run
from rankproof.data._model import Dedupe, Qrels, Run
from rankproof.data._msmarco import is_msmarco_line, read_msmarco_run
from rankproof.data._text import ExtraColumns, Input
from rankproof.data._trec import QrelsRows, read_trec_qrels, read_trec_run, trec_qrels_rows

Format = Literal["trec", "beir", "json", "jsonl", "msmarco"]
#: Every format `load_run` reads (the CLI builds ``--format`` choices from it).
RUN_FORMATS: tuple[Format, ...] = get_args(Format)
#: Every format `load_qrels` reads (MS MARCO's qrels are TREC qrels).
QRELS_FORMATS: tuple[Format, ...] = ("trec", "beir", "json", "jsonl")
FORMATS = RUN_FORMATS


def _sniff_content(src: Input) -> Format:
    """The format the first data line of an unnamed input says it has."""
    line = src.first_data_line()
    if line.startswith(b"{"):
        try:
            first = json.loads(line)
        except (ValueError, RecursionError):
            return "json"  # a document spread over several lines
        if isinstance(first, dict) and first and not any(
                isinstance(v, dict) for v in first.values()):
            return "jsonl"
        return "json"
    if is_beir_header(src.first_line()):
        return "beir"
    if is_msmarco_line(line):
        return "msmarco"
    return "trec"


_NAMED_SUFFIXES = (".jsonl", ".ndjson", ".json", ".tsv", ".txt", ".trec", ".run", ".qrels")


def sniff_format(path: PathLike | Input) -> Format:
    """The format a file's name (and, where needed, its first line) says it has.

    Standard input, and a pipe whose name has no format suffix (``<(cat
    run)`` is ``/dev/fd/63``), are sniffed by content; a named FIFO
    ``runs.jsonl`` goes by its name like a file. A pipe's content was read
    once when it was opened, so sniffing never reopens it.
    """
    src = Input.open(path)
    name = Path(src.label).name.lower() if not src.is_stdin else ""
    if name.endswith(".gz"):
        name = name[:-3]
    if src.path is None and not name.endswith(_NAMED_SUFFIXES):
        return _sniff_content(src)
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if name.endswith(".json"):
        return "json"
    if name.endswith(".tsv") and is_beir_header(src.first_line(1 << 12)):
        return "beir"
    if name.endswith((".tsv", ".txt")) and is_msmarco_line(src.first_data_line()):
        return "msmarco"
    return "trec"


def _resolve_format(src: Input, format: str | None, allowed: tuple[Format, ...]) -> Format:
    if format is None:
        return sniff_format(src)
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
    fmt = _resolve_format(src, format, RUN_FORMATS)
    if fmt == "trec":
        return read_trec_run(src, name=name, dedupe=dedupe, extra_columns=extra_columns)
    if fmt == "beir":
        return read_beir_run(src, name=name, dedupe=dedupe, extra_columns=extra_columns)
    if fmt == "msmarco":
        return read_msmarco_run(src, name=name, dedupe=dedupe, extra_columns=extra_columns)
    if fmt == "json":
        return read_json_run(src, name=name, dedupe=dedupe)
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
    fmt = _resolve_format(src, format, QRELS_FORMATS)
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

