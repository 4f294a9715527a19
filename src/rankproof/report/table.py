"""Rich tables for the terminal.

Run names and topic ids come from files, so they enter a table as plain
`rich.text.Text` (no markup, control characters escaped), never as markup.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from rankproof.measures import PerQuery
from rankproof.report.console import plain


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
        table.add_row(plain(pq.run_name), str(pq.n), *cells)
    return table


def per_query_table(pq: PerQuery) -> Table:
    """One row per topic for one run, then the ``all`` row."""
    table = Table(title=plain(pq.run_name))
    table.add_column("topic", style="bold")
    for m in pq.measures:
        table.add_column(str(m), justify="right")
    for row, qid in enumerate(pq.qids):
        table.add_row(plain(qid), *[_fmt(pq, c, v) for c, v in enumerate(pq.values[row].tolist())])
    table.add_row("all", *[_fmt(pq, c, pq.aggregate(m)) for c, m in enumerate(pq.measures)],
                  style="bold")
    return table


def per_query_tables(results: Sequence[PerQuery]) -> list[Table]:
    """`per_query_table` of each run."""
    return [per_query_table(pq) for pq in results]


def render_text(tables: Sequence[Table]) -> str:
    """Tables as plain text at their natural width (for a file or ``-o -``): no colour,
    nothing truncated, every string verbatim (through `print_table`, never markup)."""
    from rankproof.report.console import UNBOUNDED_WIDTH, print_table

    buf = io.StringIO()
    console = Console(file=buf, width=UNBOUNDED_WIDTH, color_system=None, highlight=False,
                      soft_wrap=False)
    for t in tables:
        print_table(console, t)
    return buf.getvalue()


def caveats(pq: PerQuery) -> list[str]:
    """Everything about how ``pq`` was made that a reader must not miss (warnings first,
    marked ``warning:``: they say the input itself looks wrong)."""
    out = [f"warning: {w}" for w in pq.warnings]
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
