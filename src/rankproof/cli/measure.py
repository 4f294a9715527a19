"""``rankproof measure``: trec_eval's job, with trec_eval's numbers."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rankproof._errors import InputError
from rankproof.cli._app import EXIT_FAILED, app, error_boundary, print_note
from rankproof.cli._capped import memory_cap_option, parse_size, partitions_option
from rankproof.cli._engine import AddressOption, EngineOption, WorkersOption, engine_from
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
    load_runs,
    names_option,
    note_inputs,
    output_option,
    qrels_argument,
    qrels_format_option,
    read_options,
    run_format_option,
    runs_argument,
    subtopics_option,
    write_output,
)
from rankproof.data import Qrels, Run
from rankproof.jobs import RunFilesRequest, measure_files, should_stream, trec_eval_limited
from rankproof.measures import (
    DEFAULT_MEASURES,
    TREC_HEADER_LINES,
    CrossCheck,
    EvalOptions,
    Measure,
    PerQuery,
    cross_check,
    evaluate,
    is_set,
    parse_many,
    relstring_length,
    relstring_request,
    relstrings,
    select_trec_eval,
    split_measure_text,
)
from rankproof.report import records, table
from rankproof.report.console import make_console, print_table
from rankproof.report.trec import trec_lines

FORMATS = ("table", *records.FORMATS, "trec")
"""Output formats: a Rich table, the flat records (json, jsonl, csv), trec_eval's text."""

CROSS_CHECK_BACKENDS = ("auto", "ir-measures", "pytrec-eval")
"""``--cross-check`` choices: ``auto`` is ir-measures, else pytrec-eval, else unavailable."""

if TYPE_CHECKING:
    MeasureFormat = str
    CrossCheckChoice = str
else:
    MeasureFormat = choices("MeasureFormat", FORMATS)
    CrossCheckChoice = choices("CrossCheckChoice", CROSS_CHECK_BACKENDS)


def select_measures(specs: list[str] | None, fmt: str) -> tuple[tuple[Measure, ...], bool]:
    """Resolve ``-m`` options and whether to print trec_eval's ``runid``/``num_q`` lines.

    The measures parser expands trec_eval's lists and sets (``P.5,10``,
    ``official``); a comma list of whole measures (``nDCG@10,RR@10``) is split
    first (`split_measure_text`, which keeps ``P.5,10`` whole). Here the header lines
    are decided (trec_eval prints them for a set, or when ``runid``/``num_q``
    is asked for by name), and two notes are printed, never silently skipped:
    a trec_eval set whose members rankproof does not all implement names the
    ones left out, and a parameter spelled another way (``dcg=exp-log2``) is
    shown in its canonical form once.
    """
    if not specs:
        specs = ["official"] if fmt == "trec" else list(DEFAULT_MEASURES)
    header = strings = False
    out: list[Measure] = []
    for spec in specs:
        for token in split_measure_text(spec, _parses):
            if token in TREC_HEADER_LINES:
                header = True
                continue
            if relstring_length(token) is not None:  # a string, not a Measure: _relstring
                strings = True
                continue
            header = header or is_set(token)
            made = parse_many(token)
            out.extend(m for m in made if m not in out)
            _note_spelling(token, made)
    if not out and not strings:
        raise typer.BadParameter("no measures selected (runid and num_q are not measures)",
                                 param_hint="'-m'")
    return tuple(out), header


def _parses(text: str) -> bool:
    if text in TREC_HEADER_LINES:
        return True
    try:
        if relstring_length(text) is not None:
            return True
        parse_many(text)
    except ValueError:
        return False
    return True


