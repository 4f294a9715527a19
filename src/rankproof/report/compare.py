"""Comparison tables: terminal (Rich) and Markdown, one table per measure.

Run names come from files: the Rich tables are printed through
`rankproof.report.console.print_table` (every string verbatim, never markup),
and the Markdown writes them with control characters escaped and ``|``
escaped, so a name can neither colour a terminal nor break a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich import box
from rich.table import Table

from rankproof.comparison import Comparison, ComparisonRow, format_end
from rankproof.report._view_parts import verdict_of
from rankproof.report.console import escape_controls
from rankproof.report.view import Matrix, MatrixCell, Verdict

if TYPE_CHECKING:
    from rich.console import Console

_HEADERS = ("system", "baseline", "mean", "Δ", "rel Δ", "CI", "level", "p", "p corr",
            "W/T/L", "verdict")
_LEVELS = {"holm": "each row's Holm step-down level", "bonferroni": "the Bonferroni level",
           "bh": "the BH false-coverage level", "none": "the uncorrected level",
           "tukey-hsd": "the simultaneous level"}
#: Short names of the interval constructions, for table titles (each row's ``ci_label`` in full).
_SHORT = {"randomization": "inverted randomization test", "t": "t interval",
          "percentile": "percentile bootstrap", "studentized": "studentized bootstrap",
          "wilcoxon": "inverted Wilcoxon test (pseudo-median)",
          "sign": "inverted sign test (median)", "tukey": "Tukey HSD simultaneous interval"}


_STYLES = {"better": "green", "worse": "bold red", "no detectable difference": "",
           "non-inferior": "green", "not shown non-inferior": "bold red"}


def label(measure: str) -> str:
    """A measure's label in tables: its canonical name, the one JSON and HTML carry.

    One spelling per measure in every format (``Success@1``, never ``hit@1`` in one
    form and ``Success@1`` in another), so a reader can search one output for a name
    seen in another. The parser still reads ``hit@k`` as an alias of ``Success@k``.
    """
    return measure


_CORRECTIONS = {"holm": "Holm", "bh": "Benjamini–Hochberg", "bonferroni": "Bonferroni",
                "none": "no correction", "tukey-hsd": "randomized Tukey HSD"}


def _family(verdicts: Sequence[Verdict], v: Verdict) -> int:
    """How many rows ``v`` was corrected with: every row of the result under its correction
    (one `compare_pairs` call per result), per measure for Tukey HSD (its family is the
    pairs of one measure)."""
    return sum(1 for w in verdicts if w.correction == v.correction
               and (v.correction != "tukey-hsd" or w.measure == v.measure))


def decision(verdicts: Sequence[Verdict], v: Verdict) -> str:
    """The rule ``v``'s verdict was decided by: its test, its correction with the size of
    its family, and its level (``randomization test, Holm over 6 tests, α = 0.05``)."""
    n = _family(verdicts, v)
    corr = _CORRECTIONS.get(v.correction or "none", v.correction or "none")
    family = (f"{corr} over {n} test{'s' if n != 1 else ''}" if v.correction not in (None, "none")
              else f"no correction ({n} test{'s' if n != 1 else ''})")
    alpha = f", α = {v.alpha:g}" if v.alpha is not None else ""
    return f"{v.test or 'paired'} test, {family}{alpha}"


def decided_by(verdicts: Sequence[Verdict]) -> str:
    """One legend line for every verdict of a result: ``decided by: <rule>.`` when all rows
    share it, else each rule followed by the rows it decided (so two verdicts of one
    result that disagree show why: another test, family or level). Every format prints
    it beside its verdicts; empty when there are none."""
    if not verdicts:
        return ""
    rules: dict[str, list[str]] = {}
    for v in verdicts:
        rules.setdefault(decision(verdicts, v), []).append(f"{v.candidate} on {v.measure}")
    if len(rules) == 1:
        return f"Verdicts decided by: {next(iter(rules))}."
    return "Verdicts decided by, per row: " + "; ".join(
        f"{rule} ({', '.join(rows)})" for rule, rows in rules.items()) + "."


def verdicts_of(c: Comparison) -> tuple[Verdict, ...]:
    """The comparison's rows as the view's `Verdict` rows (for `decided_by`)."""
    return tuple(verdict_of(r) for r in c.rows)


def interval_text(row: ComparisonRow, digits: int = 4) -> str:
    """``[low, high]`` of the row's interval (the one its verdict agrees with)."""
    return row.interval_text(digits)


def level_text(row: ComparisonRow) -> str:
    """The row's confidence level as a percentage (e.g. ``98.33%``)."""
    return f"{row.ci_level * 100:.4g}%"


def interval_caption(c: Comparison) -> str:
    """How the intervals were built and at what level, for a table's header.

    Every row's interval excludes 0 exactly when its verdict is better/worse;
    each row's ``ci_label`` has its construction in full.
    """
    labels = "; ".join(dict.fromkeys(_SHORT.get(r.ci_method, r.ci_label) for r in c.rows)
                       ) or _SHORT["randomization"]
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
    if tables:
        tables[-1][1].append(decided_by(verdicts_of(c)))
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
    if c.rows:
        out.extend([escape_controls(decided_by(verdicts_of(c))), ""])
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
    footer = [*(f"[{i}] {n}" for i, n in enumerate(notes, 1)), decided_by(verdicts_of(c))]
    needed = [f"{r.candidate} on {label(r.measure)}: ~{r.result.queries_needed}" for r in c.rows
              if r.underpowered]
    if needed:
        footer.append("n.s.* = no detectable difference, underpowered; queries needed for 80% "
                      "power: " + "; ".join(needed))
    return table, footer


