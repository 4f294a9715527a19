"""Selection: which of the top-k candidates does the system *commit* to, and is that right?

`evaluate_discovery` scores the ranking; this scores the commit. A selector
sees the ``k`` candidates of one query and keeps a subset (possibly empty:
"nothing applies"). Two strategies:

* ``conservative``: abstain when the top score is below ``min_score``;
  otherwise keep the candidates scoring at least ``rel`` × the top score,
  at most ``max_k`` of them.
* ``score_gap``: abstain below ``min_score`` likewise; otherwise keep
  candidates in order until the next score falls below ``gap_ratio`` × the
  current one (``max_k`` and ``rel`` are not used).

A ratio of scores means nothing when scores can be negative (a cross-encoder
logit, a shifted similarity), so when any candidate score of a query is
negative, that query's scores are min-max normalised to [0, 1] before the
ratio rules apply (the floor ``min_score`` always reads raw scores: it is on
the searcher's scale). Reports say which rule was applied and to how many
queries.

Every selection-quality number is conditioned on retrieval having surfaced a
gold id among the ``k`` candidates (``n_gold_retrieved`` cases), so a
retrieval miss is never charged to the selector. `sweep_selector` scores a
grid of knobs from **one** retrieval pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankproof._errors import InputError
from rankproof.discovery._cases import DiscoveryCase
from rankproof.discovery._defaults import (
    DFLT_MODE,
    DFLT_SWEEP_MAX_K,
    DFLT_SWEEP_MIN_SCORE,
    DFLT_SWEEP_OBJECTIVE,
    DFLT_SWEEP_REL,
    SWEEP_METRICS,
)
from rankproof.discovery._evaluate import _check_cases, _searched
from rankproof.discovery._source import Ranking, SearchSettings
from rankproof.engine import Executor, shards
from rankproof.retrieval import CrossEncoder, Embedder
from rankproof.stats import Result

STRATEGIES: tuple[str, ...] = ("conservative", "score_gap")
#: The one sweep metric that is better when smaller.
_MINIMIZE = frozenset({"mean_selected_size"})
_TIE = 1e-12
RAW_RULE = "raw scores"
NORMALISED_RULE = ("min-max normalised per query (the query had a negative score) before the "
                   "ratio rule; min_score reads raw scores")


# -- validation ---------------------------------------------------------------


def _check_config(strategy: str, max_k: Any, rel: Any, gap_ratio: Any, min_score: Any) -> None:
    if strategy not in STRATEGIES:
        raise InputError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}",
                         field="strategy")
    if isinstance(max_k, bool) or not isinstance(max_k, int) or max_k < 1:
        raise InputError(f"max_k must be a positive integer, got {max_k!r}", field="max_k")
    for name, value in (("rel", rel), ("gap_ratio", gap_ratio)):
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not 0.0 <= value <= 1.0:
            raise InputError(f"{name} must be a number in [0, 1], got {value!r}", field=name)
    if min_score is not None and (isinstance(min_score, bool) or not isinstance(
            min_score, int | float) or not math.isfinite(min_score)):
        raise InputError(f"min_score must be a finite number or None, got {min_score!r}",
                         field="min_score")


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}", field="k")
    return k


def _check_metric(metric: str, name: str = "metric") -> str:
    if metric not in SWEEP_METRICS:
        raise InputError(f"unknown {name} {metric!r}; choose from {', '.join(SWEEP_METRICS)}",
                         field=name)
    return metric


# -- the selector ---------------------------------------------------------------


def needs_normalising(ranking: Ranking) -> bool:
    """True when a ratio rule would read negative scores (so they are min-max normalised)."""
    return any(score < 0 for _, score in ranking)


def _ratio_scores(ranking: Ranking) -> list[float]:
    scores = [s for _, s in ranking]
    if not needs_normalising(ranking):
        return scores
    lo, hi = min(scores), max(scores)
    if hi == lo:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]


def select(ranking: Ranking, *, strategy: str = "conservative", max_k: int = 3,
           rel: float = 0.9, gap_ratio: float = 0.5, min_score: float | None = None
           ) -> tuple[str, ...]:
    """The ids the selector commits to from ``ranking`` (best first); ``()`` = abstain."""
    _check_config(strategy, max_k, rel, gap_ratio, min_score)
    return _select(ranking, strategy, max_k, rel, gap_ratio, min_score)


def _select(ranking: Ranking, strategy: str, max_k: int, rel: float, gap_ratio: float,
            min_score: float | None) -> tuple[str, ...]:
    if not ranking or (min_score is not None and ranking[0][1] < min_score):
        return ()
    scores = _ratio_scores(ranking)
    if strategy == "conservative":
        band = rel * scores[0]
        kept = [doc for (doc, _), s in zip(ranking, scores, strict=True) if s >= band]
        return tuple(kept[:max_k])
    n = 1
    while n < len(scores) and scores[n] >= gap_ratio * scores[n - 1]:
        n += 1
    return tuple(doc for doc, _ in ranking[:n])


# -- the report -------------------------------------------------------------------


@dataclass(frozen=True)
class SelectionReport(Result):
    """The outcome of `evaluate_selection`: the quality of the commit, isolated.

    Over the ``n_gold_retrieved`` gold cases whose gold reached the ``k``
    candidates (the shared denominator):

    * ``selection_precision``: mean of ``|selected ∩ gold| / |selected|``
      over those cases that committed anything (``None`` if none did);
    * ``selection_recall``: mean of ``|selected ∩ gold| / |gold ∩ candidates|``
      (the gold the selector was shown, so misses do not depress it);
    * ``selection_f1``: mean per-case F1 (an empty commit scores 0);
    * ``conditional_commit_rate``: share that committed at least one gold id;
    * ``mean_selected_size``: mean size of the commit.

    Each is ``None`` when ``n_gold_retrieved`` is 0. ``abstention_accuracy``
    is the share of abstention cases with an empty commit (``None`` without
    any). ``score_rule`` states how scores were read and ``n_normalised``
    for how many cases they were min-max normalised; ``selected`` is every
    case's commit, in case order.
    """

    selection_precision: float | None
    selection_recall: float | None
    selection_f1: float | None
    conditional_commit_rate: float | None
    n_gold_retrieved: int
    abstention_accuracy: float | None
    mean_selected_size: float | None
    n_cases: int
    n_gold: int
    n_abstention: int
    strategy: str = "conservative"
    mode: str = DFLT_MODE
    k: int = 10
    max_k: int = 3
    rel: float = 0.9
    gap_ratio: float = 0.5
    min_score: float | None = None
    score_rule: str = RAW_RULE
    n_normalised: int = 0
    selected: tuple[tuple[str, ...], ...] = ()
    degraded: bool = False
    identity: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def config(self) -> dict[str, Any]:
        """The selector settings scored (strategy, k and the knobs)."""
        return {"strategy": self.strategy, "k": self.k, "max_k": self.max_k, "rel": self.rel,
                "gap_ratio": self.gap_ratio, "min_score": self.min_score}

    @property
    def vd_degraded(self) -> bool:
        """Seed 004's name for `degraded`."""
        return self.degraded

    def metric(self, name: str) -> float | None:
        """One of `SWEEP_METRICS` by name."""
        value: float | None = getattr(self, _check_metric(name))
        return value


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def score_selection(cases: Sequence[DiscoveryCase], rankings: Sequence[Ranking], *,
                    strategy: str = "conservative", k: int | None = None, max_k: int = 3,
                    rel: float = 0.9, gap_ratio: float = 0.5, min_score: float | None = None,
                    mode: str = "callable", degraded: bool = False,
                    identity: dict[str, Any] | None = None, notes: Sequence[str] = ()
                    ) -> SelectionReport:
    """`evaluate_selection` over precomputed ``rankings`` (one per case, best first).

    Only the first ``k`` candidates of each ranking are shown to the
    selector (all of them when ``k`` is None).
    """
    cases = _check_cases(cases)
    if len(rankings) != len(cases):
        raise InputError(f"{len(rankings)} rankings for {len(cases)} cases; one per case",
                         field="rankings")
    _check_config(strategy, max_k, rel, gap_ratio, min_score)
    depth = max((len(r) for r in rankings), default=1) if k is None else _check_k(k)
    windows = [tuple(r[:depth]) for r in rankings]
    return _score(cases, windows, strategy, depth, max_k, rel, gap_ratio, min_score,
                  mode, degraded, dict(identity or {}), tuple(notes))


