"""The one JSON Lines reader, and the JSON helpers every JSON reader shares.

Runs, qrels, judgments and the BEIR adapter's ``corpus.jsonl`` /
``queries.jsonl`` all read JSON Lines through :func:`read_jsonl`, so they
follow one policy and speak with one set of messages:

* one JSON object per line; blank lines are skipped;
* a key repeated within one object is an error naming the line and the key
  (``json`` would silently keep the last of the two);
* invalid JSON names the line and the column; nesting deeper than
  `MAX_NESTING_DEPTH` and integers longer than `MAX_INT_DIGITS` are refused
  naming the line and the field (``_bounds``), never a crash;
* invalid UTF-8, a BOM, gzip and ``-`` are the text reader's (`Input`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import rankproof._limits as _limits
from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof.data._bounds import HugeInt, json_loads, json_problem
from rankproof.data._text import Input


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def check_keys(obj: Mapping[str, Any], allowed: Sequence[str], what: str, *,
               path: str | None = None, line: int | None = None) -> None:
    """Refuse an object with keys outside ``allowed``: a typo'd key is a lost value.

    The `InputError` names the first unknown key as its field, and the message
    lists every unknown key and what ``what`` may hold (``"a case"``).
    """
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise InputError(f"unknown key(s) {', '.join(map(repr, unknown))}; {what} has "
                         f"{', '.join(allowed)}", path=path, line=line, field=unknown[0])


def json_type_name(value: Any) -> str:
    """How a JSON value is named in messages (``an array``, ``a string 'x'``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"a string {_limits.shown(value)}"
    if isinstance(value, dict | tuple):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return _limits.shown(value)


def json_error(exc: json.JSONDecodeError, path: str | None, line: int | None = None,
               *, column: bool = True) -> InputError:
    """The one message for text that is not JSON."""
    where = f" at column {exc.colno}" if column else ""
    return InputError(f"invalid JSON: {exc.msg}{where}", path=path,
                      line=exc.lineno if line is None else line)


def loads_object(text: str, path: str | None, line: int | None) -> dict[str, Any]:
    """One JSON object, with repeated keys refused (see the module docstring)."""
    try:
        value = json_loads(text, pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise json_error(exc, path, line) from None
    except _DuplicateKey as exc:
        raise InputError(f"invalid JSON object: duplicate key {_limits.shown(exc.key)}",
                         path=path, line=line) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path=path, line=line) from None
    if type(value) is not dict:
        raise InputError(f"expected a JSON object, found {json_type_name(value)}; a JSON "
                         "Lines file holds one JSON object per line", path=path, line=line)
    problem = json_problem(value)
    if problem is not None:
        raise InputError(problem[0], path=path, line=line, field=problem[1])
    return value


def read_jsonl(
    source: PathLike | Input, *, allow_empty: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSON Lines input.

    ``source`` is a path, ``-`` (standard input) or an `Input`. A file with
    no objects raises `InputError` ("the file is empty") unless
    ``allow_empty``, for callers that report emptiness in their own terms.
    """
    src = Input.open(source)
    lines = src.lines()
    seen = False
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        seen = True
        yield lineno, loads_object(line, src.label, lineno)
    if not seen and not allow_empty:
        raise InputError("the file is empty", path=src.label)


# -- values of runs and qrels ---------------------------------------------------

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def json_score(value: Any, path: str, line: int | None, field: str, where: str = "") -> float:
    """A finite float from a JSON number; booleans and strings are refused."""
    if isinstance(value, HugeInt):
        raise InputError(value.message(f"score{where}"), path=path, line=line, field=field)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"score{where} must be a number, found {json_type_name(value)}",
                         path=path, line=line, field=field)
    try:
        out = float(value)
    except OverflowError:
        out = math.inf
    if not math.isfinite(out):
        raise InputError(f"score{where} must be a finite number, found {_limits.shown(value)}",
                         path=path, line=line, field=field)
    return out


def json_rel(value: Any, path: str, line: int | None, field: str, where: str = "") -> int:
    """An int64 relevance label; ``2.0`` is accepted as 2, ``1.5`` and ``true`` are not."""
    if isinstance(value, HugeInt):
        raise InputError(value.message(f"relevance{where}"), path=path, line=line, field=field)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"relevance{where} must be an integer, found {json_type_name(value)}",
                         path=path, line=line, field=field)
    if not INT64_MIN <= value <= INT64_MAX:
        raise InputError(f"relevance{where} {_limits.shown(value)} does not fit in 64 bits",
                         path=path, line=line, field=field)
    return value


def json_id(value: Any, path: str, line: int | None, field: str) -> str:
    """Ids are strings; integers (``"qid": 301``) are taken as their decimal text."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, HugeInt):
        raise InputError(value.message(field), path=path, line=line, field=field)
    raise InputError(f"{field} must be a string or an integer, found {json_type_name(value)}",
                     path=path, line=line, field=field)
