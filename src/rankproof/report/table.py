"""Rich tables for the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from rankproof.measures import PerQuery


def _fmt(pq: PerQuery, col: int, value: float) -> str:
    m = pq.measures[col]
    return str(round(value)) if m.definition.integer else f"{value:.4f}"


def means_table(results: Sequence[PerQuery]) -> Table:
    """One row per run, one column per measure (trec_eval's ``all`` values)."""
    measures = results[0].measures
    table = Table(title=None, show_lines=False)
    table.add_column("run", style="bold")
    table.add_column("topics", justify="right")
    for m in measures:
        table.add_column(str(m), justify="right")
    for pq in results:
        cells = [_fmt(pq, i, pq.aggregate(m)) for i, m in enumerate(measures)]
        table.add_row(pq.run_name, str(pq.n), *cells)
    return table


def per_query_table(pq: PerQuery) -> Table:
    """One row per topic for one run, then the ``all`` row."""
    table = Table(title=pq.run_name)
    table.add_column("topic", style="bold")
    for m in pq.measures:
        table.add_column(str(m), justify="right")
    for row, qid in enumerate(pq.qids):
        table.add_row(qid, *[_fmt(pq, c, v) for c, v in enumerate(pq.values[row].tolist())])
    table.add_row("all", *[_fmt(pq, c, pq.aggregate(m)) for c, m in enumerate(pq.measures)],
                  style="bold")
    return table


def caveats(pq: PerQuery) -> list[str]:
    """Everything about how ``pq`` was made that a reader must not miss."""
    out = []
    if pq.zero_filled:
        shown = ", ".join(pq.zero_filled[:5]) + (" …" if len(pq.zero_filled) > 5 else "")
        out.append(f"{len(pq.zero_filled)} qrels topic(s) missing from the run scored 0: {shown}")
    if pq.not_evaluated:
        out.append(f"{len(pq.not_evaluated)} qrels topic(s) missing from the run left out "
                   "(topics=intersection)")
    if pq.dropped:
        shown = ", ".join(pq.dropped[:5]) + (" …" if len(pq.dropped) > 5 else "")
        out.append(f"{len(pq.dropped)} run topic(s) without judgments ignored: {shown}")
    out.extend(pq.notes)
    return out