def _score(cases: Sequence[DiscoveryCase], windows: Sequence[Ranking], strategy: str, k: int,
           max_k: int, rel: float, gap_ratio: float, min_score: float | None, mode: str,
           degraded: bool, identity: dict[str, Any], notes: tuple[str, ...]
           ) -> SelectionReport:
    precision: list[float] = []
    recall: list[float] = []
    f1: list[float] = []
    committed_gold: list[float] = []
    sizes: list[float] = []
    abstained: list[float] = []
    selected: list[tuple[str, ...]] = []
    n_normalised = 0
    for case, window in zip(cases, windows, strict=True):
        sel = _select(window, strategy, max_k, rel, gap_ratio, min_score)
        selected.append(sel)
        n_normalised += needs_normalising(window)
        if not case.gold:
            abstained.append(float(not sel))
            continue
        shown = set(case.gold) & {doc for doc, _ in window}
        if not shown:
            continue  # a retrieval miss: not the selector's to answer for
        hits = len(set(sel) & shown)
        r = hits / len(shown)
        recall.append(r)
        sizes.append(float(len(sel)))
        committed_gold.append(float(hits > 0))
        if sel:
            p = hits / len(sel)
            precision.append(p)
            f1.append(2 * p * r / (p + r) if p + r else 0.0)
        else:
            f1.append(0.0)
    n_gold = sum(1 for c in cases if c.gold)
    rule = NORMALISED_RULE if n_normalised else RAW_RULE
    return SelectionReport(
        selection_precision=_mean(precision), selection_recall=_mean(recall),
        selection_f1=_mean(f1), conditional_commit_rate=_mean(committed_gold),
        n_gold_retrieved=len(recall), abstention_accuracy=_mean(abstained),
        mean_selected_size=_mean(sizes), n_cases=len(cases), n_gold=n_gold,
        n_abstention=len(cases) - n_gold, strategy=strategy, mode=mode, k=k, max_k=max_k,
        rel=float(rel), gap_ratio=float(gap_ratio),
        min_score=None if min_score is None else float(min_score), score_rule=rule,
        n_normalised=n_normalised, selected=tuple(selected), degraded=degraded,
        identity=identity, notes=notes)


