"""TREC run and qrels files.

Two paths read the same format:

* the **fast path** hands the file to Arrow's multi-threaded CSV reader
  (single-space or single-tab separated, the shape almost every tool
  writes); a 7-million-line run parses in about a second;
* the **careful path** reads line by line, accepts any run of spaces and tabs,
  ``#`` comment lines and blank lines, and is the only place error messages
  come from, so every error names the file, the line and the field.

The fast path never reports an error itself: anything unexpected (a parse
failure, a validation failure, a comment line) sends the file down the
careful path, which either succeeds or raises the precise `InputError`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from rankproof._errors import InputError
from rankproof.data._io import PathLike, atomic_write, is_gzip, read_bytes
from rankproof.data._model import Dedupe, Qrels, Run
from rankproof.data._strings import to_numpy

ExtraColumns = Literal["error", "ignore"]

_RUN_COLUMNS = ("qid", "Q0", "docid", "rank", "score", "tag")
_QRELS_COLUMNS = ("qid", "iter", "docid", "rel")


def _first_line(path: PathLike) -> bytes:
    if is_gzip(path):
        import gzip

        with gzip.open(path, "rb") as fh:
            return fh.readline(1 << 16)
    with open(path, "rb") as fh:
        return fh.readline(1 << 16)


def _fast_table(path: PathLike, names: Sequence[str], types: dict[str, pa.DataType]) -> pa.Table | None:
    """Parse with Arrow, or return None when the file needs the careful path."""
    head = _first_line(path)
    if not head.strip() or head.lstrip().startswith(b"#"):
        return None
    body = head.rstrip(b"\r\n")
    if b"\t" in body and b" " not in body:
        delimiter = "\t"
    elif b"\t" not in body:
        delimiter = " "
    else:
        return None
    try:
        source: Any = str(path)
        if is_gzip(path):
            source = pa.input_stream(str(path), compression="gzip")
        return pa_csv.read_csv(
            source,
            read_options=pa_csv.ReadOptions(column_names=list(names), block_size=16 << 20),
            parse_options=pa_csv.ParseOptions(
                delimiter=delimiter, quote_char=False, escape_char=False, double_quote=False
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=types, include_columns=list(types), strings_can_be_null=False,
                quoted_strings_can_be_null=False, null_values=[],
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError, OSError):
        return None


def _has_comment_ids(qids: pa.ChunkedArray) -> bool:
    """A qid beginning with '#' means a comment line slipped through as a row."""
    for chunk in qids.chunks:
        vocab = chunk.dictionary if pa.types.is_dictionary(chunk.type) else pc.unique(chunk)
        if len(vocab) and pc.any(pc.starts_with(vocab, "#")).as_py():
            return True
    return False


class _Lines:
    """Careful, line-by-line tokenizer with exact error locations."""

    def __init__(self, path: PathLike, names: Sequence[str], extra: ExtraColumns) -> None:
        self.path = str(path)
        self.names = names
        self.extra = extra

    def rows(self) -> tuple[list[list[str]], list[int]]:
        data = read_bytes(self.path)
        if not data.strip():
            raise InputError("the file is empty", path=self.path)
        rows: list[list[str]] = []
        lines: list[int] = []
        want = len(self.names)
        for lineno, raw in enumerate(data.split(b"\n"), 1):
            stripped = raw.strip()
            if not stripped or stripped.startswith(b"#"):
                continue
            parts = stripped.split()
            if len(parts) != want and not (len(parts) > want and self.extra == "ignore"):
                raise InputError(
                    f"expected {want} columns ({' '.join(self.names)}), found {len(parts)}",
                    path=self.path, line=lineno, field="columns",
                )
            fields: list[str] = []
            for name, part in zip(self.names, parts, strict=False):
                try:
                    fields.append(part.decode("utf-8"))
                except UnicodeDecodeError as exc:
                    raise InputError(f"invalid UTF-8 ({exc.reason})", path=self.path,
                                     line=lineno, field=name) from None
            rows.append(fields)
            lines.append(lineno)
        if not rows:
            raise InputError("the file has no data lines (only comments or blanks)",
                             path=self.path)
        return rows, lines


def _locator(lines: list[int]) -> Any:
    arr = np.asarray(lines, dtype=np.int64)
    return lambda row: int(arr[row])


def read_trec_run(
    path: PathLike,
    *,
    name: str | None = None,
    dedupe: Dedupe | None = None,
    extra_columns: ExtraColumns = "error",
) -> Run:
    """Read a TREC run: ``qid Q0 docid rank score tag`` per line.

    Fields are separated by any run of spaces or tabs; ``.gz`` files (by
    content) are read transparently; lines starting with ``#`` are comments.
    The rank column is kept (for ``order="rank"``) but never used by default:
    trec_eval orders by score. ``extra_columns="ignore"`` accepts trailing
    columns beyond the sixth, as trec_eval does; by default they are an error.
    """
    run_name = name if name is not None else _stem(path)
    tag = _first_tag(path)
    types = {"qid": pa.dictionary(pa.int32(), pa.string()), "docid": pa.string(),
             "rank": pa.int64(), "score": pa.float64()}
    table = _fast_table(path, _RUN_COLUMNS, types)
    if table is not None and not _has_comment_ids(table.column("qid")):
        table = table.unify_dictionaries()
        try:
            return Run.from_columns(
                _dict_column(table.column("qid")), table.column("docid"),
                to_numpy(table.column("score")), to_numpy(table.column("rank")),
                name=run_name, tag=tag, source=str(path), dedupe=dedupe,
            )
        except InputError:
            pass  # the careful path below reports it with its line number
    rows, lines = _Lines(path, _RUN_COLUMNS, extra_columns).rows()
    scores = np.empty(len(rows), dtype=np.float64)
    for i, row in enumerate(rows):
        try:
            scores[i] = float(row[4])
        except ValueError:
            raise InputError(f"score must be a number, found {row[4]!r}", path=str(path),
                             line=lines[i], field="score") from None
        if not math.isfinite(scores[i]):
            raise InputError(f"score must be a finite number, found {row[4]!r}",
                             path=str(path), line=lines[i], field="score")
    notes: tuple[str, ...] = ()
    ranks: np.ndarray | None
    try:
        ranks = np.array([int(row[3]) for row in rows], dtype=np.int64)
    except ValueError:
        bad = next(i for i, row in enumerate(rows) if not _is_int(row[3]))
        ranks = None
        notes = (f"rank column is not an integer at line {lines[bad]}; order='rank' unavailable",)
    return Run.from_columns(
        [r[0] for r in rows], [r[2] for r in rows], scores, ranks,
        name=run_name, tag=tag, source=str(path), dedupe=dedupe, locator=_locator(lines),
        notes=notes,
    )


def read_trec_qrels(path: PathLike, *, dedupe: Dedupe | None = None) -> Qrels:
    """Read TREC qrels: ``qid iter docid rel`` per line (``iter`` is ignored)."""
    types = {"qid": pa.dictionary(pa.int32(), pa.string()), "docid": pa.string(),
             "rel": pa.int64()}
    table = _fast_table(path, _QRELS_COLUMNS, types)
    if table is not None and not _has_comment_ids(table.column("qid")):
        table = table.unify_dictionaries()
        try:
            return Qrels.from_columns(
                _dict_column(table.column("qid")), table.column("docid"),
                to_numpy(table.column("rel")), source=str(path), dedupe=dedupe,
            )
        except InputError:
            pass
    rows, lines = _Lines(path, _QRELS_COLUMNS, "error").rows()
    rels = np.empty(len(rows), dtype=np.int64)
    for i, row in enumerate(rows):
        if not _is_int(row[3]):
            raise InputError(f"relevance must be an integer, found {row[3]!r}",
                             path=str(path), line=lines[i], field="rel")
        rels[i] = int(row[3])
    return Qrels.from_columns(
        [r[0] for r in rows], [r[2] for r in rows], rels, source=str(path), dedupe=dedupe,
        locator=_locator(lines),
    )




def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _dict_column(col: pa.ChunkedArray) -> pa.Array:
    """Concatenate unified dictionary chunks into one dictionary array."""
    if col.num_chunks == 1:
        return col.chunk(0)
    dictionary = col.chunk(0).dictionary
    indices = pa.concat_arrays([c.indices for c in col.chunks])
    return pa.DictionaryArray.from_arrays(indices, dictionary)


def _stem(path: PathLike) -> str:
    name = Path(path).name
    for suffix in (".gz", ".txt", ".trec", ".run", ".tsv"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def _first_tag(path: PathLike) -> str | None:
    data = _first_line(path)
    parts = data.split()
    if len(parts) >= 6 and not data.lstrip().startswith(b"#"):
        try:
            return parts[5].decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


def _format_score(value: float) -> str:
    return repr(float(value))


def write_trec_run(run: Run, path: PathLike, *, tag: str | None = None) -> None:
    """Write ``run`` in TREC format, ranked by trec_eval's order, atomically."""
    from rankproof.measures._order import ranked_order

    order = ranked_order(run)
    run_tag = tag or run.tag or run.name
    if any(c.isspace() for c in run_tag):
        raise InputError(f"run tag must not contain whitespace: {run_tag!r}", field="tag")
    qids = run.qids().take(pa.array(order.rows)).to_pylist()
    docids = run.docids.take(pa.array(order.rows)).to_pylist()
    scores = run.scores[order.rows].tolist()
    ranks = (order.positions + 1).tolist()
    with atomic_write(path) as fh:
        for q, d, r, s in zip(qids, docids, ranks, scores, strict=True):
            fh.write(f"{q} Q0 {d} {r} {_format_score(s)} {run_tag}\n")


def write_trec_qrels(qrels: Qrels, path: PathLike) -> None:
    """Write ``qrels`` in TREC format (``qid 0 docid rel``), atomically."""
    table = qrels.to_arrow()
    with atomic_write(path) as fh:
        for q, d, r in zip(table.column("qid").to_pylist(), table.column("docid").to_pylist(),
                           table.column("rel").to_pylist(), strict=True):
            fh.write(f"{q} 0 {d} {r}\n")
