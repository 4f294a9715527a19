"""Runs as Parquet files (columns qid, docid, score and, when the run has one, rank).

Parquet is binary, so it is recognised by its magic bytes (``PAR1`` at the
start), not by a line; a Parquet file has no lines, so errors name the row.
The run tag, which TREC keeps in its sixth column, is kept in the file's
schema metadata (``rankproof.tag``). Columns go through `run_from_arrow`,
where every check on an Arrow table lives.
"""

from __future__ import annotations

import os

import pyarrow as pa

from rankproof._errors import InputError
from rankproof._io import PathLike, atomic_write, input_error
from rankproof.data._frames import run_from_arrow
from rankproof.data._model import Dedupe, Run
from rankproof.data._text import default_run_name

PARQUET_MAGIC = b"PAR1"
_TAG_KEY = b"rankproof.tag"


def is_parquet(path: PathLike) -> bool:
    """True when ``path`` is a regular file that starts with Parquet's magic bytes."""
    try:
        if not os.path.isfile(path):
            return False
        with open(path, "rb") as fh:
            return fh.read(4) == PARQUET_MAGIC
    except OSError:
        return False


def read_parquet_run(path: PathLike, *, name: str | None = None,
                     dedupe: Dedupe | None = None) -> Run:
    """Read a run written as Parquet (qid, docid, score, optional rank; other columns ignored)."""
    import pyarrow.parquet as pq

    label = str(path)
    try:
        table = pq.read_table(path)
    except OSError as exc:
        raise input_error(path, exc, "run") from None
    except (pa.ArrowException, ValueError) as exc:
        raise InputError(f"not a readable Parquet file: {exc}", path=label) from None
    meta = table.schema.metadata or {}
    tag = meta.get(_TAG_KEY)
    stem = default_run_name(label)
    if stem.endswith(".parquet") and len(stem) > len(".parquet"):
        stem = stem[: -len(".parquet")]
    run = run_from_arrow(table, name=name if name is not None else stem,
                         dedupe=dedupe, source=label)
    if tag is None:
        return run
    return Run.from_columns(run.qids(), run.docids, run.scores, run.ranks, name=run.name,
                            tag=tag.decode("utf-8", "replace"), source=label, dedupe=dedupe)


def write_parquet_run(run: Run, path: PathLike, *, tag: str | None = None) -> None:
    """Write ``run`` as Parquet in stored row order (rank kept when present), atomically."""
    import pyarrow.parquet as pq

    table = run.to_arrow()
    run_tag = tag or run.tag
    if run_tag:
        table = table.replace_schema_metadata({_TAG_KEY: run_tag.encode("utf-8")})
    # An Arrow sink, not a Python BytesIO: no Python object is handed to Arrow (see
    # ``_stream``: Arrow may release it on a thread of its own during teardown).
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    with atomic_write(path, mode="wb", encoding=None) as fh:
        fh.write(memoryview(sink.getvalue()))
