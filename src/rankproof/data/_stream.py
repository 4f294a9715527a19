"""One pass over a TREC file: Arrow parses it while each block is checked for plainness.

The TREC fast path (``_trec._fast_table``) parses with Arrow's multi-threaded
``read_csv``. A *plain* file — ASCII, no NUL, no whitespace byte but the
delimiter and line ends, which is what retrieval tools write — can be parsed
reading only the needed columns and skipping UTF-8 validation: Arrow's split
on the one delimiter is then exactly the careful path's split on any
whitespace. Whether a file is plain is decided while Arrow reads it:
`PlainCheckedFile` hands Arrow the file's blocks and checks each one as it
passes (``bytes.isascii`` and ``in`` run at memory speed), so the file is read
from disk once. Only a file that turns out not to be plain is read again,
every column validated, or by the careful path.

(Earlier versions scanned the whole file first and then streamed it into
preallocated arrays on one thread: about 1.2 s for a 7-million-line run
against 0.45 s for this, at ~200 MiB less peak memory. The two-core parse
is what ``rankproof measure`` is timed by, so speed won; `Run` columns are
still made contiguous one column at a time, see ``_trec._contiguous``.)
"""

from __future__ import annotations

import io

# Every byte ``bytes.split()`` splits on: the careful path's field separators.
WHITESPACE = b" \t\n\r\x0b\x0c"


def _foreign(delimiter: str) -> list[bytes]:
    allowed = b"\r\n" + delimiter.encode()
    return [bytes((b,)) for b in WHITESPACE + b"\x00" if b not in allowed]


def _plain(chunk: bytes, foreign: list[bytes]) -> bool:
    return chunk.isascii() and not any(f in chunk for f in foreign)


def is_plain(chunk: bytes, delimiter: str) -> bool:
    """Whether ``chunk`` is ASCII with no NUL and no whitespace but ``delimiter`` and line ends."""
    return _plain(chunk, _foreign(delimiter))


class PlainCheckedFile(io.RawIOBase):
    """A binary file that Arrow reads, checking each block it hands over for plainness.

    ``plain`` is True until a block is not (see `is_plain`); after that the
    remaining blocks are passed through unchecked, since the caller will
    re-read the file the careful way anyway. A plain check cannot straddle
    blocks wrongly: every test is on single bytes.
    """

    def __init__(self, path: str, delimiter: str) -> None:
        super().__init__()
        self._fh = open(path, "rb", buffering=0)  # noqa: SIM115 (closed by close())
        self._foreign = _foreign(delimiter)
        self.plain = True

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = self._fh.readinto(buffer)
        if n and self.plain:
            self.plain = _plain(bytes(memoryview(buffer)[:n]), self._foreign)
        return n or 0

    def close(self) -> None:
        self._fh.close()
        super().close()
