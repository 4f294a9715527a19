"""BEIR qrels TSV (and the run file of the same shape).

BEIR (Thakur et al., 2021) keeps judgments as ``qrels/<split>.tsv``::

    query-id<TAB>corpus-id<TAB>score
    q1<TAB>doc7<TAB>1

BEIR's own loader skips the first line without looking at it, so a file
without a header silently loses its first judgment. Here the header is
required and checked, and every data line must have exactly three
tab-separated fields: BEIR ids may hold spaces, so only the tab separates.
The score is the integer relevance label. A run written in the same layout
(float scores) is read by :func:`read_beir_run`; BEIR itself keeps runs in
memory as ``{qid: {docid: score}}`` (see the JSON reader).

Files are small (a few hundred thousand lines at most), so there is a single
careful path; every error names the file, the line and the column by its
header name.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import rankproof._limits as _limits
from rankproof._errors import InputError
from rankproof._io import PathLike, atomic_write
from rankproof.data._model import Dedupe, Qrels, Run
from rankproof.data._strings import find_bytes
from rankproof.data._text import ExtraColumns, Input, default_run_name, line_locator, strip_bom
from rankproof.data._trec import QrelsRows, _parse_float, _parse_int, int_refusal

BEIR_HEADER = ("query-id", "corpus-id", "score")


def is_beir_header(line: bytes | str) -> bool:
    """Whether ``line`` (the first line of a file) is BEIR's qrels header."""
    if isinstance(line, bytes):
        line = strip_bom(line).decode("utf-8", errors="replace")
    fields = [f.strip() for f in line.rstrip("\r\n").split("\t")]
    return tuple(fields[:3]) == BEIR_HEADER


def _field_at(raw: bytes, col: int) -> str | None:
    """The header name of the column holding byte ``col`` of a raw line."""
    index = raw[:col].count(b"\t")
    return BEIR_HEADER[index] if index < len(BEIR_HEADER) else None


def _rows(
    src: Input, extra: ExtraColumns, *, allow_empty: bool = False
) -> tuple[list[str], list[str], list[str], list[int]]:
    """Split a BEIR TSV into id, id and score text columns plus line numbers."""
    source = src.label
    if extra not in ("error", "ignore"):
        raise InputError(f"extra_columns must be 'error' or 'ignore', got {extra!r}",
                         field="extra_columns")
    lines = src.lines(_field_at)
    if not any(line.strip() for line in lines):
        raise InputError("the file is empty", path=source)
    header = lines[0]
    names = [f.strip() for f in header.split("\t")]
    if not (tuple(names) == BEIR_HEADER
            or (extra == "ignore" and tuple(names[:3]) == BEIR_HEADER)):
        raise InputError(
            "expected the header 'query-id<TAB>corpus-id<TAB>score', found "
            f"{_limits.shown(header)}",
            path=source, line=1, field="header",
        )
    qids: list[str] = []
    docids: list[str] = []
    scores: list[str] = []
    linenos: list[int] = []
    for lineno, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3 and not (len(parts) > 3 and extra == "ignore"):
            raise InputError(
                f"expected 3 tab-separated columns (query-id corpus-id score), "
                f"found {len(parts)}", path=source, line=lineno, field="columns",
            )
        for name, value in zip(BEIR_HEADER[:2], parts, strict=False):
            if not value:
                raise InputError(f"empty {name}", path=source, line=lineno, field=name)
        qids.append(parts[0])
        docids.append(parts[1])
        scores.append(parts[2])
        linenos.append(lineno)
    if not qids and not allow_empty:
        raise InputError("the file has a header but no data lines", path=source)
    return qids, docids, scores, linenos


