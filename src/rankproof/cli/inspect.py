"""``rankproof inspect``: a seeded sample of regressed queries to review, and the reviewed tally.

``rankproof inspect REPORT`` writes JSON Lines (`rankproof.report.inspect`):
a meta line, then one record per sampled regression with an empty ``side``
for a reviewer to fill. ``rankproof inspect --summarize LABELLED.jsonl``
counts the sides afterwards. ``--summarize`` is an option of the one command
rather than a subcommand so that ``rankproof inspect REPORT`` keeps its
positional argument (a Typer group would read ``REPORT`` as a command name).

The destination is checked before the report is read, and the records are
written all at once (`rankproof._io.commit_all`): a refused input or output
leaves nothing behind.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer
from rich.table import Table

from rankproof._errors import InputError
from rankproof._io import commit_all
from rankproof.cli._app import app, error_boundary, print_note
from rankproof.cli._outputs import STDIN, force_option, guard_outputs
from rankproof.report.console import make_console, print_table


class SummaryFormat(StrEnum):
    table = "table"
    json = "json"


def _summarize(path: Path, fmt: SummaryFormat) -> None:
    from rankproof.report.inspect import summarize

    summary = summarize(path)
    if fmt is SummaryFormat.json:
        typer.echo(json.dumps(summary.to_dict(), indent=2, ensure_ascii=True))
        return
    table = Table(title=f"sides of {summary.total} reviewed regressions ({summary.labelled} "
                        f"labelled) of {summary.source}", title_justify="left")
    table.add_column("side")
    table.add_column("queries", justify="right")
    table.add_column("share", justify="right")
    for side, count in summary.counts.items():
        table.add_row(side, str(count), f"{summary.share(side):.0%}")
    table.add_row("total", str(summary.total), "100%" if summary.total else "—")
    print_table(make_console(), table)


@app.command("inspect")
@error_boundary
def inspect_command(
    report: Path | None = typer.Argument(
        None, metavar="REPORT", show_default=False,
        help="An eval report, a comparison or measure results (JSON) with per-query values."),
    regressions: int | None = typer.Option(
        None, "--regressions", "-n", metavar="N", show_default=False,
        help="How many regressed queries to sample (default 30; all when fewer regressed)."),
    seed: int | None = typer.Option(None, "--seed", metavar="S", show_default=False,
                                    help="Seed of the sample (default 0)."),
    measure: str | None = typer.Option(None, "--measure", "-m",
                                       help="The measure whose fall makes a regression "
                                            "(default: the report's first)."),
    baseline: str | None = typer.Option(None, "--baseline", metavar="A",
                                        help="The system regressed from (default: the "
                                             "report's baseline)."),
    candidate: str | None = typer.Option(None, "--candidate", metavar="B",
                                         help="The system regressed to (default: the first "
                                              "candidate)."),
    output: Path | None = typer.Option(None, "-o", "--output", metavar="OUT.jsonl",
                                       help="The review records (JSON Lines); standard output "
                                            "when omitted."),
    summarize: Path | None = typer.Option(
        None, "--summarize", metavar="LABELLED.jsonl",
        help="Count the sides of a reviewed file instead (retrieval, generation, metric, "
             "annotation, unlabelled)."),
    fmt: SummaryFormat = typer.Option(SummaryFormat.table, "--format", "-f",
                                      metavar="table|json",
                                      help="With --summarize: a table, or JSON."),
    force: bool = force_option(),
) -> None:
    """Sample regressed queries with their evidence for review, and count the reviewed sides."""
    if summarize is not None:
        sampling = {"REPORT": report, "--regressions": regressions, "--seed": seed,
                    "--measure": measure, "--baseline": baseline, "--candidate": candidate,
                    "-o": output}
        given = [name for name, value in sampling.items() if value is not None]
        if given:
            raise InputError(f"--summarize counts a labelled file; it takes no "
                             f"{', '.join(given)}")
        _summarize(summarize, fmt)
        return
    if report is None:
        raise InputError("give a REPORT to sample regressions from, or --summarize "
                         "LABELLED.jsonl to count the reviewed sides")
    guard_outputs([(output, None)], [report], force=force)
    from rankproof.comparison import REGRESSION_SAMPLE_SIZE
    from rankproof.report.document import read
    from rankproof.report.inspect import inspect
    from rankproof.report.views import build

    view = build(read(report))
    result = inspect(view, regressions=REGRESSION_SAMPLE_SIZE if regressions is None
                     else regressions, seed=0 if seed is None else seed, measure=measure,
                     baseline=baseline, candidate=candidate)
    text = result.to_jsonl()
    meta = result.meta
    if output is None or str(output) == STDIN:
        typer.echo(text, nl=False)
    else:
        commit_all([(output, text)])
    print_note(f"{meta['sampled']} of {meta['regressed']} regressed queries ({meta['paired']} "
               f"paired) on {meta['measure']}: {meta['baseline']} → {meta['candidate']}, "
               f"seed {meta['seed']}" + ("" if output is None or str(output) == STDIN
                                         else f"; wrote {output}"))
    if not meta["evidence"]:
        print_note("the report keeps no top results, query text or gold: the records hold "
                   "per-query values only")