def evaluate_selection(source: Any, cases: Sequence[DiscoveryCase], *,
                       strategy: str = "conservative", mode: str = DFLT_MODE, k: int = 10,
                       max_k: int = 3, rel: float = 0.9, gap_ratio: float = 0.5,
                       min_score: float | None = None, embedder: Embedder | None = None,
                       rerank: CrossEncoder | None = None,
                       search: SearchSettings | Mapping[str, Any] | None = None) -> SelectionReport:
    """Retrieve ``k`` candidates per case once, commit with `select`, and score the commit.

    Hold ``k`` equal to the cutoff used with `evaluate_discovery` to compare
    the two stages on the same candidates.
    """
    cases = _check_cases(cases)
    _check_k(k)
    _check_config(strategy, max_k, rel, gap_ratio, min_score)
    searcher, rankings = _searched(source, cases, k, mode=mode, embedder=embedder,
                                   rerank=rerank, search=search)
    return _score(cases, [tuple(r[:k]) for r in rankings], strategy, k, max_k, rel, gap_ratio,
                  min_score, searcher.mode, searcher.degraded, dict(searcher.identity),
                  tuple(searcher.notes))


# -- the sweep ----------------------------------------------------------------------


@dataclass(frozen=True)
class SelectionGridPoint(Result):
    """One cell of a sweep: the swept knobs and the report they scored."""

    max_k: int
    rel: float
    min_score: float | None
    report: SelectionReport

    @property
    def params(self) -> dict[str, Any]:
        """The swept knobs as a plain dict."""
        return {"max_k": self.max_k, "rel": self.rel, "min_score": self.min_score}

    def to_dict(self) -> dict[str, Any]:
        """The params and the full report."""
        return {**self.params, "report": self.report.to_dict()}


