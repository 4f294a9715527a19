"""One parse of a TREC file by Arrow, its plainness checked beside it, and no Python in Arrow.

The TREC fast path (``_trec._fast_table``) parses with Arrow's multi-threaded
``read_csv``. A *plain* file — ASCII, no NUL, no whitespace byte but the
delimiter and line ends, which is what retrieval tools write — can be parsed
reading only the needed columns and skipping UTF-8 validation: Arrow's split
on the one delimiter is then exactly the careful path's split on any
whitespace. Whether a file is plain is decided by `PlainScan`, on a thread of
its own, while Arrow parses the file (``bytes.isascii`` and ``in`` run at
memory speed over blocks the page cache already holds); only a file that
turns out not to be plain is read again, every column validated, or by the
careful path.

**Arrow is only ever handed native sources** — a path, Arrow's own gzip
stream, or a buffer in Arrow's memory pool (`arrow_owned`) — never a Python
file object and never a buffer that references Python bytes. Arrow's I/O and
CPU threads call into such objects (each read) and release them (the last
reference to a block or to the stream is often dropped on an Arrow thread,
*after* ``read_csv`` has returned). A thread that takes the GIL while the
interpreter is finalizing is ended by CPython 3.11 with ``pthread_exit``,
whose forced unwind through a ``noexcept`` frame of Arrow's thread pool
aborts the whole process: "terminate called without an active exception",
exit status 134, after the command had printed its result (issue 28; seen
with pyarrow 26.0.1 on CPython 3.11.7, once in a few hundred processes under
load). An earlier version handed Arrow a Python file object that checked
each block as Arrow read it; the scan thread does the same work and is
always joined before the parse's result is used.

(Earlier still, the whole file was scanned first and then streamed into
preallocated arrays on one thread: about 1.2 s for a 7-million-line run
against 0.45 s for the two-core parse, at ~200 MiB more peak memory.)
"""

from __future__ import annotations

import threading
from types import TracebackType

import pyarrow as pa

# Every byte ``bytes.split()`` splits on: the careful path's field separators.
WHITESPACE = b" \t\n\r\x0b\x0c"
# The scan's block: as large as Arrow's own (see ``_trec``), so the check of a
# block costs about a millisecond and a stop request is honoured that fast.
SCAN_BLOCK = 4 << 20


def _foreign(delimiter: str) -> list[bytes]:
    allowed = b"\r\n" + delimiter.encode()
    return [bytes((b,)) for b in WHITESPACE + b"\x00" if b not in allowed]


def _plain(chunk: bytes | bytearray, foreign: list[bytes]) -> bool:
    return chunk.isascii() and not any(f in chunk for f in foreign)


def is_plain(chunk: bytes, delimiter: str) -> bool:
    """Whether ``chunk`` is ASCII with no NUL and no whitespace but ``delimiter`` and line ends."""
    return _plain(chunk, _foreign(delimiter))


def arrow_owned(data: bytes) -> pa.Buffer:
    """A copy of ``data`` in Arrow's memory pool, for a reader Arrow parses on its threads.

    ``pa.BufferReader(data)`` would hand Arrow a buffer that references the
    Python object; Arrow releases its blocks on its own threads, which then
    need the GIL (see the module docstring). One copy at memory speed, for
    input that is already in memory (standard input, a FIFO, test bytes).
    """
    buf = pa.allocate_buffer(len(data))
    if data:
        memoryview(buf).cast("B")[:] = data
    return buf


class PlainScan:
    """Whether a file on disk is plain, decided on a thread of ours while Arrow parses it.

    Use as a context manager around the parse; `plain` is read after the
    block. Leaving the block joins the thread, so no scan outlives the read;
    leaving it by an exception (the parse failed, or the command was
    interrupted) stops the scan at the next block, and the file then counts
    as not plain — the safe answer, which only costs a validated re-read.
    A plain check cannot straddle blocks wrongly: every test is on single bytes.
    """

    def __init__(self, path: str, delimiter: str) -> None:
        self._path = path
        self._foreign = _foreign(delimiter)
        self._stop = threading.Event()
        self._found: bool | None = None
        self._thread = threading.Thread(target=self._scan, name="rankproof-plain-scan")

    def __enter__(self) -> PlainScan:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is not None:
            self._stop.set()
        self._thread.join()

    def stop(self) -> None:
        """The answer is no longer needed: end the scan at the next block."""
        self._stop.set()

    @property
    def plain(self) -> bool:
        """True only when every byte of the file was checked and found plain."""
        if self._thread.is_alive():
            raise RuntimeError("PlainScan.plain read before the scan was joined")
        return bool(self._found) and not self._stop.is_set()

    def _scan(self) -> None:
        buf = bytearray(SCAN_BLOCK)
        view = memoryview(buf)
        plain = True
        try:
            with open(self._path, "rb", buffering=0) as fh:
                while plain and not self._stop.is_set():
                    n = fh.readinto(buf)
                    if not n:
                        break
                    plain = _plain(buf if n == len(buf) else bytes(view[:n]), self._foreign)
        except OSError:  # the parse reads the same file and reports its own error
            plain = False
        finally:
            view.release()
        self._found = plain
