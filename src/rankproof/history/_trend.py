"""Trends, "since when" and paired comparisons over stored results.

`trend` tests each step of a measure's history (point *i* against point *i − 1*, paired
over the queries both share) with `rankproof.comparison.compare_pairs`, all steps as one
family, so the correction (Holm by default) runs across the whole trend: with fifty
merges, one lucky step is not a finding. `since` answers "since which result has this
query been lost": the first result after which the query's value dropped and never came
back to where it was. `compare_results` pairs any two stored results with the usual
comparison rows. No statistics are computed here beyond what `rankproof.comparison` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from rankproof._errors import InputError
from rankproof.comparison import Comparison, ComparisonRow, Pairing, compare_pairs, compare_scores
from rankproof.history._store import HistoryStore, ResultInfo
from rankproof.stats import StatSettings

__all__ = ["Since", "Trend", "TrendPoint", "compare_results", "since", "trend"]

DEFAULT_LAST = 50
"""How many of the newest points a trend tests unless told otherwise."""


def higher_is_better(measure: str) -> bool:
    """The measure's polarity from the one registry (RAG metrics registered on demand)."""
    from rankproof.measures import polarity

    try:
        return polarity(measure)
    except InputError:
        import rankproof.rag  # noqa: F401 - registers the RAG per-case metrics

        return polarity(measure)


@dataclass(frozen=True)
class TrendPoint:
    """One stored result on the trend: where it came from and its mean; ``step`` is the
    verdict of the paired test against the previous point (None for the first)."""

    index: int
    id: str
    created_at: str
    commit: str | None
    branch: str | None
    system: str
    n: int
    mean: float
    step: str | None = None
    difference: float | None = None
    p_value: float | None = None
    p_corrected: float | None = None
    shared: int | None = None


@dataclass(frozen=True)
class Trend:
    """A measure's trend: the points in commit order and the step rows (one family)."""

    measure: str
    run: str | None
    branch: str | None
    higher_is_better: bool
    test: str
    correction: str
    alpha: float
    points: tuple[TrendPoint, ...]
    rows: tuple[ComparisonRow, ...]
    total: int
    """How many stored results hold the measure (the trend shows the newest `points`)."""

    @property
    def significant(self) -> tuple[TrendPoint, ...]:
        """The points whose step was declared better or worse."""
        return tuple(p for p in self.points if p.step in ("better", "worse"))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "rankproof.history.trend", "schema_version": 1,
                "measure": self.measure, "run": self.run, "branch": self.branch,
                "higher_is_better": self.higher_is_better, "test": self.test,
                "correction": self.correction, "alpha": self.alpha, "total": self.total,
                "points": [asdict(p) for p in self.points]}


def _one_system(found: Sequence[tuple[ResultInfo, str, Any, Any]], run: str | None,
                measure: str) -> None:
    systems = sorted({f[1] for f in found})
    if run is None and len(systems) > 1:
        shown = ", ".join(repr(s) for s in systems[:8])
        raise InputError(f"stored results hold {measure} for several runs ({shown}"
                         f"{' …' if len(systems) > 8 else ''}); choose one with --run")


def trend(store: HistoryStore, measure: str, *, run: str | None = None,
          branch: str | None = None, last: int | None = DEFAULT_LAST,
          stats: StatSettings | None = None) -> Trend:
    """The trend of ``measure`` over the stored results (the newest ``last``; all if None),
    each step tested and corrected by ``stats`` (`rankproof.stats.StatSettings`; the
    defaults when None)."""
    from rankproof.measures import parse

    measure = str(parse(measure))
    if last is not None and last < 1:
        raise InputError(f"--last must be at least 1, got {last}")
    found = store.arrays(measure, run, branch, last)
    if not found:
        where = "".join([f" for run {run!r}" if run else "",
                         f" on branch {branch!r}" if branch else ""])
        raise InputError(f"no stored result holds per-query {measure} values{where}",
                         path=store.where)
    _one_system(found, run, measure)
    total = store.count(measure, run, branch) if last is not None else len(found)
    hib = higher_is_better(measure)
    scores = [dict(zip(store.qids(d), v.tolist(), strict=True)) for _, _, d, v in found]
    pairings = []
    for i in range(1, len(found)):
        before, after = scores[i - 1], scores[i]
        if before.keys() != after.keys():  # pair over the queries both hold
            shared = before.keys() & after.keys()
            if not shared:
                raise InputError(f"results {found[i - 1][0].id[:19]} and "
                                 f"{found[i][0].id[:19]} share no query; a trend pairs each "
                                 f"point with the one before")
            before = {q: before[q] for q in shared}
            after = {q: after[q] for q in shared}
        pairings.append(Pairing(candidate=f"#{i + 1}", baseline=f"#{i}", measure=measure,
                                candidate_scores=after, baseline_scores=before,
                                higher_is_better=hib, context=f"trend step {i + 1}"))
    # One family, tested together (one draw of sign vectors for every step); a trend
    # shows no bootstrap interval, so none is drawn beside each step.
    settings = StatSettings() if stats is None else stats
    rows = compare_pairs(pairings, stats=settings, bootstrap=False) if pairings else ()
    points = []
    for i, (info, system, _, values) in enumerate(found):
        row = rows[i - 1] if i else None
        points.append(TrendPoint(
            index=i + 1, id=info.id, created_at=info.created_at, commit=info.git_commit,
            branch=info.git_branch, system=system, n=len(values), mean=float(values.mean()),
            step=row.verdict if row else None,
            difference=row.result.difference if row else None,
            p_value=row.result.p_value if row else None,
            p_corrected=row.p_corrected if row else None,
            shared=row.result.n if row else None))
    return Trend(measure=measure, run=run, branch=branch, higher_is_better=hib,
                 test=settings.test, correction=settings.correction, alpha=settings.alpha,
                 points=tuple(points), rows=rows,
                 total=total)


