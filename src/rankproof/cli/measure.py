"""``rankproof measure``: trec_eval's job, with trec_eval's numbers."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rankproof.cli._app import EXIT_FAILED, app, error_boundary, print_note
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
    runs_argument,
    topics_option,
    write_output,
)
from rankproof.data import Qrels, Run
from rankproof.measures import (
    DEFAULT_MEASURES,
    TREC_HEADER_LINES,
    CrossCheck,
    Measure,
    PerQuery,
    cross_check,
    evaluate,
    is_set,
    parse_many,
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
    ``official``); here only the header lines are decided: trec_eval prints
    them for a set, or when ``runid``/``num_q`` is asked for by name.
    """
    if not specs:
        if fmt == "trec":
            return parse_many("official"), True
        specs = list(DEFAULT_MEASURES)
    header = False
    out: list[Measure] = []
    for spec in specs:
        for token in filter(None, (t.strip() for t in spec.split(" "))):
            if token in TREC_HEADER_LINES:
                header = True
                continue
            header = header or is_set(token)
            out.extend(m for m in parse_many(token) if m not in out)
    if not out:
        raise typer.BadParameter("no measures selected (runid and num_q are not measures)",
                                 param_hint="'-m'")
    return tuple(out), header


@app.command()
@error_boundary
def measure(
    qrels: Path = qrels_argument(),
    runs: list[Path] = runs_argument(),
    measures: list[str] | None = typer.Option(
        None, "-m", "--measure", metavar="MEASURE",
        help="Measure(s): nDCG@10, P(rel=2)@5, RR@10, AP, trec_eval names (ndcg_cut.10, "
             "P.5,10) or sets (official, all_trec). Repeatable.",
    ),
    per_query: bool = typer.Option(False, "-q", "--per-query", help="Print per-topic values."),
    rel_level: int = rel_level_option(),
    topics: TopicsChoice = topics_option(),
    order: OrderChoice = order_option(),
    fmt: MeasureFormat = typer.Option("table", "--format", "-f", help="Output format."),
    dedupe: DedupeChoice | None = dedupe_option(),
    allow_extra_columns: bool = allow_extra_columns_option(),
    names: list[str] | None = names_option(),
    output: Path | None = output_option("Write the output to a file (atomically)."),
    force: bool = force_option(),
    cross_check_with: CrossCheckChoice | None = typer.Option(
        None, "--cross-check",
        help="Compute every measure a second time with an independent evaluator and record "
             "both (JSON key cross_check); exit 1 when a difference exceeds --tolerance. auto: "
             "ir-measures, else pytrec-eval, else recorded as unavailable."),
    tolerance: float = typer.Option(1e-4, "--tolerance", metavar="X", min=0.0,
                                    help="Largest |difference| --cross-check accepts."),
) -> None:
    """Evaluate runs against judgments, exactly as trec_eval does."""
    guard_outputs([(output, "rankproof.measure")], [qrels, *runs], force=force)
    fmt = str(fmt)
    selected, header = select_measures(measures, fmt)
    qrels_obj, loaded = load_runs(qrels, runs, names=names, dedupe=dedupe,
                                  allow_extra_columns=allow_extra_columns)
    assert qrels_obj is not None
    results: list[PerQuery] = [
        evaluate(qrels_obj, run, selected, rel_level=rel_level,
                 topics=str(topics), order=str(order))  # type: ignore[arg-type]
        for run in loaded]
    for pq in results:
        for caveat in table.caveats(pq):
            print_note(caveat, about=pq.run_name)
    checked = None if cross_check_with is None else _cross_check(
        qrels_obj, loaded, results, str(cross_check_with), tolerance, str(order))

    if fmt == "table" and output is None:
        console = make_console()
        if per_query:
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
        text = "".join(line + "\n" for pq in results
                       for line in trec_lines(pq, per_query=per_query, header=header))
    elif fmt == "table":
        text = table.render_text(table.per_query_tables(results) if per_query
                                 else [table.means_table(results)])
    else:
        text = records.render(results, fmt, per_query=per_query, provenance=_provenance(
            qrels, runs, output, results) if fmt == "json" else None,
            cross_check=checked.to_dict() if checked is not None and fmt == "json" else None)
    write_output(output if output is not None else "-", text)
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


def _provenance(qrels: Path, runs: list[Path], output: Path | None,
                results: list[PerQuery]) -> dict[str, object]:
    """The JSON document's provenance block: inputs, output folder, query scope."""
    from rankproof._manifest import provenance, query_scope

    scope = query_scope(*(pq.not_evaluated for pq in results))
    return provenance(inputs={"qrels": qrels, "runs": runs}, output=output,
                      scope={"queries": scope})
