"""The tables of ``rankproof eval``: stage means, means per category, abstention.

The tables show the report's canonical measure names (``Success@1``, the hit
rate, beside trec recall ``R@1``, the share of relevant chunks found), as every
other format does.
Names from files (the inputs' name, stage names, categories) enter as plain
text, never markup.
"""

from __future__ import annotations

from rich import box
from rich.table import Table

from rankproof.harness import EvalReport, StageResult
from rankproof.report._view_synthesis import synthesis_tables
from rankproof.report.compare import label
from rankproof.report.console import plain
from rankproof.report.markdown import tables_markdown
from rankproof.report.view import Table as ViewTable


def _table(title: str) -> Table:
    return Table(title=plain(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                 collapse_padding=True, show_edge=False)


def stage_table(report: EvalReport) -> Table:
    """One row per stage: the mean of every measure, then latency percentiles."""
    table = _table(f"{report.inputs.name}: {report.inputs.scored_queries} scored queries, "
                   f"{report.inputs.chunks} chunks, {report.inputs.granularity} granularity")
    table.add_column("stage", style="bold", no_wrap=True)
    for m in report.measures:
        table.add_column(label(m), justify="right", no_wrap=True)
    for col in ("p50 ms", "p95 ms", "p99 ms"):
        table.add_column(col, justify="right", no_wrap=True)
    for s in report.stages:
        lat = s.latency
        table.add_row(plain(s.name), *[f"{s.means[m]:.4f}" for m in report.measures],
                      f"{lat.p50:.1f}", f"{lat.p95:.1f}", f"{lat.p99:.1f}")
    return table


def latency_notes(report: EvalReport) -> list[str]:
    """One line per stage whose latency conditions were recorded: its p50 and p95 with the
    torch threads, the machine load and the warm-up excluded from them."""
    return [f"latency {s.name}: {s.latency.describe()}" for s in report.stages
            if s.latency.conditions() is not None]


def _categories(report: EvalReport) -> list[str]:
    seen: dict[str, None] = {}
    for s in report.stages:
        seen.update(dict.fromkeys(s.categories))
    return list(seen)


def category_table(report: EvalReport) -> tuple[Table, list[str]] | None:
    """Means per judgment category and stage (n = the category's scored queries), with a
    note on categories that are run but not scored; None when there is at most one
    scored category (its rows would repeat the stage table)."""
    categories = _categories(report)
    if len(categories) < 2:
        return None
    table = _table("by category: mean over each category's scored queries")
    table.add_column("category", style="bold", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column("stage", no_wrap=True)
    for m in report.measures:
        table.add_column(label(m), justify="right", no_wrap=True)
    for category in categories:
        first = True
        for s in report.stages:
            result = s.categories.get(category)
            if result is None:
                continue
            cells = [f"{result.means[m]:.4f}" if m in result.means else "—"
                     for m in report.measures]
            table.add_row(plain(category if first else ""), str(result.n) if first else "",
                          plain(s.name), *cells, end_section=s is report.stages[-1])
            first = False
    unscored = {c: n for c, n in report.inputs.categories.items()
                if c not in categories and n}
    notes = [f"{c}: {n} quer{'y' if n == 1 else 'ies'} run but not scored by retrieval "
             "measures" for c, n in unscored.items()]
    return table, notes


def _interval(s: StageResult) -> str:
    a = s.abstention
    if a is None or a.ci_low is None or a.ci_high is None:
        return "—"
    return f"[{a.ci_low:.3f}, {a.ci_high:.3f}]"


def abstention_table(report: EvalReport) -> tuple[Table | None, list[str]]:
    """Per stage, the AUROC of the top score separating answerable from no-answer queries
    and its interval; when no stage has one, no table and the reason(s) as notes."""
    scored = [s for s in report.stages if s.abstention is not None
              and s.abstention.auroc is not None]
    reasons = list(dict.fromkeys(s.abstention.reason for s in report.stages
                                 if s.abstention is not None and s.abstention.reason))
    if not scored:
        return None, [f"abstention not scored: {r}" for r in reasons]
    a = scored[0].abstention
    assert a is not None and a.confidence_level is not None
    level = f"{a.confidence_level:.0%}"
    table = _table("abstention: AUROC of the top score (0.5 = chance)")
    table.add_column("stage", style="bold", no_wrap=True)
    table.add_column("AUROC", justify="right", no_wrap=True)
    table.add_column(f"{level} CI", no_wrap=True)
    table.add_column("answerable", justify="right", no_wrap=True)
    table.add_column("no-answer", justify="right", no_wrap=True)
    table.add_column("top score", no_wrap=True)
    for s in report.stages:
        ab = s.abstention
        if ab is None:
            continue
        value = f"{ab.auroc:.4f}" if ab.auroc is not None else "—"
        table.add_row(plain(s.name), value, _interval(s), str(ab.answerable), str(ab.no_answer),
                      plain(ab.score))
    notes = [f"{level} CI: {a.method}, {a.resamples} resamples, seed {a.seed}"]
    if any(s.abstention is not None and s.abstention.score.startswith("rank-based")
           for s in report.stages):
        notes.append("rank-based: RRF's top score is a function of the inputs' ranks only "
                     "(here, whether they agree on the best hit), not of their confidence")
    return table, [*notes, *(f"abstention not scored: {r}" for r in reasons)]


def _rich(table: ViewTable) -> Table:
    out = _table(table.title)
    numeric = table.numeric or (False,) * len(table.columns)
    for column, num in zip(table.columns, numeric, strict=False):
        out.add_column(plain(column), justify="right" if num else "left",
                       style="bold" if column == table.columns[0] else "")
    for row in table.rows:
        out.add_row(*(plain(c) for c in row))
    return out


def synthesis_terminal(report: EvalReport) -> list[tuple[Table, list[str]]]:
    """The synthesis tables (what ran, and the metric means) for the terminal; the
    per-query answers are in the JSON report and the Markdown/HTML views."""
    tables = synthesis_tables(report.synthesis, cases=False)
    out = [(_rich(t), list(t.notes)) for t in tables]
    if out:
        out[-1][1].append(f"the {report.synthesis.get('answered') if report.synthesis else 0} "
                          "answers, their passages and scores: the report's synthesis.cases "
                          "(rankproof report REPORT.json --html/--md shows them)")
    return out


def synthesis_markdown(report: EvalReport) -> str | None:
    """The synthesis section in Markdown (with every answer), or None without one."""
    tables = synthesis_tables(report.synthesis)
    return tables_markdown(tables) if tables else None


def eval_tables(report: EvalReport) -> list[tuple[Table, list[str]]]:
    """Every table of the report's terminal view (before the comparison), with its notes."""
    out: list[tuple[Table, list[str]]] = [(stage_table(report), latency_notes(report))]
    by_category = category_table(report)
    if by_category is not None:
        out.append(by_category)
    table, notes = abstention_table(report)
    if table is not None:
        out.append((table, notes))
    elif notes:
        out[-1] = (out[-1][0], [*out[-1][1], *notes])
    out.extend(synthesis_terminal(report))
    return out