#: The glyphs of a cell's verdict against the baseline, in every text format.
MARK_GLYPHS = {"better": "†", "worse": "‡", "": ""}
_SUPERSCRIPTS = dict(zip("abcdefghijklmnoprstuvwxyz0123456789",
                         "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True))


def superscript(text: str) -> str:
    """``text`` in Unicode superscript letters where one exists (``ab`` → ``ᵃᵇ``); a text with
    a letter that has none (``q``) is written ``^(text)``."""
    if all(c in _SUPERSCRIPTS for c in text):
        return "".join(_SUPERSCRIPTS[c] for c in text)
    return f"^({text})"


def note_marks(notes: Sequence[int]) -> str:
    """Footnote numbers as every text table writes them: `` [1,2]`` (empty when none)."""
    return f" [{','.join(map(str, notes))}]" if notes else ""


def matrix_cell_text(cell: MatrixCell) -> str:
    """A cell as plain text: value, verdict glyph, the letters it beats, footnote numbers."""
    beats = ""
    if cell.beats:
        single = all(len(b) == 1 for b in cell.beats)
        beats = superscript("".join(cell.beats)) if single else f"^({','.join(cell.beats)})"
    return cell.text + MARK_GLYPHS.get(cell.mark, "") + beats + note_marks(cell.notes)


def matrix_table(m: Matrix) -> tuple[Table, list[str]]:
    """The systems × measures table for the terminal (best values bold), and the lines printed
    under it: the legend, the intervals' level and each footnote once (`Matrix` holds them)."""
    from rich.text import Text

    from rankproof.report.console import plain

    table = Table(title=plain(m.title), title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("system", justify="left")
    for name, notes in zip(m.columns, m.column_notes or [()] * len(m.columns), strict=True):
        table.add_column(plain(name + note_marks(notes)), justify="right")
    for row in m.rows:
        system = plain(row.system + (f" ({row.letter})" if m.pairs == "all" else "")
                       + (" (baseline)" if row.is_baseline else ""))
        cells = [Text(escape_controls(matrix_cell_text(c)), style="bold" if c.best else "")
                 for c in row.cells]
        table.add_row(system, *cells)
    lines = [*m.legend, *([m.levels] if m.levels else []),
             *(f"[{i}] {n}" for i, n in enumerate(m.footnotes, 1))]
    return table, lines


def print_matrix(console: Console, m: Matrix) -> None:
    """Print the systems × measures table and, under it, its legend, level and footnotes."""
    from rankproof.report.console import plain, print_table

    table, lines = matrix_table(m)
    print_table(console, table)
    for line in lines:
        console.print(plain(line))


def _verdict_cells(v: Verdict, marks: str) -> tuple[str, ...]:
    interval = ("—" if v.ci_low is None or v.ci_high is None
                else f"[{format_end(v.ci_low, 3)}, {format_end(v.ci_high, 3)}]")
    wtl = "—" if v.wins is None else f"{v.wins}/{v.ties}/{v.losses}"
    short = {"better": "better", "worse": "worse", "no detectable difference": "n.s.",
             "non-inferior": "non-inf.", "not shown non-inferior": "not non-inf."}
    return (v.candidate + marks, "—" if v.difference is None else format_end(v.difference),
            interval, p_text(v.p_corrected), wtl,
            short.get(v.verdict, v.verdict) + ("*" if v.underpowered else ""))


def verdicts_table(m: Matrix, *, detail: bool = False) -> tuple[Table, list[str]]:
    """The verdict rows under the systems × measures table (``rankproof eval``): per measure
    the detected differences, and the rows with no detectable difference folded into one
    line (each listed with ``detail``). The intervals' level is the table's, said once in
    the matrix's lines; footnote numbers are the matrix's (printed there, once)."""
    table = Table(title=f"verdicts vs {m.baseline}", title_justify="left",
                  box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True,
                  show_edge=False)
    for h, just in (("measure", "left"), ("stage", "left"), ("Δ", "right"), ("CI", "left"),
                    ("p corr", "right"), ("W/T/L", "right"), ("verdict", "left")):
        table.add_column(h, justify=just, no_wrap=True)  # type: ignore[arg-type]
    notes = {n: i for i, n in enumerate(m.footnotes, 1)}
    needed = []
    for group in m.verdicts:
        rows = [*group.shown, *(group.folded if detail else ())]
        for v in rows:
            marks = note_marks([notes[n] for n in v.notes if n in notes])
            table.add_row(label(group.measure), *_verdict_cells(v, marks),
                          style=_STYLES.get(v.verdict, ""))
            if v.underpowered and v.queries_needed:
                needed.append(f"{v.candidate} on {label(group.measure)}: ~{v.queries_needed}")
        if group.folded and not detail:
            under = "*" if any(v.underpowered for v in group.folded) else ""
            table.add_row(label(group.measure),
                          ", ".join(v.candidate for v in group.folded), "", "", "", "",
                          f"n.s.{under} ({len(group.folded)})")
    footer = [decided_by([v for g in m.verdicts for v in (*g.shown, *g.folded)])]
    if detail and needed:
        footer.append("n.s.* = no detectable difference, underpowered; queries needed for 80% "
                      "power: " + "; ".join(needed))
    elif any(g.folded for g in m.verdicts) and not detail:
        footer.append("n.s. (k) = k rows with no detectable difference, folded into one line "
                      "(* some underpowered); --detail lists each, with the queries needed "
                      "for 80% power")
    return table, footer
