"""JSON Lines runs and qrels, and the writers of both JSON shapes.

Two shapes, each for runs and for qrels:

* **JSON** — one object ``{qid: {docid: score}}`` (runs) or
  ``{qid: {docid: rel}}`` (qrels), read by ``_jsondoc``;
* **JSONL** — one object per line, ``{"qid", "docid", "score"}`` for runs
  and ``{"qid", "docid", "rel"}`` for qrels. The ir_measures spellings
  ``query_id``, ``doc_id`` and ``relevance`` are accepted too (ir_measures'
  ``ScoredDoc`` and ``Qrel`` records, written out with ``json.dumps``).

JSON Lines go through the project's one JSONL reader (``_jsonl.read_jsonl``:
one policy for blank lines and repeated keys, one set of messages) whenever
the fast path cannot vouch for the file; so their errors always carry the line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

import rankproof._limits as _limits
from rankproof._errors import InputError
from rankproof._io import PathLike, atomic_write
from rankproof.data._bounds import HugeInt, field_path
from rankproof.data._jsonl import (
    INT64_MAX,
    INT64_MIN,
    json_id,
    json_rel,
    json_score,
    json_type_name,
    read_jsonl,
)
from rankproof.data._model import Dedupe, Qrels, Run
from rankproof.data._text import ExtraColumns, Input, default_run_name, line_locator, split_lines

_encode_string = json.encoder.encode_basestring  # ensure_ascii=False; C-accelerated
# A key followed by space before its colon: the fast path's key count would miss it.
_SPACED_KEY = re.compile(r'"[ \t\r\n]+:')

# JSONL keys: the first spelling is ours, the others are accepted on input.
RUN_QID_KEYS = ("qid", "query_id")
RUN_DOCID_KEYS = ("docid", "doc_id")
RUN_SCORE_KEYS = ("score",)
QRELS_REL_KEYS = ("rel", "relevance")
_RUN_OPTIONAL = ("rank",)
_QRELS_OPTIONAL = ("iteration",)  # ir_measures' Qrel.iteration; ignored, as TREC's column 2


# -- JSON Lines -----------------------------------------------------------------


def _pick(obj: dict[str, Any], keys: tuple[str, ...], path: str, line: int) -> Any:
    """The value under whichever spelling of a key is present (exactly one)."""
    present = [k for k in keys if k in obj]
    if len(present) == 1:
        return obj[present[0]]
    spelled = " or ".join(repr(k) for k in keys)
    if not present:
        raise InputError(f"missing key {spelled}; found keys {_limits.shown(sorted(obj))}",
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
    # ``json.loads`` keeps the last of two equal keys. Every object has exactly
    # ``len(keys)`` distinct keys, and each key ends in '":' (no space allowed
    # here) while a value can add to the count but never hide one; so an exact
    # count means no object repeated a key.
    if text.count('":') != len(keys) * len(objs) or _SPACED_KEY.search(text):
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


def _jsonl_objects(src: Input, known: frozenset[str],
                   extra: ExtraColumns) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line, with unknown keys checked."""
    for lineno, obj in read_jsonl(src):
        if extra == "error" and not obj.keys() <= known:
            unknown = sorted(set(obj) - known)
            raise InputError(
                f"unexpected keys {_limits.shown(unknown)} (known: {sorted(known)}); "
                "pass extra_columns='ignore' to skip them",
                path=src.label, line=lineno, field=field_path((unknown[0],)),
            )
        yield lineno, obj


def check_extra(extra: str) -> None:
    """``extra_columns`` must be one of `ExtraColumns`."""
    if extra not in ("error", "ignore"):
        raise InputError(f"extra_columns must be 'error' or 'ignore', got {extra!r}",
                         field="extra_columns")


def read_jsonl_run(
    path: PathLike | Input,
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
    check_extra(extra_columns)
    src = Input.open(path)
    source = src.label
    run_name = name if name is not None else default_run_name(source)
    text = src.text()
    fast = _jsonl_fast(text, RUN_SCORE_KEYS, frozenset({int, float}), "rank", int)
    if fast is not None:
        try:
            fast_scores = np.array(fast[2], dtype=np.float64)
            if (np.abs(fast_scores) >= 10.0 ** _limits.MAX_INT_DIGITS).any():
                raise OverflowError  # maybe an integer too long: the careful pass decides
            # Lines only when there are ranks: `order="rank"` checks them after reading.
            return Run.from_columns(
                fast[0], fast[1], fast_scores,
                None if fast[3] is None else np.array(fast[3], dtype=np.int64),
                name=run_name, source=source, dedupe=dedupe,
                locator=None if fast[3] is None else line_locator(
                    [i for i, line in enumerate(split_lines(text), 1) if line.strip()]),
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
    for lineno, obj in _jsonl_objects(src, known, extra_columns):
        qids.append(json_id(_pick(obj, RUN_QID_KEYS, source, lineno), source, lineno, "qid"))
        docids.append(json_id(_pick(obj, RUN_DOCID_KEYS, source, lineno), source, lineno, "docid"))
        scores.append(json_score(_pick(obj, RUN_SCORE_KEYS, source, lineno), source, lineno,
                             "score"))
        if has_rank is None:
            has_rank = "rank" in obj
        if ("rank" in obj) != has_rank:
            first = "has" if has_rank else "has no"
            raise InputError(f"the first line {first} a 'rank'; give it on every line or none",
                             path=source, line=lineno, field="rank")
        if has_rank:
            rank = obj["rank"]
            if isinstance(rank, HugeInt):
                raise InputError(rank.message("rank"), path=source, line=lineno, field="rank")
            if isinstance(rank, bool) or not isinstance(rank, int) \
                    or not INT64_MIN <= rank <= INT64_MAX:
                raise InputError(f"rank must be an integer, found {json_type_name(rank)}",
                                 path=source, line=lineno, field="rank")
            ranks.append(rank)
        lines.append(lineno)
    return Run.from_columns(
        qids, docids, np.array(scores, dtype=np.float64),
        np.array(ranks, dtype=np.int64) if has_rank else None,
        name=run_name, source=source, dedupe=dedupe, locator=line_locator(lines),
    )


def read_jsonl_qrels(
    path: PathLike | Input,
    *,
    dedupe: Dedupe | None = None,
    extra_columns: ExtraColumns = "error",
) -> Qrels:
    """Read qrels with one ``{"qid", "docid", "rel"}`` object per line.

    ``query_id``/``doc_id``/``relevance`` are accepted too, and ir_measures'
    ``iteration`` is ignored (like the TREC qrels' second column).
    """
    check_extra(extra_columns)
    src = Input.open(path)
    source = src.label
    text = src.text()
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
    for lineno, obj in _jsonl_objects(src, known, extra_columns):
        qids.append(json_id(_pick(obj, RUN_QID_KEYS, source, lineno), source, lineno, "qid"))
        docids.append(json_id(_pick(obj, RUN_DOCID_KEYS, source, lineno), source, lineno, "docid"))
        rels.append(json_rel(_pick(obj, QRELS_REL_KEYS, source, lineno), source, lineno, "rel"))
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
