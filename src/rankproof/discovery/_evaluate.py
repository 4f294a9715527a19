"""Discovery evaluation: the retrieval measures, and *why* a number is what it is.

One nDCG hides what matters when the job is to find a capability: did the
right item come first, come low, or not at all, and does the system decline
when nothing applies? `evaluate_discovery` answers with the standard
measures (computed by rankproof's measures engine, never a second table) and
a failure taxonomy at the primary cutoff:

* a gold case is ``hit_rank_1`` (a gold id ranked first),
  ``surfaced_low_rank`` (best gold id at rank 2..k) or ``retrieval_miss``
  (no gold id in the top k);
* an abstention case (empty gold) is ``abstention_ok`` (the top score is
  below ``abstain_threshold``, or nothing came back), ``false_action`` (the
  top score reaches it) or, without a threshold, ``abstention_unscored``:
  a ranking alone cannot say "nothing applies", so it is counted, not scored.

The threshold is a retrieval-side proxy for abstention; the committing
selector is scored by `rankproof.discovery.evaluate_selection`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankproof._errors import InputError
from rankproof.data import Run
from rankproof.discovery._cases import DiscoveryCase, case_id, check_cases, to_qrels
from rankproof.discovery._defaults import DFLT_K_VALUES, DFLT_METRICS, DFLT_MODE, METRIC_FAMILIES
from rankproof.discovery._source import (
    Ranking,
    Searcher,
    SearchSettings,
    as_searcher,
    rank_run,
    retrieve,
)
from rankproof.measures import evaluate
from rankproof.retrieval import CrossEncoder, Embedder
from rankproof.stats import Result

#: The failure classes, gold cases first; every report counts all six (zeros included).
GOLD_CLASSES: tuple[str, ...] = ("hit_rank_1", "surfaced_low_rank", "retrieval_miss")
ABSTENTION_CLASSES: tuple[str, ...] = ("abstention_ok", "false_action", "abstention_unscored")
FAILURE_CLASSES: tuple[str, ...] = GOLD_CLASSES + ABSTENTION_CLASSES


@dataclass(frozen=True)
class RetrievalReport(Result):
    """The retrieval measures over the gold-bearing cases.

    ``metrics`` holds the mean of each measure, keyed by its rankproof name
    (``"nDCG@10"``, ``"R@5"``, ``"RR@1"`` …); ``per_case`` the value of each
    measure per case id (``"q{index}"``, the case's position), so two
    configurations can be compared case by case with a paired test.
    """

    metrics: dict[str, float]
    per_case: dict[str, dict[str, float]]
    measures: tuple[str, ...]
    k_values: tuple[int, ...]
    primary_k: int
    n_queries: int
    mode: str
    degraded: bool = False
    identity: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def primary(self) -> float | None:
        """The headline: mean nDCG at ``primary_k`` (``None`` when nDCG was not asked for)."""
        return self.metrics.get(f"nDCG@{self.primary_k}")

    @property
    def vd_degraded(self) -> bool:
        """Seed 004's name for `degraded`."""
        return self.degraded

    def to_dict(self) -> dict[str, Any]:
        """Every field, plus the headline ``primary``."""
        return {**super().to_dict(), "primary": self.primary}


@dataclass(frozen=True)
class DiscoveryReport(Result):
    """The outcome of `evaluate_discovery`: measures, failure taxonomy and abstention.

    ``retrieval`` is ``None`` when no case carries gold (nothing to measure);
    the taxonomy is still given. ``failure_classes`` counts each class of
    `FAILURE_CLASSES`; ``case_classes`` is the class of every case, in case
    order. ``abstention_accuracy`` is the share of abstention cases classed
    ``abstention_ok``, defined only with an ``abstain_threshold`` and at
    least one abstention case. ``mode``, ``degraded``, ``identity`` and
    ``notes`` record what was searched, so a number is never read against
    another configuration.
    """

    retrieval: RetrievalReport | None
    failure_classes: dict[str, int]
    n_cases: int
    n_gold: int
    n_abstention: int
    primary_k: int = 10
    abstention_accuracy: float | None = None
    mode: str = DFLT_MODE
    degraded: bool = False
    case_classes: tuple[str, ...] = ()
    abstain_threshold: float | None = None
    identity: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def primary(self) -> float | None:
        """Mean nDCG at ``primary_k`` over the gold cases (``None`` without any)."""
        return None if self.retrieval is None else self.retrieval.primary

    @property
    def metrics(self) -> dict[str, float]:
        """The mean of each measure (empty without gold cases)."""
        return {} if self.retrieval is None else dict(self.retrieval.metrics)

    @property
    def vd_degraded(self) -> bool:
        """Seed 004's name for `degraded`."""
        return self.degraded

    def to_dict(self) -> dict[str, Any]:
        """Every field, plus the headline ``primary``."""
        return {**super().to_dict(), "primary": self.primary}

    def __str__(self) -> str:
        head = "n/a (no gold case)" if self.primary is None else f"{self.primary:.4f}"
        counts = ", ".join(f"{c} {n}" for c, n in self.failure_classes.items() if n)
        flag = " [degraded]" if self.degraded else ""
        return (f"discovery ({self.mode}{flag}): nDCG@{self.primary_k} {head}; "
                f"{self.n_cases} cases ({self.n_gold} gold, {self.n_abstention} abstention): "
                f"{counts}")


# -- validation ---------------------------------------------------------------


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}", field=name)
    return value


