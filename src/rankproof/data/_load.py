"""One entry point per kind of file: `load_run` and `load_qrels`.

The CLI and the harness call these instead of picking a reader themselves,
so that every command accepts the same formats and names them the same way.
The format comes from ``format=`` when given, otherwise from the file name:

========================== =========
name (``.gz`` stripped)    format
========================== =========
``*.json``                 json
``*.jsonl``, ``*.ndjson``  jsonl
``*.tsv`` with BEIR header beir
anything else              trec
========================== =========

Only ``.tsv`` looks inside the file: BEIR and TREC both use that suffix, and
the BEIR header tells them apart. Compression is always detected by content.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof.data._beir import read_beir_qrels, read_beir_run, sniff_beir
from rankproof.data._jsonio import (
    read_json_qrels,
    read_json_run,
    read_jsonl_qrels,
    read_jsonl_run,
)
from rankproof.data._model import Dedupe, Qrels, Run
from rankproof.data._trec import ExtraColumns, read_trec_qrels, read_trec_run

Format = Literal["trec", "beir", "json", "jsonl"]
FORMATS: tuple[str, ...] = get_args(Format)


def _check_path(path: PathLike) -> Path:
    """Turn the two commonest path mistakes into an `InputError` (CLI exit code 2)."""
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", path=str(path))
    if p.is_dir():
        raise InputError("is a directory, expected a file", path=str(path))
    return p


def sniff_format(path: PathLike) -> Format:
    """The format a file's name (and, for ``.tsv``, its first line) says it has."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if name.endswith(".json"):
        return "json"
    if name.endswith(".tsv") and sniff_beir(path):
        return "beir"
    return "trec"


def _resolve_format(path: PathLike, format: str | None) -> Format:
    if format is None:
        return sniff_format(path)
    if format not in FORMATS:
        raise InputError(f"unknown format {format!r}; expected one of {list(FORMATS)}",
                         field="format")
    return format  # type: ignore[return-value]


def load_run(
    path: PathLike,
    *,
    format: Format | None = None,
    name: str | None = None,
    dedupe: Dedupe | None = None,
    extra_columns: ExtraColumns = "error",
) -> Run:
    """Read a run in any supported format (see the module docstring).

    ``name`` defaults to the file name without ``.gz`` and its format suffix.
    ``extra_columns="ignore"`` accepts trailing TREC/BEIR columns and unknown
    JSONL keys; the JSON document format has no extra columns to ignore.
    ``dedupe`` keeps the first or highest-scoring of duplicate (qid, docid)
    rows, which are otherwise an error.
    """
    p = _check_path(path)
    fmt = _resolve_format(p, format)
    if fmt == "trec":
        return read_trec_run(path, name=name, dedupe=dedupe, extra_columns=extra_columns)
    if fmt == "beir":
        return read_beir_run(path, name=name, dedupe=dedupe, extra_columns=extra_columns)
    if fmt == "json":
        return read_json_run(path, name=name, dedupe=dedupe)
    return read_jsonl_run(path, name=name, dedupe=dedupe, extra_columns=extra_columns)


def load_qrels(
    path: PathLike, *, format: Format | None = None, dedupe: Dedupe | None = None
) -> Qrels:
    """Read qrels in any supported format (see the module docstring)."""
    p = _check_path(path)
    fmt = _resolve_format(p, format)
    if fmt == "trec":
        return read_trec_qrels(path, dedupe=dedupe)
    if fmt == "beir":
        return read_beir_qrels(path, dedupe=dedupe)
    if fmt == "json":
        return read_json_qrels(path, dedupe=dedupe)
    return read_jsonl_qrels(path, dedupe=dedupe)
