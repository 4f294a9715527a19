"""``rankproof discover``: is the right capability found first, low, or not at all?

``rankproof discover [CASES.jsonl] (--catalog PATH | --retriever MODULE:CALLABLE)``
scores discovery cases (taxonomy, measures, abstention) and, on request, the
calibrated abstention floor (``--calibrate``), the selector sweep
(``--sweep``) and the distractor curve (``--curve``). With no cases it runs
the bundled example catalogue. ``rankproof discover compare THEMES.jsonl
--catalog A --catalog B`` compares indexings theme by theme (dispatched by
the word ``compare`` in first position, as ``compare stages``: a cases file
literally named ``compare`` is written ``./compare``).
"""

from __future__ import annotations

import json
import math
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from rankproof._errors import ConfigError, InputError
from rankproof.cli._app import EXIT_FAILED, app, error_boundary, print_note, readable
from rankproof.cli._engine import AddressOption, EngineOption, WorkersOption, engine_from
from rankproof.cli._history import history_option, record
from rankproof.cli._outputs import force_option, guard_outputs
from rankproof.cli._progress import quiet_option, stages
from rankproof.cli._requests import Request, takes
from rankproof.cli._runs import choices, write_output
from rankproof.cli._stat_options import seed_option
from rankproof.discovery import (
    DFLT_CURVE_MODE,
    DFLT_DISTRACTOR_SIZES,
    DFLT_MODE,
    EXAMPLE_CASES,
    EXAMPLE_CATALOG,
    MODES,
    CallableSearcher,
    Catalog,
    CatalogSearcher,
    DiscoveryCase,
    Searcher,
    calibrate_min_score,
    compare_indexings,
    derive_named_sets,
    discovery_document,
    distractor_curve_from_cases,
    evaluate_discovery,
    import_callable,
    load_calibration,
    load_cases,
    load_catalog,
    load_package_cases,
    read_meta,
    read_package_meta,
    sweep_selector,
)
from rankproof.report.console import make_console, plain, print_table
from rankproof.report.discovery import (
    Section,
    calibration_section,
    comparison_section,
    curve_section,
    discovery_section,
    markdown,
    sweep_section,
    tables,
)
from rankproof.retrieval import (
    Embedder,
    HashingEmbedder,
    SentenceTransformerCrossEncoder,
    build_embedder,
)

FORMATS = ("table", "json", "md")
EMBEDDERS = ("minilm", "hashing")
COMPARE_WORD = "compare"

if TYPE_CHECKING:
    ModeChoice = str
    FormatChoice = str
    EmbedderChoice = str
else:
    ModeChoice = choices("ModeChoice", MODES)
    FormatChoice = choices("FormatChoice", FORMATS)
    EmbedderChoice = choices("EmbedderChoice", EMBEDDERS)


class DiscoverCommand(TyperCommand):
    """``discover``, or ``discover compare`` when the first argument is the word ``compare``."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        if args and args[0] == COMPARE_WORD:
            return _compare_command().make_context(f"{info_name} {COMPARE_WORD}", args[1:],
                                                   parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)


_EMBED_MODEL_HELP = ("The dense model instead of the bundled MiniLM: a model directory, an "
                     "installed package, openai:MODEL@BASE_URL or provider:FILE.yaml (a served "
                     "model through the provider layer, cached and recorded like a local one).")


def _embedder(name: str, mode: str, model: str | None = None) -> Embedder | None:
    if mode == "bm25":
        return None
    if model is not None:
        if name == "hashing":
            raise ConfigError("--embed-model names a real model; it cannot be combined with "
                              "--embedder hashing")
        return build_embedder("minilm", model)
    return HashingEmbedder() if name == "hashing" else None  # None: MiniLM (the dense extra)


def _catalog_for(cases_path: Path, catalog: Path | None) -> Path:
    """``--catalog``, else the cases file's ``__meta__.catalog`` (relative to the file)."""
    if catalog is not None:
        return catalog
    named = read_meta(cases_path).get("catalog")
    if not isinstance(named, str) or not named:
        raise ConfigError(f"{cases_path}: give --catalog PATH or --retriever MODULE:CALLABLE "
                          "(the cases file names no catalogue in its __meta__ line)")
    return (cases_path.parent / named).resolve()


