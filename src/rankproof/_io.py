"""File plumbing shared by every reader and writer: gzip sniffing, reading a
path the user gave once (its `OSError` turned into an `InputError` naming it,
a pipe read whole on its one open), and writes that never leave a half-written
file.

**Writes.** `atomic_write` (one file), `commit_all` (several files that stand
or fall together) and `write_new` (create-exclusive) share one notion of a
destination (`destination`):

* a regular file, or a path that does not exist yet, is written to a
  temporary file beside it, flushed and fsynced, then renamed over it, so a
  reader sees the old file or the new one, never a mix;
* a symbolic link is written *through*: the temporary file goes beside the
  link's target and replaces the target, so the link stays a link;
* a FIFO, a character or block device or a socket (``/dev/null``, a pipe
  made with ``mkfifo``) is opened and written in place — there is nothing
  to replace atomically, and replacing a device node with a regular file
  (as root) would be vandalism; ``/dev/stdout``, ``/dev/stderr`` and
  ``/dev/fd/N`` write to the process's own descriptor, as ``-`` does;
* a directory is refused.

Every `OSError` met while writing (a full disk, ``RLIMIT_FSIZE``, a
read-only file system, a missing permission) becomes one `InputError`
naming the path the user gave, never the temporary name, and the temporary
file is removed. `BaseException` (Ctrl-C, the CLI's SIGTERM handler)
removes it too.

**Test-only hook.** When ``RANKPROOF_TEST_PAUSE_BEFORE_RENAME`` names a file,
every write creates that file once its temporary files are complete and
waits (up to a minute) until the file is removed before renaming anything.
A test can thus send a signal to a real process at the one moment a
temporary file exists, deterministically. Nothing reads the variable
unless it is set; it is not a user setting.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO

from rankproof._errors import InputError, WriteError

GZIP_MAGIC = b"\x1f\x8b"

PathLike = str | os.PathLike[str]

PAUSE_ENV = "RANKPROOF_TEST_PAUSE_BEFORE_RENAME"
"""Test-only: a flag file a write creates, then waits on, just before its rename."""

_PAUSE_LIMIT_S = 60.0

_REASONS = {
    errno.ENOENT: "no such file",
    errno.EISDIR: "is a directory, expected a file",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOTDIR: "no such file (a parent is not a directory)",
}


_WRITE_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large (a file-size limit or the file system's)",
    errno.EROFS: "read-only file system",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "a parent is not a directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOENT: "no such directory",
    errno.ELOOP: "too many levels of symbolic links",
    errno.ENXIO: "no process is reading the FIFO",
}

_FD_PATH = re.compile(r"^/(?:dev/fd|proc/self/fd)/(\d+)$")
_STD_PATHS = {"/dev/stdout": 1, "/dev/stderr": 2}


def os_error_reason(exc: OSError) -> str:
    """A short, stable phrase for what went wrong (``no such file``, ...)."""
    reason = _REASONS.get(exc.errno or 0)
    if reason is not None:
        return reason
    return f"cannot read: {exc.strerror or exc}"


def write_reason(exc: OSError) -> str:
    """A short phrase for why a write failed (``no space left on the device``, ...)."""
    reason = _WRITE_REASONS.get(exc.errno or 0)
    if reason is not None:
        return reason
    return str(exc.strerror or exc).lower()


def write_error(path: PathLike, exc: OSError) -> WriteError:
    """The one-line `WriteError` (an `InputError` and an `OSError`) for an `OSError` met
    writing the path the user gave."""
    if isinstance(exc, WriteError):
        return exc
    return WriteError(f"cannot write here: {write_reason(exc)}", path=os.fspath(path),
                      errno=exc.errno)


def input_error(path: PathLike, exc: OSError, what: str | None = None) -> InputError:
    """The `InputError` for an `OSError` met on a path the user gave.

    ``what`` names the file's role (``"the judgments file"``) when the bare
    reason would not say enough.
    """
    reason = os_error_reason(exc)
    if what is not None:
        reason = f"cannot read {what}: {reason}"
    return InputError(reason, path=str(path))


def open_input(path: PathLike, what: str | None = None) -> tuple[Path, bytes | None]:
    """Open ``path`` once: ``(path, None)`` for a regular file, ``(path, content)`` otherwise.

    Why one open: a FIFO, a process substitution (``<(cat run)``, which is
    ``/dev/fd/N``) or a character device can be read only once, and opening a
    FIFO blocks until its writer comes. So the path is opened here, exactly
    once, and ``fstat`` of the open descriptor decides: a regular file is
    closed again and read lazily by path (readers may stream it, or read its
    first line and then the whole); anything else is read whole, now, and
    its bytes (still compressed, if they are) are returned, so that no
    later step reopens it or asks its size (a pipe's ``st_size`` is 0, which
    is not "empty"). A directory, a missing or unreadable path is an
    `InputError` naming it. A FIFO nobody writes to waits for a writer, as
    ``cat`` does.
    """
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise input_error(path, exc, what) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(p))
        if stat.S_ISREG(mode):
            return p, None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return p, b"".join(chunks)
    except OSError as exc:
        raise input_error(path, exc, what) from None
    finally:
        os.close(fd)


GZIP_ERRORS = (OSError, EOFError, zlib.error)
"""What Python's gzip module raises for a truncated or damaged stream (bad header,
bad deflate data, bad CRC or length, a stream that ends early)."""


def gzip_error(label: str, exc: BaseException) -> InputError:
    """The `InputError` for a damaged gzip stream: it names the file, so a corrupt
    input is exit 2 ("fix this file"), never a traceback or "a check failed"."""
    detail = str(exc) or type(exc).__name__
    return InputError(f"not a valid gzip stream, the file is truncated or damaged ({detail})",
                      path=label)


def gunzip(data: bytes, label: str) -> bytes:
    """``data`` decompressed when it starts with the gzip magic, else as is."""
    if not data.startswith(GZIP_MAGIC):
        return data
    try:
        return gzip.decompress(data)
    except GZIP_ERRORS as exc:
        raise gzip_error(label, exc) from None


def read_bytes(path: PathLike, what: str | None = None) -> bytes:
    """The file's bytes, gunzipped when it is gzip-compressed (by content)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise input_error(path, exc, what) from None
    return gunzip(data, str(path))


