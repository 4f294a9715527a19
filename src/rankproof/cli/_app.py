"""The Typer application, its lazily loaded commands, and the error boundary.

Commands are registered lazily: the root group knows each command's name,
module and one-line help from `COMMANDS`, and imports ``rankproof.cli.<module>``
only when that command runs. ``rankproof --help`` lists the commands from the
table without importing any of them, so neither help nor a command that only
measures pays for scipy, the harness or the retrieval stages.

The error boundary (`error_boundary`, and the group's `invoke` as a backstop)
maps exceptions to exit codes: a `RankproofError` is the user's to fix, so it
prints one line and exits 2, and so is an exception that came out of the
user's own code (a ``--retriever``, a ``--plugin``'s metric: `user_code_error`
names the function); anything else is a bug in rankproof, so it prints
one line naming a saved traceback file and exits 3 (``--debug`` or
``RANKPROOF_DEBUG=1`` prints the traceback instead). Typer's own usage errors
keep click's exit code 2.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import traceback
import typing
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from rankproof._errors import InputError, RankproofError, user_code_error
from rankproof._version import __version__
from rankproof.report.console import make_console, plain

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

COMMANDS: dict[str, tuple[str, str]] = {
    "measure": ("measure", "Evaluate runs against judgments, exactly as trec_eval does."),
    "trec_eval": ("trec_eval", "trec_eval 10's command line, output and exit codes (a drop-in "
                               "for the binary)."),
    "compare": ("compare", "Is each candidate better, worse, or not detectably different from "
                           "the baseline?"),
    "fuse": ("fuse", "Fuse runs by rank (RRF, ISR, RBC, Borda) or by score (CombSUM, …) and "
                     "write atomically."),
    "export": ("export", "Convert a run between formats; --canonical rewrites scores as 1/rank "
                         "(tie-safe)."),
    "eval": ("eval", "Run BM25 / dense / fusion / rerank over a corpus and compare each with "
                     "BM25."),
    "gate": ("gate", "Check a report against CHECKS: exit 0 pass, 1 a blocking check failed, 2 "
                     "bad input."),
    "baseline": ("baseline", "Save, list and show baselines: per-case rows that vs_baseline "
                             "checks pair with."),
    "power": ("power", "Detection rates for effects × query counts, and the queries needed for "
                       "each effect."),
    "adapt": ("adapt", "Convert other formats into rankproof's corpus + judgments."),
    "rag": ("rag", "Score RAG answers (answer metrics, grounding, citations, the triad), "
                   "compare arms, calibrate a judge."),
    "discover": ("discover", "Is the right capability found first, low, or not at all — and "
                             "is \"nothing applies\" said?"),
    "report": ("report", "Render any rankproof JSON as one offline HTML file, Markdown or "
                         "LaTeX."),
    "plot": ("plot", "Save a figure of a result (forest, per-query, null, curve, trend) as "
                     "PNG, SVG or PDF."),
    "inspect": ("inspect", "Sample regressed queries with their evidence for review, and count "
                           "the reviewed sides."),
    "run": ("run", "Run an experiment file's stages, cached by content; --only, --dry-run."),
    "fixture": ("fixture", "Pin headline metrics of a committed fixture: check them, or propose "
                           "new values."),
    "manifest": ("manifest", "Check a result's provenance: re-hash the inputs it records and "
                             "say which changed."),
    "providers": ("providers", "Model providers (OpenAI-compatible servers): check one before "
                               "using it."),
    "history": ("history", "The results history: add, list, trend, since-when, compare, "
                           "export, import."),
    "serve": ("serve", "A read-only local dashboard over the results history."),
}
"""Command name -> (module under ``rankproof.cli``, one-line help shown by ``--help``)."""

DEBUG_ENV = "RANKPROOF_DEBUG"

_state = {"debug": False}

INPUTS: list[Path] = []
"""Files the running command has read as inputs (an output must never replace one);
emptied when a command starts, so commands invoked in one process do not share it."""


def debug_requested() -> bool:
    return _state["debug"] or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _print_error(label: str, message: str) -> None:
    console = make_console(stderr=True)
    text = plain(f"{label}: ", style="bold red")
    text.append_text(plain(message, keep_newlines=True))  # our multi-line lists of problems
    console.print(text, soft_wrap=True)


def _save_traceback(exc: BaseException) -> str | None:
    """Write the traceback to a fresh ``rankproof-crash-*.txt`` in the temp dir; its path."""
    text = "".join(traceback.format_exception(exc))
    try:
        fd, path = tempfile.mkstemp(prefix="rankproof-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"rankproof {__version__}, python {sys.version.split()[0]}\n")
            fh.write("argv: " + " ".join(sys.argv) + "\n\n")
            fh.write(text)
    except OSError:
        return None
    return path


def report_internal_error(exc: BaseException) -> None:
    """Print the one line (or the traceback with --debug) for an unexpected exception."""
    if debug_requested():
        sys.stderr.write("".join(traceback.format_exception(exc)))
        sys.stderr.flush()
        return
    path = _save_traceback(exc)
    where = (f"traceback saved to {path}" if path is not None
             else "the traceback could not be saved")
    _print_error("internal error", f"{type(exc).__name__}: {exc} (a bug in rankproof; "
                                   f"{where}; rerun with --debug to print it)")


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def handle(exc: Exception) -> typer.Exit:
    """The exit for an exception that reached the boundary (re-raises Typer's own)."""
    if isinstance(exc, typer.Exit | typer.Abort | typer.TyperException):
        raise exc
    if isinstance(exc, RankproofError):
        _print_error("error", exc.on_command_line() if isinstance(exc, InputError) else str(exc))
        return typer.Exit(EXIT_INPUT)
    if isinstance(exc, BrokenPipeError):  # ``rankproof … | head``: the reader has gone
        _silence_stdout()
        return typer.Exit(EXIT_OK)
    user = user_code_error(exc)  # raised by the user's own function: theirs to fix
    if user is not None:
        if debug_requested():
            sys.stderr.write("".join(traceback.format_exception(exc)))
        _print_error("error", str(user))
        return typer.Exit(EXIT_INPUT)
    report_internal_error(exc)
    return typer.Exit(EXIT_INTERNAL)


F = TypeVar("F", bound=Callable[..., Any])


def error_boundary(fn: F) -> F:
    """Map what a command raises to an exit code (see the module docstring)."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        INPUTS.clear()
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise handle(exc) from None

    return wrapper  # type: ignore[return-value]


_TYPE_NAMES = {"int": "INTEGER", "float": "FLOAT", "Path": "PATH", "str": "TEXT"}


def _type_name(param: Any) -> str | None:
    """Click's plain type names (``PATH``, ``INTEGER``), choices as ``a|b``, none for flags."""
    desc = param.type_descriptor
    if desc.is_choice:
        return "|".join(str(getattr(c, "value", c)) for c in desc.choices or ())
    annotation = desc.annotation
    args = typing.get_args(annotation) if desc.is_list else ()
    inner = args[0] if args else annotation
    name = getattr(inner, "__name__", str(inner))
    return _TYPE_NAMES.get(name, name.upper())


class _ReadableOption(TyperOption):
    """An option whose help shows ``PATH`` or ``score|rank``, never ``<list[Path]>``."""

    def display_type_rich(self, ctx: Any) -> str | None:
        if self.metavar is not None:
            return self.metavar or None
        if self.is_flag:
            return None
        return _type_name(self)


class _ReadableArgument(TyperArgument):
    """An argument shown by its metavar (``QRELS``, ``RUN...``), without a type suffix."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _rich_display_name(self) -> str:
        name = self.metavar or (self.name or "arg").upper()
        return name if self.nargs == 1 or name.endswith("...") else name + "..."

    def _usage_display_name(self) -> str:
        name = self._rich_display_name()
        return name if self.required else f"[{name}]"


def readable(command: Any) -> Any:
    """Give every parameter of ``command`` (and its subcommands) the readable help forms."""
    for param in command.params:
        if type(param) is TyperOption:
            param.__class__ = _ReadableOption
        elif type(param) is TyperArgument:
            param.__class__ = _ReadableArgument
    for sub in getattr(command, "commands", {}).values():
        readable(sub)
    original = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = original(ctx)
        if type(option) is TyperOption:
            option.__class__ = _ReadableOption
        return option

    command.get_help_option = get_help_option
    return command


class LazyGroup(TyperGroup):
    """A group whose commands are imported from `COMMANDS` on first use."""

    _listing = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        readable(self)

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(n for n in self.commands if n not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in COMMANDS:
            return None
        module, short = COMMANDS[cmd_name]
        if self._listing:  # help lists commands from the table, importing nothing
            return TyperCommand(name=cmd_name, help=short, short_help=short)
        importlib.import_module(f"rankproof.cli.{module}")
        built = typer.main.get_group(app)
        for name, command in built.commands.items():
            self.commands.setdefault(name, readable(command))
        return self.commands.get(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            raise handle(exc) from None


app = typer.Typer(
    name="rankproof",
    cls=LazyGroup,
    help="Retrieval evaluation that agrees with trec_eval, with significance you can rerun.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Click's plain help: it reads like every other Unix tool's, and printing it needs
    # no Rich (and Typer's Rich help, Markdown included, would double ``--help``'s time).
    rich_markup_mode=None,
)


def __getattr__(name: str) -> Any:
    # ``err_console`` is made when a command module imports it, so that ``--help``
    # never loads Rich.
    if name == "err_console":
        return make_console(stderr=True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def print_note(text: str, about: str | None = None) -> None:
    """One ``note: …`` line on standard error (``note (about): …`` when ``about`` is given).

    Every command reports caveats this way; the text comes from files and results, so it
    is printed as plain text, never markup.
    """
    line = plain("note", style="yellow")
    line.append_text(plain(f" ({about}): {text}" if about else f": {text}"))
    make_console(stderr=True).print(line)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rankproof {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", envvar=DEBUG_ENV,
                               help="On an internal error, print the traceback instead of "
                                    "saving it to a file."),
) -> None:
    """rankproof: did that change make retrieval better, or did the number just move?"""
    _state["debug"] = debug