def _note_spelling(token: str, made: tuple[Measure, ...]) -> None:
    """Say what a set leaves out, and how a renamed parameter is written canonically."""
    if is_set(token):
        covered = set(made)
        gap = list(dict.fromkeys(
            c.family for c in select_trec_eval([token]).columns
            if c.style not in ("header", "string")  # relstring: see _relstring
            and (c.measure is None or c.measure not in covered)))
        if gap:
            print_note(f"{token}: trec_eval 10 also prints {', '.join(gap)}, which rankproof "
                       "does not implement yet; left out of this output")
        return
    if len(made) == 1 and "(" in token and str(made[0]) != token.replace(" ", ""):
        print_note(f"{token!r} is written {str(made[0])!r} in rankproof's canonical form "
                   "(the output shows that name)")


def _relstring(specs: list[str] | None, fmt: str, per_topic: bool,
               only: bool) -> tuple[str, int] | None:
    """trec_eval's ``relstring`` (a per-topic string of labels, not a number) when ``-m``
    asks for it (by name or through ``all_trec``) and the output can show it: ``--format
    trec`` per topic, where trec_eval prints it (never in the ``all`` lines). Any other
    output leaves it out with a note; asking for it alone there is refused."""
    words = [t for spec in specs or () for t in split_measure_text(spec, _parses)]
    asked = relstring_request(words)
    if asked is None or (fmt == "trec" and per_topic):
        return asked
    where = ("the 'all' lines (trec_eval prints it per topic only: add -q)" if fmt == "trec"
             else f"this {fmt} output (--format trec -q prints it, as trec_eval does)")
    if only:
        raise typer.BadParameter(f"{asked[0]} is a per-topic string of labels, not a number, "
                                 f"and is not shown in {where}", param_hint="'-m'")
    print_note(f"{asked[0]}: a per-topic string of labels, not a number; left out of {where}")
    return None


def _relstring_texts(asked: tuple[str, int] | None, qrels: Qrels, loaded: list[Run],
                     runs: list[Path], names: list[str] | None, dedupe: DedupeChoice | None,
                     allow_extra_columns: bool, max_retrieved: int | None,
                     judged_only: bool) -> list[tuple[str, dict[str, str]]] | None:
    """Each run's relstrings (after -M and -J, as evaluated), for `trec_lines`; the runs are
    read here again when an engine evaluated them elsewhere (the strings are short)."""
    if asked is None:
        return None
    if not loaded:
        _, loaded = load_runs(None, runs, names=names, dedupe=dedupe,
                              allow_extra_columns=allow_extra_columns)
        loaded = _trec_eval_runs(qrels, loaded, EvalOptions(max_retrieved=max_retrieved,
                                                            judged_only=judged_only))
    return [(asked[0], dict(relstrings(run, qrels, asked[1]))) for run in loaded]


def _trec_eval_runs(qrels: Qrels, runs: list[Run], options: EvalOptions) -> list[Run]:
    """Apply trec_eval's -M and -J to every run, in ``options``' order (refusing a run they
    leave empty)."""
    return [trec_eval_limited(run, qrels, options) for run in runs]


class MeasureArgs(Request):
    """`measure`'s options, as one request (`rankproof.cli._requests.takes`)."""

    qrels: Path = qrels_argument()
    runs: list[Path] = runs_argument()
    measures: list[str] | None = typer.Option(
        None, "-m", "--measure", metavar="MEASURE",
        help="Measure(s): nDCG@10, P(rel=2)@5, RR@10, AP, trec_eval names (ndcg_cut.10, "
             "P.5,10) or sets (official, all_trec). Repeatable.",
    )
    per_query: bool = typer.Option(False, "-q", "--per-query", help="Print per-topic values.")
    options: EvalOptions = settings(EvalOptions)
    fmt: MeasureFormat = typer.Option("table", "--format", "-f", help="Output format.")
    dedupe: DedupeChoice | None = dedupe_option()
    allow_extra_columns: bool = allow_extra_columns_option()
    run_format: str | None = run_format_option()
    qrels_format: str | None = qrels_format_option()
    names: list[str] | None = names_option()
    output: Path | None = output_option("Write the output to a file (atomically).")
    force: bool = force_option()
    cross_check_with: CrossCheckChoice | None = typer.Option(
        None, "--cross-check",
        help="Compute every measure a second time with an independent evaluator and record "
             "both (JSON key cross_check); exit 1 when a difference exceeds --tolerance. auto: "
             "ir-measures, else pytrec-eval, else recorded as unavailable.")
    tolerance: float = typer.Option(1e-4, "--tolerance", metavar="X", min=0.0,
                                    help="Largest |difference| --cross-check accepts.")
    complete: bool = typer.Option(
        False, "-c", help="trec_eval's -c: every qrels topic counts (rankproof's default; "
                          "--topics complete).")
    no_summary: bool = typer.Option(
        False, "-n", "--no-summary",
        help="With --format trec: per-topic lines only, no 'all' lines (trec_eval -n).")
    subtopics: bool = subtopics_option()
    engine: EngineOption = "local"
    address: AddressOption = None
    workers: WorkersOption = None
    partitions: int | None = partitions_option()
    memory_cap: str | None = memory_cap_option()
    history: str | None = history_option()
    quiet: bool = quiet_option()


