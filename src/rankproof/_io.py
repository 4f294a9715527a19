"""File plumbing shared by every reader and writer: gzip sniffing, reading a
path the user gave (its `OSError` turned into an `InputError` naming it), and
atomic writes."""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import os
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from rankproof._errors import InputError

GZIP_MAGIC = b"\x1f\x8b"

PathLike = str | os.PathLike[str]

_REASONS = {
    errno.ENOENT: "no such file",
    errno.EISDIR: "is a directory, expected a file",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOTDIR: "no such file (a parent is not a directory)",
}


def os_error_reason(exc: OSError) -> str:
    """A short, stable phrase for what went wrong (``no such file``, ...)."""
    reason = _REASONS.get(exc.errno or 0)
    if reason is not None:
        return reason
    return f"cannot read: {exc.strerror or exc}"


def input_error(path: PathLike, exc: OSError, what: str | None = None) -> InputError:
    """The `InputError` for an `OSError` met on a path the user gave.

    ``what`` names the file's role (``"the judgments file"``) when the bare
    reason would not say enough.
    """
    reason = os_error_reason(exc)
    if what is not None:
        reason = f"cannot read {what}: {reason}"
    return InputError(reason, path=str(path))


def check_file(path: PathLike, what: str | None = None) -> Path:
    """``path`` as a `Path` when it names a readable regular file, else an `InputError`.

    Checked before a reader starts, so that a missing file or a directory is
    reported as such rather than as whatever the parser makes of it.
    """
    p = Path(path)
    try:
        if p.is_dir():
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(p))
        with open(p, "rb"):
            pass
    except OSError as exc:
        raise input_error(path, exc, what) from None
    return p


def is_gzip(path: PathLike) -> bool:
    """True when the file starts with the gzip magic bytes (whatever its suffix)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == GZIP_MAGIC
    except OSError as exc:
        raise input_error(path, exc) from None


def gunzip(data: bytes, label: str) -> bytes:
    """``data`` decompressed when it starts with the gzip magic, else as is."""
    if not data.startswith(GZIP_MAGIC):
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"not a valid gzip stream ({exc})", path=label) from None


def read_bytes(path: PathLike, what: str | None = None) -> bytes:
    """The file's bytes, gunzipped when it is gzip-compressed (by content)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise input_error(path, exc, what) from None
    return gunzip(data, str(path))


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
    try:
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target))
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise InputError(f"cannot write here: {os_error_reason(exc)}", path=str(target)) from None
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
        try:
            os.replace(tmp, target)
        except OSError as exc:
            raise InputError(f"cannot write here: {os_error_reason(exc)}",
                             path=str(target)) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
