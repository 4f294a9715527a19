"""``rankproof eval``: corpus + judgments → retrieval stages → measured, compared report."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path

import typer
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from rankproof._io import atomic_write
from rankproof.cli._app import app, err_console, error_boundary
from rankproof.harness import (
    DEFAULT_EVAL_MEASURES,
    EvalConfig,
    EvalInputs,
    EvalReport,
    beir_inputs,
    collection_inputs,
    directory_inputs,
    golden_inputs,
    run_experiment,
)
from rankproof.measures import resolve_measures
from rankproof.report.compare import comparison_compact_table, comparison_markdown

DEFAULT_OUTPUT = Path("evals/results/latest.json")


class Granularity(StrEnum):
    chunk = "chunk"
    document = "document"


class CollectionName(StrEnum):
    cranfield = "cranfield"
    cisi = "cisi"
    vaswani = "vaswani"


class EmbedderOpt(StrEnum):
    minilm = "minilm"
    hashing = "hashing"


class EvalFormat(StrEnum):
    table = "table"
    json = "json"
    md = "md"


def _inputs(corpus: Path | None, judgments: Path | None, collection: CollectionName | None,
            data_root: Path | None, beir: Path | None, split: str, granularity: Granularity,
            chunk_size: int, overlap: int) -> EvalInputs:
    sources = sum(x is not None for x in (corpus, collection, beir))
    if sources > 1:
        raise ValueError("give at most one of CORPUS_DIR, --collection, --beir")
    g = granularity.value
    if collection is not None:
        if data_root is None:
            raise ValueError("--collection needs --data-root (the folder holding "
                             f"{collection.value}/)")
        return collection_inputs(collection.value, data_root, g,  # type: ignore[arg-type]
                                 chunk_size, overlap)
    if beir is not None:
        return beir_inputs(beir, split, g, chunk_size, overlap)  # type: ignore[arg-type]
    if corpus is not None:
        if judgments is None:
            raise ValueError("CORPUS_DIR needs --judgments JUDGMENTS.jsonl")
        return directory_inputs(corpus, judgments, g, chunk_size, overlap)  # type: ignore[arg-type]
    if judgments is not None:
        raise ValueError("--judgments needs CORPUS_DIR")
    return golden_inputs(g, chunk_size, overlap)  # type: ignore[arg-type]


def stage_table(report: EvalReport) -> Table:
    table = Table(title=f"{report.inputs.name}: {report.inputs.scored_queries} scored queries, "
                        f"{report.inputs.chunks} chunks, {report.inputs.granularity} granularity",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                  collapse_padding=True, show_edge=False)
    table.add_column("stage", style="bold", no_wrap=True)
    for m in report.measures:
        table.add_column(m, justify="right", no_wrap=True)
    for col in ("p50 ms", "p95 ms", "p99 ms"):
        table.add_column(col, justify="right", no_wrap=True)
    for s in report.stages:
        lat = s.latency
        table.add_row(s.name, *[f"{s.means[m]:.4f}" for m in report.measures],
                      f"{lat.p50:.1f}", f"{lat.p95:.1f}", f"{lat.p99:.1f}")
    return table


def _plan(inputs: EvalInputs, config: EvalConfig, outputs: list[Path]) -> Table:
    table = Table(title="plan (--dry-run: nothing is indexed, searched or written)",
                  title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value")
    cats = ", ".join(f"{k} {v}" for k, v in inputs.categories.items())
    rows = [
        ("inputs", f"{inputs.name} ({inputs.source})"),
        ("documents", str(len(inputs.corpus.documents))),
        ("chunks", f"{len(inputs.corpus.chunks)} (size {inputs.corpus.chunk_size}, "
                   f"overlap {inputs.corpus.overlap})"),
        ("queries", f"{len(inputs.queries)} ({cats})" if cats else str(len(inputs.queries))),
        ("scored queries", str(len(inputs.qrels.topics))),
        ("judgments", f"{len(inputs.qrels)} qrels rows at {inputs.granularity} granularity"),
        ("stages", ", ".join(config.stages) + " (baseline: bm25)"),
        ("measures", ", ".join(str(m) for m in resolve_measures(config.measures))),
        ("statistics", f"{config.test}, {config.resamples} resamples, seed {config.seed}, "
                       f"{config.correction}, α = {config.alpha:g}"),
        ("report", ", ".join(map(str, outputs))),
    ]
    for r in rows:
        table.add_row(*r)
    return table


@contextmanager
def _progress(quiet: bool, steps: int) -> Iterator[Callable[[str], None]]:
    """A progress bar over the experiment's steps (index and search per stage, then the
    statistics), on a terminal only; ``--quiet`` or a pipe gets nothing."""
    if quiet or not err_console.is_terminal:
        yield lambda _msg: None
        return
    columns = (SpinnerColumn(), TextColumn("{task.description:<40}"), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task("starting", total=steps)
        started = False

        def say(msg: str) -> None:
            nonlocal started
            if started:
                bar.advance(task)
            started = True
            bar.update(task, description=msg)

        yield say


@app.command("eval")
@error_boundary
def eval_command(
    corpus: Path | None = typer.Argument(None, help="A directory of .txt/.md documents "
                                                    "(default: the bundled golden corpus)."),
    judgments: Path | None = typer.Option(None, "--judgments", "-j",
                                          help="Quote-anchored judgments (JSONL)."),
    collection: CollectionName | None = typer.Option(None, "--collection",
                                                     help="A classic test collection."),
    data_root: Path | None = typer.Option(None, "--data-root",
                                          help="Folder holding the collection's folder."),
    beir: Path | None = typer.Option(None, "--beir", help="Evaluate a BEIR folder directly."),
    split: str = typer.Option("test", "--split", help="BEIR qrels split."),
    stages: str = typer.Option("bm25,dense,fusion", "--stages",
                               help="Comma-separated: bm25,dense,fusion,rerank (bm25 first)."),
    measures: list[str] | None = typer.Option(None, "-m", "--measure",
                                              help="Measures (default R@1 R@5 R@10 RR@10 "
                                                   "nDCG@10)."),
    granularity: Granularity | None = typer.Option(
        None, "--granularity", help="chunk (default) or document (default for --collection)."),
    chunk_size: int = typer.Option(800, "--chunk-size", help="Chunk size in characters."),
    overlap: int = typer.Option(100, "--overlap", help="Chunk overlap in characters."),
    embedder: EmbedderOpt = typer.Option(
        EmbedderOpt.minilm, "--embedder",
        help="minilm (all-MiniLM-L6-v2, offline) or hashing (a labelled test double)."),
    rerank_model: Path | None = typer.Option(None, "--rerank-model",
                                             help="Local cross-encoder directory for rerank."),
    resamples: int = typer.Option(10_000, "--resamples"),
    seed: int = typer.Option(0, "--seed"),
    alpha: float = typer.Option(0.05, "--alpha"),
    output: Path | None = typer.Option(None, "-o", "--output",
                                       help=f"Also write the report here (always written to "
                                            f"{DEFAULT_OUTPUT})."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and do nothing else."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress display."),
    fmt: EvalFormat = typer.Option(EvalFormat.table, "--format", "-f"),
) -> None:
    """Run BM25 / dense / fusion / rerank over a corpus and compare each with BM25."""
    gran = granularity or (Granularity.document if collection is not None else Granularity.chunk)
    config = EvalConfig(
        stages=tuple(s.strip() for s in stages.split(",") if s.strip()),
        measures=tuple(measures) if measures else DEFAULT_EVAL_MEASURES,
        granularity=gran.value,
        chunk_size=chunk_size, overlap=overlap, embedder=embedder.value,
        rerank_model=str(rerank_model) if rerank_model else None,
        resamples=resamples, seed=seed, alpha=alpha,
    )
    config.check()
    inputs = _inputs(corpus, judgments, collection, data_root, beir, split, gran, chunk_size,
                     overlap)
    outputs = [DEFAULT_OUTPUT] + ([output] if output is not None else [])
    console = Console()
    if dry_run:
        console.print(_plan(inputs, config, outputs))
        return
    with _progress(quiet, 2 * len(config.stages) + 1) as say:
        report, comparison = run_experiment(inputs, config, progress=say)
    text = report.model_dump_json(indent=2) + "\n"
    for path in outputs:
        with atomic_write(path) as fh:
            fh.write(text)
    if fmt is EvalFormat.json:
        typer.echo(text, nl=False)
    elif fmt is EvalFormat.md:
        if comparison is not None:
            typer.echo(comparison_markdown(comparison))
    else:
        console.print(stage_table(report))
        if comparison is not None:
            console.print()
            table, notes = comparison_compact_table(comparison)
            console.print(table)
            for note in notes:
                console.print(note, highlight=False)
    for cav in report.caveats:
        err_console.print(f"[yellow]caveat:[/] {cav}")
    err_console.print(f"report written to {', '.join(map(str, outputs))}")
