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

Both get their input from the one text reader (`Input`): gzip by content,
a BOM dropped, ``-`` for standard input. The fast path streams a file on
disk through Arrow; bytes already in memory (standard input) go through
Arrow from memory. The careful path reads the text the reader decoded.
"""

from __future__ import annotations

import gzip
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

import rankproof._limits as _limits
from rankproof._errors import InputError
from rankproof._io import PathLike, atomic_write
from rankproof.data._bad_row import refused_row
from rankproof.data._bounds import HugeInt
from rankproof.data._model import Dedupe, Qrels, Run
from rankproof.data._stream import WHITESPACE as _WHITESPACE
from rankproof.data._stream import PlainScan, arrow_owned, is_plain
from rankproof.data._strings import as_string_array, find_bytes, to_numpy
from rankproof.data._text import ExtraColumns, Input, default_run_name, line_locator, split_lines

_RUN_COLUMNS = ("qid", "Q0", "docid", "rank", "score", "tag")
_QRELS_COLUMNS = ("qid", "iter", "docid", "rel")
# How messages spell the layouts (trec_eval's own column names).
LAYOUTS = {_RUN_COLUMNS: "qid Q0 docno rank score tag", _QRELS_COLUMNS: "qid iter docno rel"}
# The careful path splits fields on ASCII whitespace only (as ``bytes.split()``),
# never on Unicode spaces that may sit inside an id.
_SPLIT = re.compile(r"[ \t\n\r\x0b\x0c]+")
_STRIP = " \t\n\r\x0b\x0c"
# The number syntax both paths accept (Arrow's parser is the narrower one:
# Python's ``float`` would also take ``1_000`` or non-ASCII digits).
_FLOAT = re.compile(
    r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)",
    re.IGNORECASE | re.ASCII,
)
_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_INT64_MAX = 2**63 - 1


def _fast_table(
    src: Input, names: Sequence[str], types: dict[str, pa.DataType],
    extra: ExtraColumns = "error",
) -> pa.Table | None:
    """Parse with Arrow, or return None when the file needs the careful path.

    A row Arrow refuses for its number of fields is reported from here, at the careful
    path's line and in its words, when `_bad_row.refused_row` can prove that line is the
    careful path's first error: a malformed line then costs one more streaming pass, not
    a line-by-line parse of the whole file."""
    head = src.first_line()
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
        def source() -> Any:
            """A fresh Arrow source: the file (gunzipped by Arrow) or the bytes in memory.

            Always a native one: no Python object may reach Arrow's threads (`_stream`).
            """
            if src.path is None:
                return pa.BufferReader(arrow_owned(src.data()))
            if src.gzipped:
                return pa.input_stream(str(src.path), compression="gzip")
            return str(src.path)

        gzipped = src.path is not None and src.gzipped
        column_types = {n: types.get(n, pa.dictionary(pa.int32(), pa.string())) for n in names}
        needed = [n for n in names if n in types or n == "qid"]
        # 4 MiB blocks: as fast as larger ones, and Arrow's parse buffers in
        # flight stay small (16 MiB blocks: +100 MiB peak).
        read_options = pa_csv.ReadOptions(column_names=list(names), block_size=4 << 20)
        parse_options = pa_csv.ParseOptions(
            delimiter=delimiter, quote_char=False, escape_char=False, double_quote=False
        )

        def read(source: Any, plain: bool) -> pa.Table:
            # A plain file (see _stream) is known to be valid UTF-8 with no stray
            # whitespace, so only the needed columns are read. Otherwise every
            # column is read (the unused ones dictionary-encoded) so that Arrow
            # validates their UTF-8 as the careful path does, and the fields are
            # checked for whitespace afterwards (_fast_agrees).
            convert_options = pa_csv.ConvertOptions(
                column_types=column_types, include_columns=needed if plain else list(names),
                strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[],
                check_utf8=not plain,
            )
            return pa_csv.read_csv(source, read_options=read_options,
                                   parse_options=parse_options, convert_options=convert_options)

        table = None
        plain = False
        if src.path is not None and not gzipped:
            # One parse of the file, its plainness checked beside it on a thread that
            # is joined when the block ends (Arrow reads the path natively: `_stream`).
            with PlainScan(str(src.path), delimiter) as scan:
                try:
                    table = read(str(src.path), plain=True)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    table = None  # maybe not plain: the validated re-read below decides
                    scan.stop()
                    refused = refused_row(str(src.path), str(exc), delimiter, len(names),
                                          extra == "ignore")
                    if refused is not None:
                        raise column_count_error(names, refused[1], src.label,
                                                 refused[0]) from None
            plain = scan.plain
            if not plain:
                table = None
        elif src.path is None:
            plain = is_plain(src.data(), delimiter)  # already in memory: no second read
        if table is None:
            table = read(source(), plain)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError, OSError):
        return None
    table = table.unify_dictionaries()
    return table if _fast_agrees(table, whitespace_checked=plain) else None


def _fast_agrees(table: pa.Table, *, whitespace_checked: bool = False) -> bool:
    """Whether Arrow's split of the file is the one the careful path would make.

    Arrow splits on one delimiter only, so a field holding another kind of
    whitespace (a tab in a space-separated file) would survive inside an id
    where the careful path splits it (``whitespace_checked``: `_stream.PlainScan`
    already ruled that out for the whole file); and a qid beginning with '#'
    is a comment line, which the careful path skips.
    """
    for name in [] if whitespace_checked else table.column_names:
        col = table.column(name)
        if pa.types.is_dictionary(col.type):
            chunks = [col.chunk(0).dictionary] if col.num_chunks else []
        elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            chunks = list(col.chunks)
        else:
            continue
        if any(find_bytes(chunk, _WHITESPACE) is not None for chunk in chunks):
            return False
    qids = table.column("qid")
    if qids.num_chunks:
        vocab = qids.chunk(0).dictionary
        if len(vocab) and pc.any(pc.starts_with(vocab, "#")).as_py():
            return False
    return True


def field_namer(names: Sequence[str]) -> Callable[[bytes, int], str | None]:
    """For the text reader: the name of the whitespace-separated column holding byte
    ``col`` of a raw line (None past the last named column)."""

    def field_at(raw: bytes, col: int) -> str | None:
        before = raw[:col]
        index = len(before.split())
        if before and before[-1:] not in _WHITESPACE:
            index -= 1  # the bad byte continues the token before it
        return names[index] if 0 <= index < len(names) else None

    return field_at


def column_count_error(names: Sequence[str], found: int, path: str | None,
                       line: int) -> InputError:
    """The refusal of a line with ``found`` fields where the layout ``names`` has another
    number: the careful path's, and the fast path's when it proves the same line
    (`_bad_row`), in the same words."""
    layout = LAYOUTS.get(tuple(names), " ".join(names))
    return InputError(f"expected {len(names)} columns '{layout}', found {found}", path=path,
                      line=line, field="columns")


class _Lines:
    """Careful, line-by-line tokenizer with exact error locations.

    Also the row parser of every whitespace-separated layout (TREC runs and
    qrels, MS MARCO runs, a collection's TREC qrels): ``names`` are the
    columns, in order.
    """

    def __init__(self, src: Input, names: Sequence[str], extra: ExtraColumns,
                 *, allow_empty: bool = False) -> None:
        self.src = src
        self.path = src.label
        self.names = names
        self.extra = extra
        self.allow_empty = allow_empty

    def rows(self) -> tuple[list[list[str]], list[int]]:
        text = self.src.text(field_namer(self.names))
        if not text.strip(_STRIP) and not self.allow_empty:
            raise InputError("the file is empty", path=self.path)
        rows: list[list[str]] = []
        lines: list[int] = []
        want = len(self.names)
        for lineno, raw in enumerate(split_lines(text), 1):
            stripped = raw.strip(_STRIP)
            if not stripped or stripped.startswith("#"):
                continue
            parts = _SPLIT.split(stripped)
            if len(parts) != want and not (len(parts) > want and self.extra == "ignore"):
                raise column_count_error(self.names, len(parts), self.path, lineno)
            rows.append(parts[:want])
            lines.append(lineno)
        if not rows and not self.allow_empty:
            raise InputError("the file has no data lines (only comments or blanks)",
                             path=self.path)
        return rows, lines


def read_trec_run(
    path: PathLike | Input,
    *,
    name: str | None = None,
    dedupe: Dedupe | None = None,
    extra_columns: ExtraColumns = "error",
) -> Run:
    """Read a TREC run: ``qid Q0 docid rank score tag`` per line.

    Fields are separated by any run of spaces or tabs; gzip (by content) is
    read transparently; lines starting with ``#`` are comments; ``-`` reads
    standard input. The rank column is kept (for ``order="rank"``) but never
    used by default: trec_eval orders by score. ``extra_columns="ignore"``
    accepts trailing columns beyond the sixth, as trec_eval does; by default
    they are an error.
    """
    src = Input.open(path)
    source = src.label
    run_name = name if name is not None else default_run_name(source)
    tag = _first_tag(src)
    types = {"qid": pa.dictionary(pa.int32(), pa.string()), "docid": pa.string(),
             "rank": pa.int64(), "score": pa.float64()}
    # No reference to the table is kept: _contiguous frees it column by column.
    columns = _contiguous(_fast_table(src, _RUN_COLUMNS, types, extra_columns))
    if columns is not None:
        try:
            return Run.from_columns(
                columns.pop("qid"), columns.pop("docid"), columns.pop("score"),
                columns.pop("rank"), name=run_name, tag=tag, source=source, dedupe=dedupe,
                locator=lazy_line_locator(src, _RUN_COLUMNS),
            )
        except InputError as exc:
            # The rows are the careful path's (`_fast_agrees`), so what `from_columns`
            # refuses (a duplicate row, an empty id) it would refuse too: report it now,
            # located by the newline scan, instead of parsing the file again line by line.
            # Standard input has no locator: the careful path names the line. A
            # non-finite score is shown as the file spells it ("NaN", "1e400"), which
            # only the careful path still has.
            if exc.line is not None and exc.field != "score":
                raise
    rows, lines = _Lines(src, _RUN_COLUMNS, extra_columns).rows()
    if tag is None:  # the first line was a comment: the first data line has the tag
        tag = rows[0][5]
    scores = np.empty(len(rows), dtype=np.float64)
    for i, row in enumerate(rows):
        value = _parse_float(row[4])
        if value is None:
            raise InputError(f"score must be a number, found {_limits.shown(row[4])}",
                             path=source, line=lines[i], field="score")
        if not math.isfinite(value):
            raise InputError(f"score must be a finite number, found {_limits.shown(row[4])}",
                             path=source, line=lines[i], field="score")
        scores[i] = value
    ranks, notes = parse_ranks([r[3] for r in rows], lines)
    return Run.from_columns(
        [r[0] for r in rows], [r[2] for r in rows], scores, ranks,
        name=run_name, tag=tag, source=source, dedupe=dedupe, locator=line_locator(lines),
        notes=notes,
    )


_LOCATE_BLOCK = 16 << 20


def _nonempty_line(src: Input, row: int) -> int | None:
    """The 1-based number of the ``row + 1``-th non-empty line, by one streaming scan.

    Arrow's reader (the fast path) skips empty lines and nothing else: a file
    it read has no comment and no blank-but-spaced line (either would have
    failed `_fast_table` or `_fast_agrees`), so row ``r`` is the ``r + 1``-th
    non-empty line. Newlines are counted in blocks with numpy — about as fast
    as reading the file, and no more memory than a block — so an error found
    after the fast read (a duplicate row, a non-finite score) costs what the
    read cost, not a line-by-line parse. None when a carriage return makes
    line ends ambiguous at block edges (the careful split then decides).
    """
    assert src.path is not None
    opener = gzip.open if src.gzipped else open
    seen = 0  # non-empty lines so far
    line = 0  # newlines so far
    last_end = -1  # absolute offset of the last newline (-1: start of file)
    offset = 0
    with opener(src.path, "rb") as fh:
        while block := fh.read(_LOCATE_BLOCK):
            arr = np.frombuffer(block, dtype=np.uint8)
            if (arr == 13).any():
                return None
            ends = np.flatnonzero(arr == 10) + offset
            if len(ends):
                starts = np.concatenate(([last_end], ends[:-1]))
                filled = np.flatnonzero(ends - starts > 1)
                if seen + len(filled) > row:
                    return line + int(filled[row - seen]) + 1
                seen += len(filled)
                line += len(ends)
                last_end = int(ends[-1])
            offset += len(block)
    if offset - last_end > 1 and seen == row:  # a last line with no newline
        return line + 1
    return None


def lazy_line_locator(src: Input, names: Sequence[str]) -> Callable[[int], int] | None:
    """Row -> line for a run the fast path read (it keeps no line numbers).

    Asked only when an error found after reading names a row: one streaming
    newline scan answers (`_nonempty_line`); a file with carriage returns falls
    back to the careful split, which splits rows exactly as the fast path did
    (`_fast_agrees`). Standard input is not read twice: None.
    """
    if src.path is None:
        return None
    found: list[list[int]] = []

    def locate(row: int) -> int:
        if not found:
            line = _nonempty_line(src, row)
            if line is not None:
                return line
            found.append(_Lines(src, names, "ignore").rows()[1])
        return found[0][row]

    return locate


def parse_ranks(texts: list[str], lines: list[int]) -> tuple[np.ndarray | None, tuple[str, ...]]:
    """The rank column as int64, or None and a note when some rank is not an integer."""
    parsed = np.empty(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        rank = _parse_int(text)
        if rank is None:
            return None, (f"rank column is not an integer at line {lines[i]}; "
                          "order='rank' unavailable",)
        parsed[i] = rank
    return parsed, ()


@dataclass(frozen=True)
class QrelsRows:
    """Qrels as parsed from a file, before any validation: parallel columns plus the
    line each row came from.

    The one parse of a qrels format; `read_trec_qrels` and `read_beir_qrels` build
    a `Qrels` from it, and a collection reader may check the rows against its
    documents and queries first, naming the line of a stray one.
    """

    source: str
    qids: list[str]
    docids: list[str]
    rels: list[int]
    lines: list[int]

    def to_qrels(self, *, dedupe: Dedupe | None = None) -> Qrels:
        """Validate the rows into `Qrels` (errors name the row's line)."""
        return Qrels.from_columns(self.qids, self.docids, np.array(self.rels, dtype=np.int64),
                                  source=self.source, dedupe=dedupe,
                                  locator=line_locator(self.lines))


def trec_qrels_rows(src: Input, *, allow_empty: bool = False) -> QrelsRows:
    """The careful parse of TREC qrels (``qid iter docno rel``)."""
    rows, lines = _Lines(src, _QRELS_COLUMNS, "error", allow_empty=allow_empty).rows()
    rels: list[int] = []
    for i, row in enumerate(rows):
        rel = _parse_int(row[3])
        if rel is None:
            raise InputError(int_refusal("relevance", row[3]), path=src.label, line=lines[i],
                             field="rel")
        rels.append(rel)
    return QrelsRows(src.label, [r[0] for r in rows], [r[2] for r in rows], rels, lines)


def read_trec_qrels(path: PathLike | Input, *, dedupe: Dedupe | None = None) -> Qrels:
    """Read TREC qrels: ``qid iter docid rel`` per line (``iter`` is ignored)."""
    src = Input.open(path)
    # The labels are read as text (dictionary-encoded: a handful of distinct
    # values) and parsed by `_parse_int`, so the fast path has the careful
    # path's grammar: Arrow's own int64 parser also takes hexadecimal ("0x1").
    types = {"qid": pa.dictionary(pa.int32(), pa.string()), "docid": pa.string(),
             "rel": pa.dictionary(pa.int32(), pa.string())}
    columns = _contiguous(_fast_table(src, _QRELS_COLUMNS, types))
    rels = None if columns is None else _grammar_ints(columns.pop("rel"))
    if columns is not None and rels is not None:
        try:
            return Qrels.from_columns(
                columns.pop("qid"), columns.pop("docid"), rels,
                source=src.label, dedupe=dedupe,
            )
        except InputError:
            pass
    return trec_qrels_rows(src).to_qrels(dedupe=dedupe)


def _parse_float(text: str) -> float | None:
    """``float(text)`` for the syntax Arrow's fast path also accepts, else None."""
    return float(text) if _FLOAT.fullmatch(text) else None


def _parse_int(text: str) -> int | None:
    """An integer that fits in int64, else None (never an ``OverflowError``).

    The one integer grammar of every text format (TREC, BEIR, MS MARCO):
    ASCII digits with an optional sign — not ``int``'s, which also takes
    ``1_0`` and non-ASCII digits (``٣``) — and at most `MAX_INT_DIGITS`
    digits, so a label of thousands of digits is never converted (Python
    refuses more than 4,300 with a bare ``ValueError``).
    """
    if not _INT.fullmatch(text) or len(text.lstrip("+-")) > _limits.MAX_INT_DIGITS:
        return None
    value = int(text)
    return value if -_INT64_MAX - 1 <= value <= _INT64_MAX else None


parse_int = _parse_int
"""The public name of the one integer grammar (`_parse_int`), for readers outside `data`."""


def int_refusal(what: str, text: str, *, hint: str = "") -> str:
    """Why `_parse_int` refused ``text`` for field ``what``, quoting it cut to size."""
    if _INT.fullmatch(text):
        digits = len(text.lstrip("+-"))
        if digits > _limits.MAX_INT_DIGITS:
            return HugeInt(digits).message(what) + hint
        return f"{what} must be an integer that fits in 64 bits, found {_limits.shown(text)}{hint}"
    return f"{what} must be an integer, found {_limits.shown(text)}{hint}"


def _grammar_ints(column: pa.DictionaryArray) -> np.ndarray | None:
    """A dictionary-encoded text column as int64 through `_parse_int`, or None when
    some value does not parse (the careful path then says where)."""
    parsed = [_parse_int(word) for word in column.dictionary.to_pylist()]
    if any(value is None for value in parsed):
        return None
    table: np.ndarray = np.array(parsed, dtype=np.int64)
    return np.asarray(table[to_numpy(column.indices)])


def _contiguous(table: pa.Table | None) -> dict[str, Any] | None:
    """Each column of ``table`` as one contiguous array (numbers as numpy).

    Arrow's reader returns one chunk per block; joining them copies. Columns
    are converted one at a time and each column's chunks are freed (and handed
    back to the system) before the next is copied, so the peak holds the table
    plus one column, not the table twice. The caller must keep no reference
    to ``table``.
    """
    if table is None:
        return None
    pool = pa.default_memory_pool()
    out: dict[str, Any] = {}
    for name in table.column_names:
        col = table.column(name)
        table = table.drop_columns([name])
        if pa.types.is_dictionary(col.type):
            out[name] = _dict_column(col)
        elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            out[name] = as_string_array(col)
        else:
            out[name] = to_numpy(col)
        del col
        pool.release_unused()
    return out


def _dict_column(col: pa.ChunkedArray) -> pa.Array:
    """Concatenate unified dictionary chunks into one dictionary array."""
    if col.num_chunks == 1:
        return col.chunk(0)
    dictionary = col.chunk(0).dictionary
    indices = pa.concat_arrays([c.indices for c in col.chunks])
    return pa.DictionaryArray.from_arrays(indices, dictionary)


def _first_tag(src: Input) -> str | None:
    data = src.first_line()
    parts = data.split()
    if len(parts) >= 6 and not data.lstrip().startswith(b"#"):
        try:
            return parts[5].decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


def _format_score(value: float) -> str:
    return repr(float(value))


def _check_trec_ids(qid_vocab: pa.Array, docids: pa.Array, path: PathLike) -> None:
    """Refuse ids that would not read back: TREC columns are whitespace-separated,
    and a line whose qid starts with '#' is a comment."""
    for what, values in (("qid", qid_vocab), ("docid", docids)):
        row = find_bytes(values, _WHITESPACE)
        if row is not None:
            raise InputError(
                f"{what} {_limits.shown(values[row].as_py())} contains whitespace, which the "
                "TREC format "
                "cannot hold", path=str(path), field=what,
            )
    hashed = pc.starts_with(qid_vocab, "#")
    if len(qid_vocab) and pc.any(hashed).as_py():
        bad = qid_vocab.filter(hashed)[0].as_py()
        raise InputError(f"qid {_limits.shown(bad)} starts with '#', which TREC readers take "
                         "for a comment",
                         path=str(path), field="qid")


def write_trec_run(run: Run, path: PathLike, *, tag: str | None = None) -> None:
    """Write ``run`` in TREC format, ranked by trec_eval's order, atomically.

    Everything is validated before the first byte is written: ids and the tag
    must survive a whitespace split (see ``_check_trec_ids``).
    """
    from rankproof.data._order import ranked_order

    run_tag = tag or run.tag or run.name
    if not run_tag or any(c.isspace() for c in run_tag):
        raise InputError("run tag must be non-empty and free of whitespace: "
                         f"{_limits.shown(run_tag)}",
                         path=str(path), field="tag")
    _check_trec_ids(run.qid_vocab, run.docids, path)
    order = ranked_order(run)
    rows = pa.array(order.row_ids(len(run)))
    qids = run.qids().take(rows).to_pylist()
    docids = run.docids.take(rows).to_pylist()
    scores = run.scores[order.row_ids(len(run))].tolist()
    ranks = (order.positions + 1).tolist()
    with atomic_write(path) as fh:
        for q, d, r, s in zip(qids, docids, ranks, scores, strict=True):
            fh.write(f"{q} Q0 {d} {r} {_format_score(s)} {run_tag}\n")


def write_trec_qrels(qrels: Qrels, path: PathLike) -> None:
    """Write ``qrels`` in TREC format (``qid 0 docid rel``), atomically."""
    _check_trec_ids(qrels.qid_vocab, qrels.docids, path)
    table = qrels.to_arrow()
    with atomic_write(path) as fh:
        for q, d, r in zip(table.column("qid").to_pylist(), table.column("docid").to_pylist(),
                           table.column("rel").to_pylist(), strict=True):
            fh.write(f"{q} 0 {d} {r}\n")
