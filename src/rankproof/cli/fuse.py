"""``rankproof fuse``: combine runs by rank (RRF, ISR, RBC, Borda) or by score (CombSUM, …),
as ranx and pyserini define them (`rankproof.retrieval.fuse`)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, get_args

import typer

from rankproof._errors import InputError
from rankproof.cli._app import app, err_console, error_boundary
from rankproof.cli._outputs import force_option, guard_outputs
from rankproof.cli._requests import Request, takes
from rankproof.cli._runs import (
    RUN_WRITERS,
    STDIN,
    DedupeChoice,
    OrderChoice,
    allow_extra_columns_option,
    choices,
    dedupe_option,
    load_runs,
    order_option,
    run_format_option,
    runs_argument,
)
from rankproof.data import (
    Format,
)
from rankproof.report.console import plain
from rankproof.retrieval import FusionMethod, Norm, default_norm, fuse

if TYPE_CHECKING:
    from rankproof.retrieval import FusionSearch

    MethodChoice = str
    NormChoice = str
    RunFormat = str
else:
    MethodChoice = choices("MethodChoice", get_args(FusionMethod))
    NormChoice = choices("NormChoice", (*get_args(Norm), "none"))
    RunFormat = choices("RunFormat", tuple(f for f in get_args(Format) if f in RUN_WRITERS))


PROVENANCE_KIND = "rankproof.provenance"


def provenance_sidecar(output: Path) -> Path | None:
    """Where the fused run's provenance goes: ``OUT.provenance.json`` beside a file output
    (a run file has no room for it); None for standard output."""
    if str(output) == STDIN:
        return None
    return output.with_name(output.name + ".provenance.json")


def _write_sidecar(side: Path, output: Path, runs: list[Path],
                   parameters: dict[str, object], qrels: Path | None = None,
                   optimization: dict[str, object] | None = None,
                   seed: int | None = None) -> None:
    """The sidecar, written after the run (so it records the run's own digest)."""
    import json

    from rankproof._io import atomic_write
    from rankproof._manifest import input_entry, provenance

    doc: dict[str, object] = {
        "schema_version": 1, "kind": PROVENANCE_KIND, "output": input_entry(output),
        "parameters": parameters,
        "provenance": provenance(inputs={"runs": runs, "qrels": qrels}, output=output,
                                 seed=seed)}
    if optimization is not None:
        doc["optimization"] = optimization
    with atomic_write(side) as fh:
        fh.write(json.dumps(doc, indent=2) + "\n")


_OPTIONS = {"weights": "--weights", "alpha": "--alpha", "phi": "--phi", "sigma": "--sigma",
            "norm": "--norm", "method": "--method", "k": "-k", "depth": "--depth",
            "limit": "--limit", "order": "--order", "folds": "--folds", "step": "--grid",
            "ks": "--ks", "norms": "--norms", "measure": "--measure", "seed": "--seed"}
"""The command-line option behind each of `fuse`'s parameters (errors name the option)."""


def _weights(text: str | None, n_runs: int) -> list[float] | None:
    """``--weights 0.7,0.3``: one finite number per run."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    values = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise InputError(f"--weights: {part!r} is not a number (expected one number per "
                             "run, comma-separated)") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise InputError(f"--weights: {part!r} is not a finite number")
        values.append(value)
    if len(values) != n_runs:
        raise InputError(f"--weights: {len(values)} value{'s' if len(values) != 1 else ''} "
                         f"for {n_runs} runs (one per run, in the order the runs are given)")
    return values


def _numbers(option: str, text: str | None) -> tuple[float, ...] | None:
    """``--ks 10,20,60``: comma-separated numbers."""
    if text is None:
        return None
    out = []
    for part in (p.strip() for p in text.split(",")):
        try:
            out.append(float(part))
        except ValueError:
            raise InputError(f"{option}: {part!r} is not a number (expected numbers, "
                             "comma-separated)") from None
    return tuple(out)


def _search(method: str, measure: str, folds: int, seed: int, grid: float, ks: str | None,
            norms: str | None) -> FusionSearch:
    """The search `--optimize` asks for, its errors naming the options."""
    from rankproof.retrieval import FusionSearch

    try:
        return FusionSearch(method, measure, folds=folds, seed=seed, step=grid,
                            ks=_numbers("--ks", ks),
                            norms=None if norms is None else tuple(
                                n.strip() for n in norms.split(",")))
    except InputError as exc:
        if exc.field in _OPTIONS:
            raise InputError(f"{_OPTIONS[exc.field]}: {exc.reason}") from None
        raise


class FuseArgs(Request):
    """`fuse_command`'s options, as one request (`rankproof.cli._requests.takes`)."""

    runs: list[Path] = runs_argument("Two or more runs (TREC, BEIR TSV, JSON, JSONL, MS MARCO; "
                                     ".gz ok; - for standard input).")
    method: MethodChoice | None = typer.Option(None, "--method",
                                               help="Fusion method (default rrf).")
    norm: NormChoice | None = typer.Option(
        None, "--norm", help="Score normalisation of score-based methods (default: minmax-ranx, "
        "ranx's min-max; none for interpolate, as pyserini); none sums raw scores.")
    weights: str | None = typer.Option(None, "--weights", metavar="W1,W2,...",
                                       help="One weight per run, comma-separated.")
    alpha: float | None = typer.Option(None, "--alpha", help="interpolate: alpha·first + "
                                       "(1 − alpha)·second (default 0.5).")
    phi: float | None = typer.Option(None, "--phi", help="rbc: persistence (default 0.8).")
    sigma: float | None = typer.Option(None, "--sigma", help="logn_isr: ln(n + sigma) "
                                       "(default 0.01).")
    k_given: float | None = typer.Option(None, "-k", help="RRF constant: score = "
                                         "Σ 1/(k + rank) (default 60).")
    depth: int = typer.Option(1000, "--depth", metavar="N",
                              help="Documents read from each run per query.")
    limit: int | None = typer.Option(None, "--limit", metavar="N",
                                     help="Documents kept per query.")
    order: OrderChoice = order_option()
    dedupe: DedupeChoice | None = dedupe_option()
    allow_extra_columns: bool = allow_extra_columns_option()
    run_format: str | None = run_format_option()
    tag: str = typer.Option("rankproof-fusion", "--tag", help="Run tag written to OUT.")
    output: Path = typer.Option(..., "-o", "--output", metavar="PATH",
                                help="The fused run; - is standard output.")
    fmt: RunFormat = typer.Option("trec", "--format", "-f", help="Format of the fused run.")
    force: bool = force_option()
    optimize: MethodChoice | None = typer.Option(
        None, "--optimize", metavar="METHOD",
        help="Search this method's weights (and RRF's k, a score method's normalisation) by "
             "k-fold cross-validation over topics; needs --qrels. Reports the out-of-fold "
             "score beside the in-sample best.")
    qrels: Path | None = typer.Option(None, "--qrels", metavar="QRELS",
                                      help="--optimize: the judgments the search scores.")
    measure: str = typer.Option("nDCG@10", "--measure", "-m", metavar="MEASURE",
                                help="--optimize: the measure maximised.")
    folds: int = typer.Option(5, "--folds", metavar="N", help="--optimize: folds over topics.")
    seed: int = typer.Option(0, "--seed", help="--optimize: seed of the fold assignment.")
    grid: float = typer.Option(0.1, "--grid", metavar="STEP",
                               help="--optimize: weight step on the simplex (1/STEP an "
                                    "integer).")
    ks: str | None = typer.Option(None, "--ks", metavar="K1,K2,...",
                                  help="--optimize rrf: the k values tried (default "
                                       "10,20,40,60,80,100).")
    norms: str | None = typer.Option(None, "--norms", metavar="N1,N2,...",
                                     help="--optimize, score methods: normalisations tried "
                                          "(default minmax-ranx,zscore; none = raw).")


@app.command("fuse")
@error_boundary
@takes(FuseArgs)
def fuse_command(a: FuseArgs) -> None:
    """Fuse runs by rank (RRF, ISR, RBC, Borda) or by score (CombSUM, …) and write atomically."""
    side = provenance_sidecar(a.output)
    if a.optimize is not None:
        given = [o for o, v in (("--method", a.method), ("--weights", a.weights),
                                ("--norm", a.norm), ("--alpha", a.alpha), ("-k", a.k_given))
                 if v is not None]
        if given:
            raise InputError(f"--optimize chooses the parameters itself; drop {', '.join(given)}"
                             " (limit the search with --grid, --ks, --norms)")
        if a.qrels is None:
            raise InputError("--optimize needs --qrels: the judgments the search scores")
        search = _search(str(a.optimize), a.measure, a.folds, a.seed, a.grid, a.ks, a.norms)
    elif a.qrels is not None:
        raise InputError("--qrels is read by --optimize only; give --optimize METHOD too")
    guard_outputs([(a.output, "run"), (side, PROVENANCE_KIND)],
                  [*a.runs, *([a.qrels] if a.qrels is not None else [])], force=a.force)
    parsed = _weights(a.weights, len(a.runs))
    norm_arg = "auto" if a.norm is None else (None if str(a.norm) == "none" else str(a.norm))
    method = str(a.optimize or a.method or "rrf")
    alpha = a.alpha
    k = 60.0 if a.k_given is None else a.k_given
    loaded_qrels, loaded = load_runs(a.qrels, a.runs, dedupe=a.dedupe,
                                     allow_extra_columns=a.allow_extra_columns)
    result = None
    try:
        if a.optimize is not None:
            assert loaded_qrels is not None
            from rankproof.retrieval import optimize_fusion

            result = optimize_fusion(loaded, loaded_qrels, search, depth=a.depth, limit=a.limit,
                                     order=str(a.order), name=a.tag)  # type: ignore[arg-type]
            fused = result.run
            chosen = result.chosen.fuse_kwargs(method)
            parsed = chosen.get("weights")
            alpha = chosen.get("alpha")
            k = float(chosen.get("k", k))
            norm_arg = chosen.get("norm", "auto")
        else:
            fused = fuse(loaded, method, norm=norm_arg, k=k,  # type: ignore[arg-type]
                         depth=a.depth, weights=parsed, alpha=alpha, phi=a.phi, sigma=a.sigma,
                         limit=a.limit, name=a.tag, order=str(a.order))  # type: ignore[arg-type]
    except InputError as exc:
        if exc.field in _OPTIONS and exc.path is None:
            raise InputError(f"{_OPTIONS[exc.field]}: {exc.reason}") from None
        raise
    inherited = {n for r in loaded for n in r.notes}
    warnings = [n for n in fused.notes if n not in inherited]
    for note in warnings:
        err_console.print(plain(f"warning: {note}"))
    write = RUN_WRITERS[str(a.fmt)]
    if str(a.output) == STDIN:
        # The writers write files atomically; standard output gets the finished file.
        with tempfile.TemporaryDirectory(prefix="rankproof-fuse-") as tmp:
            path = Path(tmp) / "fused.run"
            write(fused, path, a.tag)
            with open(path, encoding="utf-8") as fh:
                shutil.copyfileobj(fh, sys.stdout)
        sys.stdout.flush()
    else:
        write(fused, a.output, a.tag)
    if side is not None:
        _write_sidecar(side, a.output, a.runs, {
            "method": method,
            "norm": default_norm(method) if norm_arg == "auto" else norm_arg,
            "weights": parsed, "alpha": alpha, "phi": a.phi, "sigma": a.sigma, "k": k,
            "depth": a.depth, "limit": a.limit, "order": str(a.order), "tag": a.tag,
            "format": str(a.fmt), "warnings": warnings,
            **({"seed": a.seed} if result is not None else {})},
            qrels=a.qrels, optimization=None if result is None else result.to_dict(),
            seed=None if result is None else a.seed)
    if result is not None:
        for line in result.summary_lines():
            err_console.print(plain(line))
    where = "standard output" if str(a.output) == STDIN else str(a.output)
    err_console.print(plain(f"fused {len(loaded)} runs ({method}) into {where}: "
                            f"{len(fused)} rows, {len(fused.topics)} topics"))
