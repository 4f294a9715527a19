"""``rankproof fuse``: combine TREC runs by rank (RRF) or by normalised score."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from rankproof.cli._app import app, err_console, error_boundary
from rankproof.data._trec import read_trec_run, write_trec_run
from rankproof.retrieval import fuse


class FuseMethod(StrEnum):
    rrf = "rrf"
    combsum = "combsum"
    combmnz = "combmnz"


class NormOpt(StrEnum):
    minmax = "minmax"
    zscore = "zscore"


@app.command("fuse")
@error_boundary
def fuse_command(
    runs: list[Path] = typer.Argument(..., help="Two or more TREC runs."),
    method: FuseMethod = typer.Option(FuseMethod.rrf, "--method"),
    norm: NormOpt | None = typer.Option(None, "--norm",
                                        help="Score normalisation for combsum/combmnz."),
    k: float = typer.Option(60, "-k", help="RRF constant: score = Σ 1/(k + rank)."),
    depth: int = typer.Option(1000, "--depth", help="Documents read from each run per query."),
    limit: int | None = typer.Option(None, "--limit", help="Documents kept per query."),
    order: str = typer.Option("score", "--order",
                              help="Rank each input by score (trec_eval) or by its rank column."),
    tag: str = typer.Option("rankproof-fusion", "--tag", help="Run tag written to OUT."),
    output: Path = typer.Option(..., "-o", "--output", help="The fused run (TREC format)."),
) -> None:
    """Fuse runs (RRF, CombSUM, CombMNZ) and write the result atomically."""
    loaded = [read_trec_run(p) for p in runs]
    fused = fuse(loaded, method.value, norm=norm.value if norm else None,
                 k=k, depth=depth, limit=limit, name=tag,
                 order=order)  # type: ignore[arg-type]
    write_trec_run(fused, output, tag=tag)
    err_console.print(f"fused {len(loaded)} runs ({method.value}) into {output}: "
                      f"{len(fused)} rows, {len(fused.topics)} topics")
