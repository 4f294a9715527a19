"""``rankproof measure``: trec_eval's job, with trec_eval's numbers."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console

from rankproof._io import atomic_write
from rankproof.cli._app import app, err_console, error_boundary
from rankproof.data._trec import read_trec_qrels, read_trec_run
from rankproof.measures import DEFAULT_MEASURES, Measure, PerQuery, evaluate, parse_many
from rankproof.measures._sets import HEADER_LINES, TREC_SETS, expand_set
from rankproof.report import records, table
from rankproof.report.trec import trec_lines


class Format(StrEnum):
    table = "table"
    trec = "trec"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


class Topics(StrEnum):
    complete = "complete"
    intersection = "intersection"


class OrderBy(StrEnum):
    score = "score"
    rank = "rank"


class DedupeOpt(StrEnum):
    first = "first"
    max = "max"


def select_measures(specs: list[str] | None, fmt: Format) -> tuple[tuple[Measure, ...], bool]:
    """Resolve ``-m`` options (trec_eval lists and sets allowed) and whether to print
    trec_eval's ``runid``/``num_q`` lines."""
    header = False
    out: list[Measure] = []
    if not specs:
        if fmt is Format.trec:
            return expand_set("official"), True
        specs = list(DEFAULT_MEASURES)
    for spec in specs:
        for token in filter(None, (t.strip() for t in spec.split(" "))):
            if token in TREC_SETS:
                header = True
                found: tuple[Measure, ...] = expand_set(token)
            elif token in HEADER_LINES:
                header = True
                continue
            else:
                found = parse_many(token)
            out.extend(m for m in found if m not in out)
    if not out:
        raise ValueError("no measures selected")
    return tuple(out), header


@app.command()
@error_boundary
def measure(
    qrels: Path = typer.Argument(..., help="Judgments (TREC qrels)."),
    runs: list[Path] = typer.Argument(..., help="One or more runs (TREC format, .gz ok)."),
    measures: list[str] | None = typer.Option(
        None, "-m", "--measure",
        help="Measure(s): nDCG@10, P(rel=2)@5, RR@10, AP, trec_eval names (ndcg_cut.10, "
             "P.5,10) or sets (official, all_trec). Repeatable.",
    ),
    per_query: bool = typer.Option(False, "-q", "--per-query", help="Print per-topic values."),
    rel_level: int = typer.Option(1, "-l", "--rel-level",
                                  help="Minimum label counted as relevant (trec_eval -l)."),
    topics: Topics = typer.Option(
        Topics.complete, "--topics",
        help="complete: every qrels topic counts, missing ones score 0 (trec_eval -c). "
             "intersection: only topics in both (trec_eval 9 without -c).",
    ),
    order: OrderBy = typer.Option(OrderBy.score, "--order",
                                  help="Rank by score (trec_eval) or by the rank column."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="Output format."),
    dedupe: DedupeOpt | None = typer.Option(
        None, "--dedupe", help="Keep the first or the highest-scored of duplicate "
                               "(qid, docid) rows instead of failing."),
    allow_extra_columns: bool = typer.Option(
        False, "--allow-extra-columns",
        help="Accept run lines with more than six columns (trec_eval ignores the extra)."),
    output: Path | None = typer.Option(None, "-o", "--output",
                                       help="Write the output to a file (atomically)."),
) -> None:
    """Evaluate runs against judgments, exactly as trec_eval does."""
    selected, header = select_measures(measures, fmt)
    dedupe_value = dedupe.value if dedupe else None
    qrels_obj = read_trec_qrels(qrels, dedupe=dedupe_value)  # type: ignore[arg-type]
    results: list[PerQuery] = []
    for path in runs:
        run = read_trec_run(path, dedupe=dedupe_value,  # type: ignore[arg-type]
                            extra_columns="ignore" if allow_extra_columns else "error")
        results.append(evaluate(qrels_obj, run, selected, rel_level=rel_level,
                                topics=topics.value, order=order.value))
    for pq in results:
        for caveat in table.caveats(pq):
            err_console.print(f"[yellow]note[/] ({pq.run_name}): {caveat}")

    if fmt is Format.table and output is None:
        console = Console()
        if per_query:
            for pq in results:
                console.print(table.per_query_table(pq))
        else:
            console.print(table.means_table(results))
        return
    if fmt is Format.trec:
        text = "".join(line + "\n" for pq in results
                       for line in trec_lines(pq, per_query=per_query, header=header))
    elif fmt is Format.json:
        text = records.to_json(results) + "\n"
    elif fmt is Format.jsonl:
        text = records.to_jsonl(results, per_query=per_query)
    elif fmt is Format.csv:
        text = records.to_csv(results, per_query=per_query)
    else:  # table to a file: plain text rendering of the rich table
        console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(table.means_table(results))
        text = console.export_text()
    if output is None:
        typer.echo(text, nl=False)
    else:
        with atomic_write(output) as fh:
            fh.write(text)