def _tie_key(p: SelectionGridPoint) -> tuple[float, int, float]:
    """Toward the cheaper, tighter commit: smaller mean size, smaller max_k, larger rel."""
    size = p.report.mean_selected_size
    return (math.inf if size is None else size, p.max_k, -p.rel)


def _better(metric: str, minimize: bool | None) -> bool:
    return metric in _MINIMIZE if minimize is None else bool(minimize)


@dataclass(frozen=True)
class SelectionSweep(Result):
    """The outcome of `sweep_selector`: one `SelectionGridPoint` per grid cell, grid order.

    Every point shares the cases, the retrieval ``mode``, the candidate
    depth ``k`` and the ``strategy``; only ``max_k``, ``rel`` and
    ``min_score`` differ. `best` picks one setting by a metric, `frontier`
    gives the precision/recall trade-off, `table` renders the grid.
    """

    points: tuple[SelectionGridPoint, ...]
    objective: str
    strategy: str
    mode: str
    k: int
    n_cases: int
    n_gold: int
    n_abstention: int
    n_gold_retrieved: int
    gap_ratio: float = 0.5
    degraded: bool = False
    identity: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def vd_degraded(self) -> bool:
        """Seed 004's name for `degraded`."""
        return self.degraded

    def best(self, metric: str | None = None, *, minimize: bool | None = None
             ) -> SelectionGridPoint:
        """The point that optimises ``metric`` (default `objective`).

        Only ``mean_selected_size`` is minimised unless ``minimize`` says
        otherwise. Ties (within 1e-12) go to the cheaper, tighter commit:
        smaller ``mean_selected_size``, then smaller ``max_k``, then larger
        ``rel``, then the first in grid order. Points where the metric is
        undefined (``None``) are never chosen; if it is undefined at every
        point the call is refused (`InputError`), as it is for an empty
        sweep or an unknown metric.
        """
        name = _check_metric(self.objective if metric is None else metric)
        if not self.points:
            raise InputError("the sweep has no points", field="points")
        scored = [(p, p.report.metric(name)) for p in self.points]
        defined = [(p, v) for p, v in scored if v is not None]
        if not defined:
            raise InputError(f"{name} is undefined at every grid point (e.g. no abstention "
                             "case, or no gold case reached the candidates)", field="metric")
        sign = -1.0 if _better(name, minimize) else 1.0
        top = max(sign * v for _, v in defined)
        tied = [p for p, v in defined if sign * v >= top - _TIE]
        return min(tied, key=_tie_key)

    def frontier(self, *, x: str = "selection_recall", y: str = "selection_precision"
                 ) -> list[SelectionGridPoint]:
        """The Pareto-optimal points trading ``x`` against ``y``, sorted by ``x`` ascending.

        Both axes are maximised, except ``mean_selected_size`` (smaller is
        better). A point is on the frontier when no other point is at least
        as good on both axes and strictly better on one; points with equal
        values on both axes appear once, as the one `best`'s tie-break
        prefers. Points where either axis is undefined are left out.
        """
        _check_metric(x, "x")
        _check_metric(y, "y")
        sx = -1.0 if x in _MINIMIZE else 1.0
        sy = -1.0 if y in _MINIMIZE else 1.0
        pts: dict[tuple[float, float], SelectionGridPoint] = {}
        for p in self.points:
            vx, vy = p.report.metric(x), p.report.metric(y)
            if vx is None or vy is None:
                continue
            key = (round(sx * vx, 12), round(sy * vy, 12))
            if key not in pts or _tie_key(p) < _tie_key(pts[key]):
                pts[key] = p
        front = [(kx, ky, p) for (kx, ky), p in pts.items()
                 if not any(ox >= kx and oy >= ky and (ox > kx or oy > ky) for ox, oy in pts)]
        front.sort(key=lambda t: (sx * t[0], t[1]))
        return [p for _, _, p in front]

    def table(self, *, sort_by: str | None = None) -> str:
        """The grid as a text table, one row per setting, best ``sort_by`` first.

        ``sort_by`` defaults to `objective`; undefined values sort last. The
        ``min_score`` column appears only when some cell sets a floor.
        """
        name = _check_metric(self.objective if sort_by is None else sort_by)
        sign = -1.0 if name in _MINIMIZE else 1.0

        def order(p: SelectionGridPoint) -> tuple[int, float, tuple[float, int, float]]:
            v = p.report.metric(name)
            return (v is None, 0.0 if v is None else -sign * v, _tie_key(p))

        floors = any(p.min_score is not None for p in self.points)
        head = ["max_k", "rel"] + (["min_score"] if floors else []) + [
            "P", "R", "F1", "commit", "abstain", "size"]
        rows = []
        for p in sorted(self.points, key=order):
            r = p.report
            cells = [str(p.max_k), f"{p.rel:g}"]
            if floors:
                cells.append("-" if p.min_score is None else f"{p.min_score:g}")
            cells += [_fmt(r.selection_precision), _fmt(r.selection_recall),
                      _fmt(r.selection_f1), _fmt(r.conditional_commit_rate),
                      _fmt(r.abstention_accuracy), _fmt(r.mean_selected_size, 2)]
            rows.append(cells)
        widths = [max(len(c) for c in col) for col in zip(head, *rows, strict=True)]
        lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True))
                 for r in [head, *rows]]
        flag = ", degraded" if self.degraded else ""
        title = (f"selector sweep ({self.strategy}, {self.mode}{flag}, k={self.k}; sorted by "
                 f"{name}; {self.n_gold_retrieved} of {self.n_gold} gold cases retrieved, "
                 f"{self.n_abstention} abstention)")
        return "\n".join([title, *lines])

    def to_dict(self) -> dict[str, Any]:
        """The config, the counts, every point and the best point (``None`` if undefined)."""
        try:
            best: dict[str, Any] | None = self.best().to_dict()
        except InputError:
            best = None
        out = {f: v for f, v in super().to_dict().items() if f != "points"}
        return {**out, "points": [p.to_dict() for p in self.points], "best": best}


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _grid(values: Sequence[Any], name: str) -> tuple[Any, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
        raise InputError(f"{name} must be a non-empty list, got {values!r}", field=name)
    return tuple(values)


def sweep_rankings(cases: Sequence[DiscoveryCase], rankings: Sequence[Ranking], *,
                   strategy: str = "conservative", k: int = 10,
                   max_k_grid: Sequence[int] = DFLT_SWEEP_MAX_K,
                   rel_grid: Sequence[float] = DFLT_SWEEP_REL,
                   min_score_grid: Sequence[float | None] = DFLT_SWEEP_MIN_SCORE,
                   gap_ratio: float = 0.5, objective: str = DFLT_SWEEP_OBJECTIVE,
                   mode: str = "callable", degraded: bool = False,
                   identity: dict[str, Any] | None = None, notes: Sequence[str] = (),
                   executor: Executor | None = None) -> SelectionSweep:
    """`sweep_selector` over precomputed ``rankings``: every grid cell, no search.

    ``executor`` (`rankproof.engine`; None: this process) scores the cells, in
    consecutive shards (two per worker); the points come back in grid order, the same
    whichever engine scored them."""
    cases = _check_cases(cases)
    if len(rankings) != len(cases):
        raise InputError(f"{len(rankings)} rankings for {len(cases)} cases; one per case",
                         field="rankings")
    _check_k(k)
    _check_metric(objective, "objective")
    grid = [(m, r, s) for m in _grid(max_k_grid, "max_k_grid")
            for r in _grid(rel_grid, "rel_grid") for s in _grid(min_score_grid, "min_score_grid")]
    for m, r, s in grid:
        _check_config(strategy, m, r, gap_ratio, s)
    windows = [tuple(rk[:k]) for rk in rankings]
    ident = dict(identity or {})
    common = (tuple(cases), tuple(windows), strategy, k, gap_ratio, mode, degraded, ident,
              tuple(notes))
    if executor is None or len(grid) < 2:
        points = _score_cells((common, tuple(grid)))
    else:
        size = max(1, -(-len(grid) // (2 * executor.workers)))
        points = tuple(p for part in executor.map(
            _score_cells, [(common, tuple(cells)) for cells in shards(grid, size)])
            for p in part)
    first = points[0].report
    return SelectionSweep(points=points, objective=objective, strategy=strategy, mode=mode, k=k,
                          n_cases=first.n_cases, n_gold=first.n_gold,
                          n_abstention=first.n_abstention,
                          n_gold_retrieved=first.n_gold_retrieved, gap_ratio=float(gap_ratio),
                          degraded=degraded, identity=ident, notes=tuple(notes))


def _score_cells(item: tuple[tuple[Any, ...], tuple[tuple[int, float, float | None], ...]]
                 ) -> tuple[SelectionGridPoint, ...]:
    """Score grid cells (an engine task: module-level, so workers import it)."""
    (cases, windows, strategy, k, gap_ratio, mode, degraded, ident, notes), cells = item
    return tuple(SelectionGridPoint(m, float(r), None if s is None else float(s),
                                    _score(cases, windows, strategy, k, m, r, gap_ratio, s,
                                           mode, degraded, ident, notes))
                 for m, r, s in cells)


def sweep_selector(source: Any, cases: Sequence[DiscoveryCase], *,
                   strategy: str = "conservative", mode: str = DFLT_MODE, k: int = 10,
                   max_k_grid: Sequence[int] = DFLT_SWEEP_MAX_K,
                   rel_grid: Sequence[float] = DFLT_SWEEP_REL,
                   min_score_grid: Sequence[float | None] = DFLT_SWEEP_MIN_SCORE,
                   gap_ratio: float = 0.5, objective: str = DFLT_SWEEP_OBJECTIVE,
                   embedder: Embedder | None = None, rerank: CrossEncoder | None = None,
                   executor: Executor | None = None,
                   search: SearchSettings | Mapping[str, Any] | None = None) -> SelectionSweep:
    """Score the selector over ``max_k_grid × rel_grid × min_score_grid``.

    The knobs do not change the ranking, so retrieval runs **once** for the
    whole grid and every cell is scored with `evaluate_selection`'s exact
    definitions on the same candidates. With ``score_gap`` the ``max_k`` and
    ``rel`` axes do not apply and give repeated rows. ``executor`` scores the cells
    (`sweep_rankings`); the search itself runs here, once.
    """
    cases = _check_cases(cases)
    _check_k(k)
    _check_metric(objective, "objective")
    for m in _grid(max_k_grid, "max_k_grid"):
        for r in _grid(rel_grid, "rel_grid"):
            for s in _grid(min_score_grid, "min_score_grid"):
                _check_config(strategy, m, r, gap_ratio, s)
    searcher, rankings = _searched(source, cases, k, mode=mode, embedder=embedder,
                                   rerank=rerank, search=search)
    return sweep_rankings(cases, rankings, strategy=strategy, k=k, max_k_grid=max_k_grid,
                          rel_grid=rel_grid, min_score_grid=min_score_grid,
                          gap_ratio=gap_ratio, objective=objective, mode=searcher.mode,
                          degraded=searcher.degraded, identity=dict(searcher.identity),
                          notes=searcher.notes, executor=executor)
