"""The command line: a thin layer that parses arguments, calls the library, renders.

Exit codes: 0 ok, 1 a gate or requested regression check failed, 2 bad input
or configuration, 3 an internal error.

Importing this package costs nothing: `main` answers ``--version`` before
Typer is imported, and `app` (the Typer application) is built on first
access, so ``from rankproof.cli import app`` still works for tests and
embedding.
"""

from __future__ import annotations

import sys
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


def main() -> None:
    """Console-script entry point."""
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