@app.command()
@error_boundary
@takes(MeasureArgs)
def measure(a: MeasureArgs) -> None:
    """Evaluate runs against judgments, exactly as trec_eval does."""
    guard_outputs([(a.output, "rankproof.measure")], [a.qrels, *a.runs], force=a.force)
    if a.history is not None and (str(a.fmt) != "json" or a.output is None):
        raise InputError("--history records the JSON this command writes: give -f json -o PATH")
    fmt = str(a.fmt)
    if a.complete and str(a.options.topics) != "complete":
        raise typer.BadParameter(f"-c means --topics complete, but --topics "
                                 f"{a.options.topics} is given", param_hint="'-c'")
    if a.no_summary and fmt != "trec":
        raise typer.BadParameter("-n (no summary lines) applies to --format trec",
                                 param_hint="'-n'")
    selected, header = select_measures(a.measures, fmt)
    asked = _relstring(a.measures, fmt, a.per_query or a.no_summary, only=not selected)
    if not selected:  # relstring alone: a count gives the topics, and is not printed
        selected = (Measure("NumRet"),)
        results_select: tuple[Measure, ...] | None = ()
    else:
        results_select = None
    check_diversity([str(m) for m in selected], a.subtopics)
    cap = None if a.memory_cap is None else parse_size(a.memory_cap)
    extra_notes = a.options.notes()
    loaded: list[Run] = []
    if a.cross_check_with is None:
        # Each run is read and evaluated in one task of the engine; only its numbers return.
        request = RunFilesRequest(
            qrels=str(a.qrels), runs=tuple(str(p) for p in a.runs), measures=selected,
            names=tuple(a.names) if a.names else None,
            read=read_options(a.dedupe, a.allow_extra_columns, cap),
            options=a.options,
            qrels_format=FORMATS_ASKED["qrels"], subtopics=a.subtopics, partitions=a.partitions)
        note_inputs(a.qrels, a.runs)
        with engine_from(a.engine, a.address, a.workers) as executor, stages(a.quiet) as bar, \
                bar.stage(f"reading and evaluating {len(a.runs)} run(s)",
                          files=[a.qrels, *a.runs]):
            engine_info = executor.describe()
            done = measure_files(request, executor, notify=print_note)
        qrels_obj = done.qrels
        computed = [r.per_query for r in done.runs]
    else:  # the second evaluator needs the runs themselves: read them here
        if any(should_stream(str(p), cap) for p in a.runs):
            raise typer.BadParameter("--cross-check needs every run in memory, and a run is "
                                     "over --memory-cap", param_hint="'--cross-check'")
        engine_info = _in_process(a.engine, a.address, a.workers)
        loaded_qrels, loaded = load_runs(a.qrels, a.runs, names=a.names, dedupe=a.dedupe,
                                         allow_extra_columns=a.allow_extra_columns,
                                         subtopics=a.subtopics)
        assert loaded_qrels is not None
        qrels_obj = loaded_qrels
        loaded = _trec_eval_runs(qrels_obj, loaded, a.options)
        computed = [evaluate(qrels_obj, run, selected, **a.options.keywords())
                    for run in loaded]
    results: list[PerQuery] = [
        dataclasses.replace(pq, notes=pq.notes + extra_notes) if extra_notes else pq
        for pq in computed]
    if results_select is not None:
        results = [pq.select(results_select) for pq in results]
    for pq in results:
        for caveat in table.caveats(pq):
            print_note(caveat, about=pq.run_name)
    checked = None if a.cross_check_with is None else _cross_check(
        qrels_obj, loaded, results, str(a.cross_check_with), a.tolerance, a.options.order)

    if fmt == "table" and a.output is None:
        console = make_console()
        if a.per_query:
            for pq in results:
                print_table(console, table.per_query_table(pq))
        else:
            print_table(console, table.means_table(results))
        _exit_if_failed(checked)
        return
    if fmt == "json":  # the document a gate can read: record which judgments made it
        digest = qrels_obj.digest
        results = [dataclasses.replace(pq, qrels_digest=digest) for pq in results]
    if fmt == "trec":
        texts = _relstring_texts(asked, qrels_obj, loaded, a.runs, a.names, a.dedupe,
                                 a.allow_extra_columns, a.options.max_retrieved,
                                 a.options.judged_only)
        text = "".join(line + "\n" for i, pq in enumerate(results)
                       for line in trec_lines(pq, per_query=a.per_query or a.no_summary,
                                              header=header, summary=not a.no_summary,
                                              relstring=None if texts is None else texts[i]))
    elif fmt == "table":
        text = table.render_text(table.per_query_tables(results) if a.per_query
                                 else [table.means_table(results)])
    else:
        text = records.render(results, fmt, per_query=a.per_query, provenance=_provenance(
            a.qrels, a.runs, a.output, results, engine_info) if fmt == "json" else None,
            cross_check=checked.to_dict() if checked is not None and fmt == "json" else None)
    write_output(a.output if a.output is not None else "-", text)
    record(a.history, [a.output])
    _exit_if_failed(checked)


