"""One TREC run file cut into byte ranges of whole topics, for several workers at once.

Why: a run's topics are evaluated independently (`rankproof.measures.evaluate_partition`),
and a TREC run written by a retrieval tool holds each topic's lines together. So one
large run can be spread over workers without any of them reading the whole file: the
file is cut at a few offsets, each moved forward to the first line of the next topic,
and each worker reads its ``[start, end)`` bytes with the one TREC reader. Finding the
cuts reads a few kilobytes around each one, not the file.

`topic_ranges` refuses to cut (and says why, in `TopicRanges.reason`) wherever a cut
could change what is read: standard input (read once), anything but a regular file,
gzip (no byte offsets into the text), a format other than TREC, a run too small to be
worth cutting, a topic that runs past the scan, lone carriage returns. It does not check
that no topic appears in two ranges (that would need the whole file): the caller checks
the topics that come back (`rankproof.measures.combine_partitions` refuses a topic met
twice) and reads the run whole when they overlap.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import BinaryIO

from rankproof._errors import InputError
from rankproof._io import GZIP_MAGIC, PathLike, input_error
from rankproof.data._model import Dedupe, Run
from rankproof.data._parquet import PARQUET_MAGIC
from rankproof.data._text import BOM, STDIN, ExtraColumns, Input
from rankproof.data._trec import read_trec_run

MIN_RANGE_BYTES = 64 << 10
"""The smallest range `topic_ranges` cuts by default (64 KiB, about 1,600 TREC lines): below it a
worker's start-up and the qrels it needs cost more than its share of the run."""
MAX_SCAN_BYTES = 64 << 20
"""How far past a cut point the scan for the next topic's first line goes: a topic longer
than this leaves that cut out (the ranges around it merge)."""
_SCAN_BLOCK = 64 << 10


@dataclass(frozen=True)
class TopicRanges:
    """Where a run file is cut: ``ranges`` (``(start, end)`` byte offsets, consecutive,
    covering the file, each starting at a topic's first line), or the whole file as one
    range and the ``reason`` it was not cut (``size`` 0 where it is unknown)."""

    path: str
    size: int
    ranges: tuple[tuple[int, int], ...]
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.reason is not None:
            if self.ranges != ((0, self.size),):
                raise ValueError("a run that is not cut has one range, the whole file")
            return
        if len(self.ranges) < 2:
            raise ValueError("a cut run has at least two ranges (else give the reason)")
        at = 0
        for start, end in self.ranges:
            if start != at or end <= start:
                raise ValueError(f"ranges must be consecutive and non-empty: {self.ranges}")
            at = end
        if at != self.size:
            raise ValueError(f"ranges end at {at}, the file at {self.size}")

    @property
    def split(self) -> bool:
        return len(self.ranges) > 1


def _whole(path: str, size: int, reason: str) -> TopicRanges:
    """The run read whole (``size`` 0: unknown, for standard input or a pipe)."""
    return TopicRanges(path=path, size=size, ranges=((0, size),), reason=reason)


def _qid(line: bytes) -> bytes | None:
    """The first field of a raw line, or None for a blank or ``#`` comment line."""
    stripped = line.strip()
    if not stripped or stripped.startswith(b"#"):
        return None
    return stripped.split(None, 1)[0]


def _next_topic_start(fh: BinaryIO, pos: int) -> int | None:
    """The offset of the first line at or after ``pos``'s line whose topic differs from
    that line's topic, or None (end of file, or past `MAX_SCAN_BYTES`).

    Raises ValueError on a lone carriage return (line ends would be ambiguous)."""
    fh.seek(pos - 1)
    buf = bytearray(fh.read(_SCAN_BLOCK))
    base = pos - 1
    # Move to the start of the line after the one ``pos - 1`` sits in.
    nl = buf.find(b"\n")
    while nl < 0:
        more = fh.read(_SCAN_BLOCK)
        if not more:
            return None
        buf += more
        nl = buf.find(b"\n")
    at = nl + 1
    current: bytes | None = None
    while True:
        end = buf.find(b"\n", at)
        if end < 0:
            if base + len(buf) - pos > MAX_SCAN_BYTES:
                return None
            more = fh.read(_SCAN_BLOCK)
            if not more:
                return None  # the last line: no topic starts after it
            del buf[:at]
            base += at
            at = 0
            buf += more
            continue
        line = bytes(buf[at:end])
        if b"\r" in line.rstrip(b"\r"):
            raise ValueError("lone carriage return")
        qid = _qid(line)
        if qid is not None:
            if current is None:
                current = qid
            elif qid != current:
                return base + at
        at = end + 1


