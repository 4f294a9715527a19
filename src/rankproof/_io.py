"""File plumbing shared by every reader and writer: gzip sniffing, atomic writes."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

GZIP_MAGIC = b"\x1f\x8b"

PathLike = str | os.PathLike[str]


def is_gzip(path: PathLike) -> bool:
    """True when the file starts with the gzip magic bytes (whatever its suffix)."""
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def read_bytes(path: PathLike) -> bytes:
    """The file's bytes, gunzipped when it is gzip-compressed."""
    if is_gzip(path):
        with gzip.open(path, "rb") as fh:
            return fh.read()
    return Path(path).read_bytes()


@contextlib.contextmanager
def atomic_write(
    path: PathLike, mode: str = "w", encoding: str | None = "utf-8"
) -> Iterator[IO[Any]]:
    """Write to a temporary file beside ``path``, then rename it into place.

    A failure part-way leaves ``path`` untouched and no temporary file behind.
    The file gets the permissions a plain ``open`` would give it (``0o666``
    less the umask), not ``mkstemp``'s private ``0o600``. A ``.gz`` suffix
    writes gzip-compressed text with no name or time in the header, so the
    same content always gives the same bytes.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        if target.suffix == ".gz":
            os.close(fd)
            with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                       mtime=0) as gz:
                if "b" in mode:
                    yield gz  # type: ignore[misc]
                else:
                    with io.TextIOWrapper(gz, encoding=encoding, newline="") as text:
                        yield text
        else:
            with open(fd, mode, encoding=None if "b" in mode else encoding, newline="") as fh:
                yield fh
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