def _cross_check(qrels: Qrels, runs: list[Run], results: list[PerQuery], backend: str,
                 tolerance: float, order: str) -> CrossCheck:
    """Run the cross-check and print its table and notes on standard error."""
    from rankproof.report.crosscheck import cross_check_notes, cross_check_table

    checked = cross_check(qrels, runs, backend=backend, tolerance=tolerance,
                          order=order, results=results)  # type: ignore[arg-type]
    if checked.available:
        print_table(make_console(stderr=True), cross_check_table(checked))
    for line in cross_check_notes(checked):
        print_note(line)
    return checked


def _exit_if_failed(checked: CrossCheck | None) -> None:
    """Exit 1 after everything is written when the cross-check found a difference."""
    if checked is not None and checked.passed is False:
        raise typer.Exit(EXIT_FAILED)


def _in_process(engine: str, address: str | None, workers: int | None) -> dict[str, object]:
    """What evaluates the runs with ``--cross-check`` (this process), said when asked else."""
    if str(engine) != "local" or address is not None or (workers or 1) > 1:
        print_note("--cross-check reads and evaluates the runs in this process (the second "
                   "evaluator needs them); --engine/--address/--workers are not used")
    return {"engine": "local", "workers": 1}


def _provenance(qrels: Path, runs: list[Path], output: Path | None,
                results: list[PerQuery], engine: dict[str, object]) -> dict[str, object]:
    """The JSON document's provenance block: inputs, output folder, query scope, and the
    engine that evaluated the runs."""
    from rankproof._manifest import provenance, query_scope

    scope = query_scope(*(pq.not_evaluated for pq in results))
    return provenance(inputs={"qrels": qrels, "runs": runs}, output=output,
                      scope={"queries": scope}, extra={"engine": engine})