def topic_ranges(path: PathLike, parts: int, *, min_bytes: int = MIN_RANGE_BYTES,
                 run_format: str | None = None) -> TopicRanges:
    """``path`` cut into at most ``parts`` byte ranges of whole topics (see the module
    docstring), each at least about ``min_bytes`` long; one range and a ``reason`` where
    it cannot or should not be cut. ``run_format`` is the format the caller reads the run
    as (None: by content)."""
    if isinstance(parts, bool) or not isinstance(parts, int) or parts < 1:
        raise InputError(f"parts must be a positive integer, got {parts!r}", field="parts")
    p = str(path)
    if p == STDIN:
        return _whole(p, 0, "standard input is read once, by one reader")
    try:
        st = os.stat(p)
    except OSError as exc:
        raise input_error(p, exc, "run") from None
    if not os.path.isfile(p):
        return _whole(p, 0, "it is not a regular file")
    size = st.st_size
    try:
        with open(p, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise input_error(p, exc, "run") from None
    if head[:2] == GZIP_MAGIC:
        return _whole(p, size, "it is gzip-compressed (no byte offsets into its text)")
    if head == PARQUET_MAGIC:
        return _whole(p, size, "it is a Parquet file, not TREC text")
    from rankproof.data._load import sniff_format

    fmt = run_format or sniff_format(p, kind="run")
    if fmt != "trec":
        return _whole(p, size, f"it is read as {fmt}, not as a TREC run")
    wanted = min(parts, size // max(1, min_bytes))
    if wanted < 2:
        return _whole(p, size, f"it is too small to cut ({size:,} bytes; a range is at "
                               f"least {min_bytes:,})" if parts > 1 else "one range asked for")
    cuts: list[int] = []
    try:
        with open(p, "rb") as fh:
            for i in range(1, wanted):
                pos = i * size // wanted
                if cuts and pos <= cuts[-1]:
                    continue
                cut = _next_topic_start(fh, max(pos, 1))
                if cut is not None and 0 < cut < size and (not cuts or cut > cuts[-1]):
                    cuts.append(cut)
    except ValueError:
        return _whole(p, size, "a carriage return alone ends a line (line ends are ambiguous)")
    except OSError as exc:
        raise input_error(p, exc, "run") from None
    if not cuts:
        return _whole(p, size, "no topic boundary was found (one topic, or very long ones)")
    bounds = [0, *cuts, size]
    return TopicRanges(path=p, size=size, ranges=tuple(itertools.pairwise(bounds)))


def read_run_range(path: PathLike, start: int, end: int, *, name: str | None = None,
                   dedupe: Dedupe | None = None,
                   extra_columns: ExtraColumns = "error") -> Run:
    """The run held by bytes ``[start, end)`` of the TREC file ``path`` (a range of
    `topic_ranges`), read by the one TREC reader: its name and source are the file's, its
    tag the range's first data line's. Lines in its errors and notes count from the
    range's start (`lines_before` converts them); a lone carriage return is refused."""
    p = str(path)
    try:
        with open(p, "rb") as fh:
            fh.seek(start)
            data = fh.read(end - start)
    except OSError as exc:
        raise input_error(p, exc, "run") from None
    if start and (data.startswith(BOM) or data.startswith(GZIP_MAGIC)):
        data = b"\n" + data  # the reader would take them for the file's own
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        raise InputError("a carriage return alone ends a line; a byte range reads lines "
                         "ending in \\n or \\r\\n", path=p)
    return read_trec_run(Input.from_bytes(data, p), name=name, dedupe=dedupe,
                         extra_columns=extra_columns)


def lines_before(path: PathLike, offset: int) -> int:
    """How many lines of ``path`` end before byte ``offset`` (to name a range's lines as
    the whole file's; read in blocks, only when a range has something to say)."""
    count = 0
    left = offset
    with open(str(path), "rb") as fh:
        while left > 0:
            block = fh.read(min(left, 16 << 20))
            if not block:
                break
            count += block.count(b"\n")
            left -= len(block)
    return count
