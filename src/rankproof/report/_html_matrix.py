"""The first section of an HTML report of a comparison or an eval: the answer.

The systems × measures table (`rankproof.report.view.Matrix`, computed by
`rankproof.report.matrix`), its legend and footnotes, then the verdict rows
of each measure: the detected differences listed, the rows with no
detectable difference folded into one ``<details>`` line per measure (all
rows listed when a detailed report is asked for). The intervals' level is
said once, under the table, not on every row. Everything from the document
is HTML-escaped here; nothing is computed.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from rankproof.comparison import format_end
from rankproof.report.compare import MARK_GLYPHS, label, p_text
from rankproof.report.view import Matrix, MatrixCell, Verdict

__all__ = ["CSS", "answer_html"]

CSS = """
table.matrix td.best{font-weight:700}
table.matrix sup{font-size:.7em;margin-left:1px}
table.matrix tr.baseline td{border-bottom:2px solid #888}
details.folded>summary{color:#555}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _notes(notes: Sequence[int]) -> str:
    return f"<sup>[{','.join(map(str, notes))}]</sup>" if notes else ""


def _cell(cell: MatrixCell) -> str:
    marks = MARK_GLYPHS.get(cell.mark, "")
    sup = marks + ",".join(cell.beats)
    best = cell.best and cell.value is not None
    value = f"<b>{_e(cell.text)}</b>" if best else _e(cell.text)
    return (f'<td class="{"num best" if best else "num"}">{value}'
            f'{f"<sup>{_e(sup)}</sup>" if sup else ""}{_notes(cell.notes)}</td>')


def matrix_html(m: Matrix) -> str:
    """The table, its legend, the level of its intervals, and each footnote and caveat once."""
    head = "<th>system</th>" + "".join(
        f"<th class=num>{_e(c)}{_notes(n)}</th>"
        for c, n in zip(m.columns, m.column_notes or [()] * len(m.columns), strict=True))
    rows = []
    for row in m.rows:
        name = _e(row.system) + (f" ({_e(row.letter)})" if m.pairs == "all" else "")
        if row.is_baseline:
            name += ' <span class="note">baseline</span>'
        rows.append(f'<tr{" class=baseline" if row.is_baseline else ""}><td>{name}</td>'
                    + "".join(_cell(c) for c in row.cells) + "</tr>")
    notes = "".join(f'<p class="note">{_e(line)}</p>'
                    for line in (*m.legend, *([m.levels] if m.levels else ())))
    foot = "".join(f"<li>{_e(n)}</li>" for n in m.footnotes)
    foot = f'<ol class="note footnotes">{foot}</ol>' if foot else ""
    cav = "".join(f"<li>{_e(c)}</li>" for c in m.caveats)
    cav = f'<p class="note">Caveats:</p><ul class="caveats">{cav}</ul>' if cav else ""
    return (f'<h3>{_e(m.title)}</h3><div class="scroll"><table class="matrix" id="matrix">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
            f"{notes}{foot}{cav}")


def _verdict_row(v: Verdict) -> str:
    interval = ("—" if v.ci_low is None or v.ci_high is None
                else f"[{format_end(v.ci_low)}, {format_end(v.ci_high)}]")
    cls = ("better" if v.verdict in ("better", "non-inferior")
           else "worse" if v.verdict in ("worse", "not shown non-inferior") else "ns")
    under = (f' <span class="note">underpowered: ~{v.queries_needed:,} queries needed</span>'
             if v.underpowered and v.queries_needed else "")
    delta = "—" if v.difference is None else format_end(v.difference)
    return (f"<tr><td>{_e(v.candidate)}</td><td>{_e(v.baseline)}</td>"
            f"<td class=num>{_e(delta)}</td><td class=nowrap>{_e(interval)}</td>"
            f"<td class=num>{_e(p_text(v.p_corrected))}</td>"
            f'<td><span class="{cls}">{_e(v.verdict)}</span>{under}</td></tr>')


_HEAD = ("<thead><tr><th>candidate</th><th>baseline</th><th class=num>Δ</th><th>interval</th>"
         "<th class=num>p corr</th><th>verdict</th></tr></thead>")


def verdicts_html(m: Matrix, *, detail: bool = False) -> str:
    """Per measure: the detected differences, then the rest folded in one ``<details>`` line
    (or listed, with ``detail``)."""
    out = []
    for group in m.verdicts:
        name = _e(label(group.measure))
        shown = list(group.shown) + (list(group.folded) if detail else [])
        table = (f'<div class="scroll"><table class="verdicts">{_HEAD}<tbody>'
                 f"{''.join(_verdict_row(v) for v in shown)}</tbody></table></div>"
                 if shown else "")
        folded = ""
        if group.folded and not detail:
            who = ", ".join(_e(v.candidate if v.baseline == m.baseline
                               else f"{v.candidate} vs {v.baseline}") for v in group.folded)
            rows = "".join(_verdict_row(v) for v in group.folded)
            folded = (f'<details class="folded"><summary>{name}: no detectable difference for '
                      f"{len(group.folded)} row(s): {who}</summary>"
                      f'<div class="scroll"><table class="verdicts">{_HEAD}<tbody>{rows}'
                      f"</tbody></table></div></details>")
        out.append(f'<div class="measure-verdicts"><h4>{name}</h4>{table}{folded}</div>')
    if not out:
        return ""
    # The intervals' level is said once, under the table above, and on no row.
    return f"<h3>Verdicts by measure</h3>{''.join(out)}"


def answer_html(m: Matrix, *, detail: bool = False) -> str:
    """The answer section's body: the table, then the verdicts by measure."""
    return matrix_html(m) + verdicts_html(m, detail=detail)
