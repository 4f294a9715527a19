"""File plumbing shared by every reader and writer: gzip sniffing, atomic writes."""

from __future__ import annotations

import contextlib
import gzip
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
    A ``.gz`` suffix writes gzip-compressed text.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        if target.suffix == ".gz":
            os.close(fd)
            gz_mode = mode if "b" in mode else mode.replace("w", "wt")
            with gzip.open(tmp, gz_mode, encoding=None if "b" in mode else encoding) as gz:
                yield gz  # type: ignore[misc]
        else:
            with open(fd, mode, encoding=None if "b" in mode else encoding, newline="") as fh:
                yield fh
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