# -- destinations ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Destination:
    """Where the bytes for a path the user named go (see the module docstring).

    ``given`` is the user's spelling (the one every message names); ``path``
    is the file actually replaced (a link's target); ``through`` says the
    path is written in place (a device, a FIFO); ``fd`` is a descriptor of
    this process to write to (``/dev/stdout``).
    """

    given: str
    path: Path
    through: bool = False
    fd: int | None = None

    @property
    def replaced(self) -> bool:
        """True when a temporary file is renamed over ``path`` (a regular file or a new one)."""
        return not self.through and self.fd is None


def destination(path: PathLike) -> Destination:
    """Resolve the path the user named for writing; a directory is an `InputError`."""
    given = os.fspath(path)
    std = _STD_PATHS.get(given)
    match = _FD_PATH.match(given)
    if std is not None or match is not None:
        return Destination(given, Path(given), fd=std if std is not None else int(match[1])
                           if match else None)
    target = Path(given)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise write_error(given, exc) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise write_error(given, IsADirectoryError(errno.EISDIR, "Is a directory"))
    if st is not None and not stat.S_ISREG(st.st_mode):
        return Destination(given, target, through=True)
    if target.is_symlink():
        return Destination(given, Path(os.path.realpath(target)))
    return Destination(given, target)


def pause_before_rename() -> None:
    """The test-only hook of the module docstring: announce, then wait for the flag to go."""
    flag = os.environ.get(PAUSE_ENV)
    if not flag:
        return
    with contextlib.suppress(OSError):
        Path(flag).touch()
    deadline = time.monotonic() + _PAUSE_LIMIT_S
    while os.path.exists(flag) and time.monotonic() < deadline:
        time.sleep(0.01)


def current_umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _new_mode(dest: Destination) -> int:
    """An existing file keeps its permissions; a new one gets ``0o666`` less the umask."""
    try:
        return stat.S_IMODE(os.stat(dest.path).st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def _temporary(dest: Destination) -> tuple[int, str]:
    """A fresh temporary file beside ``dest.path`` (parents made), with its final mode."""
    try:
        dest.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.path.name}.", suffix=".tmp",
                                   dir=dest.path.parent)
    except OSError as exc:
        raise write_error(dest.given, exc) from None
    try:
        os.fchmod(fd, _new_mode(dest))
    except OSError as exc:
        os.close(fd)
        os.unlink(tmp)
        raise write_error(dest.given, exc) from None
    return fd, tmp


@contextlib.contextmanager
def _wrapped(given: str) -> Iterator[None]:
    """Turn an `OSError` into the `InputError` naming the user's path."""
    try:
        yield
    except OSError as exc:
        raise write_error(given, exc) from None


@contextlib.contextmanager
def _stream(raw: BinaryIO, gz: bool, mode: str, encoding: str | None) -> Iterator[IO[Any]]:
    """``raw`` as the caller asked for it: binary or text, gzip-compressed or not.

    Gzip output has no name or time in its header, so the same content always
    gives the same bytes.
    """
    with contextlib.ExitStack() as stack:
        sink: BinaryIO = raw
        if gz:
            sink = stack.enter_context(gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                     mtime=0))  # type: ignore[assignment]
        if "b" in mode:
            yield sink
        else:
            text = io.TextIOWrapper(sink, encoding=encoding, newline="",
                                    write_through=False)
            try:
                yield text
                text.flush()
            finally:
                text.detach()


def _open_through(dest: Destination) -> BinaryIO:
    """The destination opened in place (a device, a FIFO, a descriptor of ours)."""
    if dest.fd is not None:
        import sys

        for std in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                std.flush()
        return open(os.dup(dest.fd), "wb", closefd=True)
    return open(dest.path, "wb")


