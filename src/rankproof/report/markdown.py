"""A `View` as GitHub-flavoured Markdown: for ``$GITHUB_STEP_SUMMARY`` and pull-request comments.

Why a size limit: GitHub refuses a step summary or a comment over 65,536
characters (the whole comment is lost, not its end), and a comparison over
thousands of queries or dozens of systems can exceed it. `render_markdown`
therefore builds the document as blocks (text, or a table of rows) and, when
the whole would be longer than ``limit``, drops rows from the end of the
longest tables first (each keeps at least a few), then whole sections from
the end, each cut between rows (a table keeps its header; its syntax is
never broken) and said in a note that points at the full HTML or JSON
report.

Why so much escaping: names, query text, caveats and provenance come from
files, and GitHub renders Markdown, inline HTML and ``$…$`` math. Every such
string goes through `md_text`: control characters written as escapes
(`rankproof.report.console.escape_controls`, so a newline cannot end a table
row), ``<``, ``>`` and ``&`` as HTML entities (no raw HTML from data, ever),
and Markdown punctuation backslash-escaped, so a run called ``*`` or
``|`` or ``<script>`` prints as written and cannot break a table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from rankproof.comparison import format_end
from rankproof.report.compare import MARK_GLYPHS, decided_by, label, p_text
from rankproof.report.console import escape_controls
from rankproof.report.view import Browser, Matrix, MatrixCell, Table, Verdict, View

__all__ = ["DEFAULT_LIMIT", "MAX_REGRESSIONS", "matrix_markdown", "md_text", "render_markdown"]

DEFAULT_LIMIT = 65_536
"""GitHub's limit on a step summary or a comment, in characters."""

MAX_REGRESSIONS = 10
"""Queries listed per candidate in the "largest regressions" table."""

_MIN_LIMIT = 2_048
#: Rows a table keeps before whole sections are dropped instead (a table cut to its header
#: says less than the sections after it).
_MIN_ROWS = 5
#: Longest raw text kept per kind of string, before escaping (a name of a megabyte
#: must not become one table cell of a megabyte).
_CLIP_NAME = 200
_CLIP_QUERY = 100
_CLIP_LINE = 1_000
_CLIP_TITLE = 300

_MD_SPECIALS = re.compile(r"([\\`*_\[\]{}|~$#!])")
_LIST_START = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_LEVELS = {"holm": "Holm step-down", "bonferroni": "Bonferroni", "bh": "BH false-coverage",
           "none": "uncorrected", "tukey-hsd": "Tukey HSD simultaneous"}
_BETTER = ("better", "non-inferior")
_WORSE = ("worse", "not shown non-inferior")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def md_text(text: object, *, clip: int = _CLIP_LINE) -> str:
    """``text`` safe inside Markdown prose or a table cell: at most ``clip`` characters of it,
    control characters (newlines too) escaped, ``<``, ``>``, ``&`` as entities, Markdown
    punctuation (``|`` included) backslash-escaped, and a leading ``- ``, ``+ `` or ``1. ``
    that would start a list escaped."""
    out = escape_controls(_clip(str(text), clip))
    out = _MD_SPECIALS.sub(r"\\\1", out).translate(_HTML)
    if out[:1] in ("-", "+") and out[1:2] in ("", " ", "\t"):
        out = "\\" + out
    return _LIST_START.sub(r"\1\\\2", out)


@dataclass
class _Block:
    """A piece of the document: ``head`` lines, table ``rows`` (may be cut), ``tail`` lines.

    ``dropped`` counts rows cut from the end; the cut is said in a note placed
    after the table (a paragraph, so the table's syntax is untouched).
    """

    head: list[str]
    rows: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    dropped: int = 0

    def __post_init__(self) -> None:
        self._rows_size = sum(len(r) + 1 for r in self.rows)
        self._fixed_size = sum(len(line) + 1 for line in (*self.head, *self.tail, ""))

    def _note(self) -> list[str]:
        if not self.dropped:
            return []
        return ["", f"… {self.dropped:,} more rows: see the HTML or JSON report"]

    def lines(self) -> list[str]:
        return [*self.head, *self.rows, *self._note(), *self.tail, ""]

    def size(self) -> int:
        """``len`` of the block's text (each line and its newline), kept without re-summing."""
        return self._fixed_size + self._rows_size + sum(len(x) + 1 for x in self._note())

    def drop_row(self) -> None:
        self._rows_size -= len(self.rows.pop()) + 1
        self.dropped += 1


