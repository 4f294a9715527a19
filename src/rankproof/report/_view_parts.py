"""Pieces every view builder shares: verdict rows, the browser, provenance, PR curves.

Kept apart from `rankproof.report.views` (which knows the kinds of document)
so that each kind's builder is a short list of parts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rankproof.comparison import ComparisonRow, Evidence, load_evidence
from rankproof.report.view import Browser, BrowserQuery, Curve, Deltas, Series, Verdict

#: At most this many per-query pictures (delta + null plots) in one report; the
#: rest are listed by name (a 5-run × 8-measure comparison would otherwise draw 80).
MAX_DELTA_PLOTS = 24


def verdict_of(row: ComparisonRow) -> Verdict:
    """A stored comparison row as a `Verdict` (the row's own interval, not the 95% one)."""
    r = row.result
    return Verdict(
        baseline=row.baseline, candidate=row.candidate, measure=row.measure,
        higher_is_better=row.higher_is_better, verdict=row.verdict, difference=r.difference,
        baseline_mean=r.mean_b, candidate_mean=r.mean_a, ci_low=row.ci_low,
        ci_high=row.ci_high, ci_level=row.ci_level, ci_method=row.ci_method,
        ci_label=row.ci_label,
        p_value=r.p_value, p_corrected=row.p_corrected, correction=row.correction,
        alpha=row.alpha, test=r.test, resamples=r.resamples, seed=r.seed, n=r.n,
        wins=row.wins, ties=row.ties, losses=row.losses, underpowered=row.underpowered,
        queries_needed=r.queries_needed, notes=tuple(row.notes), qids=tuple(row.qids),
        baseline_values=tuple(row.baseline_values),
        candidate_values=tuple(row.candidate_values), null=row.null,
    )


def delta_parts(verdicts: Sequence[Verdict]) -> tuple[tuple[Deltas, ...], tuple[str, ...]]:
    """The rows whose per-query picture is drawn (significant rows first, then in order,
    up to `MAX_DELTA_PLOTS`), and a note naming what was left out."""
    with_values = [v for v in verdicts if v.qids]
    ordered = ([v for v in with_values if v.significant]
               + [v for v in with_values if not v.significant])
    kept = ordered[:MAX_DELTA_PLOTS]
    order = {id(v): i for i, v in enumerate(with_values)}
    kept.sort(key=lambda v: order[id(v)])
    notes: tuple[str, ...] = ()
    if len(ordered) > len(kept):
        notes = (f"per-query plots are drawn for {len(kept)} of {len(ordered)} rows "
                 "(significant rows first); the verdict table has every row",)
    return tuple(Deltas(v) for v in kept), notes


def summary_lines(verdicts: Sequence[Verdict]) -> tuple[str, ...]:
    """One sentence per candidate: how many measures went each way."""
    out = []
    pairs: dict[tuple[str, str], list[Verdict]] = {}
    for v in verdicts:
        pairs.setdefault((v.candidate, v.baseline), []).append(v)
    for (cand, base), rows in pairs.items():
        counts: dict[str, list[str]] = {}
        for v in rows:
            counts.setdefault(v.verdict, []).append(v.measure)
        parts = [f"{verdict} on {len(ms)} ({', '.join(ms)})" for verdict, ms in counts.items()]
        corr = rows[0].correction or "no"
        alpha = f", α {rows[0].alpha:g}" if rows[0].alpha is not None else ""
        out.append(f"{cand} vs {base}: " + "; ".join(parts) + f" ({corr} correction{alpha})")
    return tuple(out)


def browser_part(evidence: Evidence | None, per_query: Mapping[str, Mapping[str, Mapping[str,
                 float]]], baseline: str, candidates: Sequence[str], measures: Sequence[str],
                 higher_is_better: Mapping[str, bool],
                 categories: Mapping[str, str] | None = None) -> Browser | None:
    """The regression browser over ``per_query[system][qid][measure]`` and the evidence.

    Every query with a value for the baseline is a row; the query text, the
    gold and each system's top ids come from the evidence when the document
    kept it (a note says when it did not).
    """
    base_pq = per_query.get(baseline, {})
    if not base_pq:
        return None
    systems = [baseline, *candidates]
    queries = []
    for qid in base_pq:
        values = {s: dict(per_query.get(s, {}).get(qid, {})) for s in systems}
        top: dict[str, tuple[str, ...]] = {}
        text = gold = None
        if evidence is not None:
            top = {s: tuple(evidence.top.get(s, {}).get(qid, ())) for s in systems
                   if s in evidence.top}
            text = evidence.queries.get(qid)
            gold = evidence.gold.get(qid)
        queries.append(BrowserQuery(qid=qid, text=text, gold=dict(gold or {}), values=values,
                                    top=top, category=(categories or {}).get(qid)))
    notes: list[str] = []
    if evidence is None:
        notes.append("this document keeps no evidence (top results, query text, gold): "
                      "the browser shows per-query values only")
    return Browser(baseline=baseline, candidates=tuple(candidates), measures=tuple(measures),
                   higher_is_better=dict(higher_is_better), queries=tuple(queries),
                   k=evidence.k if evidence is not None else 0, notes=tuple(notes))


def evidence_of(data: Mapping[str, Any], path: Path) -> tuple[Evidence | None, tuple[str, ...]]:
    """The document's evidence (inline or its sidecar) and, when a sidecar is missing, a
    caveat instead of a failure: the rest of the report is still worth reading."""
    ref = data.get("evidence")
    if isinstance(ref, Mapping) and "sidecar" in ref:
        sidecar = path.parent / str(ref["sidecar"])
        if not sidecar.exists():
            return None, (f"the evidence sidecar {str(ref['sidecar'])!r} is not beside the "
                          "report: top results, query text and gold are not shown",)
    return load_evidence(data, path.parent), ()


_IPREC = re.compile(r"^(?:IPrec@|iprec_at_recall_)(\d*\.?\d+)$")


def pr_curve(means: Mapping[str, Mapping[str, float]]) -> Curve | None:
    """Interpolated precision–recall curves from ``means[system][measure]`` when the
    document holds ``IPrec@r`` / ``iprec_at_recall_r`` measures (at least two levels)."""
    series = []
    for system, values in means.items():
        points = sorted((float(m.group(1)), v) for name, v in values.items()
                        if (m := _IPREC.match(name)) is not None)
        if len(points) >= 2:
            series.append(Series(name=system, x=tuple(p[0] for p in points),
                                 y=tuple(p[1] for p in points)))
    if not series:
        return None
    return Curve(key="pr", title="interpolated precision–recall (mean over topics)",
                 x_label="recall", y_label="interpolated precision", series=tuple(series),
                 y_range=(0.0, 1.0))


def provenance_rows(block: Mapping[str, Any] | None, *extra: tuple[str, Any]
                    ) -> tuple[tuple[str, str], ...]:
    """A provenance block (and extra pairs) as ``(key, value)`` text, nested keys dotted,
    package versions as one line."""
    out: list[tuple[str, str]] = [(k, _text(v)) for k, v in extra if v is not None]
    for key, value in (block or {}).items():
        if key == "packages" and isinstance(value, Mapping):
            out.append((key, ", ".join(f"{k} {v}" for k, v in value.items() if v)))
        elif isinstance(value, Mapping):
            out.extend(_flatten(key, value))
        else:
            out.append((key, _text(value)))
    return tuple(out)


def _flatten(prefix: str, value: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    for k, v in value.items():
        if isinstance(v, Mapping):
            yield from _flatten(f"{prefix}.{k}", v)
        else:
            yield f"{prefix}.{k}", _text(v)


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value)
    return str(value)


def fmt(value: float | None, digits: int = 4) -> str:
    """A number in a table cell (``—`` for none)."""
    if value is None:
        return "—"
    return f"{value:.{digits}f}"
