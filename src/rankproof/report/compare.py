"""Comparison tables: terminal (Rich) and Markdown, one table per measure.

Run names come from files: the Rich tables are printed through
`rankproof.report.console.print_table` (every string verbatim, never markup),
and the Markdown writes them with control characters escaped and ``|``
escaped, so a name can neither colour a terminal nor break a table.
"""

from __future__ import annotations

from rich import box
from rich.table import Table

from rankproof.comparison import Comparison, ComparisonRow
from rankproof.report.console import escape_controls
from rankproof.stats import INTERVAL_LABELS

_HEADERS = ("system", "baseline", "mean", "Δ", "rel Δ", "CI", "level", "p", "p corr",
            "W/T/L", "verdict")
_LEVELS = {"holm": "each row's Holm step-down level", "bonferroni": "the Bonferroni level",
           "bh": "the BH false-coverage level", "none": "the uncorrected level",
           "tukey-hsd": "the simultaneous level"}
#: Short names of the interval constructions, for table titles (`INTERVAL_LABELS` in full).
_SHORT = {"randomization": "inverted randomization test", "t": "t interval",
          "percentile": "percentile bootstrap", "studentized": "studentized bootstrap",
          "wilcoxon": "inverted Wilcoxon test (pseudo-median)",
          "sign": "inverted sign test (median)", "tukey": "Tukey HSD simultaneous interval"}


_HIT_FAMILY = "Success"
_STYLES = {"better": "green", "worse": "bold red", "no detectable difference": "",
           "non-inferior": "green", "not shown non-inferior": "bold red"}


def label(measure: str) -> str:
    """A measure's label in tables: ``Success@k`` reads ``hit@k`` (the name people look for
    beside trec recall ``R@k``); every other name as is. JSON keeps the canonical name."""
    if measure.startswith(_HIT_FAMILY) and measure[len(_HIT_FAMILY):][:1] in ("@", "(", ""):
        return "hit" + measure[len(_HIT_FAMILY):]
    return measure


def interval_text(row: ComparisonRow, digits: int = 4) -> str:
    """``[low, high]`` of the row's interval (the one its verdict agrees with)."""
    return row.interval_text(digits)


def level_text(row: ComparisonRow) -> str:
    """The row's confidence level as a percentage (e.g. ``98.33%``)."""
    return f"{row.ci_level * 100:.4g}%"


def interval_caption(c: Comparison) -> str:
    """How the intervals were built and at what level, for a table's header.

    Every row's interval excludes 0 exactly when its verdict is better/worse;
    `INTERVAL_LABELS` has each construction in full.
    """
    methods = list(dict.fromkeys(r.ci_method for r in c.rows)) or ["randomization"]
    labels = "; ".join(_SHORT.get(m, INTERVAL_LABELS.get(m, m)) for m in methods)
    return f"CI: {labels} at {_LEVELS.get(c.correction, c.correction)}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1%}"


def p_text(value: float | None, none: str = "—") -> str:
    """A p-value as every table prints it: four decimals, ``<0.0001`` below that (``none``
    when there is none)."""
    if value is None:
        return none
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _verdict(row: ComparisonRow) -> str:
    if row.underpowered:
        return f"{row.verdict} (underpowered: ~{row.result.queries_needed} queries needed)"
    return row.verdict


def _cells(c: Comparison, row: ComparisonRow, marks: str) -> list[str]:
    r = row.result
    system = row.candidate if c.pairs == "baseline" else f"{row.candidate} vs {row.baseline}"
    return [
        system + marks, f"{r.mean_b:.4f}", f"{r.mean_a:.4f}", f"{r.difference:+.4f}",
        _pct(r.relative_difference), interval_text(row), level_text(row),
        p_text(r.p_value), p_text(row.p_corrected), f"{row.wins}/{row.ties}/{row.losses}",
        _verdict(row),
    ]


def _footnotes(c: Comparison, measure: str) -> tuple[list[tuple[ComparisonRow, str]], list[str]]:
    """Rows of one measure with their note marks, and the numbered notes (deduplicated)."""
    notes: list[str] = []
    rows = []
    for row in c.rows:
        if row.measure != measure:
            continue
        marks = []
        for note in row.notes:
            if note not in notes:
                notes.append(note)
            marks.append(str(notes.index(note) + 1))
        rows.append((row, f" [{','.join(marks)}]" if marks else ""))
    return rows, [f"[{i}] {n}" for i, n in enumerate(notes, 1)]