def _emit(sections: list[Section], doc: dict[str, Any], fmt: str, output: Path | None,
          notes: tuple[str, ...]) -> None:
    from rankproof._manifest import output_dir

    # every case of the inputs is scored; the pool is the whole catalogue searched, which
    # the command cannot vouch for: unknown (an experiment file may declare it)
    doc["provenance"].update(output_dir=output_dir(output),
                             scope={"queries": "full", "pool": "unknown"})
    if output is not None:
        write_output(output, json.dumps(doc, indent=2, allow_nan=False) + "\n")
    if fmt == "json":
        if output is None or str(output) != "-":
            typer.echo(json.dumps(doc, indent=2, allow_nan=False))
    elif fmt == "md":
        typer.echo(markdown(sections))
    else:
        console = make_console()
        for title, table, table_notes in tables(sections):
            console.print(plain(title, style="bold"))
            print_table(console, table)
            for note in table_notes:
                console.print(plain(f"  {note}"))
            console.print()
    for note in notes:
        print_note(note)


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


class DiscoverArgs(Request):
    """`discover`'s options, as one request (`rankproof.cli._requests.takes`)."""

    cases: Path | None = typer.Argument(
        None, metavar="[CASES]", help="Discovery cases (JSONL; empty gold = abstention case). "
                                      "Default: the bundled example.")
    catalog: Path | None = typer.Option(
        None, "--catalog", metavar="PATH",
        help="Catalogue: a folder of .txt/.md files (id = stem) or a JSONL file of {id, title, "
             "text, tags}. Default: the cases file's __meta__ catalogue.")
    retriever: str | None = typer.Option(
        None, "--retriever", metavar="MODULE:CALLABLE",
        help="Your own search: a function (query, k) -> [(id, score), ...], best first.")
    retriever_version: str | None = typer.Option(
        None, "--retriever-version", metavar="V",
        help="A version for --retriever, stamped on calibrations (a new version makes an old "
             "floor stale).")
    mode: ModeChoice = typer.Option(DFLT_MODE, "--mode", help="Ranking mode over --catalog.")
    embedder: EmbedderChoice = typer.Option(
        "minilm", "--embedder",
        help="Dense model: minilm (the dense extra) or hashing (a labelled test double).")
    embed_model: str | None = typer.Option(
        None, "--embed-model", metavar="DIR|PACKAGE|openai:MODEL@URL|provider:FILE",
        help=_EMBED_MODEL_HELP)
    rerank_model: Path | None = typer.Option(None, "--rerank-model", metavar="DIR",
                                             help="A cross-encoder over the first stage.")
    k: int = typer.Option(10, "-k", help="Primary cutoff (taxonomy, selection window).")
    abstain_threshold: float | None = typer.Option(
        None, "--abstain-threshold", metavar="SCORE",
        help="Top score below which a query counts as abstained (default: the calibrated "
             "floor with --calibrate, else abstention cases are not scored).")
    calibrate: bool = typer.Option(False, "--calibrate",
                                   help="Calibrate the abstention floor (min_score).")
    save_calibration: Path | None = typer.Option(
        None, "--save-calibration", metavar="PATH",
        help="With --calibrate: also save the floor (stamped with the searcher's identity).")
    calibration_file: Path | None = typer.Option(
        None, "--calibration", metavar="PATH",
        help="Use a saved floor as the abstention threshold; refused when it was made for "
             "another catalogue, mode, model or retriever version.")
    sweep: bool = typer.Option(False, "--sweep", help="Sweep the selector's knobs.")
    curve: bool = typer.Option(False, "--curve", help="The distractor-robustness curve.")
    curve_mode: ModeChoice = typer.Option(DFLT_CURVE_MODE, "--curve-mode",
                                          help="Ranking mode of the curve's sub-catalogues.")
    trials: int = typer.Option(20, "--trials", help="Curve trials per size.")
    seed: int = typer.Option(0, "--seed", help="Seed of every random draw (recorded).")
    fmt: FormatChoice = typer.Option("table", "--format", "-f", help="Output format.")
    output: Path | None = typer.Option(None, "-o", "--output", "--json", metavar="PATH",
                                       help="Also write the JSON document here.")
    force: bool = force_option()
    engine: EngineOption = "local"
    address: AddressOption = None
    workers: WorkersOption = None
    history: str | None = history_option()
    quiet: bool = quiet_option()


@app.command(cls=DiscoverCommand,
             epilog="Indexings compared theme by theme: rankproof discover compare THEMES.jsonl "
                    "--catalog A --catalog B (see discover compare --help).")