def _table(columns: Sequence[str], rows: Iterable[Sequence[str]],
           numeric: Sequence[bool] = ()) -> tuple[list[str], list[str]]:
    """Header lines and row lines of a GFM table; cells must already be escaped."""
    aligns = [("---:" if i < len(numeric) and numeric[i] else "---") for i in range(len(columns))]
    head = ["| " + " | ".join(columns) + " |", "|" + "|".join(aligns) + "|"]
    body = ["| " + " | ".join(cells) + " |" for cells in rows]
    return head, body


def _num(value: float | None, digits: int = 4, *, signed: bool = False) -> str:
    if value is None:
        return "—"
    if math.isinf(value) or signed:
        return format_end(value, digits)
    return f"{value:.{digits}f}"


def _verdict_cell(v: Verdict) -> str:
    text = md_text(v.verdict, clip=_CLIP_NAME)
    if v.verdict in _BETTER or v.verdict in _WORSE:
        text = f"**{text}**"
    if v.underpowered:
        needed = f"~{v.queries_needed:,} queries needed" if v.queries_needed else "more queries"
        text += f" (underpowered: {needed})"
    return text


def _distinct(values: Iterable[object]) -> list[str]:
    return [str(x) for x in dict.fromkeys(x for x in values if x is not None)]


def _verdict_caption(verdicts: Sequence[Verdict]) -> str:
    """How the rows were tested and how their intervals were built (one sentence each)."""
    constructions = "; ".join(md_text(m, clip=_CLIP_NAME) for m in _distinct(
        v.ci_label or v.ci_method for v in verdicts)) or "as stored"
    corrections = _distinct(v.correction for v in verdicts)
    levels = ", ".join(md_text(_LEVELS.get(c, c), clip=_CLIP_NAME) for c in corrections)
    tests = ", ".join(md_text(t, clip=_CLIP_NAME) for t in _distinct(v.test for v in verdicts))
    alphas = ", ".join(f"{float(a):g}" for a in _distinct(v.alpha for v in verdicts))
    resamples = _distinct(v.resamples for v in verdicts)
    seeds = _distinct(v.seed for v in verdicts)
    parts = ["Δ = candidate − baseline mean"]
    if tests:
        parts.append(f"{tests} test" + (f", {int(resamples[0]):,} resamples"
                                        if len(resamples) == 1 else "")
                     + (f", seed {md_text(seeds[0])}" if len(seeds) == 1 else ""))
    if corrections:
        parts.append("p corrected by " + ", ".join(md_text(c, clip=_CLIP_NAME)
                                                   for c in corrections)
                     + (f", α = {alphas}" if alphas else ""))
    parts.append(f"interval: {constructions}, at the row's level ({levels or 'as stored'}), "
                 "the interval its verdict agrees with")
    return "; ".join(parts) + ". " + md_text(decided_by(verdicts), clip=_CLIP_LINE)


def _verdict_block(view: View) -> _Block | None:
    verdicts = view.verdicts
    if not verdicts:
        return None
    one_baseline = len({v.baseline for v in verdicts}) == 1
    notes: list[str] = []
    rows = []
    for v in verdicts:
        marks = []
        for note in v.notes:
            if note not in notes:
                notes.append(note)
            marks.append(str(notes.index(note) + 1))
        system = md_text(v.candidate, clip=_CLIP_NAME)
        if not one_baseline:
            system += " vs " + md_text(v.baseline, clip=_CLIP_NAME)
        if marks:
            system += f" \\[{','.join(marks)}\\]"
        interval = ("—" if v.ci_low is None or v.ci_high is None
                    else f"[{format_end(v.ci_low)}, {format_end(v.ci_high)}]")
        level = "—" if v.ci_level is None else f"{v.ci_level * 100:.4g}%"
        wtl = ("—" if v.wins is None or v.ties is None or v.losses is None
               else f"{v.wins}/{v.ties}/{v.losses}")
        rows.append((md_text(label(v.measure), clip=_CLIP_NAME), system, _num(v.baseline_mean),
                     _num(v.candidate_mean), _num(v.difference, signed=True), interval, level,
                     p_text(v.p_value), p_text(v.p_corrected), wtl, _verdict_cell(v)))
    columns = ("measure", "system", "baseline", "candidate", "Δ", "interval", "level", "p",
               "p corr", "W/T/L", "verdict")
    head, body = _table(columns, rows, (False, False, True, True, True, False, True, True,
                                        True, True, False))
    against = (f" against {md_text(verdicts[0].baseline, clip=_CLIP_NAME)}" if one_baseline
               else "")
    intro = ["## Verdicts" + against, "", _verdict_caption(verdicts), ""]
    tail = ([""] + [f"\\[{i}\\] {md_text(n)}  " for i, n in enumerate(notes, 1)]
            if notes else [])
    return _Block(head=intro + head, rows=body, tail=tail)