def _title(c: Comparison, measure: str) -> str:
    corr = c.correction if c.pairs == "baseline" else "Tukey HSD"
    return (f"{label(measure)}: baseline {c.baseline}, {c.n_topics} topics, {c.test} test, "
            f"p corrected by {corr}, α = {c.alpha:g}; {interval_caption(c)}")


def comparison_tables(c: Comparison) -> list[tuple[Table, list[str]]]:
    """One Rich table per measure, with its numbered notes."""
    styles = _STYLES
    tables = []
    for measure in c.measures:
        table = Table(title=_title(c, measure), title_justify="left")
        for h in _HEADERS:
            table.add_column(h, justify="left" if h in ("system", "verdict", "CI")
                             else "right", overflow="fold")
        rows, notes = _footnotes(c, measure)
        for row, marks in rows:
            table.add_row(*_cells(c, row, marks), style=styles[row.verdict])
        tables.append((table, notes))
    return tables


def comparison_markdown(c: Comparison) -> str:
    """The same tables as GitHub-flavoured Markdown."""
    out = []
    for measure in c.measures:
        out.append(f"### {escape_controls(_title(c, measure))}\n")
        out.append("| " + " | ".join(_HEADERS) + " |")
        out.append("|" + "|".join("---" for _ in _HEADERS) + "|")
        rows, notes = _footnotes(c, measure)
        for row, marks in rows:
            cells = [escape_controls(cell).replace("|", "\\|")
                     for cell in _cells(c, row, marks)]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
        out.extend(f"{escape_controls(n)}  " for n in notes)
        if notes:
            out.append("")
    if c.caveats:
        out.append("**Caveats**\n")
        out.extend(f"- {escape_controls(cav)}" for cav in c.caveats)
        out.append("")
    return "\n".join(out)


def _short_verdict(row: ComparisonRow) -> str:
    short = {"better": "better", "worse": "worse", "no detectable difference": "n.s.",
             "non-inferior": "non-inf.", "not shown non-inferior": "not non-inf."}
    return short[row.verdict] + ("*" if row.underpowered else "")


def comparison_compact_table(c: Comparison) -> tuple[Table, list[str]]:
    """All measures in one narrow table (for ``rankproof eval``), with its notes."""
    styles = _STYLES
    corr = c.correction if c.pairs == "baseline" else "Tukey HSD"
    table = Table(title=f"vs {c.baseline}: {c.test} test, p corrected by {corr}, "
                        f"α = {c.alpha:g}; {interval_caption(c)}",
                  title_justify="left", box=box.SIMPLE_HEAD,
                  padding=(0, 1), pad_edge=False, collapse_padding=True, show_edge=False)
    for h, just in (("measure", "left"), ("stage", "left"), ("mean", "right"), ("Δ", "right"),
                    ("CI", "left"), ("level", "right"), ("p corr", "right"),
                    ("W/T/L", "right"),
                    ("verdict", "left")):
        table.add_column(h, justify=just, no_wrap=True)  # type: ignore[arg-type]
    notes: list[str] = []
    for measure in c.measures:
        rows, _ = _footnotes(c, measure)
        for row, _marks in rows:
            r = row.result
            marks = []
            for note in row.notes:
                if note not in notes:
                    notes.append(note)
                marks.append(str(notes.index(note) + 1))
            name = row.candidate + (f" [{','.join(marks)}]" if marks else "")
            table.add_row(label(measure), name,
                          f"{r.mean_a:.4f}", f"{r.difference:+.4f}",
                          interval_text(row, 3), level_text(row), p_text(row.p_corrected),
                          f"{row.wins}/{row.ties}/{row.losses}", _short_verdict(row),
                          style=styles[row.verdict])
    footer = [f"[{i}] {n}" for i, n in enumerate(notes, 1)]
    needed = [f"{r.candidate} on {label(r.measure)}: ~{r.result.queries_needed}" for r in c.rows
              if r.underpowered]
    if needed:
        footer.append("n.s.* = no detectable difference, underpowered; queries needed for 80% "
                      "power: " + "; ".join(needed))
    return table, footer
