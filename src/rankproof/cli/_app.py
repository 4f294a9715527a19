"""The Typer application and the error boundary shared by every command."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import typer
from rich.console import Console

from rankproof._errors import RankproofError
from rankproof._version import __version__

app = typer.Typer(
    name="rankproof",
    help="Retrieval evaluation that agrees with trec_eval, with significance you can rerun.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

err_console = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

F = TypeVar("F", bound=Callable[..., Any])


def error_boundary(fn: F) -> F:
    """Turn library errors into a one-line message and exit code 2, never a traceback."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (RankproofError, ValueError, FileNotFoundError, IsADirectoryError,
                PermissionError) as exc:
            message = str(exc)
            if isinstance(exc, FileNotFoundError | IsADirectoryError | PermissionError):
                message = f"{exc.filename}: {exc.strerror}"
            err_console.print(f"[bold red]error:[/] {message}", markup=True)
            raise typer.Exit(EXIT_INPUT) from None
        except typer.Exit:
            raise
        except Exception as exc:  # an internal error: keep the traceback
            err_console.print(f"[bold red]internal error:[/] {type(exc).__name__}: {exc}")
            raise

    return wrapper  # type: ignore[return-value]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rankproof {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """rankproof: did that change make retrieval better, or did the number just move?"""


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except SystemExit:
        raise
    except Exception:
        import traceback

        traceback.print_exc()
        sys.exit(EXIT_INTERNAL)
