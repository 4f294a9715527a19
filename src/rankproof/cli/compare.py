"""``rankproof compare``: paired significance for every candidate against a baseline."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console

from rankproof._io import atomic_write
from rankproof.cli._app import EXIT_FAILED, app, err_console, error_boundary
from rankproof.cli.measure import DedupeOpt, Topics
from rankproof.compare._compare import compare as run_compare
from rankproof.data._trec import read_trec_qrels, read_trec_run
from rankproof.report.compare import comparison_markdown, comparison_tables


class TestOpt(StrEnum):
    randomization = "randomization"
    t = "t"
    bootstrap = "bootstrap"
    wilcoxon = "wilcoxon"
    sign = "sign"


class CorrectionOpt(StrEnum):
    holm = "holm"
    bh = "bh"
    bonferroni = "bonferroni"
    none = "none"


class PairsOpt(StrEnum):
    baseline = "baseline"
    all = "all"


class CompareFormat(StrEnum):
    table = "table"
    json = "json"
    md = "md"


def unique_names(paths: list[Path]) -> list[str]:
    """Short, unique labels: the file stem, with parent folders added until unique."""
    from rankproof.data._trec import _stem

    parts = [[*p.resolve().parts[:-1], _stem(p)] for p in paths]
    depth = 1
    while True:
        names = ["/".join(p[-depth:]) for p in parts]
        if len(set(names)) == len(names) or depth >= max(len(p) for p in parts):
            break
        depth += 1
    if len(set(names)) != len(names):
        raise ValueError("the same run file is given twice: " + ", ".join(map(str, paths)))
    return names


@app.command()
@error_boundary
def compare(
    qrels: Path = typer.Argument(..., help="Judgments (TREC qrels)."),
    baseline: Path = typer.Argument(..., help="The baseline run."),
    candidates: list[Path] = typer.Argument(..., help="One or more candidate runs."),
    measures: list[str] | None = typer.Option(
        None, "-m", "--measure", help="Measure(s) to compare (default nDCG@10 RR@10 AP R@100 "
                                      "P@10). Repeatable."),
    test: TestOpt = typer.Option(TestOpt.randomization, "--test",
                                 help="Paired test (randomization is the default and "
                                      "recommended)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Family-wise significance level."),
    correction: CorrectionOpt = typer.Option(CorrectionOpt.holm, "--correction",
                                             help="Multiple-comparison correction."),
    resamples: int = typer.Option(10_000, "--resamples", help="Resamples for randomization "
                                                              "and bootstrap."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random procedure (recorded)."),
    pairs: PairsOpt = typer.Option(PairsOpt.baseline, "--pairs",
                                   help="baseline: candidates vs baseline; all: every pair "
                                        "(randomized Tukey HSD)."),
    fmt: CompareFormat = typer.Option(CompareFormat.table, "--format", "-f"),
    fail_on_regression: bool = typer.Option(
        False, "--fail-on-regression",
        help="Exit 1 when any candidate is significantly worse on any measure."),
    rel_level: int = typer.Option(1, "-l", "--rel-level", help="Minimum relevant label."),
    topics: Topics = typer.Option(Topics.complete, "--topics"),
    dedupe: DedupeOpt | None = typer.Option(None, "--dedupe"),
    output: Path | None = typer.Option(None, "-o", "--output",
                                       help="Also write the comparison as JSON here."),
) -> None:
    """Is each candidate better, worse, or not detectably different from the baseline?"""
    dd = dedupe.value if dedupe else None
    q = read_trec_qrels(qrels, dedupe=dd)  # type: ignore[arg-type]
    paths = [baseline, *candidates]
    runs = {name: read_trec_run(path, name=name, dedupe=dd)  # type: ignore[arg-type]
            for name, path in zip(unique_names(paths), paths, strict=True)}
    result = run_compare(
        runs, q, measures or None, baseline=next(iter(runs)), test=test.value,
        alpha=alpha, correction=correction.value, pairs=pairs.value, resamples=resamples,
        seed=seed, rel_level=rel_level, topics=topics.value,
    )
    if output is not None:
        with atomic_write(output) as fh:
            fh.write(result.to_json() + "\n")
    if fmt is CompareFormat.json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    elif fmt is CompareFormat.md:
        typer.echo(comparison_markdown(result))
    else:
        console = Console()
        for table, notes in comparison_tables(result):
            console.print(table)
            for note in notes:
                console.print(note, highlight=False)
            console.print()
        for cav in result.caveats:
            err_console.print(f"[yellow]note[/]: {cav}")
    if fail_on_regression and result.regressions:
        worse = ", ".join(f"{r.candidate} on {r.measure}" for r in result.regressions)
        err_console.print(f"[bold red]regression:[/] significantly worse: {worse}")
        raise typer.Exit(EXIT_FAILED)
