"""A `View` as a LaTeX table fragment (booktabs), and the ``.sources.json`` sidecar that says
exactly what it was made from.

Why a fragment: a paper has its own preamble, fonts and float placement;
what it needs from rankproof is the ``tabular`` to ``\\input``. The fragment
needs only ``\\usepackage{booktabs}`` and compiles with plain ``pdflatex``.

Why every character of data is escaped: run names, measure names and
anything else from a file may hold ``_``, ``%``, ``&``, ``#``, ``$`` or
``\\`` (``BM25_k1=0.9``), any of which breaks or silently changes a LaTeX
document; a control character or a letter outside the default font
encoding stops ``pdflatex``. `tex_text` writes specials as their text
commands, control characters as visible escapes, accented Latin letters as
accent commands, a few common symbols in math mode, and anything else as
``[U+XXXX]``: the table always compiles and shows what the file said.

Why the sidecar: a number in a paper should be traceable to the file it came
from. `latex_sources` records the input's path and SHA-256 (the bytes
`rankproof.report.document.read` hashed), its kind and schema version, the
command line and the rankproof version.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from rankproof._version import __version__
from rankproof.report.compare import decided_by, label, p_text
from rankproof.report.console import escape_controls
from rankproof.report.view import Matrix, MatrixCell, Table, Verdict, View

__all__ = ["LATEX_STYLES", "MAX_TABLE_ROWS", "SOURCES_KIND", "latex_sources", "render_latex",
           "tex_text"]

LATEX_STYLES = ("wide", "long")
"""``wide``: one row per system, one column per measure; ``long``: one row per verdict."""

MAX_TABLE_ROWS = 60
"""Rows kept per table; a longer table ends with a row saying how many were left out
(a ``tabular`` cannot break across pages, and a paper's table is a summary)."""

SOURCES_KIND = "rankproof.latex-sources"

_SPECIALS = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "#": r"\#",
    # pdflatex's default encoding takes ``\$`` from a font it may have to generate first
    # (minutes, files under ~): the upright font's own dollar, straight quote from tt.
    "$": r"{\upshape\char36}",
    "^": r"\textasciicircum{}", "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", '"': r"{\ttfamily\char34}",
    "`": "{`}", "'": "{'}",
}
#: Symbols common in rankproof's own text and in names, as pdflatex-safe commands.
_SYMBOLS = {
    "—": "---", "–": "--", "−": "$-$", "∞": r"$\infty$", "Δ": r"$\Delta$", "α": r"$\alpha$",
    "→": r"$\rightarrow$", "≤": r"$\le$", "≥": r"$\ge$", "±": r"$\pm$", "…": r"\dots{}",
    "‘": "`", "’": "'", "“": "``", "”": "''", "·": r"$\cdot$", "×": r"$\times$",
    "\u00a0": "~", "ß": r"\ss{}", "æ": r"\ae{}", "Æ": r"\AE{}", "ø": r"\o{}", "Ø": r"\O{}",
    "å": r"\aa{}", "Å": r"\AA{}", "œ": r"\oe{}", "Œ": r"\OE{}", "ł": r"\l{}", "Ł": r"\L{}",
    "ı": r"\i{}",
}
#: Combining marks pdflatex's default (OT1) encoding can place as accents.
_ACCENTS = {
    "\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0308": '"', "\u0304": "=",
    "\u0307": ".", "\u030a": "r", "\u030c": "v", "\u0306": "u", "\u030b": "H", "\u0327": "c",
    "\u0328": "k",
}
_BETTER = ("better", "non-inferior")
_WORSE = ("worse", "not shown non-inferior")
_MARK_BETTER = r"^{\dagger}"
_MARK_WORSE = r"^{\ddagger}"
_CLIP = 200


def _char(c: str) -> str:
    if c in _SPECIALS:
        return _SPECIALS[c]
    if " " <= c <= "~":
        return c
    if c in _SYMBOLS:
        return _SYMBOLS[c]
    decomposed = unicodedata.normalize("NFD", c)
    base, marks = decomposed[:1], decomposed[1:]
    if base.isascii() and base.isalpha() and marks and all(m in _ACCENTS for m in marks):
        out = "\\i" if base == "i" else base
        for m in marks:
            cmd = _ACCENTS[m]
            out = f"\\{cmd}{{{out}}}"
        return "{" + out + "}"
    return f"[U+{ord(c):04X}]"


def tex_text(text: object, *, clip: int = _CLIP) -> str:
    """``text`` as LaTeX that prints it literally (see the module docstring): at most ``clip``
    characters of it, control characters as visible escapes (``\\x1b``), no ligatures
    (``--`` prints as two hyphens)."""
    raw = str(text)
    if len(raw) > clip:
        raw = raw[:clip - 1] + "…"
    out: list[str] = []
    for c in escape_controls(raw):
        if c == "-" and out and out[-1].endswith("-"):
            out.append("{}")
        out.append(_char(c))
    return "".join(out)


