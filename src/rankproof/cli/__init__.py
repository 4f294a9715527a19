"""The command line: a thin layer that parses arguments, calls the library, renders.

Exit codes: 0 ok, 1 a gate or requested regression check failed, 2 bad input
or configuration, 3 an internal error; 130 after SIGINT (Ctrl-C) and 143 after
SIGTERM (what CI sends on cancel or timeout), 128 + the signal's number as a
shell reports it.

Signals: `main` turns SIGINT and SIGTERM into an `Interrupted` exception
raised wherever the command is, so that every ``finally`` and every
``except BaseException`` on the way out runs — the temporary files and
folders of an interrupted write are removed and no output is left half
written (`rankproof._io`). A second signal during that cleanup is ignored;
SIGKILL, which no process can handle, is the way to stop it at once.

Importing this package costs nothing: `main` answers ``--version`` before
Typer is imported, and `app` (the Typer application) is built on first
access, so ``from rankproof.cli import app`` still works for tests and
embedding.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankproof.cli._app import app

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name == "app":
        from rankproof.cli._app import app as typer_app

        return typer_app
    raise AttributeError(f"module 'rankproof.cli' has no attribute {name!r}")


def _leading_options(argv: list[str]) -> list[str]:
    """The options before the command name (the root group's own)."""
    out = []
    for arg in argv:
        if not arg.startswith("-"):
            break
        out.append(arg)
    return out


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived; a `BaseException`, so no ``except Exception`` swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum: int, frame: FrameType | None) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)  # let the cleanup on the way out finish
    raise Interrupted(signum)


def _install_signal_handlers() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            if signal.getsignal(sig) is not signal.SIG_IGN:  # nohup's choice stands
                signal.signal(sig, _interrupt)
        except ValueError:  # not the main thread: leave the embedding program's handlers
            return


def main() -> None:
    """Console-script entry point."""
    _install_signal_handlers()
    try:
        try:
            _main()
        except SystemExit as done:
            _leave_ray(done.code)
            raise
        _leave_ray(0)
    except Interrupted as exc:
        try:
            sys.stderr.write(f"interrupted by {signal.Signals(exc.signum).name}\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr is gone too: the exit status says it
            pass
        sys.exit(128 + exc.signum)


def _leave_ray(code: object) -> None:
    """After a command that ran on Ray, end the process at once with its exit status.

    Ray's driver keeps C++ threads that can crash the interpreter's own teardown
    (a SIGSEGV after the output was written and the executor closed: seen under load
    in CI). Everything the command writes is committed and flushed before this point,
    so skipping the teardown loses nothing, and the status stays the command's own.
    """
    if not _engine_used_ray():
        return
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if code is not None and not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


def _engine_used_ray() -> bool:
    engine = sys.modules.get("rankproof.cli._engine")
    return bool(engine is not None and getattr(engine, "RAY_USED", False))


def _main() -> None:
    argv = sys.argv[1:]
    if "--version" in _leading_options(argv):
        from rankproof._version import __version__

        sys.stdout.write(f"rankproof {__version__}\n")
        return
    try:
        from rankproof.cli._app import app as typer_app

        typer_app(prog_name="rankproof")
    except SystemExit:
        raise
    except Exception as exc:
        from rankproof.cli._app import EXIT_INTERNAL, report_internal_error

        report_internal_error(exc)
        sys.exit(EXIT_INTERNAL)
