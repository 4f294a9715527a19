"""The exception hierarchy.

Every error rankproof raises on purpose derives from :class:`RankproofError`,
and each subclass also derives from the matching built-in, so a caller can
catch either ``rankproof.InputError`` or plain ``ValueError``::

    RankproofError
    ├── InputError(ValueError)     bad data, name or value: a file, a line, a field, a
    │                              measure name, a parameter; carries path/line/field
    │   ├── PairingError           two sides of a paired comparison cover different
    │   │                          queries or cases; carries only_left/only_right
    │   └── WriteError(OSError)    an output could not be written (disk full, a
    │                              file-size limit, a permission); names the path
    │                              the user gave, never a temporary name
    ├── ConfigError(ValueError)    a checks/config file is invalid (CLI exit code 2)
    ├── TargetError(RuntimeError)  a system under test failed after its retries;
    │                              carries case_id/target/status/attempts
    ├── NotComputedError(KeyError) a result was asked for a measure it does not hold
    ├── MissingExtraError(ImportError)  an optional dependency is not installed
    └── UserCodeError(RuntimeError)  a function the user supplied (a retriever, a
                                   plugin metric, a judge call, a target, a custom
                                   fusion or transform) raised; names it and its error

Messages say what was expected, what was found, and where; the attributes
say the same to a program, which should not have to parse the message.
Anything raised that is *not* a `RankproofError` is a bug in rankproof (the
CLI reports it as an internal error, exit code 3) — unless it came out of
the user's own code (`user_code_error` finds that in the traceback), which
is the user's to fix (exit code 2); ``TypeError`` for a
programming mistake (a non-callable where a function is needed) is the one
built-in raised on purpose.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType


class RankproofError(Exception):
    """Base class of every error rankproof raises deliberately."""


class InputError(RankproofError, ValueError):
    """Input data is malformed.

    ``path``, ``line`` (1-based) and ``field`` locate the problem when known;
    they are also part of the message so that a CLI user sees them.
    ``cli_message`` is the message as the command line words it, when the remedy
    is an option there and a keyword in Python (``--dedupe first|max`` against
    ``dedupe='first'``); `on_command_line` gives it, located the same way.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
        cli_message: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.reason = message
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        self._cli_text = (None if cli_message is None
                          else f"{prefix}: {cli_message}" if prefix else cli_message)
        super().__init__(f"{prefix}: {message}" if prefix else message)

    def on_command_line(self) -> str:
        """The message as the command line says it (its options, not Python keywords)."""
        return self._cli_text if self._cli_text is not None else str(self)


class PairingError(InputError):
    """The two sides of a paired comparison do not cover the same queries (or cases).

    An `InputError` too: the comparison's inputs do not pair, which is the
    user's to fix, and code that catches bad input catches this as well.
    """

    def __init__(
        self,
        message: str,
        *,
        only_left: Sequence[str] = (),
        only_right: Sequence[str] = (),
    ) -> None:
        self.only_left = tuple(only_left)
        self.only_right = tuple(only_right)
        super().__init__(message)


class WriteError(InputError, OSError):
    """An output could not be written; ``path`` is the path the user named.

    Also an `OSError` (with its ``errno``), so code that guards a write with
    ``except OSError`` keeps working, while the CLI reports it as the user's
    to fix (exit 2) in one line, not as a crash.
    """

    def __init__(self, message: str, *, path: str | None = None,
                 errno: int | None = None) -> None:
        super().__init__(message, path=path)
        self.errno = errno


class ConfigError(RankproofError, ValueError):
    """A configuration or checks file is invalid."""


class TargetError(RankproofError, RuntimeError):
    """A system under test failed (after its retries) for a named case.

    ``case_id`` is the golden case being asked (None for a failure that is
    not about one case), ``target`` the target's name, ``status`` the HTTP
    status of the last response when there was one, and ``attempts`` how
    many requests were made. They are attributes as well as part of the
    message so that a harness can list failed cases without parsing text.
    """

    def __init__(
        self,
        message: str,
        *,
        case_id: str | None = None,
        target: str | None = None,
        status: int | None = None,
        attempts: int | None = None,
    ) -> None:
        self.case_id = case_id
        self.target = target
        self.status = status
        self.attempts = attempts
        super().__init__(message)