def _num(value: float | None, digits: int = 4, *, signed: bool = False) -> str:
    if value is None:
        return "---"
    if math.isinf(value):
        return r"$+\infty$" if value > 0 else r"$-\infty$"
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return f"${text}$" if text.startswith(("-", "+")) else text


def _p(value: float | None) -> str:
    text = p_text(value, none="---")
    return f"${text}$" if text.startswith("<") else text  # "<" is a math symbol in TeX


def _header(view: View, what: str) -> list[str]:
    source = PurePath(view.source).name
    return [f"% rankproof {tex_text(__version__)}: {what}",
            f"% source: {tex_text(source)} ({tex_text(view.kind)}, schema_version "
            f"{view.schema_version})",
            f"% input digest: {tex_text(view.digest)}",
            "% needs \\usepackage{booktabs}; every name is escaped data"]


def _row(cells: Sequence[str]) -> str:
    return " & ".join(cells) + r" \\"


def _note(width: int, text: str) -> str:
    return rf"\multicolumn{{{width}}}{{@{{}}l}}{{\footnotesize {text}}} \\"


def _delta(v: Verdict) -> str:
    """Δ with its significance mark, one math group (``$-0.0582^{\\ddagger}$``)."""
    mark = _MARK_BETTER if v.verdict in _BETTER else _MARK_WORSE if v.verdict in _WORSE else ""
    text = _num(v.difference, signed=True)
    if not mark:
        return text
    return text[:-1] + mark + "$" if text.endswith("$") else f"{text}${mark}$"


def _verdict_table(view: View) -> list[str]:
    verdicts = view.verdicts
    one_baseline = len({v.baseline for v in verdicts}) == 1
    lines = [r"\begin{tabular}{llrrrrrrr}", r"\toprule",
             _row(("Measure", "System", "Baseline", "Candidate", r"$\Delta$",
                   r"\multicolumn{2}{c}{Interval}", "Level", "$p$ corr.")),
             r"\cmidrule(lr){6-7}",
             _row(("", "", "mean", "mean", "", "low", "high", "", "")), r"\midrule"]
    previous = None
    for v in verdicts:
        if previous is not None and v.measure != previous:
            lines.append(r"\addlinespace")
        previous = v.measure
        system = tex_text(v.candidate)
        if not one_baseline:
            system += " vs " + tex_text(v.baseline)
        level = "---" if v.ci_level is None else f"{v.ci_level * 100:.4g}\\%"
        lines.append(_row((tex_text(label(v.measure)), system, _num(v.baseline_mean),
                           _num(v.candidate_mean), _delta(v),
                           _num(v.ci_low, signed=True), _num(v.ci_high, signed=True), level,
                           _p(v.p_corrected))))
    lines.append(r"\bottomrule")
    corrections = ", ".join(tex_text(c) for c in dict.fromkeys(
        v.correction for v in verdicts if v.correction is not None)) or "no"
    alphas = ", ".join(f"{a:g}" for a in dict.fromkeys(
        v.alpha for v in verdicts if v.alpha is not None))
    methods = "; ".join(tex_text(m) for m in dict.fromkeys(
        v.ci_label or v.ci_method for v in verdicts
        if (v.ci_label or v.ci_method) is not None)) or "as stored"
    against = f" than {tex_text(verdicts[0].baseline)}" if one_baseline else ""
    lines.append(_note(9, f"${_MARK_BETTER}$ significantly better, ${_MARK_WORSE}$ significantly "
                          f"worse{against} ($p$ corrected by {corrections}"
                          + (f", $\\alpha = {alphas}$" if alphas else "") + ")."))
    lines.append(_note(9, f"Interval: {methods}, at the row's level (the one its verdict "
                          "agrees with)."))
    lines.append(_note(9, tex_text(decided_by(verdicts), clip=1_000)))
    lines.append(r"\end{tabular}")
    return lines


def _plain_table(table: Table) -> list[str]:
    n = len(table.columns)
    spec = "".join("r" if i < len(table.numeric) and table.numeric[i] else "l"
                   for i in range(n))
    lines = [f"% table: {tex_text(table.title)}", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             _row([tex_text(c) for c in table.columns]), r"\midrule"]
    for raw in table.rows[:MAX_TABLE_ROWS]:
        cells = [tex_text(c) for c in raw][:n]
        lines.append(_row(cells + ["---"] * (n - len(cells))))
    lines.append(r"\bottomrule")
    left = len(table.rows) - MAX_TABLE_ROWS
    if left > 0:
        lines.append(_note(n, f"{left:,} more rows: see the HTML or JSON report."))
    lines += [_note(n, tex_text(note)) for note in table.notes]
    lines.append(r"\end{tabular}")
    return lines


