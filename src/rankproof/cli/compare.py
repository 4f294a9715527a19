"""``rankproof compare``: paired significance for every candidate against a baseline.

``rankproof compare stages REPORT.json --baseline A --candidate B`` compares two
stages of a saved eval report instead. It is dispatched by the word ``stages``
in first position (`CompareCommand`), because ``compare`` itself takes files
as positional arguments: a qrels file literally named ``stages`` is written
``./stages``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from rankproof._errors import InputError
from rankproof.cli._app import EXIT_FAILED, app, err_console, error_boundary, print_note, readable
from rankproof.cli._capped import memory_cap_option, parse_size, partitions_option
from rankproof.cli._engine import AddressOption, EngineOption, WorkersOption, engine_from
from rankproof.cli._evidence import sidecar_outputs, stream_text, write_reports
from rankproof.cli._history import history_option, record
from rankproof.cli._outputs import force_option, guard_outputs
from rankproof.cli._progress import quiet_option, stages
from rankproof.cli._requests import Request, settings, takes
from rankproof.cli._runs import (
    FORMATS_ASKED,
    DedupeChoice,
    allow_extra_columns_option,
    check_diversity,
    choices,
    dedupe_option,
    names_option,
    note_inputs,
    output_option,
    qrels_argument,
    qrels_format_option,
    read_options,
    run_format_option,
    subtopics_option,
)
from rankproof.cli._stat_options import (
    CorrectionChoice,
    TestChoice,
    alpha_option,
    correction_option,
    resamples_option,
    seed_option,
    test_option,
)
from rankproof.comparison import (
    Comparison,
    Evidence,
    EvidenceSidecar,
    read_queries,
)
from rankproof.jobs import CompareFilesRequest, RunFilesRequest, compare_files, measure_files
from rankproof.measures import EvalOptions, resolve_measures
from rankproof.report.compare import comparison_markdown, comparison_tables
from rankproof.report.console import make_console, plain, print_table
from rankproof.stats import StatSettings

FORMATS = ("table", "json", "md", "latex")
"""Output formats: Rich tables, the comparison as JSON, GitHub-flavoured Markdown, a LaTeX
(booktabs) fragment."""
LATEX_STYLE_NAMES = ("wide", "long")
"""``rankproof.report.latex.LATEX_STYLES``, spelled here so that ``--help`` imports nothing."""

if TYPE_CHECKING:
    CompareFormat = str
    LatexStyle = str
else:
    CompareFormat = choices("CompareFormat", FORMATS)
    LatexStyle = choices("LatexStyle", LATEX_STYLE_NAMES)


STAGES_WORD = "stages"
"""First argument that makes ``rankproof compare`` compare two stages of a saved report."""


class CompareCommand(TyperCommand):
    """``compare``, or ``compare stages`` when the first argument is the word ``stages``."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        if args and args[0] == STAGES_WORD:
            return _stages_command().make_context(f"{info_name} {STAGES_WORD}", args[1:],
                                                  parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)


def _render(result: Comparison) -> Callable[[Evidence | EvidenceSidecar | None, Sequence[str]],
                                             str]:
    """The comparison's JSON text with a given evidence value (inline, a sidecar reference,
    or capped for standard output) and extra caveats (`rankproof.cli._evidence`)."""
    def render(evidence: Evidence | EvidenceSidecar | None, caveats: Sequence[str]) -> str:
        doc = dataclasses.replace(result, evidence=None,
                                  caveats=(*result.caveats, *caveats)).to_dict()
        if evidence is not None:
            doc["evidence"] = evidence.to_dict()
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"
    return render


def _write(output: Path, result: Comparison) -> None:
    """The comparison as JSON to ``output``, its evidence in a sidecar when over the cap."""
    _, sidecars = write_reports([output], result.evidence, _render(result))
    for side in sidecars:
        print_note(f"the evidence is too large to keep inline; written beside the comparison "
                   f"to {side}")


