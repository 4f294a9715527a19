"""`cross_check`: every measure computed a second time by an independent evaluator.

Seed 003's TREC cross-check: the headline numbers are recomputed with
ir_measures (or pytrec_eval), both metric sets are kept — per topic and
aggregated — with their absolute differences, and the check fails when any
difference exceeds the tolerance. What both evaluators are given is pinned
down first, so that a difference means a different computation and not a
different input:

* **one ranking.** Tied scores are ordered differently by different
  evaluators (trec_eval: docid descending; ir_measures' ``msmarco`` and
  ``judged`` providers otherwise). The backend therefore receives the run
  ranked once by rankproof's order (`rankproof.data.canonical_run`: trec_eval's
  order, or the rank column with ``order="rank"``) with every score replaced by
  ``1/rank``, so there is nothing left for it to break.
* **one topic set.** rankproof evaluates every qrels topic (a topic missing
  from the run scores 0, trec_eval ``-c``); a backend evaluates what it sees.
  Topics rankproof scored that the backend did not return are filled on the
  backend's side with what an empty ranking scores — 0, except ``NumRel``, which
  is the backend's own qrels count — and listed (``zero_filled``); topics the
  backend returned that rankproof did not score are ignored and listed
  (``backend_only``).
* **one aggregate.** The backend's per-topic values are aggregated the way
  rankproof aggregates the measure (mean, or sum for the ``Num*`` counts).

A measure the backend cannot compute is listed under ``unchecked`` with the
reason. ``backend="auto"`` uses ir_measures when it is installed, else
pytrec_eval, else records the backend as ``unavailable`` (the result's
``passed`` is then None: nothing was checked, nothing failed); naming a
backend that is not installed is a `MissingExtraError`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError, MissingExtraError
from rankproof.data import Order, Qrels, Run, canonical_run, load_qrels, load_run, ranked_order
from rankproof.measures._crossbackends import (
    BACKENDS,
    RUNNERS,
    backend_version,
    effective_rel,
    load_backend,
)
from rankproof.measures._evaluate import evaluate, resolve_measures
from rankproof.measures._measure import Measure
from rankproof.measures._perquery import PerQuery, TopicPolicy

Backend = Literal["auto", "ir-measures", "pytrec-eval"]
DEFAULT_TOLERANCE = 1e-4
CROSS_CHECK_VERSION = 1

GAIN_CONVENTION = (
    "nDCG: linear gain = the raw label, discount log2(rank + 1), ideal ranking from every "
    "label > 0, relevance level ignored (trec_eval); nDCG(gain=exp): gain 2^label - 1")
RANKING = ("one ranking for both evaluators: rankproof's order (score descending, ties by "
           "docid descending, as trec_eval; or the rank column with order='rank'), handed to "
           "the backend as score = 1/rank")


@dataclass(frozen=True)
class RunCrossCheck:
    """One run checked by one backend: both value sets over rankproof's topics."""

    run: str
    qids: tuple[str, ...]
    checked: tuple[str, ...]
    backend_names: Mapping[str, str]
    unchecked: Mapping[str, str]
    rankproof: Mapping[str, npt.NDArray[np.float64]]
    backend: Mapping[str, npt.NDArray[np.float64]]
    aggregate: Mapping[str, str]
    """measure → ``mean`` or ``sum`` (how both sides are aggregated)."""
    rankproof_means: Mapping[str, float]
    relevance: Mapping[str, int | None]
    """measure → the relevance level it counts at (None: graded labels)."""
    zero_filled: tuple[str, ...] = ()
    backend_only: tuple[str, ...] = ()
    tied_pairs: int = 0
    tolerance: float = DEFAULT_TOLERANCE

    def backend_mean(self, measure: str) -> float:
        values = self.backend[measure]
        if self.aggregate[measure] == "sum":
            return float(values.sum())
        return float(values.mean()) if len(values) else 0.0

    def deltas(self, measure: str) -> npt.NDArray[np.float64]:
        """|rankproof − backend| per topic (inf where either side is not a number)."""
        d = np.abs(self.rankproof[measure] - self.backend[measure])
        return np.where(np.isnan(d), np.inf, d)

    def mean_delta(self, measure: str) -> float:
        d = abs(self.rankproof_means[measure] - self.backend_mean(measure))
        return math.inf if math.isnan(d) else d

    @property
    def max_delta(self) -> float | None:
        """The largest difference, per topic or of the aggregates (None: nothing checked)."""
        found = [max(float(self.deltas(m).max(initial=0.0)), self.mean_delta(m))
                 for m in self.checked]
        return max(found) if found else None

    @property
    def worst(self) -> dict[str, Any] | None:
        best: tuple[float, str, str] | None = None
        for m in self.checked:
            d = self.deltas(m)
            if len(d):
                i = int(np.argmax(d))
                if best is None or d[i] > best[0]:
                    best = (float(d[i]), m, self.qids[i])
            md = self.mean_delta(m)
            if best is None or md > best[0]:
                best = (md, m, "all")
        if best is None:
            return None
        return {"delta": best[0], "measure": best[1], "topic": best[2]}

    @property
    def failed(self) -> tuple[str, ...]:
        """The measures with a difference above the tolerance."""
        return tuple(m for m in self.checked
                     if self.mean_delta(m) > self.tolerance
                     or bool((self.deltas(m) > self.tolerance).any()))

    @property
    def passed(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict[str, Any]:
        means = {m: self.rankproof_means[m] for m in self.checked}
        backend_means = {m: self.backend_mean(m) for m in self.checked}
        return {
            "run": self.run,
            "passed": self.passed,
            "max_delta": self.max_delta,
            "worst": self.worst,
            "failed": list(self.failed),
            "checked": list(self.checked),
            "backend_names": dict(self.backend_names),
            "unchecked": dict(self.unchecked),
            "relevance": {m: self.relevance[m] for m in (*self.checked, *self.unchecked)},
            "aggregate": dict(self.aggregate),
            "coverage": {"topics": len(self.qids),
                         "backend_returned": len(self.qids) - len(self.zero_filled),
                         "zero_filled": list(self.zero_filled),
                         "backend_only": list(self.backend_only)},
            "tied_pairs": self.tied_pairs,
            "means": {"rankproof": means, "backend": backend_means,
                      "delta": {m: self.mean_delta(m) for m in self.checked}},
            "per_topic": {
                "qids": list(self.qids),
                "rankproof": {m: self.rankproof[m].tolist() for m in self.checked},
                "backend": {m: self.backend[m].tolist() for m in self.checked},
                "delta": {m: self.deltas(m).tolist() for m in self.checked},
            },
        }


@dataclass(frozen=True)
class CrossCheck:
    """The cross-check of one or more runs against one backend (see the module docstring)."""

    backend: str
    """``ir-measures``, ``pytrec-eval``, or ``unavailable``."""
    requested: str
    backend_version: str | None
    tolerance: float
    rel_level: int
    topics: str
    order: str
    qrels: Mapping[str, Any]
    runs: tuple[RunCrossCheck, ...] = ()
    backend_qrels: Mapping[str, Any] | None = None
    note: str | None = None
    labels: tuple[int, ...] = field(default=())

    @property
    def available(self) -> bool:
        return self.backend != "unavailable"

    @property
    def passed(self) -> bool | None:
        """True when every delta is within the tolerance; None when no backend ran."""
        if not self.available:
            return None
        return all(r.passed for r in self.runs)

    @property
    def max_delta(self) -> float | None:
        found = [d for d in (r.max_delta for r in self.runs) if d is not None]
        return max(found) if found else None

    @property
    def status(self) -> str:
        return {None: "unavailable", True: "passed", False: "failed"}[self.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": CROSS_CHECK_VERSION,
            "backend": self.backend,
            "backend_version": self.backend_version,
            "requested": self.requested,
            "status": self.status,
            "passed": self.passed,
            "tolerance": self.tolerance,
            "max_delta": self.max_delta,
            "relevance": {"rel_level": self.rel_level, "labels": list(self.labels),
                          "rule": "binary measures count labels >= the level (their own "
                                  "rel= first); nDCG uses the graded labels"},
            "gain": GAIN_CONVENTION,
            "ranking": RANKING,
            "topics": {"policy": self.topics,
                       "alignment": "topics the backend skipped are filled on its side with "
                                    "an empty ranking's value (0; NumRel: its qrels count)"},
            "order": self.order,
            "qrels": dict(self.qrels),
            "backend_qrels": dict(self.backend_qrels) if self.backend_qrels else None,
            "note": self.note,
            "runs": [r.to_dict() for r in self.runs],
        }


def _pick_backend(requested: str) -> str | None:
    if requested not in ("auto", *BACKENDS):
        raise InputError(f"cross-check backend must be one of auto, {', '.join(BACKENDS)}; "
                         f"got {requested!r}", field="backend")
    if requested != "auto":
        load_backend(requested)  # MissingExtraError when it is not installed
        return requested
    for name in BACKENDS:
        try:
            load_backend(name)
        except MissingExtraError:
            continue
        return name
    return None


def _qrels_source(qrels: Qrels) -> dict[str, Any]:
    return {"path": qrels.source, "digest": qrels.digest}


def _fill_value(m: Measure, qid: str, qrels_dict: Mapping[str, Mapping[str, int]],
                rel: int | None) -> float:
    """What an empty ranking scores: 0, except NumRel (the qrels count at the level)."""
    if m.family != "NumRel":
        return 0.0
    level = 1 if rel is None else rel
    return float(sum(1 for v in qrels_dict.get(qid, {}).values() if v >= level))


def _check_run(
    pq: PerQuery, run: Run, backend: str, qrels_dict: Mapping[str, Mapping[str, int]],
    order: Order, tolerance: float,
) -> RunCrossCheck:
    measures = pq.measures
    ranked = ranked_order(run, order)
    canonical = canonical_run(run, order)
    said = RUNNERS[backend](qrels_dict, canonical.to_dict(), measures, pq.rel_level)
    wanted = set(pq.qids)
    zero_filled: set[str] = set()
    seen: set[str] = set()
    rankproof: dict[str, npt.NDArray[np.float64]] = {}
    backend_values: dict[str, npt.NDArray[np.float64]] = {}
    relevance = {str(m): effective_rel(m, pq.rel_level) for m in measures}
    for m in measures:
        key = str(m)
        if key not in said.values:
            continue
        per_topic = said.values[key]
        seen.update(per_topic)
        column = np.empty(len(pq.qids), dtype=np.float64)
        for i, qid in enumerate(pq.qids):
            if qid in per_topic:
                column[i] = per_topic[qid]
            else:
                zero_filled.add(qid)
                column[i] = _fill_value(m, qid, qrels_dict, relevance[key])
        rankproof[key] = pq.column(m).astype(np.float64)
        backend_values[key] = column
    checked = tuple(str(m) for m in measures if str(m) in backend_values)
    return RunCrossCheck(
        run=pq.run_name, qids=pq.qids, checked=checked, backend_names=said.names,
        unchecked={m: said.unchecked[m] for m in (str(x) for x in measures)
                   if m in said.unchecked},
        rankproof=rankproof, backend=backend_values,
        aggregate={str(m): m.definition.aggregate for m in measures},
        rankproof_means={str(m): pq.aggregate(m) for m in measures},
        relevance=relevance,
        zero_filled=tuple(q for q in pq.qids if q in zero_filled),
        backend_only=tuple(sorted(seen - wanted)),
        tied_pairs=ranked.n_ties, tolerance=tolerance,
    )


def cross_check(
    qrels: Qrels | Any,
    runs: Run | Iterable[Run] | Any,
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    backend: Backend | str = "auto",
    tolerance: float = DEFAULT_TOLERANCE,
    rel_level: int = 1,
    topics: TopicPolicy = "complete",
    order: Order = "score",
    results: Sequence[PerQuery] | None = None,
    backend_qrels: Qrels | Any | None = None,
) -> CrossCheck:
    """Evaluate ``runs`` with rankproof and with a second evaluator; compare every value.

    ``results`` are rankproof's own `PerQuery` results for ``runs`` (one per
    run, in order) when the caller already has them; otherwise the runs are
    evaluated here with ``measures``, ``rel_level``, ``topics`` and ``order``.
    ``qrels``, ``runs`` and ``backend_qrels`` are what `load_qrels` / `load_run`
    read (paths, objects, dicts). ``backend_qrels`` gives the backend other judgments than
    rankproof's — it
    exists to plant a disagreement in a test and is recorded when used.
    Returns a `CrossCheck`; a failed check is a result (``passed`` False),
    not an exception.
    """
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) \
            or not math.isfinite(tolerance) or tolerance < 0:
        raise InputError(f"tolerance must be a finite number >= 0, got {tolerance!r}",
                         field="tolerance")
    qrels = load_qrels(qrels)
    if isinstance(runs, Run | Mapping | str) or hasattr(runs, "__fspath__"):
        run_list = [load_run(runs)]
    else:
        run_list = [load_run(r) for r in runs]
    if results is None:
        chosen = resolve_measures(measures)
        results = [evaluate(qrels, r, chosen, rel_level=rel_level, topics=topics, order=order)
                   for r in run_list]
    if len(results) != len(run_list):
        raise InputError(f"results: {len(results)} given for {len(run_list)} runs",
                         field="results")
    picked = _pick_backend(str(backend))
    first = results[0] if results else None
    level = first.rel_level if first is not None else rel_level
    labels = tuple(int(v) for v in np.unique(qrels.rels))
    common: dict[str, Any] = dict(
        requested=str(backend), tolerance=float(tolerance), rel_level=level,
        topics=first.topics if first is not None else topics, order=str(order),
        qrels=_qrels_source(qrels), labels=labels,
    )
    if picked is None:
        return CrossCheck(backend="unavailable", backend_version=None, **common,
                          note="no second evaluator is installed (pip install "
                               "'rankproof[crosscheck]'); nothing was cross-checked")
    other = load_qrels(backend_qrels) if backend_qrels is not None else qrels
    qrels_dict = other.to_dict()
    checked = tuple(_check_run(pq, r, picked, qrels_dict, order, float(tolerance))
                    for pq, r in zip(results, run_list, strict=True))
    return CrossCheck(
        backend=picked, backend_version=backend_version(picked), **common, runs=checked,
        backend_qrels=_qrels_source(other) if backend_qrels is not None else None,
    )