def _matrix_cell(cell: MatrixCell) -> str:
    text = f"**{cell.text}**" if cell.best and cell.value is not None else cell.text
    beats = f"<sup>{','.join(cell.beats)}</sup>" if cell.beats else ""
    notes = f" \\[{','.join(map(str, cell.notes))}\\]" if cell.notes else ""
    return text + MARK_GLYPHS.get(cell.mark, "") + beats + notes


def matrix_markdown(m: Matrix, *, heading: str = "##", caveats: bool = True) -> list[str]:
    """The systems × measures table as Markdown lines: a heading, the table (best values
    bold, † / ‡ against the baseline, superscript letters over all pairs), then the legend,
    the intervals' level, every footnote once and, when ``caveats``, every caveat."""
    columns = ["system"]
    for name, notes in zip(m.columns, m.column_notes or [()] * len(m.columns), strict=True):
        columns.append(md_text(name, clip=_CLIP_NAME)
                       + (f" \\[{','.join(map(str, notes))}\\]" if notes else ""))
    rows = []
    for row in m.rows:
        name = md_text(row.system, clip=_CLIP_NAME)
        if m.pairs == "all":
            name += f" ({row.letter})"
        if row.is_baseline:
            name += " (baseline)"
        rows.append([name, *(_matrix_cell(c) for c in row.cells)])
    head, body = _table(columns, rows, (False, *(True for _ in m.columns)))
    out = [f"{heading} {md_text(m.title, clip=_CLIP_TITLE)}", "", *head, *body, ""]
    out += [f"{md_text(line)}  " for line in (*m.legend, *([m.levels] if m.levels else ()))]
    if m.footnotes:
        out += ["", *(f"\\[{i}\\] {md_text(n)}  " for i, n in enumerate(m.footnotes, 1))]
    if caveats and m.caveats:
        out += ["", "**Caveats**", "", *(f"- {md_text(c)}" for c in m.caveats)]
    return out


def _matrix_block(view: View) -> _Block | None:
    if view.matrix is None:
        return None
    lines = matrix_markdown(view.matrix, caveats=False)
    # The table's header and rows stay together (a cut would leave a table without systems).
    return _Block(head=lines)


def _regressions(browser: Browser, measure: str, candidate: str) -> tuple[list[tuple[str, ...]],
                                                                          int, int, bool]:
    """The candidate's queries that did worst on ``measure`` (fell, or rose where lower is
    better): rows, how many did worse, of how many paired queries, and whether any query
    text exists."""
    higher = browser.higher_is_better.get(measure, True)
    fell: list[tuple[float, str, float, float, str | None]] = []
    paired = 0
    for q in browser.queries:
        b = q.values.get(browser.baseline, {}).get(measure)
        c = q.values.get(candidate, {}).get(measure)
        if b is None or c is None:
            continue
        paired += 1
        loss = (b - c) if higher else (c - b)
        if loss > 0:
            fell.append((loss, q.qid, b, c, q.text))
    fell.sort(key=lambda t: (-t[0], t[1]))
    has_text = any(t[4] for t in fell[:MAX_REGRESSIONS])
    rows = []
    for _loss, qid, b, c, text in fell[:MAX_REGRESSIONS]:
        cells = [md_text(qid, clip=_CLIP_NAME)]
        if has_text:
            cells.append(md_text(text, clip=_CLIP_QUERY) if text else "—")
        cells += [f"{b:.4f} → {c:.4f}", format_end(c - b)]
        rows.append(tuple(cells))
    return rows, len(fell), paired, has_text


def _regression_blocks(view: View) -> list[_Block]:
    browser = view.browser
    if browser is None or not browser.candidates:
        return []
    measure = (view.measures[0] if view.measures
               else browser.measures[0] if browser.measures else None)
    if measure is None:
        return []
    # A regression is a change for the worse: a fall, or a rise where lower is better.
    fell_word = "fell" if browser.higher_is_better.get(measure, True) else "rose"
    blocks = [_Block(head=["## Largest regressions", "",
                           f"Per candidate, the queries whose {md_text(label(measure))} "
                           f"{fell_word} most (up to {MAX_REGRESSIONS}; Δ = candidate − "
                           "baseline)" + ("." if fell_word == "fell" else
                                          "; lower is better.")])]
    for cand in browser.candidates:
        rows, fell, paired, has_text = _regressions(browser, measure, cand)
        title = (f"### {md_text(cand, clip=_CLIP_NAME)} vs "
                 f"{md_text(browser.baseline, clip=_CLIP_NAME)} on {md_text(label(measure))}")
        if not rows:
            blocks.append(_Block(head=[title, "", f"No query {fell_word} (of {paired:,} paired)."]))
            continue
        columns = ("qid", *(("query",) if has_text else ()), "baseline → candidate", "Δ")
        head, body = _table(columns, rows, (False, *((False,) if has_text else ()), True, True))
        shown = f"the {len(rows)} largest shown" if fell > len(rows) else "all shown"
        blocks.append(_Block(head=[title, "", f"{fell:,} of {paired:,} paired queries {fell_word}; "
                                              f"{shown}.", "", *head], rows=body))
    return blocks