def _view(result: Comparison, output: Path | None) -> Any:
    """The view ``rankproof report`` builds of this comparison: from the file just written
    when there is one (so its digest names those bytes), else from the same JSON in memory.
    ``-f md`` and ``-f latex`` render it, so they equal ``report --md`` / ``--latex``."""
    from rankproof.report.document import parse, read
    from rankproof.report.views import build

    if output is not None and str(output) != "-":
        return build(read(output))
    text = _render(result)(None, ())
    return build(parse(text.encode(), Path("comparison.json")))


def _print_comparison(result: Comparison, fmt: str, *, detail: bool = False,
                      latex_style: str = "wide", output: Path | None = None) -> None:
    """The comparison on standard output as ``fmt`` (table, json, md or latex); caveats to
    stderr. With more than one candidate the table and the Markdown lead with the systems ×
    measures table; the per-measure detail tables follow with ``detail`` (and are the whole
    output with one candidate)."""
    from rankproof.report.matrix import comparison_matrix

    many = len(result.systems) > 2
    if fmt == "json":
        typer.echo(stream_text(result.evidence, _render(result)), nl=False)
    elif fmt == "latex":
        from rankproof.report.latex import render_latex

        typer.echo(render_latex(_view(result, output), style=latex_style), nl=False)
    elif fmt == "md":
        from rankproof.report.markdown import render_markdown

        # The same bytes as `rankproof report OUT.json --md`; --detail adds the
        # per-measure tables after it.
        text = render_markdown(_view(result, output))
        typer.echo(text, nl=not text.endswith("\n"))
        if detail:
            typer.echo(comparison_markdown(result))
    else:
        from rankproof.report.compare import print_matrix

        console = make_console()
        if many:
            print_matrix(console, comparison_matrix(result))
        if detail and many:
            console.print()
        if detail or not many:
            for table, notes in comparison_tables(result):
                print_table(console, table)
                for note in notes:
                    console.print(plain(note))
                console.print()
        for cav in result.caveats:
            print_note(cav)


class CompareArgs(Request):
    """`compare`'s options, as one request (`rankproof.cli._requests.takes`)."""

    qrels: Path = qrels_argument()
    baseline: Path = typer.Argument(..., metavar="BASELINE", help="The baseline run.")
    candidates: list[Path] = typer.Argument(..., metavar="CANDIDATE...",
                                            help="One or more candidate runs.")
    measures: list[str] | None = typer.Option(
        None, "-m", "--measure", metavar="MEASURE",
        help="Measure(s) to compare (default nDCG@10 RR@10 AP R@100 P@10); trec_eval names "
             "and sets (official, all_trec) too. Repeatable.")
    stats: StatSettings = settings(StatSettings)
    fmt: CompareFormat = typer.Option("table", "--format", "-f", help="Output format.")
    detail: bool = typer.Option(
        False, "--detail",
        help="With more than one candidate, also print the per-measure detail tables (every "
             "row's means, Δ, interval, level, p, W/T/L) after the systems × measures table.")
    latex_style: LatexStyle = typer.Option(
        "wide", "--latex-style",
        help="-f latex: wide (one row per system, one column per measure) or long (one row "
             "per verdict).")
    fail_on_regression: bool = typer.Option(
        False, "--fail-on-regression",
        help="Exit 1 when any candidate is significantly worse on any measure.")
    options: EvalOptions = settings(EvalOptions)
    dedupe: DedupeChoice | None = dedupe_option()
    allow_extra_columns: bool = allow_extra_columns_option()
    run_format: str | None = run_format_option()
    qrels_format: str | None = qrels_format_option()
    names: list[str] | None = names_option()
    output: Path | None = output_option("Also write the comparison as JSON here.")
    queries: Path | None = typer.Option(
        None, "--queries", metavar="PATH",
        help="Query text for the stored evidence: a TREC topics file (qid<TAB>text) or JSON "
             "Lines with query_id/qid and query/text.")
    evidence_depth: int = typer.Option(
        10, "--evidence-depth", metavar="N", min=0,
        help="Keep each run's first N results per topic in the JSON, with the gold and the "
             "query text (0: none). Past 200,000 ids, a file output moves them to a sidecar "
             "NAME.evidence.json beside it.")
    subtopics: bool = subtopics_option()
    force: bool = force_option()
    engine: EngineOption = "local"
    address: AddressOption = None
    workers: WorkersOption = None
    partitions: int | None = partitions_option()
    history: str | None = history_option()
    quiet: bool = quiet_option()
    memory_cap: str | None = memory_cap_option()


