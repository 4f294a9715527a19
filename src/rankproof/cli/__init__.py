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

Ending the process: the console script and ``python -m rankproof`` call
`entry`, which runs `main` and then ends the process with the command's own
status once everything is flushed (`end_process`), instead of returning to
the interpreter's teardown. Native thread pools of dependencies (Arrow's
I/O and CPU pools, Ray's driver threads) may still be winding down then, and
a native thread that touches Python while the interpreter finalizes aborts the
whole process with SIGABRT ("terminate called without an active exception",
status 134) or SIGSEGV, after a correct result was printed (issue 28). The
cause found there is removed where it starts (no Python object is handed to
Arrow, `rankproof.data._stream`); this step keeps the status the command's
own against the next such dependency. ``RANKPROOF_TEARDOWN=interpreter``
keeps the interpreter's teardown (coverage tools and the stress test use it).
`main` itself returns or raises `SystemExit`, so programs that embed it keep
their own process.

Importing this package costs nothing: `main` answers ``--version`` before
Typer is imported, and `app` (the Typer application) is built on first
access, so ``from rankproof.cli import app`` still works for tests and
embedding.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from rankproof.cli._app import app

__all__ = ["app", "end_process", "entry", "main"]


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
    """Run the command line on ``sys.argv``; returns, or raises `SystemExit` with the status.

    The console script calls `entry`, which also ends the process (`end_process`).
    """
    _install_signal_handlers()
    try:
        _main()
    except Interrupted as exc:
        try:
            sys.stderr.write(f"interrupted by {signal.Signals(exc.signum).name}\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr is gone too: the exit status says it
            pass
        sys.exit(128 + exc.signum)


def entry() -> NoReturn:
    """The console script and ``python -m rankproof``: `main`, then `end_process`."""
    code: object = 0
    try:
        main()
    except SystemExit as done:
        code = done.code
    end_process(code)


def _status(code: object) -> int:
    """A `SystemExit` code as the process status (a message is printed, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{code}\n")
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


def end_process(code: object) -> NoReturn:
    """End the process with the status of ``code`` once everything is flushed.

    What the interpreter's teardown would do for us is done first: the
    ``atexit`` handlers run (temporary folders, worker processes) and the
    standard streams are flushed; only the module and object teardown, where
    native threads of dependencies can abort the process, is skipped (see the
    module docstring). Everything a command writes is committed before it
    returns (outputs are atomic), so nothing is lost.

    The interpreter's own teardown is kept when ``RANKPROOF_TEARDOWN`` is
    ``interpreter``, and whenever a non-daemon thread is still running (it
    would be killed mid-way; the teardown joins it, as it always has).
    """
    status = _status(code)
    for sig in (signal.SIGINT, signal.SIGTERM):  # the command is done: finish ending it
        with contextlib.suppress(ValueError, OSError):
            signal.signal(sig, signal.SIG_IGN)
    if _engine_used_ray():
        # As since Ray was added: its driver's C++ threads crashed the teardown once in CI
        # (a SIGSEGV after the output was written and the executor closed), and Ray's own
        # atexit handler works on that driver, so it is skipped too.
        _flush()
        os._exit(status)
    others = [t for t in threading.enumerate()
              if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if os.environ.get("RANKPROOF_TEARDOWN") == "interpreter" or others:
        sys.exit(status)
    atexit._run_exitfuncs()  # prints, and goes past, a handler that fails (as the teardown)
    _flush()
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