def _table_block(table: Table) -> _Block:
    columns = [md_text(c, clip=_CLIP_NAME) or " " for c in table.columns]
    rows = []
    for raw in table.rows:
        cells = [md_text(c, clip=_CLIP_NAME) for c in raw][:len(columns)]
        rows.append(cells + ["—"] * (len(columns) - len(cells)))
    head, body = _table(columns, rows, table.numeric)
    tail = ([""] + [f"- {md_text(n)}" for n in table.notes]) if table.notes else []
    return _Block(head=[f"## {md_text(table.title, clip=_CLIP_TITLE)}", "", *head], rows=body,
                  tail=tail)


def _blocks(view: View) -> list[_Block]:
    source = PurePath(view.source).name
    head = [f"# {md_text(view.title, clip=_CLIP_TITLE)}", "",
            f"From {md_text(source, clip=_CLIP_NAME)} ({md_text(view.digest, clip=80)})."]
    if view.passed is not None:
        head += ["", "**Gate: PASSED**" if view.passed else "**Gate: FAILED**"]
    blocks = [_Block(head=head)]
    matrix = _matrix_block(view)
    if matrix is not None:
        blocks.append(matrix)
    if view.summary:
        blocks.append(_Block(head=["## Summary", ""],
                             rows=[f"- {md_text(s)}" for s in view.summary]))
    verdicts = _verdict_block(view)
    if verdicts is not None:
        blocks.append(verdicts)
    blocks += [_table_block(t) for t in view.tables]
    blocks += _regression_blocks(view)
    if view.caveats:
        blocks.append(_Block(head=["## Caveats", ""],
                             rows=[f"- {md_text(c)}" for c in view.caveats]))
    if view.provenance:
        head, body = _table(("key", "value"), ((md_text(k, clip=_CLIP_NAME), md_text(v))
                                               for k, v in view.provenance))
        blocks.append(_Block(head=["<details><summary>Provenance</summary>", "", *head],
                             rows=body, tail=["", "</details>"]))
    return blocks


def _fit(blocks: list[_Block], limit: int) -> list[_Block]:
    """Cut rows from the end of the longest tables (down to `_MIN_ROWS` each), then whole
    sections from the end, until the document fits ``limit`` characters."""
    sizes = [b.size() for b in blocks]
    total = sum(sizes)
    while total > limit:
        cuttable = [i for i, b in enumerate(blocks) if len(b.rows) > _MIN_ROWS]
        if not cuttable:
            break
        # The longest table (by characters; the later one on a tie) loses its last row.
        i = max(cuttable, key=lambda j: (sizes[j], j))
        total -= sizes[i]
        blocks[i].drop_row()
        sizes[i] = blocks[i].size()
        total += sizes[i]
    left_out = 0
    while total > limit and len(blocks) > 1:
        left_out += 1
        total -= sizes.pop()
        blocks.pop()
        note = _Block(head=[f"… {left_out} more section(s) left out: see the HTML or JSON "
                            "report"])
        if total + note.size() <= limit:
            return [*blocks, note]
    return blocks


def render_markdown(view: View, *, limit: int = DEFAULT_LIMIT) -> str:
    """``view`` as GitHub-flavoured Markdown of at most ``limit`` characters.

    Sections: the title, PASSED/FAILED for a gate, the summary, the verdict
    table (each row's own interval at its level), the view's other tables,
    the largest regressions per candidate, caveats, and provenance folded in
    a ``<details>`` block. Deterministic: the same view gives the same text.
    """
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < _MIN_LIMIT:
        raise ValueError(f"limit must be an integer of at least {_MIN_LIMIT}, got {limit!r}")
    blocks = _fit(_blocks(view), limit)
    text = "\n".join(line for b in blocks for line in b.lines()).rstrip("\n") + "\n"
    if len(text) > limit:
        # Only the fixed title block is left and it alone is too long: cut it between lines.
        lines = text.splitlines()
        while lines and sum(len(x) + 1 for x in lines) > limit:
            lines.pop()
        text = "\n".join(lines) + "\n"
    return text


def tables_markdown(tables: Sequence[Table]) -> str:
    """GFM sections for ``tables`` alone (each a ``##`` heading, its table and notes), for a
    command that adds them to its own Markdown (``eval -f md``'s synthesis)."""
    return "\n".join(line for t in tables for line in _table_block(t).lines())