@contextlib.contextmanager
def atomic_write(
    path: PathLike, mode: str = "w", encoding: str | None = "utf-8"
) -> Iterator[IO[Any]]:
    """Write ``path`` all at once or not at all (see the module docstring).

    A failure part-way leaves ``path`` untouched and no temporary file behind,
    and is an `InputError` naming ``path``. A new file gets the permissions a
    plain ``open`` would give it (``0o666`` less the umask), not
    ``mkstemp``'s private ``0o600``; a replaced file keeps its own. A
    ``.gz`` suffix writes gzip-compressed output.
    """
    dest = destination(path)
    gz = dest.path.suffix == ".gz"
    if not dest.replaced:
        with _wrapped(dest.given), _open_through(dest) as raw, _stream(raw, gz, mode,
                                                                        encoding) as fh:
            yield fh
        return
    fd, tmp = _temporary(dest)
    try:
        with _wrapped(dest.given):
            with open(fd, "wb") as raw:
                with _stream(raw, gz, mode, encoding) as fh:
                    yield fh
                raw.flush()
                os.fsync(raw.fileno())
            pause_before_rename()
            os.replace(tmp, dest.path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _encoded(dest: Destination, data: str | bytes) -> bytes:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if dest.path.suffix != ".gz":
        return raw
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
        gz.write(raw)
    return buf.getvalue()


def _stage(dest: Destination, data: bytes) -> str:
    """A complete, fsynced temporary file beside ``dest.path`` holding ``data``; its name."""
    fd, tmp = _temporary(dest)
    try:
        with _wrapped(dest.given), open(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _backup(path: Path) -> str | None:
    """A second name for the current ``path`` (a hard link, else a copy), or None if absent."""
    if not path.exists():
        return None
    for _ in range(100):
        name = str(path.parent / f".{path.name}.{secrets.token_hex(6)}.bak")
        try:
            os.link(path, name)
            return name
        except FileExistsError:
            continue
        except OSError:
            with open(path, "rb") as src, open(name, "xb") as out:
                shutil.copyfileobj(src, out)
            shutil.copymode(path, name)
            return name
    raise FileExistsError(errno.EEXIST, "no free backup name", str(path))


def commit_all(items: Sequence[tuple[PathLike, str | bytes]]) -> None:
    """Write several files so that they stand or fall together.

    Every destination is resolved and every temporary file written and
    fsynced before the first rename; then the renames run one after
    another. When anything fails (an `OSError`, a signal turned into an
    exception by the CLI), every file already renamed is put back as it
    was — from a hard link (or copy) of the old file taken just before its
    rename, or removed when it did not exist — and every temporary file is
    removed. Devices and FIFOs are written last, after the renames; a
    failure there rolls the renames back, but what a device has received
    cannot be taken back.

    The limit: renames are atomic one file at a time, not across files. A
    process killed outright (SIGKILL, power loss) between two renames leaves
    the earlier files new and the later ones old; nothing is ever half
    written.
    """
    planned = [(destination(p), data) for p, data in items]
    staged: list[tuple[Destination, str]] = []
    done: list[tuple[Destination, str | None]] = []
    backups: list[str] = []
    try:
        for dest, data in planned:
            if dest.replaced:
                staged.append((dest, _stage(dest, _encoded(dest, data))))
        pause_before_rename()
        for dest, tmp in staged:
            with _wrapped(dest.given):
                backup = _backup(dest.path)
                if backup is not None:
                    backups.append(backup)
                os.replace(tmp, dest.path)
            done.append((dest, backup))
        for dest, data in planned:
            if not dest.replaced:
                with _wrapped(dest.given), _open_through(dest) as fh:
                    fh.write(_encoded(dest, data))
    except BaseException:
        for dest, backup in reversed(done):
            with contextlib.suppress(OSError):
                if backup is not None:
                    os.replace(backup, dest.path)
                else:
                    os.unlink(dest.path)
        for _, tmp in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for backup in backups:
            with contextlib.suppress(OSError):
                os.unlink(backup)
        raise
    for backup in backups:
        with contextlib.suppress(OSError):
            os.unlink(backup)


def write_new(path: PathLike, data: str | bytes) -> Path:
    """Create ``path`` holding ``data``, failing with `FileExistsError` if it exists.

    Create-exclusive, not check-then-rename: the complete temporary file is
    hard-linked to ``path``, which the kernel refuses atomically when
    ``path`` exists, so of several processes creating the same file exactly
    one succeeds and none is silently lost. Where hard links are not
    supported, ``path`` is created with ``O_EXCL`` and written in place (and
    removed again if the write fails). Returns the path written.
    """
    dest = destination(path)
    if not dest.replaced or dest.path.exists() or dest.path.is_symlink():
        raise FileExistsError(errno.EEXIST, "File exists", dest.given)
    blob = _encoded(dest, data)
    tmp = _stage(dest, blob)
    try:
        pause_before_rename()
        try:
            os.link(tmp, dest.path)
        except FileExistsError:
            raise
        except OSError:
            _write_exclusive(dest, blob)
    except FileExistsError:
        raise
    except OSError as exc:
        raise write_error(dest.given, exc) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return dest.path


def _write_exclusive(dest: Destination, blob: bytes) -> None:
    fd = os.open(dest.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _new_mode(dest))
    try:
        with open(fd, "wb") as fh:
            fh.write(blob)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(dest.path)
        raise
