"""The one text reader: bytes → gunzip (by content) → drop a UTF-8 BOM → UTF-8 → lines.

Every reader in `rankproof.data` and `rankproof.corpus` gets its input
through an `Input`, so that the rules are the same for every format:

* ``-`` means standard input, read once, as bytes; everything after that
  works as for a file (gzip is still detected, the format can be sniffed
  from the content);
* gzip is recognised by its magic bytes (``1f 8b``), never by the name;
* a leading UTF-8 byte-order mark is dropped (Windows editors write one);
* invalid UTF-8 is an `InputError` naming the file, the line and the byte
  of the line, and (when the format can say) the field;
* a missing file, a directory or a file that cannot be opened is an
  `InputError` naming the path, never a bare `OSError`;
* a truncated or damaged gzip stream is an `InputError` naming the file,
  wherever it is noticed (the first line, Arrow's fast path, the full read);
* a stream — a FIFO, a process substitution (``<(zcat run.gz)``, which is
  ``/dev/fd/N``), a character device — is opened once and read whole at
  `Input.open`, then handled as bytes in memory, like ``-``: nothing sniffs
  its first line and reopens it, and nothing asks its size.

A regular file on disk is opened lazily: TREC's fast path streams it through
Arrow and never holds its bytes in Python.
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np

from rankproof._errors import InputError
from rankproof._io import (
    GZIP_ERRORS,
    GZIP_MAGIC,
    PathLike,
    gunzip,
    gzip_error,
    input_error,
    open_input,
    read_bytes,
)

BOM = b"\xef\xbb\xbf"
STDIN = "-"
STDIN_LABEL = "<stdin>"

#: What to do with columns (or JSONL keys) a format does not define.
ExtraColumns = Literal["error", "ignore"]

FieldAt = Callable[[bytes, int], "str | None"]


def strip_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte-order mark."""
    return data[len(BOM):] if data.startswith(BOM) else data


def decode(data: bytes, label: str | None, field_at: FieldAt | None = None) -> str:
    """UTF-8 text of ``data`` (BOM dropped); invalid UTF-8 raises a located `InputError`.

    ``field_at(raw_line, byte_offset)`` may name the field holding the bad
    byte, from the raw line and the byte's offset within it.
    """
    data = strip_bom(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = data[: exc.start]
        start = max(head.rfind(b"\n"), head.rfind(b"\r")) + 1
        lineno = head.count(b"\n") + head.replace(b"\r\n", b"\n").count(b"\r") + 1
        col = exc.start - start
        end = data.find(b"\n", exc.start)
        raw = data[start: end if end >= 0 else len(data)].rstrip(b"\r")
        field = field_at(raw, col) if field_at is not None else None
        raise InputError(f"invalid UTF-8 ({exc.reason}) at byte {col + 1} of the line",
                         path=label, line=lineno, field=field) from None


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


class Input:
    """One input — a file on disk, standard input, or bytes already in memory.

    ``label`` names it in messages and in ``Run.source``/``Qrels.source``
    (the path as given, or ``<stdin>``); ``path`` is set for a file on disk,
    which fast paths may stream instead of reading it whole. The content is
    read at most once and kept.
    """

    def __init__(self, label: str, *, path: Path | None = None,
                 data: bytes | None = None) -> None:
        self.label = label
        self.path = path
        self._raw = None if data is None else gunzip(data, label)
        self._gzipped = None if data is None else data.startswith(GZIP_MAGIC)

    @classmethod
    def open(cls, source: PathLike | Input, *, what: str | None = None) -> Input:
        """An `Input` for ``source``: ``-`` reads standard input (once), a path is checked.

        (A file literally named ``-`` is reached as ``./-``, as with most tools.)

        A missing file, a directory or an unreadable file raises `InputError`
        here, naming the path (``what`` names the file's role in the message).
        A FIFO, ``/dev/fd/N`` or a device is read whole here, on its only open
        (see `rankproof._io.open_input`).
        """
        if isinstance(source, Input):
            return source
        if str(source) == STDIN:
            try:
                data = sys.stdin.buffer.read()
            except (OSError, AttributeError, ValueError) as exc:
                raise InputError(f"cannot read standard input ({exc})",
                                 path=STDIN_LABEL) from None
            return cls(STDIN_LABEL, data=data)
        path, streamed = open_input(source, what)
        if streamed is not None:
            return cls(str(source), data=streamed)
        return cls(str(source), path=path)

    @classmethod
    def from_bytes(cls, data: bytes, label: str) -> Input:
        """Bytes already in memory (package data, a test), named ``label`` in messages."""
        return cls(label, data=data)

    @property
    def is_stdin(self) -> bool:
        return self.path is None and self.label == STDIN_LABEL

    @property
    def gzipped(self) -> bool:
        """Whether the content is gzip-compressed (by its magic bytes)."""
        if self._gzipped is None:
            assert self.path is not None
            try:
                with open(self.path, "rb") as fh:
                    self._gzipped = fh.read(2) == GZIP_MAGIC
            except OSError as exc:
                raise input_error(self.label, exc) from None
        return self._gzipped

    def raw(self) -> bytes:
        """The whole content, gunzipped, BOM kept (read on first use, then kept)."""
        if self._raw is None:
            assert self.path is not None
            self._raw = read_bytes(self.path)
        return self._raw

    def data(self) -> bytes:
        """The whole content, gunzipped, without a leading BOM."""
        return strip_bom(self.raw())

    def text(self, field_at: FieldAt | None = None) -> str:
        """The content as text (see :func:`decode`)."""
        return decode(self.raw(), self.label, field_at)

    def lines(self, field_at: FieldAt | None = None) -> list[str]:
        """The text split into lines (see :func:`split_lines`)."""
        return split_lines(self.text(field_at))

    def head(self, limit: int = 1 << 16) -> bytes:
        """Up to ``limit`` bytes from the start (gunzipped, BOM dropped), without
        reading a file on disk whole."""
        if self._raw is not None:
            return strip_bom(self._raw[:limit])
        assert self.path is not None
        try:
            if self.gzipped:
                with gzip.open(self.path, "rb") as fh:
                    return strip_bom(fh.read(limit))
            with open(self.path, "rb") as fh:
                return strip_bom(fh.read(limit))
        except GZIP_ERRORS as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise input_error(self.label, exc) from None
            raise gzip_error(self.label, exc) from None

    def first_line(self, limit: int = 1 << 16) -> bytes:
        """The first line (within ``limit`` bytes), line end included."""
        head = self.head(limit)
        cut = [i for i in (head.find(b"\n"), head.find(b"\r")) if i >= 0]
        if not cut:
            return head
        end = min(cut) + 1
        if head[end - 1: end + 1] == b"\r\n":
            end += 1
        return head[:end]

    def first_data_line(self, limit: int = 1 << 16) -> bytes:
        """The first line that is neither blank nor a ``#`` comment (stripped), or b""."""
        for raw in self.head(limit).splitlines():
            line = raw.strip()
            if line and not line.startswith(b"#"):
                return line
        return b""


def default_run_name(path: PathLike) -> str:
    """The file name without ``.gz`` and format suffixes: the label of a run.

    Standard input is named ``stdin``.
    """
    if str(path) in (STDIN, STDIN_LABEL):
        return "stdin"
    name = Path(path).name
    for suffix in (".gz", ".jsonl", ".ndjson", ".json", ".txt", ".trec", ".run", ".tsv"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def line_locator(lines: list[int]) -> Callable[[int], int]:
    """Row index → line number, for ``from_columns(locator=...)``."""
    arr = np.asarray(lines, dtype=np.int64)
    return lambda row: int(arr[row])