def beir_qrels_rows(src: Input, *, allow_empty: bool = False) -> QrelsRows:
    """The one parse of BEIR qrels: rows with their lines (see `QrelsRows`)."""
    qids, docids, texts, lines = _rows(src, "error", allow_empty=allow_empty)
    rels: list[int] = []
    for i, text in enumerate(texts):
        value = _parse_int(text.strip())
        if value is None:
            raise InputError(int_refusal("score", text.strip(),
                                         hint=" (it is the relevance label)"),
                             path=src.label, line=lines[i], field="score")
        rels.append(value)
    return QrelsRows(src.label, qids, docids, rels, lines)


def read_beir_qrels(path: PathLike | Input, *, dedupe: Dedupe | None = None) -> Qrels:
    """Read BEIR qrels (``query-id<TAB>corpus-id<TAB>score``, header required).

    The score is the relevance label and must be an integer, as BEIR's loader
    (``int(row[2])``) requires. Gzip is read by content; ``-`` reads stdin.
    """
    return beir_qrels_rows(Input.open(path)).to_qrels(dedupe=dedupe)


def read_beir_run(
    path: PathLike | Input,
    *,
    name: str | None = None,
    dedupe: Dedupe | None = None,
    extra_columns: ExtraColumns = "error",
) -> Run:
    """Read a run in the BEIR TSV layout: the qrels header, float scores."""
    src = Input.open(path)
    source = src.label
    qids, docids, texts, lines = _rows(src, extra_columns)
    scores = np.empty(len(texts), dtype=np.float64)
    for i, text in enumerate(texts):
        value = _parse_float(text.strip())
        if value is None:
            raise InputError(f"score must be a number, found {_limits.shown(text)}",
                             path=source, line=lines[i], field="score")
        if not np.isfinite(value):
            raise InputError(f"score must be a finite number, found {_limits.shown(text)}",
                             path=source, line=lines[i], field="score")
        scores[i] = value
    return Run.from_columns(
        qids, docids, scores, name=name if name is not None else default_run_name(source),
        source=source, dedupe=dedupe, locator=line_locator(lines),
    )


def _check_beir_ids(qid_vocab: pa.Array, docids: pa.Array, path: PathLike) -> None:
    """Refuse ids a BEIR TSV cannot carry, before anything is written.

    Tabs and line breaks would split the line; a leading double quote would
    be unquoted by BEIR's ``csv.reader`` (``QUOTE_MINIMAL``) and change the id.
    """
    for what, values in (("query-id", qid_vocab), ("corpus-id", docids)):
        row = find_bytes(values, b"\t\n\r")
        if row is not None:
            raise InputError(f"{what} {_limits.shown(values[row].as_py())} contains a tab or "
                             "line break, "
                             "which a BEIR TSV cannot hold", path=str(path), field=what)
        quoted = pc.starts_with(values, '"')
        if len(values) and pc.any(quoted).as_py():
            bad = values.filter(quoted)[0].as_py()
            raise InputError(f"{what} {_limits.shown(bad)} starts with '\"', which BEIR's csv "
                             "reader "
                             "would strip as a quote", path=str(path), field=what)


def write_beir_qrels(qrels: Qrels, path: PathLike) -> None:
    """Write BEIR qrels TSV (with its header), atomically."""
    _check_beir_ids(qrels.qid_vocab, qrels.docids, path)
    table = qrels.to_arrow()
    with atomic_write(path) as fh:
        fh.write("\t".join(BEIR_HEADER) + "\n")
        for q, d, r in zip(table.column("qid").to_pylist(), table.column("docid").to_pylist(),
                           table.column("rel").to_pylist(), strict=True):
            fh.write(f"{q}\t{d}\t{r}\n")


def write_beir_run(run: Run, path: PathLike) -> None:
    """Write a run in the BEIR TSV layout (float scores, stored order), atomically."""
    _check_beir_ids(run.qid_vocab, run.docids, path)
    qids = run.qids().to_pylist()
    docids = run.docids.to_pylist()
    scores = run.scores.tolist()
    with atomic_write(path) as fh:
        fh.write("\t".join(BEIR_HEADER) + "\n")
        for q, d, s in zip(qids, docids, scores, strict=True):
            fh.write(f"{q}\t{d}\t{s!r}\n")