def _check_k(k_values: Sequence[int], primary_k: int) -> tuple[int, ...]:
    if isinstance(k_values, str | bytes) or not isinstance(k_values, Sequence) or not k_values:
        raise InputError(f"k_values must be a non-empty list of cutoffs, got {k_values!r}",
                         field="k_values")
    ks = {_positive_int(k, "k_values") for k in k_values}
    ks.add(_positive_int(primary_k, "primary_k"))
    return tuple(sorted(ks))


def _families(metrics: Sequence[str]) -> tuple[str, ...]:
    """The measure families of ``metrics`` (seed names or rankproof families), in order."""
    if isinstance(metrics, str | bytes) or not isinstance(metrics, Sequence) or not metrics:
        raise InputError(f"metrics must be a non-empty list, got {metrics!r}", field="metrics")
    by_family = {v: v for v in METRIC_FAMILIES.values()}
    out: list[str] = []
    for m in metrics:
        fam = METRIC_FAMILIES.get(m) if isinstance(m, str) else None
        fam = fam or (by_family.get(m) if isinstance(m, str) else None)
        if fam is None:
            raise InputError(f"unknown metric {m!r}; choose from "
                             f"{', '.join(METRIC_FAMILIES)} (or {', '.join(by_family)})",
                             field="metrics")
        if fam not in out:
            out.append(fam)
    return tuple(out)


def _check_cases(cases: Sequence[DiscoveryCase]) -> list[DiscoveryCase]:
    if isinstance(cases, str | bytes) or not isinstance(cases, Sequence):
        raise InputError(f"cases must be a list of DiscoveryCase, got {type(cases).__name__}",
                         field="cases")
    out = list(cases)
    if not out:
        raise InputError("no cases to evaluate", field="cases")
    for i, c in enumerate(out):
        if not isinstance(c, DiscoveryCase):
            raise InputError(f"case {i} is a {type(c).__name__}, not a DiscoveryCase",
                             field="cases")
    return out


def _check_rankings(cases: Sequence[DiscoveryCase], rankings: Sequence[Ranking]) -> None:
    if len(rankings) != len(cases):
        raise InputError(f"{len(rankings)} rankings for {len(cases)} cases; one per case",
                         field="rankings")


def _searched(source: Any, cases: Sequence[DiscoveryCase], depth: int, *, mode: str,
              embedder: Embedder | None, rerank: CrossEncoder | None,
              search: SearchSettings | Mapping[str, Any] | None = None
              ) -> tuple[Searcher, list[Ranking]]:
    """The searcher and its one retrieval pass, after refusing gold ids it cannot hold."""
    searcher = as_searcher(source, mode=mode, embedder=embedder, rerank=rerank, search=search)
    ids = searcher.ids
    if ids is not None:
        check_cases(ids, cases)
    return searcher, retrieve(searcher, [c.query for c in cases], depth)


# -- scoring over precomputed rankings ----------------------------------------


