"""The systems × measures table, computed once: one row per system, one column per measure.

Why one builder: the terminal, Markdown, HTML and LaTeX forms of this table
must agree cell for cell — the same best value in bold, the same marks, the
same footnotes with the same numbers. `build_matrix` decides all of it from
the verdict rows (`rankproof.report.view.Verdict`) and the systems' means;
each renderer only chooses glyphs (``†`` or ``$^{\\dagger}$``, ``**bold**`` or
``<b>``) and escapes text for its own format.

What the table says:

* a value is **bold** when it is the best of its column at the precision
  shown (every tied value is bold), in the measure's own direction;
* against the baseline (``pairs="baseline"``) a candidate's value carries
  ``better`` or ``worse`` when its verdict is a detected difference at the
  corrected level — the verdict the comparison stored, never recomputed;
* over all pairs (``pairs="all"``, randomized Tukey HSD within each measure)
  each system has a letter and its value lists the letters of the systems it
  is significantly better than (ranx's superscripts, with the correction
  applied across the pairs);
* the legend names the test, the correction with the size of its family, and
  α; the footnotes (a row's notes, such as the Judged@k caveats) are numbered
  once for the whole table: a note that concerns every candidate of a column
  (over all pairs: every system) is marked on the column's header, any other
  on the cells it concerns.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rankproof.comparison import Comparison
from rankproof.report._view_parts import fmt, verdict_of
from rankproof.report.compare import label
from rankproof.report.view import Folded, Matrix, MatrixCell, MatrixRow, Verdict

if TYPE_CHECKING:
    from rankproof.harness import EvalReport

__all__ = ["CORRECTION_NAMES", "DIGITS", "build_matrix", "comparison_matrix", "eval_matrix",
           "letter"]

DIGITS = 4
"""Decimals shown in every cell (the best value is decided at this precision)."""

CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini–Hochberg", "bonferroni": "Bonferroni",
                    "none": "no correction", "tukey-hsd": "randomized Tukey HSD"}
_LEVEL_NAMES = {"holm": "its Holm step-down level", "bonferroni": "the Bonferroni level",
                "bh": "the BH false-coverage level", "none": "the uncorrected level",
                "tukey-hsd": "the simultaneous Tukey HSD level"}
_BETTER = ("better",)
_WORSE = ("worse",)


def letter(i: int) -> str:
    """The letter of the ``i``-th system (0-based): ``a`` … ``z``, then ``s27``, ``s28``…"""
    return string.ascii_lowercase[i] if i < 26 else f"s{i + 1}"


def comparison_matrix(c: Comparison, *, caveats: Sequence[str] = ()) -> Matrix:
    """The table of a `Comparison` (what ``rankproof compare`` prints by default)."""
    verdicts = [verdict_of(r) for r in c.rows]
    title = (f"{len(c.systems)} systems × {len(c.measures)} measures, baseline {c.baseline}, "
             f"{c.n_topics} topics")
    return build_matrix(verdicts, systems=c.systems, baseline=c.baseline, measures=c.measures,
                        pairs=c.pairs, title=title, caveats=(*c.caveats, *caveats))


def eval_matrix(report: EvalReport, *, caveats: Sequence[str] | None = None) -> Matrix:
    """The table of an eval report: its stages (the bm25 baseline first) × its measures, the
    stage means, marked by the report's comparison rows (``rankproof eval`` prints it first;
    its HTML report leads with it)."""
    return build_matrix(
        [verdict_of(r) for r in report.comparisons], systems=[s.name for s in report.stages],
        baseline=report.baseline, measures=report.measures,
        title=f"{len(report.stages)} stages × {len(report.measures)} measures, baseline "
              f"{report.baseline}, {report.inputs.scored_queries} scored queries",
        means={s.name: dict(s.means) for s in report.stages},
        caveats=report.caveats if caveats is None else caveats)


def _ordered(systems: Sequence[str], baseline: str) -> list[str]:
    return [baseline, *(s for s in dict.fromkeys(systems) if s != baseline)]


def _means(verdicts: Sequence[Verdict], given: Mapping[str, Mapping[str, float | None]] | None
           ) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for system, values in (given or {}).items():
        out[system] = dict(values)
    for v in verdicts:
        for system, value in ((v.baseline, v.baseline_mean), (v.candidate, v.candidate_mean)):
            if value is not None:
                out.setdefault(system, {}).setdefault(v.measure, value)
    return out


def _polarity(measures: Sequence[str], verdicts: Sequence[Verdict],
              given: Mapping[str, bool] | None) -> tuple[bool, ...]:
    known = {v.measure: v.higher_is_better for v in verdicts}
    known.update(given or {})
    out = []
    for m in measures:
        if m not in known:
            from rankproof.measures import polarity

            known[m] = polarity(m)
        out.append(known[m])
    return tuple(out)


def _legend(verdicts: Sequence[Verdict], *, baseline: str, pairs: str, n_systems: int,
            n_measures: int, columns: Sequence[str], polarity: Sequence[bool]) -> list[str]:
    legend = []
    lower = [c for c, hib in zip(columns, polarity, strict=True) if not hib]
    legend.append("Bold: the best value of each column"
                  + (f" (lower is better for {', '.join(lower)})." if lower else "."))
    if not verdicts:
        legend.append("No paired tests: the values are means over topics.")
        return legend
    tests = list(dict.fromkeys(v.test for v in verdicts if v.test))
    resamples = list(dict.fromkeys(v.resamples for v in verdicts if v.resamples))
    alphas = list(dict.fromkeys(v.alpha for v in verdicts if v.alpha is not None))
    corrections = list(dict.fromkeys(v.correction for v in verdicts if v.correction))
    test = (", ".join(tests) or "paired") + " test" + (
        f" ({resamples[0]:,} resamples)" if len(resamples) == 1 and tests != ["t"] else "")
    alpha = ", ".join(f"{a:g}" for a in alphas) or "as stored"
    if pairs == "all":
        per = n_systems * (n_systems - 1) // 2
        legend.append(f"Superscript letters: the systems (by the letter after each name) this "
                      f"one is significantly better than; {test}, p corrected by randomized "
                      f"Tukey HSD over the {per} pairs of each measure ({len(verdicts)} tests in "
                      f"all), α = {alpha}.")
    else:
        names = ", ".join(CORRECTION_NAMES.get(c, c) for c in corrections) or "no correction"
        family = (f" over the family of {len(verdicts)} tests ({_count(n_systems - 1, 'candidate')}"
                  f" × {_count(n_measures, 'measure')})"
                  if corrections and corrections != ["none"] else "")
        legend.append(f"† significantly better, ‡ significantly worse than the baseline "
                      f"{baseline}: {test}, p corrected by {names}{family}, α = {alpha}.")
    return legend


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _levels(verdicts: Sequence[Verdict]) -> str:
    levels = sorted({v.ci_level for v in verdicts if v.ci_level is not None})
    if not levels:
        return ""
    corrections = list(dict.fromkeys(v.correction for v in verdicts if v.correction))
    how = (_LEVEL_NAMES.get(corrections[0], corrections[0]) if len(corrections) == 1
           else "its correction's level")
    shown = (f"{levels[0] * 100:.4g}%" if len(levels) == 1
             else f"{levels[0] * 100:.4g}%–{levels[-1] * 100:.4g}%")
    return (f"Intervals: each row's interval is at {how} ({shown}), the interval its verdict "
            "agrees with.")


def _best(values: Sequence[float | None], higher: bool) -> set[int]:
    shown = [(i, round(v, DIGITS)) for i, v in enumerate(values) if v is not None]
    if not shown:
        return set()
    top = max(s for _, s in shown) if higher else min(s for _, s in shown)
    return {i for i, s in shown if s == top}


def build_matrix(verdicts: Sequence[Verdict], *, systems: Sequence[str], baseline: str,
                 measures: Sequence[str], pairs: str = "baseline", title: str = "",
                 means: Mapping[str, Mapping[str, float | None]] | None = None,
                 higher_is_better: Mapping[str, bool] | None = None,
                 caveats: Sequence[str] = ()) -> Matrix:
    """The table (see the module docstring) from the verdict rows of one comparison call.

    ``means[system][measure]`` fills values no verdict row carries (an eval
    report's stage means); ``pairs`` is the comparison's: ``"baseline"`` marks
    candidates against the baseline, ``"all"`` gives letters.
    """
    names = _ordered([*systems, *(s for v in verdicts for s in (v.baseline, v.candidate))],
                     baseline)
    ms = list(dict.fromkeys(measures)) or list(dict.fromkeys(v.measure for v in verdicts))
    values = _means(verdicts, means)
    polarity = _polarity(ms, verdicts, higher_is_better)
    letters = {s: letter(i) for i, s in enumerate(names)}
    # Marks: against the baseline, or every significant pair (the winner gets the loser's letter).
    marks: dict[tuple[str, str], str] = {}
    beats: dict[tuple[str, str], list[str]] = {}
    for v in verdicts:
        if pairs == "all":
            if v.verdict in _BETTER:
                beats.setdefault((v.candidate, v.measure), []).append(v.baseline)
            elif v.verdict in _WORSE:
                beats.setdefault((v.baseline, v.measure), []).append(v.candidate)
        elif v.baseline == baseline:
            marks[(v.candidate, v.measure)] = ("better" if v.verdict in _BETTER else
                                               "worse" if v.verdict in _WORSE else "")
    # Footnotes: every distinct note once, attached to the cells of the rows that carry it.
    footnotes: list[str] = []
    attached: dict[int, set[tuple[str, str]]] = {}
    for v in verdicts:
        for note in v.notes:
            if note not in footnotes:
                footnotes.append(note)
            concerned = attached.setdefault(footnotes.index(note) + 1, set())
            concerned.add((v.candidate, v.measure))
            if pairs == "all":  # a pair's note concerns both of its systems
                concerned.add((v.baseline, v.measure))
    candidates = names if pairs == "all" else [s for s in names if s != baseline]
    column_notes: list[tuple[int, ...]] = []
    cell_notes: dict[tuple[str, str], list[int]] = {}
    for m in ms:
        on_column = []
        for n, where in sorted(attached.items()):
            in_column = {s for s, mm in where if mm == m}
            if len(candidates) > 1 and in_column >= set(candidates):
                on_column.append(n)
                in_column -= set(candidates)
            for s in sorted(in_column, key=names.index):
                cell_notes.setdefault((s, m), []).append(n)
        column_notes.append(tuple(on_column))
    best = [_best([values.get(s, {}).get(m) for s in names], hib)
            for m, hib in zip(ms, polarity, strict=True)]
    rows = []
    for i, s in enumerate(names):
        cells = []
        for j, m in enumerate(ms):
            value = values.get(s, {}).get(m)
            won = sorted(beats.get((s, m), ()), key=names.index)
            cells.append(MatrixCell(value=value, text=fmt(value, DIGITS), best=i in best[j],
                                    mark=marks.get((s, m), ""),
                                    beats=tuple(letters[w] for w in won),
                                    notes=tuple(cell_notes.get((s, m), ()))))
        rows.append(MatrixRow(system=s, letter=letters[s], is_baseline=s == baseline,
                              cells=tuple(cells)))
    columns = tuple(label(m) for m in ms)
    folded = tuple(Folded(measure=m, shown=tuple(v for v in verdicts if v.measure == m
                                                 and v.significant),
                          folded=tuple(v for v in verdicts if v.measure == m
                                       and not v.significant))
                   for m in ms if any(v.measure == m for v in verdicts))
    return Matrix(
        title=title, baseline=baseline, pairs=pairs, measures=tuple(ms), columns=columns,
        higher_is_better=polarity, rows=tuple(rows),
        legend=tuple(_legend(verdicts, baseline=baseline, pairs=pairs, n_systems=len(names),
                             n_measures=len(ms), columns=columns, polarity=polarity)),
        column_notes=tuple(column_notes), footnotes=tuple(footnotes),
        caveats=tuple(dict.fromkeys(caveats)), levels=_levels(verdicts), verdicts=folded)
