"""The line a malformed file is refused at, found at the speed of a read.

When Arrow's parse of a whitespace-separated file (`_trec._fast_table`) stops at a row
with the wrong number of fields, the reader used to fall back to the careful path,
which splits every line of the file in Python to name the first bad one: minutes for
a 10-million-line run that reads in seconds when clean. `refused_row` answers the same
question in one streaming pass of numpy and bytes searches instead, and only when it
can prove that its answer is the careful path's; otherwise it returns None and the
careful path decides, as before.

The proof, for a file whose every byte is plain (ASCII, no NUL, no whitespace but the
delimiter and ``\\n``: then decoding cannot fail and the careful split is a split on
the delimiter): every non-empty line before the refused one has exactly the expected
number of fields, no doubled, leading or trailing delimiter, and does not start with
``#`` (so the careful split accepts it, with the same fields); and the refused line,
split as the careful path splits it, has another number of fields that the careful path
refuses too. The careful path's first error is then the refused line's, with the same
words. Anything else (a carriage return, non-ASCII text, a line longer than a block,
a refused line the careful split would accept) is left to the careful path.
"""

from __future__ import annotations

import re

import numpy as np

from rankproof.data._stream import is_plain

__all__ = ["COLUMN_COUNT", "refused_row"]

COLUMN_COUNT = re.compile(r"CSV parse error: Expected (\d+) columns, got (\d+): (.*)", re.S)
"""Arrow's message for a row with the wrong number of fields, and that row's text."""

_BLOCK = 16 << 20


def refused_row(path: str, message: str, delimiter: str, want: int,
                allow_extra: bool) -> tuple[int, int] | None:
    """(line number, fields the careful split finds) of the row Arrow's ``message``
    refused in the file at ``path``, when that is provably the careful path's first
    error (see the module docstring); None otherwise."""
    match = COLUMN_COUNT.fullmatch(message)
    if match is None:
        return None
    row = match.group(3).encode("ascii", "replace")
    fields = len(row.split())
    if not row.strip() or row.lstrip().startswith(b"#"):
        return None  # the careful path skips such a line
    if fields == want or (fields > want and allow_extra):
        return None  # the careful split would accept it
    line = _find(path, row, ord(delimiter), want)
    return None if line is None else (line, fields)


def _find(path: str, row: bytes, delimiter: int, want: int) -> int | None:
    """The 1-based line number of the first line equal to ``row``, when the whole file is
    plain and every non-empty line before it is one the careful split accepts."""
    needle = b"\n" + row + b"\n"
    found: int | None = None
    lines = 0  # newlines before the current chunk
    tail = b""
    with open(path, "rb") as fh:
        while True:
            block = fh.read(_BLOCK)
            buf = tail + block
            if block:
                cut = buf.rfind(b"\n") + 1
                if cut == 0:
                    if len(buf) > 4 * _BLOCK:
                        return None  # one line longer than the blocks: not worth proving
                    tail = buf
                    continue
                chunk, tail = buf[:cut], buf[cut:]
            else:
                chunk, tail = buf, b""
                if not chunk:
                    break
                if not chunk.endswith(b"\n"):
                    chunk += b"\n"
            if b"\r" in chunk or not is_plain(chunk, chr(delimiter)):
                return None
            if found is None:
                at = (b"\n" + chunk).find(needle)
                scope = chunk if at < 0 else chunk[:at]
                if not _accepted(scope, delimiter, want):
                    return None
                if at >= 0:
                    found = lines + scope.count(b"\n") + 1
            lines += chunk.count(b"\n")
            if not block:
                break
    return found


def _accepted(scope: bytes, delimiter: int, want: int) -> bool:
    """Whether every non-empty line of ``scope`` (whole lines, plain) has ``want`` fields
    with single delimiters between them and none at either end, and no ``#`` first."""
    if not scope:
        return True
    arr = np.frombuffer(scope, dtype=np.uint8)
    ends = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], ends[:-1] + 1))
    filled = ends > starts
    if not filled.any():
        return True
    starts, ends = starts[filled], ends[filled]
    if (arr[starts] == delimiter).any() or (arr[ends - 1] == delimiter).any():
        return False
    if (arr[starts] == ord("#")).any():
        return False
    is_delim = arr == delimiter
    if (is_delim[1:] & is_delim[:-1]).any():
        return False
    counts = np.concatenate(([0], np.cumsum(is_delim, dtype=np.int64)))
    per_line = counts[ends] - counts[starts]
    return bool((per_line == want - 1).all())
