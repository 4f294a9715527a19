"""JSON documents: one object ``{qid: {docid: score}}`` (runs) or
``{qid: {docid: rel}}`` (qrels) — what pytrec_eval, ranx and BEIR's
``evaluate`` take in memory, dumped to a file.

Like the TREC reader, this reader has a fast path and a careful path. The
fast path is ``json.loads`` (C speed), which cannot say where a value sat in
the file; when anything about the parsed document is wrong, the careful path
walks the text again, remembering the position of every value, so that the
error names the line.

Duplicate keys are not lost: ``json.loads`` keeps the last of two equal keys,
which would silently drop a duplicate (qid, docid) pair. Both paths read
objects as lists of pairs instead, so duplicates reach ``from_columns``, which
rejects them unless ``dedupe=`` was asked for. (JSON Lines objects are
different: there a repeated key is simply an error, see ``_jsonl``.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np

import rankproof._limits as _limits
from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof.data._bounds import parse_int
from rankproof.data._jsonl import json_error, json_rel, json_score, json_type_name
from rankproof.data._model import Dedupe, Qrels, Run
from rankproof.data._text import Input, default_run_name, line_locator


def _type_name(value: Any) -> str:
    return "an object" if isinstance(value, _Pairs) else json_type_name(value)


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
        self.decoder = json.JSONDecoder(object_pairs_hook=_Pairs, parse_int=parse_int)
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
        return InputError(f"invalid JSON: expected {expected}, found {_limits.shown(found)}",
                          path=self.path, line=self.line(pos))

    def value(self, pos: int) -> tuple[Any, int]:
        try:
            value, end = self.decoder.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            raise json_error(exc, self.path, self.line(exc.pos)) from None
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
                raise json_error(exc, self.path, self.line(exc.pos)) from None
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
                    f"the value of qid {_limits.shown(qid)} must be an object {{docid: value}}, "
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
    """The fast parse; None when only the careful pass can say what is wrong (an
    integer too long for ``int``, which ``json`` refuses with a bare ``ValueError``)."""
    if not text.strip():
        raise InputError("the file is empty", path=path)
    try:
        return json.loads(text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as exc:
        raise json_error(exc, path) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path=path) from None
    except ValueError:
        return None


def _of(qid: str, docid: str) -> str:
    """`` of ('q', 'd')``, each id cut to size, for a value's message."""
    return f" of ({_limits.shown(qid)}, {_limits.shown(docid)})"


def _plausible_scores(scores: np.ndarray) -> bool:
    """False when some score is as large as an integer of more than `MAX_INT_DIGITS`
    digits: the careful pass then refuses it if it was written as such an integer."""
    return not bool((np.abs(scores) >= 10.0 ** _limits.MAX_INT_DIGITS).any())


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


def read_json_run(path: PathLike | Input, *, name: str | None = None,
                  dedupe: Dedupe | None = None) -> Run:
    """Read a run stored as one JSON object ``{qid: {docid: score}}``.

    This is the shape pytrec_eval, ranx and BEIR use in memory; it has no rank
    column (trec_eval ignores ranks anyway). A qid listed twice has its
    documents merged; a (qid, docid) pair listed twice is an error unless
    ``dedupe`` says which to keep.
    """
    src = Input.open(path)
    source = src.label
    run_name = name if name is not None else default_run_name(source)
    text = src.text()
    doc = _load_document(text, source)
    cols = _fast_columns(doc, (float, int))
    if cols is not None:
        try:
            scores = np.array(cols[2], dtype=np.float64)
            if not _plausible_scores(scores):
                raise OverflowError
            return Run.from_columns(cols[0], cols[1], scores, name=run_name, source=source,
                                    dedupe=dedupe)
        except (InputError, OverflowError):
            pass  # the careful pass below says where
    rows = _Walker(text, source).document(
        lambda v, line, q, d: json_score(v, source, line, "score", _of(q, d))
    )
    return Run.from_columns(
        [r[0] for r in rows], [r[1] for r in rows],
        np.array([r[2] for r in rows], dtype=np.float64),
        name=run_name, source=source, dedupe=dedupe, locator=line_locator([r[3] for r in rows]),
    )


def read_json_qrels(path: PathLike | Input, *, dedupe: Dedupe | None = None) -> Qrels:
    """Read qrels stored as one JSON object ``{qid: {docid: rel}}``.

    Labels must be integers (``2.0`` is taken as 2); negative labels mean
    judged-unjudgeable, as in trec_eval.
    """
    src = Input.open(path)
    source = src.label
    text = src.text()
    doc = _load_document(text, source)
    cols = _fast_columns(doc, (int,))
    if cols is not None:
        try:
            rels = np.array(cols[2], dtype=np.int64)
            return Qrels.from_columns(cols[0], cols[1], rels, source=source, dedupe=dedupe)
        except (InputError, OverflowError):
            pass
    rows = _Walker(text, source).document(
        lambda v, line, q, d: json_rel(v, source, line, "rel", _of(q, d))
    )
    return Qrels.from_columns(
        [r[0] for r in rows], [r[1] for r in rows],
        np.array([r[2] for r in rows], dtype=np.int64),
        source=source, dedupe=dedupe, locator=line_locator([r[3] for r in rows]),
    )