@app.command(cls=CompareCommand,
             epilog="Two stages of a saved eval report: rankproof compare stages REPORT.json "
                    "--baseline STAGE --candidate STAGE (see compare stages --help). A qrels "
                    "file named 'stages' is written ./stages.")
@error_boundary
@takes(CompareArgs)
def compare(a: CompareArgs) -> None:
    """Is each candidate better, worse, or not detectably different from the baseline?"""
    if a.history is not None and a.output is None:
        raise InputError("--history records the comparison this command writes: give -o PATH")
    guard_outputs([(a.output, "rankproof.comparison"), *sidecar_outputs([a.output])],
                  [a.qrels, a.baseline, *a.candidates, a.queries], force=a.force)
    check_diversity(a.measures, a.subtopics)
    texts = read_queries(a.queries) if a.queries is not None else None
    cap = None if a.memory_cap is None else parse_size(a.memory_cap)
    # Evidence is kept in proportion to what is shown: only the JSON (a file or standard
    # output) carries it, so a table or Markdown on the terminal collects none.
    evidence_depth = a.evidence_depth if a.output is not None or str(a.fmt) == "json" else 0
    request = CompareFilesRequest(
        files=RunFilesRequest(
            qrels=str(a.qrels), runs=(str(a.baseline), *(str(c) for c in a.candidates)),
            measures=resolve_measures(a.measures or None),
            names=tuple(a.names) if a.names else None,
            read=read_options(a.dedupe, a.allow_extra_columns, cap), options=a.options,
            qrels_format=FORMATS_ASKED["qrels"], subtopics=a.subtopics,
            evidence_depth=evidence_depth, partitions=a.partitions),
        stats=a.stats, queries=texts,
        queries_source=None if a.queries is None else str(a.queries))
    note_inputs(a.qrels, [a.baseline, *a.candidates])
    # Each run file is read, evaluated (with its Judged@k columns) and its top ids collected
    # in one task of the engine; only the numbers come back, in the order of the runs.
    with stages(a.quiet) as bar:
        with engine_from(a.engine, a.address, a.workers) as executor, bar.stage(
                f"reading and evaluating {1 + len(a.candidates)} runs",
                files=[a.qrels, a.baseline, *a.candidates]):
            engine_info = executor.describe()
            done = measure_files(request.evaluation(), executor, notify=print_note)
        # Short, so that the count and the ETA fit an 80-column terminal.
        with bar.counting(f"resampling ({a.stats.test})", "resamples") as tick:
            compared = compare_files(request, progress=tick, evaluated=done)
    result, q = compared.comparison, done.qrels
    result = _stamped(result, seed=a.stats.seed,
                      inputs={"qrels": a.qrels, "runs": [a.baseline, *a.candidates],
                              "queries": a.queries},
                      output=a.output, full=result.n_topics == len(q.topics), engine=engine_info)
    if a.output is not None:
        _write(a.output, result)
    _print_comparison(result, str(a.fmt), detail=a.detail, latex_style=str(a.latex_style),
                      output=a.output)
    record(a.history, [a.output])
    if a.fail_on_regression and result.regressions:
        worse = ", ".join(f"{r.candidate} on {r.measure}" for r in result.regressions)
        line = plain("regression:", style="bold red")
        line.append_text(plain(f" significantly worse: {worse}"))
        err_console.print(line)
        raise typer.Exit(EXIT_FAILED)


