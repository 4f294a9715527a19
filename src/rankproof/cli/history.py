"""``rankproof history add|list|show|trend|since|compare|export|import``: the results store.

Adapters over `rankproof.history`: each command opens the store named by ``--history``
(else ``$RANKPROOF_HISTORY``, else ``.rankproof/history.db``), asks the library, and prints
a table (text from the database printed verbatim, never as markup) or JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich import box
from rich.table import Table

from rankproof._errors import InputError
from rankproof._io import atomic_write
from rankproof.cli._app import app, error_boundary, print_note
from rankproof.cli._history import branch_default, store_option, store_url
from rankproof.cli._outputs import force_option, guard_outputs
from rankproof.cli._requests import Request, takes
from rankproof.cli._runs import choices
from rankproof.cli._stat_options import (
    CorrectionChoice,
    TestChoice,
    alpha_option,
    correction_option,
    resamples_option,
    seed_option,
    stat_settings,
    test_option,
)
from rankproof.report.console import make_console, plain, print_table

history_app = typer.Typer(
    name="history", no_args_is_help=True,
    help="The results history: add, list, trend, since-when, compare, export, import.")
app.add_typer(history_app, name="history")

if TYPE_CHECKING:
    ListFormat = str
    ExportFormat = str
else:
    ListFormat = choices("HistoryFormat", ("table", "json"))
    ExportFormat = choices("HistoryExport", ("parquet", "csv", "jsonl"))

_LIST_COLUMNS = ("id", "kind", "created", "commit", "branch", "dirty", "runs", "measures")


def _open(url: str | None) -> Any:
    from rankproof.history import open_store

    return open_store(store_url(url))


def _table(columns: tuple[str, ...] | list[str], rows: list[list[str]]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for col in columns:
        table.add_column(col)
    for row in rows:
        table.add_row(*(plain(c) for c in row))
    return table


def _short(value: str | None, n: int = 12) -> str:
    return "—" if not value else value.removeprefix("sha256:")[:n]


def _echo_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False, allow_nan=True))


@history_app.command("add")
@error_boundary
def add_command(
    files: list[Path] = typer.Argument(..., metavar="FILE...",
                                       help="rankproof JSON results (eval report, measure "
                                            "JSON, comparison, gate verdict, RAG or discovery "
                                            "report)."),
    branch: str | None = typer.Option(None, "--branch", metavar="NAME",
                                      help="The branch to record (default: $RANKPROOF_BRANCH, "
                                           "the CI's branch variables, else the checkout's)."),
    history: str | None = store_option(),
) -> None:
    """Add results to the history (the same result twice is stored once)."""
    from rankproof.history import KINDS, kind_of, read_json_file

    docs = []
    for f in files:  # every file is read and recognised before anything is stored
        doc = read_json_file(f)
        kind_of(doc, str(f))
        docs.append((str(f), doc))
    branch = branch or branch_default()
    console = make_console()
    with _open(history) as store:
        for label, doc in docs:
            rid, new = store.add(doc, label, branch=branch)
            what = KINDS[kind_of(doc, label)]
            console.print(plain(f"{'added' if new else 'already stored'} {rid[:19]} "
                                f"({what}) from {label}"))


@history_app.command("list")
@error_boundary
def list_command(
    kind: str | None = typer.Option(None, "--kind", metavar="KIND",
                                    help="eval, measure, comparison, gate, rag, discovery…"),
    branch: str | None = typer.Option(None, "--branch", metavar="NAME"),
    run: str | None = typer.Option(None, "--run", metavar="NAME",
                                   help="Only results holding per-query values of this run."),
    measure: str | None = typer.Option(None, "--measure", "-m", metavar="MEASURE"),
    since: str | None = typer.Option(None, "--since", metavar="DATE|COMMIT"),
    fmt: ListFormat = typer.Option("table", "--format", "-f", help="Output format."),
    history: str | None = store_option(),
) -> None:
    """List stored results in commit order, filtered."""
    m = _measure(measure)
    with _open(history) as store:
        found = store.results(kind=kind, branch=branch, run=run, measure=m, since=since)
    if str(fmt) == "json":
        _echo_json([r.to_dict() for r in found])
        return
    rows = [[r.id[:19], r.kind.removeprefix("rankproof."), r.created_at, _short(r.git_commit),
             r.git_branch or "—", {True: "yes", False: "no", None: "—"}[r.git_dirty],
             ", ".join(r.runs), ", ".join(r.measures)] for r in found]
    print_table(make_console(), _table(_LIST_COLUMNS, rows))


def _measure(measure: str | None) -> str | None:
    if measure is None:
        return None
    from rankproof.measures import parse

    try:
        return str(parse(measure))
    except InputError:
        return measure  # a per-case metric name (RAG, targets) is stored as it is


@history_app.command("show")
@error_boundary
def show_command(
    ref: str = typer.Argument(..., metavar="ID", help="A result id, prefix, or latest@BRANCH."),
    fmt: ListFormat = typer.Option("table", "--format", "-f", help="Output format."),
    history: str | None = store_option(),
) -> None:
    """Show one stored result: its manifest columns and each run's means."""
    with _open(history) as store:
        info = store.get(ref)
        arrays = store.all_series(info)
        doc = store.document(info) if str(fmt) == "json" else None
    if doc is not None:
        _echo_json({"result": info.to_dict(), "document": doc})
        return
    console = make_console()
    fields = [[k, "—" if v is None else (", ".join(v) if isinstance(v, list) else str(v))]
              for k, v in info.to_dict().items() if k != "seq"]
    print_table(console, _table(("field", "value"), fields))
    rows = [[system, measure, str(len(qids)), f"{float(values.mean()):.4f}"]
            for system, measure, qids, values in arrays]
    if rows:
        print_table(console, _table(("run", "measure", "queries", "mean"), rows))