@dataclass(frozen=True)
class Since:
    """Since which result a query has been lost (``found`` False: it has not been)."""

    qid: str
    measure: str
    run: str | None
    found: bool
    values: tuple[tuple[str, str | None, str, float], ...]
    """(result id, commit, created, value) of every result holding the query, in order."""
    index: int | None = None
    id: str | None = None
    commit: str | None = None
    created_at: str | None = None
    before: float | None = None
    after: float | None = None
    now: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["values"] = [{"id": i, "commit": c, "created_at": t, "value": v}
                         for i, c, t, v in self.values]
        return {"kind": "rankproof.history.since", "schema_version": 1, **out}


def lost_at(values: Sequence[float], higher: bool = True) -> int | None:
    """The first index k ≥ 1 after which every value is worse than value k − 1 (the query
    dropped at k and stayed down); None when the last value is as good as any before it."""
    v = np.asarray(values, dtype=np.float64)
    if not higher:
        v = -v
    if len(v) < 2:
        return None
    suffix_best = np.maximum.accumulate(v[::-1])[::-1]  # best value from k to the end
    lost = np.nonzero(suffix_best[1:] < v[:-1])[0]
    return int(lost[0]) + 1 if len(lost) else None


def since(store: HistoryStore, qid: str, measure: str, *, run: str | None = None,
          branch: str | None = None) -> Since:
    """The first stored result after which ``qid``'s ``measure`` dropped and stayed down."""
    from rankproof.measures import parse

    measure = str(parse(measure))
    systems, series = store.query_values(qid, measure, run, branch)
    if not systems:
        raise InputError(f"no stored result holds per-query {measure} values"
                         f"{f' for run {run!r}' if run else ''}", path=store.where)
    if run is None and len(systems) > 1:
        shown = ", ".join(repr(s) for s in systems[:8])
        raise InputError(f"stored results hold {measure} for several runs ({shown}"
                         f"{' …' if len(systems) > 8 else ''}); choose one with --run")
    if not series:
        raise InputError(f"no stored result has a {measure} value for query {qid!r:.80}",
                         path=store.where)
    k = lost_at([s[3] for s in series], higher_is_better(measure))
    base = {"qid": qid, "measure": measure, "run": run, "values": tuple(series)}
    if k is None:
        return Since(found=False, **base)  # type: ignore[arg-type]
    return Since(found=True, index=k + 1, id=series[k][0], commit=series[k][1],
                 created_at=series[k][2], before=series[k - 1][3], after=series[k][3],
                 now=series[-1][3], **base)  # type: ignore[arg-type]


def compare_results(store: HistoryStore, first: str, second: str, *,
                    measures: Sequence[str] | None = None, run: str | None = None,
                    other_run: str | None = None, stats: StatSettings | None = None
                    ) -> tuple[Comparison, ResultInfo, ResultInfo, int]:
    """A paired comparison of two stored results over their shared queries: (comparison
    with ``first`` as the baseline, both results, how many queries were left out), tested
    by ``stats`` (`rankproof.stats.StatSettings`; the defaults when None; its ``pairs`` is
    always "baseline": two results make one pair)."""
    a, b = store.get(first), store.get(second)
    wanted = [str(m) for m in measures] if measures else [m for m in a.measures
                                                          if m in b.measures]
    if not wanted:
        raise InputError(f"results {a.id[:19]} and {b.id[:19]} share no measure with "
                         f"per-query values")
    table: dict[str, dict[str, dict[str, float]]] = {}
    left_out = 0
    names = []
    for info, system in ((a, run), (b, other_run if other_run is not None else run)):
        name = None
        for m in wanted:
            name, values = store.series(info, system, m)
            label = f"{info.id[7:15]}:{name}"
            table.setdefault(label, {})[m] = values
        names.append(label)
    if names[0] == names[1]:
        raise InputError("the two results are the same stored result")
    polar: dict[str, bool] = {}
    for m in wanted:
        left, right = table[names[0]][m], table[names[1]][m]
        shared = left.keys() & right.keys()
        left_out = max(left_out, len(left.keys() ^ right.keys()))
        if not shared:
            raise InputError(f"the two results share no query with a {m} value")
        table[names[0]][m] = {q: left[q] for q in shared}
        table[names[1]][m] = {q: right[q] for q in shared}
        polar[m] = higher_is_better(m)
    settings = StatSettings() if stats is None else stats
    comparison = compare_scores(table, baseline=names[0], higher_is_better=polar,
                                stats=settings.replace(pairs="baseline"))
    return comparison, a, b, left_out