class CompareStagesArgs(Request):
    """`compare_stages`'s options, as one request (`rankproof.cli._requests.takes`)."""

    report: Path = typer.Argument(..., metavar="REPORT",
                                  help="A rankproof eval report (JSON; - is standard input).")
    baseline: str = typer.Option(..., "--baseline", metavar="STAGE",
                                 help="The stage compared against.")
    candidate: str = typer.Option(..., "--candidate", metavar="STAGE",
                                  help="The stage compared with it.")
    measures: list[str] | None = typer.Option(
        None, "-m", "--measure", metavar="MEASURE",
        help="Measure(s) to compare, among those the report stored (default: all). "
             "Repeatable.")
    test: TestChoice | None = test_option(None, "Paired test (default: the report's).")
    alpha: float | None = alpha_option(None, "Family-wise significance level (default: the "
                                             "report's).")
    correction: CorrectionChoice | None = correction_option(
        None, "Multiple-comparison correction (default: the report's).")
    resamples: int | None = resamples_option(None, "Resamples (default: the report's).")
    seed: int | None = seed_option(None, "Seed (default: the report's).")
    fmt: CompareFormat = typer.Option("table", "--format", "-f", help="Output format.")
    output: Path | None = typer.Option(None, "--json", "-o", "--output", metavar="PATH",
                                       help="Also write the comparison as JSON here. - is "
                                            "standard output.")
    force: bool = force_option()


@error_boundary
@takes(CompareStagesArgs)
def compare_stages(a: CompareStagesArgs) -> None:
    """Compare two stages of a saved eval report from its stored per-query values.

    Nothing is retrieved again: the rows pair the two stages' per-query values
    by query id, one row per measure, corrected together, with the report's
    test, resamples and seed unless given.
    """
    from rankproof.harness import compare_report_stages, read_report

    guard_outputs([(a.output, "rankproof.comparison"), *sidecar_outputs([a.output])], [a.report],
                  force=a.force)
    saved = read_report(a.report)
    result = compare_report_stages(
        saved, baseline=a.baseline, candidate=a.candidate, measures=a.measures or None,
        test=None if a.test is None else str(a.test), alpha=a.alpha,
        correction=None if a.correction is None else str(a.correction), resamples=a.resamples,
        seed=a.seed)
    # The two stages' evidence travels with their rows (a sidecar is read beside the report).
    stored = (saved.evidence.load(a.report.parent) if isinstance(saved.evidence, EvidenceSidecar)
              else saved.evidence)
    if stored is not None:
        result = dataclasses.replace(result, evidence=dataclasses.replace(
            stored, top={s: stored.top[s] for s in (a.baseline, a.candidate) if s in stored.top}))
    scope = saved.provenance.scope or {"queries": "full"}
    result = _stamped(result, seed=result.seed, inputs={"report": a.report}, output=a.output,
                      full=scope.get("queries") == "full", pool=scope.get("pool", "unknown"))
    if a.output is not None:
        _write(a.output, result)
    _print_comparison(result, str(a.fmt))


def _stamped(result: Comparison, *, seed: int, inputs: dict[str, Any], output: Path | None,
             full: bool, pool: str = "unknown",
             engine: dict[str, Any] | None = None) -> Comparison:
    """The comparison with its provenance block (and the engine that evaluated the runs,
    when one did); a scope note printed when it is partial."""
    from rankproof._manifest import provenance, scope_note

    block = provenance(seed=seed, inputs=inputs, output=output,
                       scope={"queries": "full" if full else "subset", "pool": pool},
                       extra={"engine": engine} if engine is not None else None)
    note = scope_note(block["scope"])
    if note is not None:
        print_note(note)
    return dataclasses.replace(result, provenance=block)


@cache
def _stages_command() -> Any:
    """``compare stages`` as a click command (built on first use, with readable help)."""
    stages_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                             rich_markup_mode=None)
    stages_app.command(STAGES_WORD)(compare_stages)
    return readable(typer.main.get_command(stages_app))