class NotComputedError(RankproofError, KeyError):
    """A result was asked for a measure (or row) it was not computed with.

    A ``KeyError`` because that is what a lookup by name raises; printed as
    its plain message rather than ``KeyError``'s quoted repr, so that the CLI
    shows one readable line.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class MissingExtraError(RankproofError, ImportError):
    """An optional dependency is not installed; the message names the extra to install.

    Raised instead of falling back to something else: a stage that cannot run
    as asked is never replaced silently.
    """


class UserCodeError(RankproofError, RuntimeError):
    """A function the user supplied raised: the error is in that code, not in rankproof.

    ``function`` names it (``module.qualname``), ``error`` is what it raised
    (``ValueError: boom``) and ``where`` the innermost line of the user's code
    the error passed through (``my_retriever.py, line 3``), when known.
    """

    def __init__(self, function: str, error: str, where: str | None = None) -> None:
        self.function = function
        self.error = error
        self.where = where
        at = f" (at {where})" if where else ""
        super().__init__(f"your function {function} raised {error}{at}; the error is in "
                         "that code, not in rankproof (--debug prints the traceback)")


def _library_roots() -> tuple[str, ...]:
    """Folders whose code is not the user's: rankproof, the standard library, site-packages."""
    import sysconfig

    roots = {str(Path(__file__).resolve().parent)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(str(Path(path).resolve()))
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        roots.add(str(Path(prefix).resolve()))
    return tuple(sorted(roots))


_USER_FOLDERS: set[str] = set()


def note_user_code(path: str | os.PathLike[str] | None) -> None:
    """Record that the module at ``path`` is the user's code, loaded by rankproof on the
    user's word (``--retriever MODULE:CALLABLE``, ``--plugin``): an exception raised in
    it, or in code beside it (its folder), is the user's (`user_code_error`)."""
    if path is not None:
        _USER_FOLDERS.add(str(Path(path).resolve().parent))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _is_user_file(filename: str, roots: tuple[str, ...]) -> bool:
    if not filename or filename.startswith("<"):
        return False  # frozen importlib, exec'd strings
    resolved = str(Path(filename).resolve())
    if "site-packages" in resolved or "dist-packages" in resolved:
        return False
    if any(_within(resolved, r) for r in roots):
        return False
    return any(_within(resolved, f) for f in _USER_FOLDERS)


def _remote_user_frame(exc: BaseException, roots: tuple[str, ...]
                       ) -> tuple[str, str] | None:
    """``(function, where)`` of the first user frame in the text of a worker's traceback
    (`concurrent.futures` chains it as ``__cause__``), else None."""
    import re

    remote = getattr(exc.__cause__, "tb", None)
    if not isinstance(remote, str):
        return None
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', remote)
    mine = [(f, n, fn) for f, n, fn in frames if _is_user_file(f, roots)]
    if not mine:
        return None
    first, last = mine[0], mine[-1]
    return f"{Path(first[0]).stem}.{first[2]}", f"{Path(last[0]).name}, line {last[1]}"


def user_code_error(exc: BaseException) -> UserCodeError | None:
    """The `UserCodeError` for ``exc`` when it came out of the user's own code, else None.

    ``exc`` is an exception that is not a `RankproofError` (which would be
    the user's already). It is the user's when its traceback passes through
    a frame of code that rankproof loaded on the user's word (`note_user_code`:
    a ``--retriever MODULE:CALLABLE``, a ``--plugin``, and the code beside
    them) and that is not rankproof, the standard library or an installed
    package;
    the first such frame entered from rankproof (or a library) is the function
    rankproof called, and it is the one named (the outermost, when the user's
    code was the caller all along). Anything else stays a bug in rankproof.
    """
    if isinstance(exc, RankproofError):
        return None
    roots = _library_roots()
    tb: TracebackType | None = exc.__traceback__
    outer = called = inner = None
    previous: bool | None = None  # was the frame before this one the user's?
    while tb is not None:
        code = tb.tb_frame.f_code
        mine = _is_user_file(code.co_filename, roots)
        if mine:
            module = tb.tb_frame.f_globals.get("__name__", "")
            name = f"{module}.{code.co_qualname}" if module else code.co_qualname
            outer = outer or name
            if previous is False and called is None:
                called = name  # the first of the user's functions rankproof called
            inner = f"{Path(code.co_filename).name}, line {tb.tb_lineno}"
        previous = mine
        tb = tb.tb_next
    if outer is None:
        remote = _remote_user_frame(exc, roots)  # raised in a process pool's worker
        if remote is None:
            return None
        outer, inner = remote
    text = str(exc)
    error = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return UserCodeError(called or outer, error, inner)