def _stats(test: Any, alpha: float, correction: Any, resamples: int, seed: int
           ) -> dict[str, Any]:
    return {"stats": stat_settings(test=test, alpha=alpha, correction=correction,
                                    resamples=resamples, seed=seed)}


class TrendArgs(Request):
    """`trend_command`'s options, as one request (`rankproof.cli._requests.takes`)."""

    measure: str = typer.Option(..., "--measure", "-m", metavar="MEASURE")
    run: str | None = typer.Option(None, "--run", metavar="NAME")
    branch: str | None = typer.Option(None, "--branch", metavar="NAME")
    last: int = typer.Option(50, "--last", metavar="N", min=1,
                             help="The newest N results (their N-1 steps are tested and "
                                  "corrected together).")
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FIG",
                                       help="Also write the figure (SVG) here.")
    fmt: ListFormat = typer.Option("table", "--format", "-f", help="Output format.")
    test: TestChoice = test_option(help="Paired test per step.")
    alpha: float = alpha_option(help="Family-wise level across the trend.")
    correction: CorrectionChoice = correction_option(help="Correction across the trend's "
                                                          "steps.")
    resamples: int = resamples_option()
    seed: int = seed_option()
    force: bool = force_option()
    history: str | None = store_option()


@history_app.command("trend")
@error_boundary
@takes(TrendArgs)
def trend_command(a: TrendArgs) -> None:
    """A measure across stored results: each step better, worse, or no detectable
    difference by the paired test against the point before, corrected across the trend."""
    from rankproof.history import trend
    from rankproof.report.history import trend_rows, trend_svg

    guard_outputs([(a.output, None)], [], force=a.force)
    with _open(a.history) as store:
        t = trend(store, a.measure, run=a.run, branch=a.branch, last=a.last,
                  **_stats(a.test, a.alpha, a.correction, a.resamples, a.seed))
    data = t.to_dict()
    if a.output is not None:
        svg = trend_svg(data)
        with atomic_write(a.output) as fh:
            fh.write(svg)
    if str(a.fmt) == "json":
        _echo_json(data)
    else:
        cols = ("#", "commit", "created", "run", "n", "mean", "step", "Δ", "p", "p corrected")
        print_table(make_console(), _table(cols, trend_rows(data)))
    if t.total > len(t.points):
        print_note(f"showing the newest {len(t.points)} of {t.total} results (--last)",
                   about="trend")
    if a.output is not None:
        make_console(stderr=True).print(plain(f"wrote {a.output}"))