@error_boundary
@takes(DiscoverArgs)
def discover(a: DiscoverArgs) -> None:
    """Is the right capability found first, low, or not at all — and is "nothing applies" said?"""
    if a.catalog is not None and a.retriever is not None:
        raise typer.BadParameter("give --catalog or --retriever, not both")
    cases_path = a.cases if a.cases is not None else EXAMPLE_CASES
    catalog_path = None if a.retriever is not None else _catalog_for(
        cases_path, a.catalog if a.cases is not None or a.catalog is not None else EXAMPLE_CATALOG)
    if a.curve and a.retriever is not None:
        raise ConfigError("--curve builds sub-catalogues: it needs --catalog, not --retriever")
    if a.save_calibration is not None and not a.calibrate:
        raise typer.BadParameter("--save-calibration needs --calibrate")
    if a.calibration_file is not None and (a.calibrate or a.abstain_threshold is not None):
        raise typer.BadParameter("--calibration gives the threshold: not with --calibrate or "
                                 "--abstain-threshold")
    guard_outputs([(a.output, "rankproof.discovery"),
                   (a.save_calibration, "rankproof.discovery.calibration")],
                  [cases_path, catalog_path, a.calibration_file], force=a.force)
    loaded = load_cases(cases_path)
    rerank = None if a.rerank_model is None else SentenceTransformerCrossEncoder(a.rerank_model)
    cat: Catalog | None = None
    searcher: Searcher
    if a.retriever is not None:
        searcher = CallableSearcher(import_callable(a.retriever), name=a.retriever,
                                    version=a.retriever_version)
    else:
        assert catalog_path is not None
        cat = load_catalog(catalog_path)
        searcher = CatalogSearcher(
            cat, mode=str(a.mode), embedder=_embedder(str(a.embedder), str(a.mode), a.embed_model),
            rerank=rerank)
    sections: list[Section] = []
    calibration = None
    if a.calibrate:
        calibration = calibrate_min_score(searcher, loaded, k=a.k)
        if a.save_calibration is not None:
            calibration.save(a.save_calibration)
    threshold = a.abstain_threshold
    if a.calibration_file is not None:
        stored = load_calibration(a.calibration_file, identity=searcher)
        threshold = None if stored is None else _finite(stored.min_score)
    if threshold is None and calibration is not None:
        threshold = _finite(calibration.min_score)
    with stages(a.quiet) as bar, bar.stage(f"searching and scoring {len(loaded):,} case(s)"):
        report = evaluate_discovery(searcher, loaded, primary_k=a.k,
                                    abstain_threshold=threshold)
    sections += discovery_section(report)
    if calibration is not None:
        sections += calibration_section(calibration)
    floors: tuple[float | None, ...] = (None,)
    if calibration is not None and _finite(calibration.min_score) is not None:
        floors = (None, calibration.min_score)  # the sweep also tries the calibrated floor
    swept = drawn = None
    engine_info: dict[str, Any] | None = None
    if a.sweep or a.curve:  # the sweep's cells and the curve's sizes are the engine's tasks
        with engine_from(a.engine, a.address, a.workers) as executor, stages(a.quiet) as bar:
            engine_info = executor.describe()
            if a.sweep:
                with bar.stage(f"sweeping the selector's knobs over {len(loaded):,} case(s)"):
                    swept = sweep_selector(searcher, loaded, k=a.k, min_score_grid=floors,
                                           executor=executor)
            if a.curve:
                assert cat is not None
                with bar.stage(f"distractor curve: {len(DFLT_DISTRACTOR_SIZES)} sizes x "
                               f"{a.trials} trial(s)"):
                    drawn = distractor_curve_from_cases(
                        cat, loaded, mode=str(a.curve_mode), trials=a.trials, seed=a.seed,
                        sizes=DFLT_DISTRACTOR_SIZES,
                        embedder=_embedder(str(a.embedder), str(a.curve_mode), a.embed_model),
                        executor=executor)
    if swept is not None:
        sections += sweep_section(swept)
    if drawn is not None:
        sections += curve_section(drawn)
    inputs: dict[str, str | Path] = {"cases": cases_path}
    if catalog_path is not None:
        inputs["catalog"] = catalog_path
    doc = discovery_document(identity=searcher.identity, seed=a.seed, inputs=inputs,
                             discovery=report, calibration=calibration, sweep=swept,
                             curve=drawn)
    if engine_info is not None:
        doc["provenance"]["engine"] = engine_info
    notes = tuple(dict.fromkeys((*searcher.notes, *(("results are degraded: " +
                                                      "; ".join(searcher.notes),)
                                                     if searcher.degraded else ()))))
    _emit(sections, doc, str(a.fmt), a.output, notes)
    record(a.history, [a.output])