def _run(cases: Sequence[DiscoveryCase], rankings: Sequence[Ranking]) -> Run | None:
    """The gold cases' rankings as a `Run` in exactly the searcher's order (`rank_run`:
    trec_eval's tie-break cannot reorder them); ``None`` when none retrieved anything."""
    table = {case_id(i): ranking for i, (case, ranking) in enumerate(zip(cases, rankings,
                                                                        strict=True))
             if case.gold and ranking}
    return rank_run(table, name="discovery") if table else None


def score_retrieval(cases: Sequence[DiscoveryCase], rankings: Sequence[Ranking], *,
                    k_values: Sequence[int] = DFLT_K_VALUES, primary_k: int = 10,
                    metrics: Sequence[str] = DFLT_METRICS, mode: str = "callable",
                    degraded: bool = False, identity: Mapping[str, Any] | None = None,
                    notes: Sequence[str] = ()) -> RetrievalReport:
    """The retrieval measures of precomputed ``rankings`` (one per case, best first).

    Refuses (`InputError`) a case set without any gold case: a measure needs
    a relevant item to exist.
    """
    cases = _check_cases(cases)
    _check_rankings(cases, rankings)
    ks = _check_k(k_values, primary_k)
    fams = _families(metrics)
    queries, qrels = to_qrels(cases)
    names = [f"{fam}@{k}" for fam in fams for k in ks]
    run = _run(cases, rankings)
    all_notes = list(notes)
    if run is None:
        # Nothing retrieved for any gold case: trec_eval -c scores every topic 0, and a
        # Run cannot be empty, so the zeros are written here rather than computed.
        per_case = {n: dict.fromkeys(queries, 0.0) for n in names}
        means = dict.fromkeys(names, 0.0)
        all_notes.append("no gold case retrieved anything: every measure is 0")
    else:
        per_query = evaluate(qrels, run, names)
        per_case = {n: per_query.scores(n) for n in names}
        means = {n: per_query.mean(n) for n in names}
    return RetrievalReport(
        metrics=means, per_case=per_case, measures=tuple(names), k_values=ks, primary_k=primary_k,
        n_queries=len(queries), mode=mode, degraded=degraded, identity=dict(identity or {}),
        notes=tuple(all_notes))


def classify(case: DiscoveryCase, ranking: Ranking, *, k: int,
             abstain_threshold: float | None = None) -> str:
    """The failure class of one case at cutoff ``k`` (see the module docstring)."""
    if case.gold:
        gold = set(case.gold)
        rank = next((r for r, (doc, _) in enumerate(ranking[:k], 1) if doc in gold), None)
        if rank is None:
            return "retrieval_miss"
        return "hit_rank_1" if rank == 1 else "surfaced_low_rank"
    if abstain_threshold is None:
        return "abstention_unscored"
    if not ranking or ranking[0][1] < abstain_threshold:
        return "abstention_ok"
    return "false_action"


def score_discovery(cases: Sequence[DiscoveryCase], rankings: Sequence[Ranking], *,
                    k_values: Sequence[int] = DFLT_K_VALUES, primary_k: int = 10,
                    metrics: Sequence[str] = DFLT_METRICS,
                    abstain_threshold: float | None = None, mode: str = "callable",
                    degraded: bool = False, identity: Mapping[str, Any] | None = None,
                    notes: Sequence[str] = ()) -> DiscoveryReport:
    """`evaluate_discovery` over precomputed ``rankings`` (one per case, best first)."""
    cases = _check_cases(cases)
    _check_rankings(cases, rankings)
    _check_k(k_values, primary_k)
    _families(metrics)
    if abstain_threshold is not None and (isinstance(abstain_threshold, bool) or not isinstance(
            abstain_threshold, int | float) or abstain_threshold != abstain_threshold):
        raise InputError(f"abstain_threshold must be a number or None, got "
                         f"{abstain_threshold!r}", field="abstain_threshold")
    classes = tuple(classify(c, r, k=primary_k, abstain_threshold=abstain_threshold)
                    for c, r in zip(cases, rankings, strict=True))
    counts = {c: classes.count(c) for c in FAILURE_CLASSES}
    n_gold = sum(1 for c in cases if c.gold)
    n_abst = len(cases) - n_gold
    accuracy = None
    if abstain_threshold is not None and n_abst:
        accuracy = counts["abstention_ok"] / n_abst
    all_notes = list(notes)
    retrieval = None
    if n_gold:
        retrieval = score_retrieval(cases, rankings, k_values=k_values, primary_k=primary_k,
                                    metrics=metrics, mode=mode, degraded=degraded,
                                    identity=identity, notes=notes)
    else:
        all_notes.append("no case has a gold id: retrieval measures are not defined, "
                         "only the abstention taxonomy is reported")
    if n_abst and abstain_threshold is None:
        all_notes.append(f"{n_abst} abstention case(s) counted but not scored: give "
                         "abstain_threshold to score them")
    return DiscoveryReport(
        retrieval=retrieval, failure_classes=counts, case_classes=classes,
        n_cases=len(cases), n_gold=n_gold, n_abstention=n_abst, primary_k=primary_k,
        abstention_accuracy=accuracy,
        abstain_threshold=None if abstain_threshold is None else float(abstain_threshold),
        mode=mode, degraded=degraded, identity=dict(identity or {}), notes=tuple(all_notes))