@history_app.command("since")
@error_boundary
def since_command(
    qid: str = typer.Argument(..., metavar="QID"),
    measure: str = typer.Option(..., "--measure", "-m", metavar="MEASURE"),
    run: str | None = typer.Option(None, "--run", metavar="NAME"),
    branch: str | None = typer.Option(None, "--branch", metavar="NAME"),
    fmt: ListFormat = typer.Option("table", "--format", "-f", help="Output format."),
    history: str | None = store_option(),
) -> None:
    """Since which stored result has QID been lost (its value dropped and stayed down)?"""
    from rankproof.history import since

    with _open(history) as store:
        s = since(store, qid, measure, run=run, branch=branch)
    if str(fmt) == "json":
        _echo_json(s.to_dict())
        return
    console = make_console()
    if not s.found:
        console.print(plain(f"{qid}: {s.measure} has not dropped and stayed down across "
                            f"{len(s.values)} stored results (now {s.values[-1][3]:.4f})"))
        return
    console.print(plain(f"{qid}: {s.measure} dropped at result #{s.index} "
                        f"({_short(s.id, 12)}, commit {_short(s.commit)}, {s.created_at}) "
                        f"from {s.before:.4f} to {s.after:.4f} and stayed down "
                        f"(now {s.now:.4f})"))


class HistoryCompareArgs(Request):
    """`compare_command`'s options, as one request (`rankproof.cli._requests.takes`)."""

    first: str = typer.Argument(..., metavar="ID1", help="The baseline result.")
    second: str = typer.Argument(..., metavar="ID2", help="The candidate result.")
    measures: list[str] | None = typer.Option(None, "--measure", "-m", metavar="MEASURE",
                                              help="Default: every measure both hold.")
    run: str | None = typer.Option(None, "--run", metavar="NAME",
                                   help="The run of each result (when it has several).")
    other_run: str | None = typer.Option(None, "--run2", metavar="NAME",
                                         help="ID2's run, when it differs from --run.")
    fmt: ListFormat = typer.Option("table", "--format", "-f", help="Output format.")
    test: TestChoice = test_option()
    alpha: float = alpha_option()
    correction: CorrectionChoice = correction_option()
    resamples: int = resamples_option()
    seed: int = seed_option()
    history: str | None = store_option()


@history_app.command("compare")
@error_boundary
@takes(HistoryCompareArgs)
def compare_command(a: HistoryCompareArgs) -> None:
    """A paired comparison of two stored results over the queries they share."""
    from rankproof.history import compare_results
    from rankproof.report.compare import comparison_tables

    ms = [m for m in (_measure(x) for x in a.measures or ()) if m is not None]
    with _open(a.history) as store:
        c, _a, _b, left_out = compare_results(
            store, a.first, a.second, measures=ms or None, run=a.run, other_run=a.other_run,
            **_stats(a.test, a.alpha, a.correction, a.resamples, a.seed))
    if str(a.fmt) == "json":
        typer.echo(c.to_json())
    else:
        console = make_console()
        for table, notes in comparison_tables(c):
            print_table(console, table)
            for note in notes:
                console.print(plain(note))
    if left_out:
        print_note(f"{left_out} queries held by only one of the two results were left out",
                   about="compare")


@history_app.command("export")
@error_boundary
def export_command(
    output: Path = typer.Option(..., "--output", "-o", metavar="FILE"),
    fmt: ExportFormat = typer.Option("parquet", "--format", "-f",
                                     help="parquet or csv: one row per result × run × measure "
                                          "× query; jsonl: the stored documents, for import."),
    force: bool = force_option(),
    history: str | None = store_option(),
) -> None:
    """Export the history: per-query values as a table, or the documents as JSON Lines."""
    from rankproof.cli._history_io import export_history

    guard_outputs([(output, None)], [], force=force)
    with _open(history) as store:
        n = export_history(store, output, str(fmt))
    make_console(stderr=True).print(plain(f"wrote {n} rows to {output}"))


@history_app.command("import")
@error_boundary
def import_command(
    source: str = typer.Argument(..., metavar="SOURCE",
                                 help="A JSON Lines export (history export -f jsonl) or "
                                      "another history store (a SQLite file or URL)."),
    history: str | None = store_option(),
) -> None:
    """Import results from an export or another store (already stored ones are skipped)."""
    from rankproof.cli._history_io import import_history

    with _open(history) as store:
        new, old = import_history(store, source)
    make_console().print(plain(f"imported {new} results ({old} already stored)"))
