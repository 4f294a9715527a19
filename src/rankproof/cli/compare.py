"""``rankproof compare``: paired significance for every candidate against a baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, get_args

import typer

from rankproof.cli._app import EXIT_FAILED, app, err_console, error_boundary
from rankproof.cli._outputs import force_option, guard_outputs
from rankproof.cli._runs import (
    DedupeChoice,
    OrderChoice,
    TopicsChoice,
    allow_extra_columns_option,
    choices,
    dedupe_option,
    load_runs,
    names_option,
    order_option,
    output_option,
    qrels_argument,
    rel_level_option,
    topics_option,
    write_output,
)
from rankproof.comparison import Pairs
from rankproof.comparison import compare as run_compare
from rankproof.report.compare import comparison_markdown, comparison_tables
from rankproof.report.console import make_console, plain, print_table
from rankproof.stats import CORRECTIONS, TESTS

FORMATS = ("table", "json", "md")
"""Output formats: Rich tables, the comparison as JSON, GitHub-flavoured Markdown."""

if TYPE_CHECKING:
    TestChoice = str
    CorrectionChoice = str
    PairsChoice = str
    CompareFormat = str
else:
    TestChoice = choices("TestChoice", TESTS)
    CorrectionChoice = choices("CorrectionChoice", CORRECTIONS)
    PairsChoice = choices("PairsChoice", get_args(Pairs))
    CompareFormat = choices("CompareFormat", FORMATS)


@app.command()
@error_boundary
def compare(
    qrels: Path = qrels_argument(),
    baseline: Path = typer.Argument(..., metavar="BASELINE", help="The baseline run."),
    candidates: list[Path] = typer.Argument(..., metavar="CANDIDATE...",
                                            help="One or more candidate runs."),
    measures: list[str] | None = typer.Option(
        None, "-m", "--measure", metavar="MEASURE",
        help="Measure(s) to compare (default nDCG@10 RR@10 AP R@100 P@10); trec_eval names "
             "and sets (official, all_trec) too. Repeatable."),
    test: TestChoice = typer.Option("randomization", "--test",
                                    help="Paired test (randomization is the default and "
                                         "recommended)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Family-wise significance level."),
    correction: CorrectionChoice = typer.Option("holm", "--correction",
                                                help="Multiple-comparison correction."),
    resamples: int = typer.Option(10_000, "--resamples", metavar="N",
                                  help="Resamples for randomization and bootstrap."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random procedure (recorded)."),
    pairs: PairsChoice = typer.Option("baseline", "--pairs",
                                      help="baseline: candidates vs baseline; all: every pair "
                                           "(randomized Tukey HSD)."),
    fmt: CompareFormat = typer.Option("table", "--format", "-f", help="Output format."),
    fail_on_regression: bool = typer.Option(
        False, "--fail-on-regression",
        help="Exit 1 when any candidate is significantly worse on any measure."),
    rel_level: int = rel_level_option(),
    topics: TopicsChoice = topics_option(),
    order: OrderChoice = order_option(),
    dedupe: DedupeChoice | None = dedupe_option(),
    allow_extra_columns: bool = allow_extra_columns_option(),
    names: list[str] | None = names_option(),
    output: Path | None = output_option("Also write the comparison as JSON here."),
    force: bool = force_option(),
) -> None:
    """Is each candidate better, worse, or not detectably different from the baseline?"""
    guard_outputs([(output, "rankproof.comparison")], [qrels, baseline, *candidates],
                  force=force)
    q, runs = load_runs(qrels, [baseline, *candidates], names=names, dedupe=dedupe,
                        allow_extra_columns=allow_extra_columns)
    assert q is not None
    result = run_compare(
        q, runs, measures or None, baseline=runs[0].name, test=str(test),  # type: ignore[arg-type]
        alpha=alpha, correction=str(correction), pairs=str(pairs),  # type: ignore[arg-type]
        resamples=resamples, seed=seed, rel_level=rel_level,
        topics=str(topics), order=str(order),  # type: ignore[arg-type]
    )
    if output is not None:
        write_output(output, result.to_json() + "\n")
    fmt = str(fmt)
    if fmt == "json":
        typer.echo(json.dumps(result.to_dict(), indent=2))
    elif fmt == "md":
        typer.echo(comparison_markdown(result))
    else:
        console = make_console()
        for table, notes in comparison_tables(result):
            print_table(console, table)
            for note in notes:
                console.print(plain(note))
            console.print()
        for cav in result.caveats:
            line = plain("note", style="yellow")
            line.append_text(plain(f": {cav}"))
            err_console.print(line)
    if fail_on_regression and result.regressions:
        worse = ", ".join(f"{r.candidate} on {r.measure}" for r in result.regressions)
        line = plain("regression:", style="bold red")
        line.append_text(plain(f" significantly worse: {worse}"))
        err_console.print(line)
        raise typer.Exit(EXIT_FAILED)