class DiscoverCompareArgs(Request):
    """`discover_compare`'s options, as one request (`rankproof.cli._requests.takes`)."""

    themes: Path = typer.Argument(..., metavar="THEMES",
                                  help="Graded labels per theme (JSONL of package cases with a "
                                       "__meta__ line naming themes and probes).")
    catalogs: list[Path] = typer.Option(
        ..., "--catalog", metavar="PATH",
        help="A catalogue (an indexing) to compare; repeat for each; the first is the baseline. "
             "With one catalogue, --modes compares ranking modes instead.")
    modes: list[str] | None = typer.Option(
        None, "--modes", metavar="MODE", help="Compare these modes of one catalogue.")
    mode: ModeChoice = typer.Option(DFLT_MODE, "--mode", help="Ranking mode (one per run).")
    embedder: EmbedderChoice = typer.Option("minilm", "--embedder",
                                            help="Dense model: minilm or hashing (test double).")
    embed_model: str | None = typer.Option(
        None, "--embed-model", metavar="DIR|PACKAGE|openai:MODEL@URL|provider:FILE",
        help=_EMBED_MODEL_HELP)
    cases: Path | None = typer.Option(
        None, "--cases", metavar="CASES",
        help="Discovery cases: their per-case nDCG is compared by a paired test.")
    k: int = typer.Option(20, "-k", help="Cutoff of the graded nDCG and named-set rates.")
    observed_floor: float | None = typer.Option(
        None, "--observed-floor", metavar="SCORE",
        help="Derive distractors from observed scores at or above this floor (default: only "
             "those the labels mark is_distractor).")
    seed: int = seed_option(help="Seed of the paired test (recorded).")
    fmt: FormatChoice = typer.Option("table", "--format", "-f", help="Output format.")
    output: Path | None = typer.Option(None, "-o", "--output", "--json", metavar="PATH",
                                       help="Also write the JSON document here.")
    fail_on_regression: bool = typer.Option(
        False, "--fail-on-regression",
        help="Exit 1 when a hard positive fell or a distractor rose against the baseline.")
    threshold: float = typer.Option(
        0, "--threshold", metavar="PLACES",
        help="A named id regresses when it moves more than this many places the wrong way "
             "(a vanished hard positive or a newly ranked distractor always counts).")
    force: bool = force_option()


@error_boundary
@takes(DiscoverCompareArgs)
def discover_compare(a: DiscoverCompareArgs) -> None:
    """Compare indexings theme by theme: graded nDCG, named sets, and what regressed."""
    guard_outputs([(a.output, "rankproof.discovery")], [a.themes, *a.catalogs, a.cases],
                  force=a.force)
    meta = read_package_meta(a.themes)
    labelled = load_package_cases(a.themes)
    theme_names = meta.get("themes")
    probes = meta.get("probes")
    if not isinstance(theme_names, list) or not isinstance(probes, dict):
        raise InputError("the themes file's __meta__ line needs 'themes' (a list) and "
                         "'probes' ({theme: query})", path=str(a.themes), field="__meta__")
    sources: dict[str, Any] = {}
    if a.modes:
        if len(a.catalogs) != 1:
            raise typer.BadParameter("--modes compares the modes of one --catalog")
        cat = load_catalog(a.catalogs[0])
        for m in a.modes:
            if m not in MODES:
                raise typer.BadParameter(f"unknown mode {m!r}; modes: {', '.join(MODES)}")
            sources[m] = CatalogSearcher(cat, mode=m,
                                         embedder=_embedder(str(a.embedder), m, a.embed_model))
    else:
        if len(a.catalogs) < 2:
            raise typer.BadParameter("give two or more --catalog (or one with --modes)")
        for path in a.catalogs:
            label = path.stem if path.stem not in sources else str(path)
            sources[label] = CatalogSearcher(
                load_catalog(path), mode=str(a.mode),
                embedder=_embedder(str(a.embedder), str(a.mode), a.embed_model))
    # Without a floor no observed score makes a distractor: only the labels' is_distractor.
    floor = sys.float_info.max if a.observed_floor is None else a.observed_floor
    named = [derive_named_sets(labelled, t, observed_floor=floor) for t in theme_names]
    discovery_cases: list[DiscoveryCase] | None = load_cases(a.cases) if a.cases else None
    report = compare_indexings(sources, labelled, themes=theme_names, probes=probes, k=a.k,
                               named_sets=named, discovery_cases=discovery_cases, seed=a.seed)
    inputs: dict[str, str | Path] = {"themes": a.themes}
    if a.cases is not None:
        inputs["cases"] = a.cases
    doc = discovery_document(identity={label: dict(s.identity) for label, s in sources.items()},
                             seed=a.seed, inputs=inputs, comparison=report)
    from rankproof._manifest import input_entry

    doc["provenance"]["inputs"]["catalogs"] = [input_entry(c) for c in a.catalogs]
    _emit(comparison_section(report, a.threshold), doc, str(a.fmt), a.output, report.notes)
    if a.fail_on_regression and report.regressions(a.threshold):
        raise typer.Exit(EXIT_FAILED)


@cache
def _compare_command() -> Any:
    """``discover compare`` as a click command (built on first use, with readable help)."""
    import typer.main

    sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                      rich_markup_mode=None)
    sub.command(COMPARE_WORD)(discover_compare)
    return readable(typer.main.get_command(sub))
