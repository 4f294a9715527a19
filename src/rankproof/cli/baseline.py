"""``rankproof baseline save|list|show``: store a report stage's per-case rows under a name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich import box
from rich.table import Table

from rankproof.cli._app import app, err_console, error_boundary
from rankproof.cli._outputs import force_option, guard_outputs
from rankproof.cli._runs import choices
from rankproof.cli.gate import baseline_dir_option
from rankproof.data import read_document, validate_model
from rankproof.gate import (
    Baseline,
    baseline_path,
    list_baselines,
    load_baseline,
    result_from_document,
    save_baseline,
)
from rankproof.harness import EvalReport, run_result_from_report
from rankproof.report.console import make_console, plain, print_table

baseline_app = typer.Typer(
    name="baseline", no_args_is_help=True,
    help="Save, list and show baselines: per-case rows that vs_baseline checks pair with.")
app.add_typer(baseline_app, name="baseline")

FORMATS = ("table", "json")
"""``baseline list`` and ``baseline show`` print a Rich table or JSON."""

if TYPE_CHECKING:
    ShowFormat = str
else:
    ShowFormat = choices("ShowFormat", FORMATS)


def _short(digest: str | None) -> str:
    return "—" if not digest else digest.removeprefix("sha256:")[:12]


@baseline_app.command("save")
@error_boundary
def save_command(
    report: Path = typer.Argument(..., metavar="REPORT",
                                  help="A rankproof eval report, rankproof measure JSON "
                                       "(-f json) or comparison (rankproof compare -o)."),
    name: str = typer.Option(..., "--name", "-n", help="Baseline name (a safe file name)."),
    stage: str | None = typer.Option(None, "--stage", "--system", metavar="NAME",
                                     help="The stage, measure run or comparison system to save "
                                          "(required when the file has several; a "
                                          "comparison's baseline is the default)."),
    directory: Path = baseline_dir_option(),
    force: bool = force_option(),
) -> None:
    """Save one stage of REPORT (or one run of a measure or compare JSON) as baseline NAME."""
    guard_outputs([(baseline_path(name, directory), "rankproof.baseline")], [report],
                  force=True)  # an existing baseline is refused by save_baseline, atomically
    raw = read_document(report, what="report")
    source: dict[str, object] = {"report": str(report)}
    if isinstance(raw, dict) and raw.get("kind") == "rankproof.eval":
        rep = validate_model(raw, EvalReport, str(report), what="report",
                             kind="rankproof eval report")
        result = run_result_from_report(rep, stage)
        source.update({"stage": result.name, "report_created_at": rep.created_at,
                       "git_commit": rep.provenance.git_commit,
                       "git_dirty": rep.provenance.git_dirty})
    else:
        result = result_from_document(raw, str(report), stage, role="baseline")
        source["stage"] = result.name
    path = save_baseline(result, name, directory, overwrite=force, source=source)
    typer.echo(f"saved baseline {name!r}: stage {result.name!r}, {len(result.rows)} cases, "
               f"measures {', '.join(_measures(result.provenance.measures, result.metrics))} "
               f"→ {path}")


def _measures(declared: tuple[str, ...], computed: tuple[str, ...]) -> tuple[str, ...]:
    """The eval config's measures, or (from a measure or compare JSON) the computed ones."""
    return declared or computed


@baseline_app.command("list")
@error_boundary
def list_command(
    directory: Path = baseline_dir_option(),
    fmt: ShowFormat = typer.Option("table", "--format", "-f", help="Output format."),
) -> None:
    """List saved baselines."""
    found = list_baselines(directory)
    if str(fmt) == "json":
        typer.echo(json.dumps([{
            "name": b.name, "path": str(b.path), "created_at": b.created_at,
            "source": dict(b.source), "cases": len(b.result.rows),
            "provenance": b.result.provenance.to_dict()} for b in found], indent=2))
        return
    if not found:
        err_console.print(plain(f"no baselines in {directory}"))
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for col in ("name", "created", "from", "cases", "measures", "granularity", "judgments"):
        table.add_column(col)
    for b in found:
        p = b.result.provenance
        table.add_row(*(plain(cell) for cell in (
            b.name, b.created_at, _origin(b), str(len(b.result.rows)),
            ", ".join(_measures(p.measures, b.result.metrics)),
            p.granularity or "—", _short(p.judgments_digest))))
    print_table(make_console(), table)


def _origin(b: Baseline) -> str:
    p = b.result.provenance
    if p.kind == "report":
        return f"stage {p.stage} of {b.source.get('report', 'a report')}"
    return f"target {p.target}"


@baseline_app.command("show")
@error_boundary
def show_command(
    name: str = typer.Argument(..., metavar="NAME|PATH", help="Baseline NAME or PATH."),
    directory: Path = baseline_dir_option(),
    fmt: ShowFormat = typer.Option("table", "--format", "-f", help="Output format."),
) -> None:
    """Show a baseline: provenance and the mean of each per-case metric."""
    b = load_baseline(name, directory)
    if str(fmt) == "json":
        typer.echo(b.result.to_json())
        return
    p = b.result.provenance
    console = make_console()
    info = Table(show_header=False, box=box.SIMPLE, pad_edge=False)
    info.add_column("field", style="bold")
    info.add_column("value")
    for key, value in (("name", b.name), ("file", str(b.path)), ("created", b.created_at),
                       ("from", _origin(b)), ("cases", str(len(b.result.rows))),
                       ("granularity", p.granularity or "—"),
                       ("judgments digest", p.judgments_digest or "—"),
                       ("corpus digest", p.corpus_digest or "—"),
                       ("tool version", p.tool_version)):
        info.add_row(key, plain(value))
    console.print(info)
    means = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    means.add_column("metric")
    means.add_column("mean", justify="right")
    means.add_column("cases", justify="right")
    for metric in b.result.metrics:
        scores = b.result.scores(metric)
        value = f"{b.result.mean(metric):.4f}" if scores else "—"
        means.add_row(plain(metric), value, str(len(scores)))
    for metric, value_ in b.result.aggregates.items():
        means.add_row(plain(metric), f"{value_:.4f}", str(len(b.result.rows)))
    print_table(console, means)
    for note in b.result.notes:
        console.print(plain(f"note: {note}"))
