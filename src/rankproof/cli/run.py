"""``rankproof run``: an experiment file's stages, cached by content, limited with ``--only``.

``rankproof run EXPERIMENT.yaml`` runs every stage whose cache key changed;
``rankproof run EXPERIMENT.yaml --only compare report`` runs the named stages and reuses the
cached outputs of the stages they read (refused, exit 2, when one has none);
``--dry-run`` prints the plan and writes nothing. The file is validated completely, and
its input paths checked, before any stage runs: a problem is exit 2 naming the file, the
line and the field. A gate stage with a failed blocking check makes the run exit 1.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from rankproof.cli._app import EXIT_FAILED, app, err_console, error_boundary
from rankproof.cli._history import history_option, record
from rankproof.report.console import make_console, plain, print_table


def _names(only: bool, names: list[str] | None) -> list[str] | None:
    stages = [n for given in names or () for n in given.split(",") if n]
    if not only:
        if stages:
            raise typer.BadParameter(f"unexpected argument(s) {' '.join(stages)}; to run only "
                                     "some stages, write --only STAGE ...",
                                     param_hint="'STAGE...'")
        return None
    if not stages:
        raise typer.BadParameter("--only needs the ids of the stages to run, after the "
                                 "experiment file: rankproof run EXP.yaml --only A B",
                                 param_hint="'--only'")
    return list(dict.fromkeys(stages))


def _documents(summary: Any) -> list[Path]:
    """The document each stage that ran or was reused wrote: its ``OUTPUT/<id>/stage.json``
    names it (``document``; none for a stage that writes only runs or renderings)."""
    from rankproof.history import read_json_file

    out = []
    for s in summary.stages:
        folder = summary.output / s.id
        if s.status not in ("run", "cached") or not (folder / "stage.json").is_file():
            continue
        name = read_json_file(folder / "stage.json").get("document")
        if isinstance(name, str) and (folder / name).is_file():
            out.append(folder / name)
    return out


@app.command("run")
@error_boundary
def run_command(
    experiment: Path = typer.Argument(..., metavar="EXPERIMENT.yaml",
                                      help="The experiment file (YAML)."),
    names: list[str] | None = typer.Argument(None, metavar="STAGE...",
                                             help="With --only: the stages to run."),
    only: bool = typer.Option(False, "--only",
                              help="Run only the stages named after the file (and reuse the "
                                   "cached outputs of the stages they read)."),
    dry_run: bool = typer.Option(False, "--dry-run",
                                 help="Print what would run, cached or be skipped; run and "
                                      "write nothing."),
    output: Path | None = typer.Option(None, "-o", "--output", metavar="DIR",
                                       help="Write under DIR instead of the file's output."),
    quiet: bool = typer.Option(False, "--quiet", help="No per-stage progress lines."),
    history: str | None = history_option(
        "Also record the results the stages wrote (eval reports, measure JSON, comparisons, "
        "gate verdicts, RAG and discovery reports; cached stages too) in the results "
        "history: a SQLite file, postgresql://…, or 'default' ($RANKPROOF_HISTORY, else "
        ".rankproof/history.db)."),
) -> None:
    """Run an experiment file's stages, cached by content; --only, --dry-run."""
    from rankproof.pipeline import load_experiment, plan, run

    selected = _names(only, names)
    exp = load_experiment(experiment)
    if output is not None:
        exp = dataclasses.replace(exp, output=output.absolute())
    console = make_console()
    if dry_run:
        table = Table(title=f"plan for {exp.name} (--dry-run: nothing runs, nothing is written)",
                      title_justify="left")
        for col in ("stage", "kind", "plan", "why", "key"):
            table.add_column(col)
        for p in plan(exp, selected):
            key = p.key.removeprefix("sha256:")[:12] if p.key else "-"
            table.add_row(p.id, p.kind, p.action, p.reason, key)
        print_table(console, table)
        console.print(plain(f"output: {exp.output}"))
        return

    def say(message: str) -> None:
        if not quiet:
            err_console.print(plain(message))

    summary = run(exp, selected, progress=say)
    table = Table(title=f"{exp.name}: stage timings", title_justify="left")
    for col, justify in (("stage", "left"), ("kind", "left"), ("status", "left"),
                         ("seconds", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for s in summary.stages:
        status = s.status + ("" if s.passed is None else
                             " (passed)" if s.passed else " (FAILED)")
        table.add_row(s.id, s.kind, status, f"{s.seconds:.1f}")
    table.add_row("total", "", "", f"{summary.seconds:.1f}")
    print_table(console, table)
    err_console.print(plain(f"outputs in {summary.output} (run.json records this run)"))
    if history is not None:
        record(history, _documents(summary), only_results=True)
    if not summary.passed:
        line = plain("gate failed:", style="bold red")
        line.append_text(plain(f" {', '.join(summary.failed_gates)}"))
        err_console.print(line)
        raise typer.Exit(EXIT_FAILED)