# -- the public entry points --------------------------------------------------


def evaluate_discovery(source: Any, cases: Sequence[DiscoveryCase], *,
                       k_values: Sequence[int] = DFLT_K_VALUES, primary_k: int = 10,
                       metrics: Sequence[str] = DFLT_METRICS, mode: str = DFLT_MODE,
                       abstain_threshold: float | None = None,
                       embedder: Embedder | None = None,
                       rerank: CrossEncoder | None = None,
                       search: SearchSettings | Mapping[str, Any] | None = None) -> DiscoveryReport:
    """Score ``source`` against ``cases``: measures, failure taxonomy, abstention.

    ``source`` is anything `as_searcher` accepts (a `Catalog` or its path
    searched in ``mode``, a `Searcher`, or a ``(query, k) -> [(id, score)]``
    function). Retrieval runs once, to the largest cutoff; gold ids absent
    from a catalogue are refused before any search. An all-abstention case
    set is scored (taxonomy only, ``primary`` is ``None``), not refused.
    ``search`` holds the catalogue's search settings (`SearchSettings`).
    """
    cases = _check_cases(cases)
    ks = _check_k(k_values, primary_k)
    _families(metrics)
    searcher, rankings = _searched(source, cases, max(ks), mode=mode, embedder=embedder,
                                   rerank=rerank, search=search)
    return score_discovery(cases, rankings, k_values=ks, primary_k=primary_k, metrics=metrics,
                           abstain_threshold=abstain_threshold, mode=searcher.mode,
                           degraded=searcher.degraded, identity=searcher.identity,
                           notes=searcher.notes)


def retrieval_report(source: Any, cases: Sequence[DiscoveryCase], *,
                     k_values: Sequence[int] = DFLT_K_VALUES, primary_k: int = 10,
                     metrics: Sequence[str] = DFLT_METRICS, mode: str = DFLT_MODE,
                     embedder: Embedder | None = None,
                     rerank: CrossEncoder | None = None,
                     search: SearchSettings | Mapping[str, Any] | None = None,
                     limit: int | None = None) -> RetrievalReport:
    """Only the retrieval measures (e.g. to A/B bm25 against hybrid on the same cases).

    Unlike `evaluate_discovery`, a case set without any gold case is refused
    (`InputError`): there is nothing to measure. ``limit`` is how many ids are
    retrieved per case (default: the largest cutoff); measures without a
    cutoff (``map``, ``mrr``) read the whole list, cutoffs above it see only
    ``limit`` ids.
    """
    cases = _check_cases(cases)
    ks = _check_k(k_values, primary_k)
    _families(metrics)
    to_qrels(cases)  # refuse an all-abstention set before searching
    depth = max(ks) if limit is None else _positive_int(limit, "limit")
    searcher, rankings = _searched(source, cases, depth, mode=mode, embedder=embedder,
                                   rerank=rerank, search=search)
    return score_retrieval(cases, rankings, k_values=ks, primary_k=primary_k, metrics=metrics,
                           mode=searcher.mode, degraded=searcher.degraded,
                           identity=searcher.identity, notes=searcher.notes)
