"""``rankproof export``: a run in another format, or in its canonical, tie-safe form."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rankproof._errors import InputError
from rankproof.cli._app import app, error_boundary, print_note
from rankproof.cli._outputs import force_option, guard_outputs
from rankproof.cli._runs import (
    RUN_WRITERS,
    STDIN,
    DedupeChoice,
    OrderChoice,
    allow_extra_columns_option,
    choices,
    dedupe_option,
    order_option,
)
from rankproof.data import (
    Run,
    canonical_run,
    check_canonical,
    is_canonical,
    is_parquet,
    load_run,
    ranked_order,
    read_parquet_run,
)
from rankproof.report.console import make_console, plain

EXPORT_FORMATS = ("trec", "jsonl", "parquet")
"""What ``export`` writes (each through `rankproof.cli._runs.RUN_WRITERS`)."""

if TYPE_CHECKING:
    ExportFormat = str
else:
    ExportFormat = choices("ExportFormat", EXPORT_FORMATS)


def _format_of(output: Path, fmt: str | None) -> str:
    """``--format``, else the output's suffix (``.jsonl``/``.ndjson``, ``.parquet``), else trec."""
    if fmt is not None:
        return fmt
    name = output.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    return "trec"


def _read(path: Path, dedupe: str | None, allow_extra_columns: bool) -> Run:
    if str(path) != STDIN and is_parquet(path):
        return read_parquet_run(path, dedupe=dedupe)  # type: ignore[arg-type]
    return load_run(str(path), dedupe=dedupe,  # type: ignore[arg-type]
                    extra_columns="ignore" if allow_extra_columns else "error")


def _rewritten_ranks(run: Run) -> int:
    """How many rows' rank column a TREC file (written in trec_eval's order) changes."""
    if run.ranks is None:
        return 0
    ranked = ranked_order(run)
    return int((run.ranks[ranked.row_ids(len(run))] != ranked.positions + 1).sum())


@app.command("export")
@error_boundary
def export_command(
    run: Path = typer.Argument(..., metavar="RUN",
                               help="A run (TREC, BEIR TSV, JSON, JSONL, MS MARCO, Parquet; .gz "
                                    "ok; - for standard input)."),
    output: Path = typer.Option(..., "-o", "--output", metavar="PATH",
                                help="The exported run (never the input); - is standard output "
                                     "(text formats)."),
    fmt: ExportFormat | None = typer.Option(
        None, "--format", "-f",
        help="Output format; default from OUT's suffix (.jsonl, .parquet), else trec."),
    canonical: bool = typer.Option(
        False, "--canonical",
        help="Rank each topic once by trec_eval's order (score descending, ties by docid "
             "descending), write ranks 1..n and score = 1/rank, so that every evaluator sees "
             "the same ranking."),
    check: bool = typer.Option(
        False, "--check-canonical",
        help="Refuse RUN unless it is canonical (ranks 1..n per topic, score = 1/rank). A run "
             "that looks canonical (score = 1/rank on 90% of rows) is checked without it."),
    tag: str | None = typer.Option(None, "--tag", help="Run tag written to OUT (TREC's sixth "
                                                       "column; Parquet metadata)."),
    order: OrderChoice = order_option(),
    dedupe: DedupeChoice | None = dedupe_option(),
    allow_extra_columns: bool = allow_extra_columns_option(),
    force: bool = force_option(),
) -> None:
    """Convert a run between formats; --canonical rewrites scores as 1/rank (tie-safe)."""
    guard_outputs([(output, "run")], [run], force=force)
    kind = _format_of(output, None if fmt is None else str(fmt))
    if kind == "parquet" and str(output) == STDIN:
        raise InputError("Parquet is binary: write it to a file, not standard output",
                         path=STDIN, field="--output")
    loaded = _read(run, None if dedupe is None else str(dedupe), allow_extra_columns)
    if check or is_canonical(loaded):
        check_canonical(loaded)
    ranked = ranked_order(loaded)
    result = canonical_run(loaded, str(order)) if canonical else loaded  # type: ignore[arg-type]
    if not canonical:
        if ranked.n_ties:
            print_note(f"{ranked.n_ties} tied scores are kept as they are; an evaluator that "
                       "breaks ties differently from trec_eval may rank them otherwise "
                       "(--canonical writes score = 1/rank)", about=loaded.name)
        if kind == "trec":
            changed = _rewritten_ranks(loaded)
            if changed:
                print_note(f"the rank column of {changed} rows is rewritten: TREC files are "
                           "written in trec_eval's order, ranks 1..n",
                           about=loaded.name)
    if tag is not None and kind == "jsonl":
        print_note("JSON Lines runs have no tag field; --tag is not written", about=loaded.name)
    write = RUN_WRITERS[kind]
    if str(output) == STDIN:
        with tempfile.TemporaryDirectory(prefix="rankproof-export-") as tmp:
            path = Path(tmp) / f"export.{kind}"
            write(result, path, tag)
            with open(path, encoding="utf-8") as fh:
                shutil.copyfileobj(fh, sys.stdout)
        sys.stdout.flush()
    else:
        write(result, output, tag)
    where = "standard output" if str(output) == STDIN else str(output)
    how = f"{kind}, canonical (score = 1/rank)" if canonical else kind
    make_console(stderr=True).print(plain(
        f"exported {loaded.name} ({len(result)} rows, {len(result.topics)} topics) as {how} "
        f"to {where}"))
