"""JSON and JSON Lines runs and qrels.

Two shapes, each for runs and for qrels:

* **JSON** — one object ``{qid: {docid: score}}`` (runs) or
  ``{qid: {docid: rel}}`` (qrels): what pytrec_eval, ranx and BEIR's
  ``evaluate`` take in memory, dumped to a file;
* **JSONL** — one object per line, ``{"qid", "docid", "score"}`` for runs
  and ``{"qid", "docid", "rel"}`` for qrels. The ir_measures spellings
  ``query_id``, ``doc_id`` and ``relevance`` are accepted too (ir_measures'
  ``ScoredDoc`` and ``Qrel`` records, written out with ``json.dumps``).

Like the TREC reader, the JSON reader has a fast path and a careful path. The
fast path is ``json.loads`` (C speed), which cannot say where a value sat in
the file; when anything about the parsed document is wrong, the careful path
walks the text again, remembering the position of every value, so that the
error names the line. JSON Lines are parsed line by line anyway, so their
errors always carry the line.

Duplicate keys are not lost: ``json.loads`` keeps the last of two equal keys,
which would silently drop a duplicate (qid, docid) pair. Both paths read
objects as lists of pairs instead, so duplicates reach ``from_columns``, which
rejects them unless ``dedupe=`` was asked for.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rankproof._errors import InputError
from rankproof._io import PathLike, atomic_write, read_bytes
from rankproof.data._model import Dedupe, Qrels, Run

ExtraColumns = Literal["error", "ignore"]

_BOM = b"\xef\xbb\xbf"
_encode_string = json.encoder.encode_basestring  # ensure_ascii=False; C-accelerated
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# JSONL keys: the first spelling is ours, the others are accepted on input.
RUN_QID_KEYS = ("qid", "query_id")
RUN_DOCID_KEYS = ("docid", "doc_id")
RUN_SCORE_KEYS = ("score",)
QRELS_REL_KEYS = ("rel", "relevance")
_RUN_OPTIONAL = ("rank",)
_QRELS_OPTIONAL = ("iteration",)  # ir_measures' Qrel.iteration; ignored, as TREC's column 2


# -- text plumbing shared with the BEIR reader --------------------------------


def read_text(path: PathLike, field_at: Callable[[bytes, int], str | None] | None = None) -> str:
    """The file's text: gunzipped (by content), UTF-8 decoded, BOM dropped.

    Invalid UTF-8 raises `InputError` naming the line; ``field_at(line, col)``
    may name the field from the raw line and the byte offset within it.
    """
    data = read_bytes(path)
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].splitlines() or [b""]
        if data[: exc.start].endswith((b"\n", b"\r")):
            before.append(b"")
        lineno = len(before)
        col = len(before[-1])
        end = data.find(b"\n", exc.start)
        raw = data[exc.start - col: end if end >= 0 else len(data)].rstrip(b"\r")
        field = field_at(raw, col) if field_at is not None else None
        raise InputError(f"invalid UTF-8 ({exc.reason}) at byte {col + 1} of the line",
                         path=str(path), line=lineno, field=field) from None


def split_lines(text: str) -> list[str]:
    """Lines as Python's universal newlines see them (``\\n``, ``\\r\\n`` or ``\\r``).

    Not ``str.splitlines``, which also breaks at characters such as U+2028
    that may legally sit inside a JSON string or an id.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def default_run_name(path: PathLike) -> str:
    """The file name without ``.gz`` and format suffixes: the label of a run.

    Strips the same suffixes, in the same way, as the TREC reader's default.
    """
    name = Path(path).name
    for suffix in (".gz", ".jsonl", ".ndjson", ".json", ".txt", ".trec", ".run", ".tsv"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"a string {value!r}"
    if isinstance(value, _Pairs | dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return repr(value)


# -- values ---------------------------------------------------------------------


def _score(value: Any, path: str, line: int | None, field: str, where: str = "") -> float:
    """A finite float from a JSON number; booleans and strings are refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"score{where} must be a number, found {_type_name(value)}",
                         path=path, line=line, field=field)
    try:
        out = float(value)
    except OverflowError:
        out = math.inf
    if not math.isfinite(out):
        raise InputError(f"score{where} must be a finite number, found {value!r}",
                         path=path, line=line, field=field)
    return out


def _rel(value: Any, path: str, line: int | None, field: str, where: str = "") -> int:
    """An int64 relevance label; ``2.0`` is accepted as 2, ``1.5`` and ``true`` are not."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"relevance{where} must be an integer, found {_type_name(value)}",
                         path=path, line=line, field=field)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise InputError(f"relevance{where} {value} does not fit in 64 bits",
                         path=path, line=line, field=field)
    return value


def _id(value: Any, path: str, line: int | None, field: str) -> str:
    """Ids are strings; integers (``"qid": 301``) are taken as their decimal text."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"{field} must be a string or an integer, found {_type_name(value)}",
                     path=path, line=line, field=field)


def line_locator(lines: list[int]) -> Callable[[int], int]:
    arr = np.asarray(lines, dtype=np.int64)
    return lambda row: int(arr[row])


# -- JSON documents -------------------------------------------------------------


class _Pairs(list[tuple[str, Any]]):
    """A JSON object kept as its list of (key, value) pairs, duplicates included."""


_WS = re.compile(r"[ \t\n\r]*")


class _Walker:
    """A position-tracking reader for ``{key: {key: value}}`` documents.

    Only the careful path uses it, to put a line number on an error that the
    fast ``json.loads`` pass found but could not locate. Values are decoded by
    the standard decoder; only the two levels of objects are walked here.
    """

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.decoder = json.JSONDecoder(object_pairs_hook=_Pairs)
        self._pos = 0
        self._line = 1

    def line(self, pos: int) -> int:
        """1-based line of ``pos``; positions arrive in increasing order, so count on."""
        if pos < self._pos:
            self._pos, self._line = 0, 1
        self._line += self.text.count("\n", self._pos, pos)
        self._pos = pos
        return self._line

    def skip(self, pos: int) -> int:
        match = _WS.match(self.text, pos)
        assert match is not None  # the pattern matches the empty string
        return match.end()

    def fail(self, pos: int, expected: str) -> InputError:
        found = self.text[pos: pos + 1] or "the end of the file"
        return InputError(f"invalid JSON: expected {expected}, found {found!r}",
                          path=self.path, line=self.line(pos))

    def value(self, pos: int) -> tuple[Any, int]:
        try:
            value, end = self.decoder.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON ({exc.msg})", path=self.path,
                             line=self.line(exc.pos)) from None
        return value, int(end)

    def walk_object(self, pos: int, member: Callable[[str, int], int]) -> int:
        """Walk the object at ``pos``: ``member(key, value_pos)`` reads each value and
        returns where it ends. Returns the end of the object."""
        if self.text[pos: pos + 1] != "{":
            raise self.fail(pos, "'{'")
        pos = self.skip(pos + 1)
        if self.text[pos: pos + 1] == "}":
            return pos + 1
        while True:
            if self.text[pos: pos + 1] != '"':
                raise self.fail(pos, "a key in double quotes")
            try:
                key, pos = json.decoder.scanstring(self.text, pos + 1)  # type: ignore[attr-defined]
            except json.JSONDecodeError as exc:
                raise InputError(f"invalid JSON ({exc.msg})", path=self.path,
                                 line=self.line(exc.pos)) from None
            pos = self.skip(pos)
            if self.text[pos: pos + 1] != ":":
                raise self.fail(pos, "':'")
            pos = self.skip(member(key, self.skip(pos + 1)))
            if self.text[pos: pos + 1] == ",":
                pos = self.skip(pos + 1)
            elif self.text[pos: pos + 1] == "}":
                return pos + 1
            else:
                raise self.fail(pos, "',' or '}'")

    def document(
        self, convert: Callable[[Any, int, str, str], Any]
    ) -> list[tuple[str, str, Any, int]]:
        """Every (qid, docid, converted value, line) of ``{qid: {docid: value}}``."""
        out: list[tuple[str, str, Any, int]] = []

        def outer(qid: str, pos: int) -> int:
            if self.text[pos: pos + 1] != "{":
                value, _ = self.value(pos)
                raise InputError(
                    f"the value of qid {qid!r} must be an object {{docid: value}}, "
                    f"found {_type_name(value)}", path=self.path, line=self.line(pos),
                )

            def inner(docid: str, vpos: int) -> int:
                value, end = self.value(vpos)
                line = self.line(vpos)
                out.append((qid, docid, convert(value, line, qid, docid), line))
                return end

            return self.walk_object(pos, inner)

        start = self.skip(0)
        if self.text[start: start + 1] != "{":
            value, _ = self.value(start)
            raise InputError(
                f"expected a JSON object {{qid: {{docid: value}}}}, found {_type_name(value)}",
                path=self.path, line=self.line(start),
            )
        tail = self.skip(self.walk_object(start, outer))
        if tail != len(self.text):
            raise self.fail(tail, "the end of the file")
        return out


def _load_document(text: str, path: str) -> Any:
    if not text.strip():
        raise InputError("the file is empty", path=path)
    try:
        return json.loads(text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    except RecursionError:
        raise InputError("invalid JSON (nested too deeply)", path=path) from None


def _fast_columns(
    doc: Any, kinds: tuple[type, ...]
) -> tuple[list[str], list[str], list[Any]] | None:
    """Columns of ``{qid: {docid: value}}`` when every value has one of ``kinds``, else None."""
    if type(doc) is not _Pairs:
        return None
    qids: list[str] = []
    docids: list[str] = []
    values: list[Any] = []
    for qid, docs in doc:
        if type(docs) is not _Pairs:
            return None
        if not docs:
            continue
        ds, vs = zip(*docs, strict=True)
        qids.extend([qid] * len(ds))
        docids.extend(ds)
        values.extend(vs)
    if not set(map(type, values)) <= set(kinds):
        return None
    return qids, docids, values


def read_json_run(path: PathLike, *, name: str | None = None,
                  dedupe: Dedupe | None = None) -> Run:
    """Read a run stored as one JSON object ``{qid: {docid: score}}``.

    This is the shape pytrec_eval, ranx and BEIR use in memory; it has no rank
    column (trec_eval ignores ranks anyway). A qid listed twice has its
    documents merged; a (qid, docid) pair listed twice is an error unless
    ``dedupe`` says which to keep.
    """
    source = str(path)
    run_name = name if name is not None else default_run_name(path)
    text = read_text(path)
    doc = _load_document(text, source)
    cols = _fast_columns(doc, (float, int))
    if cols is not None:
        try:
            scores = np.array(cols[2], dtype=np.float64)
            return Run.from_columns(cols[0], cols[1], scores, name=run_name, source=source,
                                    dedupe=dedupe)
        except (InputError, OverflowError):
            pass  # the careful pass below says where
    rows = _Walker(text, source).document(
        lambda v, line, q, d: _score(v, source, line, "score", f" of ({q!r}, {d!r})")
    )
    return Run.from_columns(
        [r[0] for r in rows], [r[1] for r in rows],
        np.array([r[2] for r in rows], dtype=np.float64),
        name=run_name, source=source, dedupe=dedupe, locator=line_locator([r[3] for r in rows]),
    )


def read_json_qrels(path: PathLike, *, dedupe: Dedupe | None = None) -> Qrels:
    """Read qrels stored as one JSON object ``{qid: {docid: rel}}``.

    Labels must be integers (``2.0`` is taken as 2); negative labels mean
    judged-unjudgeable, as in trec_eval.
    """
    source = str(path)
    text = read_text(path)
    doc = _load_document(text, source)
    cols = _fast_columns(doc, (int,))
    if cols is not None:
        try:
            rels = np.array(cols[2], dtype=np.int64)
            return Qrels.from_columns(cols[0], cols[1], rels, source=source, dedupe=dedupe)
        except (InputError, OverflowError):
            pass
    rows = _Walker(text, source).document(
        lambda v, line, q, d: _rel(v, source, line, "rel", f" of ({q!r}, {d!r})")
    )
    return Qrels.from_columns(
        [r[0] for r in rows], [r[1] for r in rows],
        np.array([r[2] for r in rows], dtype=np.int64),
        source=source, dedupe=dedupe, locator=line_locator([r[3] for r in rows]),
    )


# -- JSON Lines -----------------------------------------------------------------


def _pick(obj: dict[str, Any], keys: tuple[str, ...], path: str, line: int) -> Any:
    """The value under whichever spelling of a key is present (exactly one)."""
    present = [k for k in keys if k in obj]
    if len(present) == 1:
        return obj[present[0]]
    spelled = " or ".join(repr(k) for k in keys)
    if not present:
        raise InputError(f"missing key {spelled}; found keys {sorted(obj)}",
                         path=path, line=line, field=keys[0])
    raise InputError(f"keys {present} name the same field; give only one",
                     path=path, line=line, field=keys[0])


def _jsonl_fast(
    text: str, value_keys: tuple[str, ...], value_kinds: frozenset[type],
    optional: str, optional_kind: type | None,
) -> tuple[list[Any], list[Any], list[Any], list[Any] | None] | None:
    """Columns of a well-formed JSONL file in one C-speed ``json.loads``, else None.

    The non-blank lines are parsed as one JSON array. The result is used only
    when it is plainly right: one object per line, every object with the same
    keys (one spelling of each field, plus ``optional`` or not), ids that are
    strings and values of the expected types. Anything else is left to the
    line-by-line pass, which finds and locates the problem.
    """
    lines = [line for line in split_lines(text) if line.strip()]
    if not lines:
        return None
    try:
        objs = json.loads("[" + ",".join(lines) + "]")
    except (ValueError, RecursionError):
        return None
    if len(objs) != len(lines) or type(objs[0]) is not dict:
        return None
    keys = objs[0].keys()
    picked = [[k for k in group if k in keys]
              for group in (RUN_QID_KEYS, RUN_DOCID_KEYS, value_keys)]
    if any(len(found) != 1 for found in picked):
        return None
    has_optional = optional in keys
    if len(keys) != 3 + has_optional:
        return None
    if not all(type(obj) is dict and obj.keys() == keys for obj in objs):
        return None
    qk, dk, vk = (found[0] for found in picked)
    qids = [obj[qk] for obj in objs]
    docids = [obj[dk] for obj in objs]
    values = [obj[vk] for obj in objs]
    if set(map(type, qids)) != {str} or set(map(type, docids)) != {str}:
        return None
    if not set(map(type, values)) <= value_kinds:
        return None
    extra = None
    if has_optional and optional_kind is not None:
        extra = [obj[optional] for obj in objs]
        if set(map(type, extra)) != {optional_kind}:
            return None
    return qids, docids, values, extra


def _jsonl_objects(text: str, path: PathLike, known: frozenset[str],
                   extra: ExtraColumns) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line, with unknown keys checked."""
    source = str(path)
    seen = False
    for lineno, line in enumerate(split_lines(text), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON ({exc.msg}, column {exc.colno})",
                             path=source, line=lineno) from None
        except RecursionError:
            raise InputError("invalid JSON (nested too deeply)", path=source,
                             line=lineno) from None
        if type(obj) is not dict:
            raise InputError(f"expected one JSON object per line, found {_type_name(obj)}",
                             path=source, line=lineno)
        if extra == "error" and not obj.keys() <= known:
            unknown = sorted(set(obj) - known)
            raise InputError(
                f"unexpected keys {unknown} (known: {sorted(known)}); "
                "pass extra_columns='ignore' to skip them",
                path=source, line=lineno, field=unknown[0],
            )
        seen = True
        yield lineno, obj
    if not seen:
        raise InputError("the file is empty" if not text.strip() else
                         "the file has no data lines", path=source)


def _check_extra(extra: str) -> None:
    if extra not in ("error", "ignore"):
        raise ValueError(f"extra_columns must be 'error' or 'ignore', got {extra!r}")


def read_jsonl_run(
    path: PathLike,
    *,
    name: str | None = None,
    dedupe: Dedupe | None = None,
    extra_columns: ExtraColumns = "error",
) -> Run:
    """Read a run with one ``{"qid", "docid", "score"}`` object per line.

    ``query_id``/``doc_id`` are accepted for ``qid``/``docid`` (ir_measures'
    ``ScoredDoc``); an optional integer ``rank`` is kept, on every line or
    none. Other keys are an error unless ``extra_columns="ignore"``: a key we
    do not know is more often a misspelling than a comment.
    """
    _check_extra(extra_columns)
    source = str(path)
    run_name = name if name is not None else default_run_name(path)
    text = read_text(path)
    fast = _jsonl_fast(text, RUN_SCORE_KEYS, frozenset({int, float}), "rank", int)
    if fast is not None:
        try:
            return Run.from_columns(
                fast[0], fast[1], np.array(fast[2], dtype=np.float64),
                None if fast[3] is None else np.array(fast[3], dtype=np.int64),
                name=run_name, source=source, dedupe=dedupe,
            )
        except (InputError, OverflowError):
            pass  # the line-by-line pass below says where
    known = frozenset(RUN_QID_KEYS + RUN_DOCID_KEYS + RUN_SCORE_KEYS + _RUN_OPTIONAL)
    qids: list[str] = []
    docids: list[str] = []
    scores: list[float] = []
    ranks: list[int] = []
    lines: list[int] = []
    has_rank: bool | None = None
    for lineno, obj in _jsonl_objects(text, path, known, extra_columns):
        qids.append(_id(_pick(obj, RUN_QID_KEYS, source, lineno), source, lineno, "qid"))
        docids.append(_id(_pick(obj, RUN_DOCID_KEYS, source, lineno), source, lineno, "docid"))
        scores.append(_score(_pick(obj, RUN_SCORE_KEYS, source, lineno), source, lineno,
                             "score"))
        if has_rank is None:
            has_rank = "rank" in obj
        if ("rank" in obj) != has_rank:
            first = "has" if has_rank else "has no"
            raise InputError(f"the first line {first} a 'rank'; give it on every line or none",
                             path=source, line=lineno, field="rank")
        if has_rank:
            rank = obj["rank"]
            if isinstance(rank, bool) or not isinstance(rank, int) \
                    or not _INT64_MIN <= rank <= _INT64_MAX:
                raise InputError(f"rank must be an integer, found {_type_name(rank)}",
                                 path=source, line=lineno, field="rank")
            ranks.append(rank)
        lines.append(lineno)
    return Run.from_columns(
        qids, docids, np.array(scores, dtype=np.float64),
        np.array(ranks, dtype=np.int64) if has_rank else None,
        name=run_name, source=source, dedupe=dedupe, locator=line_locator(lines),
    )


def read_jsonl_qrels(
    path: PathLike,
    *,
    dedupe: Dedupe | None = None,
    extra_columns: ExtraColumns = "error",
) -> Qrels:
    """Read qrels with one ``{"qid", "docid", "rel"}`` object per line.

    ``query_id``/``doc_id``/``relevance`` are accepted too, and ir_measures'
    ``iteration`` is ignored (like the TREC qrels' second column).
    """
    _check_extra(extra_columns)
    source = str(path)
    text = read_text(path)
    fast = _jsonl_fast(text, QRELS_REL_KEYS, frozenset({int}), "iteration", None)
    if fast is not None:
        try:
            return Qrels.from_columns(fast[0], fast[1], np.array(fast[2], dtype=np.int64),
                                      source=source, dedupe=dedupe)
        except (InputError, OverflowError):
            pass
    known = frozenset(RUN_QID_KEYS + RUN_DOCID_KEYS + QRELS_REL_KEYS + _QRELS_OPTIONAL)
    qids: list[str] = []
    docids: list[str] = []
    rels: list[int] = []
    lines: list[int] = []
    for lineno, obj in _jsonl_objects(text, path, known, extra_columns):
        qids.append(_id(_pick(obj, RUN_QID_KEYS, source, lineno), source, lineno, "qid"))
        docids.append(_id(_pick(obj, RUN_DOCID_KEYS, source, lineno), source, lineno, "docid"))
        rels.append(_rel(_pick(obj, QRELS_REL_KEYS, source, lineno), source, lineno, "rel"))
        lines.append(lineno)
    return Qrels.from_columns(
        qids, docids, np.array(rels, dtype=np.int64), source=source, dedupe=dedupe,
        locator=line_locator(lines),
    )


# -- writers --------------------------------------------------------------------


def _quote(text: str) -> str:
    """A JSON string literal (UTF-8 kept as is), via the stdlib's C encoder."""
    return _encode_string(text)


def write_json_run(run: Run, path: PathLike, *, indent: int | None = None) -> None:
    """Write ``{qid: {docid: score}}`` atomically; the rank column is not kept.

    The whole document is serialised before the file is opened, so a failure
    leaves nothing behind. Scores are written with ``repr`` precision and
    read back bit for bit.
    """
    text = json.dumps(run.to_dict(), ensure_ascii=False, allow_nan=False, indent=indent)
    with atomic_write(path) as fh:
        fh.write(text)
        fh.write("\n")


def write_json_qrels(qrels: Qrels, path: PathLike, *, indent: int | None = None) -> None:
    """Write ``{qid: {docid: rel}}`` atomically."""
    text = json.dumps(qrels.to_dict(), ensure_ascii=False, allow_nan=False, indent=indent)
    with atomic_write(path) as fh:
        fh.write(text)
        fh.write("\n")


def write_jsonl_run(run: Run, path: PathLike) -> None:
    """Write one ``{"qid", "docid", "score"}`` object per row (with ``rank`` when the
    run has one), in stored order, atomically.

    Lines are formatted directly rather than through ``json.dumps`` per row
    (five times faster); ids go through the standard string encoder and
    scores are finite floats, whose ``repr`` is exactly what ``json`` writes.
    """
    qid_text = [_quote(q) for q in run.qid_vocab.to_pylist()]
    docids = run.docids.to_pylist()
    scores = run.scores.tolist()
    codes = run.qid_codes.tolist()
    with atomic_write(path) as fh:
        if run.ranks is None:
            for c, d, s in zip(codes, docids, scores, strict=True):
                fh.write(f'{{"qid": {qid_text[c]}, "docid": {_quote(d)}, "score": {s!r}}}\n')
        else:
            for c, d, s, r in zip(codes, docids, scores, run.ranks.tolist(), strict=True):
                fh.write(f'{{"qid": {qid_text[c]}, "docid": {_quote(d)}, "score": {s!r}, '
                         f'"rank": {r}}}\n')


def write_jsonl_qrels(qrels: Qrels, path: PathLike) -> None:
    """Write one ``{"qid", "docid", "rel"}`` object per judgment, atomically."""
    qid_text = [_quote(q) for q in qrels.qid_vocab.to_pylist()]
    with atomic_write(path) as fh:
        for c, d, r in zip(qrels.qid_codes.tolist(), qrels.docids.to_pylist(),
                           qrels.rels.tolist(), strict=True):
            fh.write(f'{{"qid": {qid_text[c]}, "docid": {_quote(d)}, "rel": {r}}}\n')
