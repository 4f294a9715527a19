"""Capability-discovery results as terminal tables and Markdown.

One function per result builds rows once (`_sections`); the Rich tables and
the Markdown are two renderings of the same rows, so they cannot disagree.
Ids and queries come from files: Rich cells are `plain` text (never markup)
and Markdown cells are escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.table import Table

from rankproof.discovery import (
    FAILURE_CLASSES,
    ComparisonReport,
    DiscoveryReport,
    DistractorCurve,
    MinScoreCalibration,
    SelectionSweep,
)
from rankproof.report.console import escape_controls, plain


@dataclass(frozen=True)
class Section:
    """A titled table: header cells, rows of cells, and footnotes."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()


def _num(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.{digits}f}"


def _mode(identity: dict[str, Any], mode: str, degraded: bool) -> str:
    model = identity.get("embedder") or identity.get("callable")
    text = mode + (f", {model}" if model else "")
    return text + (" [degraded]" if degraded else "")


def discovery_section(r: DiscoveryReport) -> list[Section]:
    """Measures by cutoff, then the failure taxonomy."""
    out = []
    what = _mode(r.identity, r.mode, r.degraded)
    if r.retrieval is not None:
        families = list(dict.fromkeys(m.split("@")[0] for m in r.retrieval.measures))
        ks = sorted({int(m.split("@")[1]) for m in r.retrieval.measures if "@" in m})
        by_k = tuple((f"@{k}", *(_num(r.retrieval.metrics.get(f"{f}@{k}")) for f in families))
                     for k in ks)
        out.append(Section(f"discovery ({what}): {r.n_gold} gold cases, primary nDCG@"
                           f"{r.primary_k} = {_num(r.primary)}", ("k", *families), by_k))
    total = {"gold": max(r.n_gold, 1), "abstention": max(r.n_abstention, 1)}
    rows: list[tuple[str, ...]] = []
    for cls in FAILURE_CLASSES:
        n = r.failure_classes.get(cls, 0)
        side = "abstention" if cls.startswith("abstention") or cls == "false_action" else "gold"
        rows.append((cls, side, str(n), f"{n / total[side]:.1%}"))
    notes = list(r.notes)
    if r.abstention_accuracy is not None and r.abstain_threshold is not None:
        notes.insert(0, f"abstention accuracy {r.abstention_accuracy:.3f} at threshold "
                        f"{r.abstain_threshold:g}")
    out.append(Section(f"failure taxonomy at k = {r.primary_k} ({r.n_cases} cases: "
                       f"{r.n_gold} gold, {r.n_abstention} abstention)",
                       ("class", "cases of", "n", "share"), tuple(rows), tuple(notes)))
    return out


def _selection_cells(p: Any) -> tuple[str, ...]:
    rep = p.report
    floor = "—" if p.min_score is None else f"{p.min_score:g}"
    return (str(p.max_k), f"{p.rel:g}", floor, _num(rep.selection_f1, 3),
            _num(rep.selection_precision, 3), _num(rep.selection_recall, 3),
            _num(rep.conditional_commit_rate, 3), _num(rep.abstention_accuracy, 3),
            _num(rep.mean_selected_size, 2))


_SELECTION_HEADER = ("max_k", "rel", "min_score", "F1", "precision", "recall", "commit rate",
                     "abstention acc", "mean size")


def sweep_section(s: SelectionSweep) -> list[Section]:
    """The best point of the sweep and its precision–recall frontier."""
    best = s.best()
    what = _mode(s.identity, s.mode, s.degraded)
    title = (f"selector sweep ({s.strategy}, {what}): {len(s.points)} settings, one retrieval "
             f"pass; best {s.objective}")
    frontier = s.frontier()
    rows = (_selection_cells(best), *(_selection_cells(p) for p in frontier if p is not best))
    notes = (f"first row: the best setting by {s.objective}; the others: the recall–precision "
             f"frontier ({len(frontier)} settings)", f"denominator: {s.n_gold_retrieved} gold "
             f"cases whose gold reached the top {s.k}", *s.notes)
    return [Section(title, _SELECTION_HEADER, rows, notes)]