def _matrix_cell(cell: MatrixCell) -> str:
    text = _num(cell.value)
    if cell.best and cell.value is not None:
        text = rf"\textbf{{{text}}}"
    sup = {"better": r"\dagger", "worse": r"\ddagger"}.get(cell.mark, "")
    if cell.beats:
        sup += r"\mathrm{" + ",".join(cell.beats) + "}"
    if sup:
        text += f"$^{{{sup}}}$"
    if cell.notes:
        text += rf"\textsuperscript{{[{','.join(map(str, cell.notes))}]}}"
    return text


def _notes_after(lines: Sequence[str]) -> list[str]:
    """Sentences set under a ``tabular`` as one footnote-size paragraph (they wrap at the
    line width, where a ``\\multicolumn`` cell would widen the table to the longest one)."""
    if not lines:
        return []
    return [r"\par\smallskip", r"{\footnotesize\raggedright",
            *(f"{line}\\par" for line in lines), "}"]


def _matrix_table(m: Matrix) -> list[str]:
    """The systems × measures ``tabular``: booktabs rules, best values bold, † / ‡ against
    the baseline or the letters of the systems beaten, footnotes once below it."""
    n = len(m.columns)
    heads = ["System"]
    for name, notes in zip(m.columns, m.column_notes or [()] * n, strict=True):
        heads.append(tex_text(name) + (rf"\textsuperscript{{[{','.join(map(str, notes))}]}}"
                                       if notes else ""))
    lines = [f"% table: {tex_text(m.title)}", rf"\begin{{tabular}}{{l{'r' * n}}}",
             r"\toprule", _row(heads), r"\midrule"]
    for i, row in enumerate(m.rows):
        name = tex_text(row.system) + (f" ({row.letter})" if m.pairs == "all" else "")
        lines.append(_row([name, *(_matrix_cell(c) for c in row.cells)]))
        if row.is_baseline and i + 1 < len(m.rows):
            lines.append(r"\midrule")
    lines.append(r"\bottomrule")
    lines.append(r"\end{tabular}")
    # tex_text writes † and ‡ as [U+2020]/[U+2021]: set the marks as math symbols instead.
    legend = [tex_text(x).replace("[U+2020]", r"$^{\dagger}$").replace("[U+2021]",
                                                                         r"$^{\ddagger}$")
              for x in m.legend]
    lines_after = [*legend, *([tex_text(m.levels)] if m.levels else []),
             *(f"[{i}] {tex_text(note, clip=1_000)}" for i, note in enumerate(m.footnotes, 1)),
             *(f"Caveat: {tex_text(c, clip=1_000)}" for c in m.caveats)]
    return [*lines, *_notes_after(lines_after)]


def render_latex(view: View, *, style: str = "wide") -> str:
    """The fragment for ``view``. ``style="wide"`` (the default): the systems × measures table
    of a comparison or an eval report (`rankproof.report.matrix`), one row per system;
    ``style="long"``: its verdict rows as one booktabs ``tabular`` (measure, system, both
    means, Δ with a significance mark, the row's own interval and level, the corrected p).
    A view without verdicts (measure, RAG, discovery) gives its tables, each a booktabs
    ``tabular``. No preamble: ``\\input`` it inside a ``table`` environment."""
    if style not in LATEX_STYLES:
        raise ValueError(f"style must be one of {', '.join(LATEX_STYLES)}, got {style!r}")
    if style == "wide" and view.matrix is not None and view.matrix.rows:
        lines = [*_header(view, "systems x measures table"), *_matrix_table(view.matrix)]
    elif view.verdicts:
        lines = [*_header(view, "verdict table"), *_verdict_table(view),
                 *_notes_after([f"Caveat: {tex_text(c, clip=1_000)}" for c in view.caveats])]
    elif view.tables:
        lines = _header(view, f"{len(view.tables)} table(s)")
        for i, table in enumerate(view.tables):
            if i:
                lines += ["", r"\bigskip", ""]
            lines += _plain_table(table)
    else:
        lines = [*_header(view, "no table"), "% this document holds no table to typeset"]
    return "\n".join(lines) + "\n"


def latex_sources(view: View, *, command: Sequence[str], output: str) -> dict[str, Any]:
    """The ``.sources.json`` sidecar of a fragment: which input (path, SHA-256 of its bytes,
    kind, schema version), made by which command and rankproof version, into which file."""
    return {
        "kind": SOURCES_KIND,
        "schema_version": 1,
        "input": {"path": view.source, "sha256": view.digest, "kind": view.kind,
                  "schema_version": view.schema_version},
        "command": [str(c) for c in command],
        "rankproof_version": __version__,
        "output": output,
    }
