"""``rankproof gate``: evaluate a checks file on a report; exit 1 only on a blocking failure."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console

from rankproof._io import atomic_write
from rankproof.cli._app import EXIT_FAILED, app, err_console, error_boundary
from rankproof.gate import (
    DEFAULT_DIR,
    GateVerdict,
    load_baseline,
    load_checks,
    result_from_report,
    run_gate,
)
from rankproof.report.gate import verdict_lines, verdict_markdown, verdict_table
from rankproof.report.junit import verdict_junit

DEFAULT_REPORT = Path("evals/results/latest.json")


class GateFormat(StrEnum):
    table = "table"
    json = "json"


def write_outputs(verdict: GateVerdict, junit: Path | None, markdown: Path | None,
                  json_out: Path | None) -> list[str]:
    """Write the requested files (atomically) and append to $GITHUB_STEP_SUMMARY if set."""
    written = []
    if junit is not None:
        with atomic_write(junit) as fh:
            fh.write(verdict_junit(verdict))
        written.append(f"JUnit XML: {junit}")
    md = verdict_markdown(verdict)
    if markdown is not None:
        with atomic_write(markdown) as fh:
            fh.write(md)
        written.append(f"Markdown: {markdown}")
    if json_out is not None:
        with atomic_write(json_out) as fh:
            fh.write(verdict.to_json() + "\n")
        written.append(f"JSON: {json_out}")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        # GitHub's contract is to append: other steps write to the same file.
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(md + "\n")
        written.append(f"GitHub step summary: {summary}")
    return written


@app.command("gate")
@error_boundary
def gate_command(
    checks: Path = typer.Argument(..., help="Checks file (YAML)."),
    report: Path = typer.Option(DEFAULT_REPORT, "--report", "-r",
                                help="A rankproof eval report (JSON)."),
    stage: str | None = typer.Option(None, "--stage",
                                     help="The report stage to check (required when the "
                                          "report has several)."),
    baseline: str | None = typer.Option(None, "--baseline", "-b",
                                        help="Baseline NAME (in --baseline-dir) or PATH, for "
                                             "vs_baseline checks."),
    baseline_dir: Path = typer.Option(DEFAULT_DIR, "--baseline-dir",
                                      help="Where named baselines live."),
    junit: Path | None = typer.Option(None, "--junit", help="Write JUnit XML here."),
    markdown: Path | None = typer.Option(None, "--markdown",
                                         help="Write a Markdown summary here (also appended "
                                              "to $GITHUB_STEP_SUMMARY when set)."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the verdict as JSON here."),
    fmt: GateFormat = typer.Option(GateFormat.table, "--format", "-f"),
) -> None:
    """Check a report against CHECKS: exit 0 pass, 1 a blocking check failed, 2 bad input."""
    result = result_from_report(report, stage)
    spec = load_checks(checks, known_case_ids=result.case_ids)
    base = load_baseline(baseline, baseline_dir) if baseline is not None else None
    verdict = run_gate(spec, result, base)
    if fmt is GateFormat.json:
        typer.echo(verdict.to_json())
    else:
        console = Console(highlight=False)
        console.print(verdict_table(verdict))
        for line in verdict_lines(verdict):
            console.print(line, markup=False)
    for line in write_outputs(verdict, junit, markdown, json_out):
        err_console.print(f"wrote {line}", markup=False)
    if not verdict.passed:
        raise typer.Exit(EXIT_FAILED)