def calibration_section(c: MinScoreCalibration) -> list[Section]:
    """The calibrated abstention floor and how well it separates the classes."""
    rows = (("min_score", _num(c.min_score)), ("sensitivity", _num(c.sensitivity, 3)),
            ("specificity", _num(c.specificity, 3)), ("Youden's J", _num(c.youden_j, 3)),
            ("balanced accuracy", _num(c.balanced_accuracy, 3)),
            ("separable", "yes" if c.separable else "no"),
            ("in-scope (gold reached top k)", str(c.n_positive)),
            ("abstention cases", str(c.n_abstention)),
            ("retrieval misses (excluded)", str(c.n_retrieval_miss)))
    notes = [f"objective: {c.sensitivity_weight:g}·sensitivity + "
             f"{1 - c.sensitivity_weight:g}·specificity over {len(c.grid)} candidate floors"]
    if c.reason:
        notes.append(f"reason: {c.reason}")
    what = _mode(dict(c.identity or {}), c.mode, c.degraded)
    return [Section(f"calibrated abstention floor ({what}, top {c.k})", ("", "value"), rows,
                    tuple(notes))]


def curve_section(c: DistractorCurve) -> list[Section]:
    """Accuracy as the catalogue grows, with its interval per size."""
    rows = tuple((str(p.size), _num(p.accuracy, 3),
                  f"[{_num(p.ci_low, 3)}, {_num(p.ci_high, 3)}]",
                  "by construction" if p.by_construction else f"{p.hits}/{p.attempts}",
                  "—" if p.seconds_per_trial is None else f"{p.seconds_per_trial:.3f}")
                 for p in c.points)
    what = c.mode + (" [degraded]" if c.degraded else "")
    return [Section(f"distractor curve ({what}): top-{c.k} accuracy of {c.n_probes} probes, "
                    f"{c.trials} trials each, seed {c.seed}",
                    ("catalogue size", "accuracy", f"{c.confidence_level:.0%} CI", "hits",
                     "s / trial"), rows, (f"interval: {c.interval}", *c.notes))]


def comparison_section(r: ComparisonReport, threshold: float = 0) -> list[Section]:
    """Per-theme graded nDCG and named-set rates per label, then the regressions."""
    header = ("label", *(f"{t} nDCG@{r.k}" for t in r.themes))
    rows = tuple((label, *(_num(r.metrics[label][t].get("ndcg"), 3) for t in r.themes))
                 for label in r.labels)
    out = [Section(f"indexing comparison (baseline {r.baseline})", header, rows, r.notes)]
    regressions = r.regressions(threshold)
    moved = f" (moved more than {threshold:g} places)" if threshold else ""
    out.append(Section(f"regressions against {r.baseline}{moved}: {len(regressions)}",
                       ("theme", "id", "role", "label", "baseline rank", "rank"),
                       tuple((g.theme, g.artifact_id, g.role, g.label, _rank(g.baseline_rank),
                              _rank(g.rank)) for g in regressions)))
    verdicts = r.verdicts()
    if verdicts:
        out.append(Section("discovery cases, paired per case", ("label", "verdict"),
                           tuple((k, v) for k, v in verdicts.items())))
    return out


def _rank(x: float) -> str:
    return "absent" if math.isinf(x) else str(int(x))


def tables(sections: Sequence[Section]) -> list[tuple[str, Table, tuple[str, ...]]]:
    """``(title, table, notes)`` per section: Rich tables (text is never markup).

    The title is returned apart so that it is printed on its own line, not
    wrapped to the width of a narrow table.
    """
    out = []
    for s in sections:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                      show_edge=False)
        for i, h in enumerate(s.header):
            table.add_column(plain(h), justify="left" if i == 0 else "right")
        for row in s.rows:
            table.add_row(*(plain(c) for c in row))
        out.append((s.title, table, s.notes))
    return out


def markdown(sections: Sequence[Section]) -> str:
    """The same sections as GitHub-flavoured Markdown."""
    def cell(text: str) -> str:
        return escape_controls(text).replace("|", "\\|")

    lines: list[str] = []
    for s in sections:
        lines += [f"### {cell(s.title)}", "", "| " + " | ".join(map(cell, s.header)) + " |",
                  "|" + "|".join("---" for _ in s.header) + "|"]
        lines += ["| " + " | ".join(map(cell, row)) + " |" for row in s.rows]
        lines += ["", *(f"- {cell(n)}" for n in s.notes)]
        if s.notes:
            lines.append("")
    return "\n".join(lines)
