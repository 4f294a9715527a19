"""paired-evalkit's API (seed 001), spelled as evalkit spells it, over rankproof's own.

For code written against evalkit, change ``from evalkit import …`` to
``from rankproof.compat.evalkit import …``::

    baseline = run("baseline", search_v1, queries, qrels, ["recall@10", "ndcg@10"])
    candidate = run("candidate", search_v2, queries, qrels, ["recall@10", "ndcg@10"])
    v = paired_bootstrap(candidate, baseline, "ndcg@10")   # n_resamples=10_000, seed=42
    v.observed, v.ci_low, v.ci_high, v.p_value, v.significant

What each name is here:

* `run` builds rankproof `Case`\\s from the queries (any objects with
  ``.id``; ``.text`` when they have one) and ``qrels`` (``{query id: set of
  relevant ids}``), wraps the retriever in a `CallableTarget` and calls
  `rankproof.targets.run`: the measures engine computes every value with
  trec_eval's semantics. Metric names go through rankproof's one parser
  (``ndcg@10`` → ``nDCG@10``, ``recall@10`` → ``R@10``, ``mrr`` → ``RR``).
  The `RunResult` it returns *is* a `rankproof.targets.RunResult` (so the
  gate takes it) that also offers evalkit's ``per_query`` view, keyed by the
  names as the caller wrote them.
* `paired_bootstrap` is `rankproof.stats.paired_test` with the bootstrap
  test, the percentile interval and the **centred-null** p-value
  (``bootstrap_p="centred"``: ``(r + 1)/(B + 1)`` with ``r`` the resampled
  deviations at least as extreme as the observed difference), which is
  evalkit's. ``significant`` is "the interval excludes zero".
* `register_metric` is `rankproof.measures.register_metric` with
  ``family_word=True``, so evalkit's ``@register_metric("precision", …)``
  registers a per-case metric under the bare family word while
  ``precision@10`` / ``P@10`` keep meaning the retrieval measure.
  `register_aggregate`, `registered`, `polarity` are rankproof's own.
* `load_goldens` returns rankproof's `GoldenSet` (``get(id)``, ``ids()``);
  `register_loader`, `CallableTarget`, `HttpTarget` are rankproof's.
* Checks: `load_checks` is `rankproof.gate.load_checks` (metric names are
  resolved when the gate runs, as evalkit does) and `run_gate` the gate;
  ``CheckError`` is rankproof's `ConfigError` under evalkit's name.

Not here, on purpose: ``runner.METRICS`` and ``register_retrieval_metric``
(evalkit's second metric table; rankproof has one registry, and every
``recall@k`` already parses), the ``corpus`` loaders (`rankproof.data` reads
BEIR), the check objects' ``select``/``coverage`` methods (the gate selects
scoped cases and reports each check's coverage itself), and ``LLMJudge``,
which comes with the RAG evaluation work. The random streams differ from
evalkit's (``numpy`` generators, not ``random.Random``): the same seed gives
other resamples, so intervals and p-values agree with evalkit's in
distribution, not digit for digit. ``docs/compat.md`` lists every
difference.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from rankproof._errors import ConfigError, InputError
from rankproof._limits import shown
from rankproof.gate import Check, CheckResult, ChecksFile, GateVerdict, load_checks, run_gate
from rankproof.measures import (
    Measure,
    MetricDef,
    polarity,
    register_aggregate,
    registered,
    resolve,
)
from rankproof.measures import register_metric as _core_register_metric
from rankproof.stats import Result, paired_test
from rankproof.targets import (
    CallableTarget,
    Case,
    CaseRow,
    GoldenSet,
    HttpTarget,
    TargetResponse,
    load_goldens,
    register_loader,
)
from rankproof.targets import RunResult as CoreRunResult
from rankproof.targets import run as core_run

__all__ = [
    "BootstrapResult",
    "CallableTarget",
    "CaseResult",
    "Check",
    "CheckError",
    "CheckResult",
    "ChecksFile",
    "GateVerdict",
    "GoldenCase",
    "GoldenSet",
    "HttpTarget",
    "QueryResult",
    "RunResult",
    "TargetResponse",
    "load_checks",
    "load_goldens",
    "paired_bootstrap",
    "polarity",
    "register_aggregate",
    "register_loader",
    "register_metric",
    "registered",
    "run",
    "run_gate",
]

#: evalkit's defaults for `paired_bootstrap`.
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 42

CheckError = ConfigError
"""evalkit's name for a checks-file error: rankproof's `ConfigError` (also a ValueError)."""
GoldenCase = Case
"""evalkit's name for one golden case: rankproof's `Case` (``id``, ``query``, ``relevant``)."""
CaseResult = CaseRow
"""evalkit's name for one case's row, what an aggregate receives: rankproof's `CaseRow`."""

register_metric = functools.partial(_core_register_metric, family_word=True)
"""evalkit's ``register_metric(name, *, higher_is_better)``: rankproof's, with the bare family
word allowed (``family_word=True``), since evalkit's own example registers ``precision``."""


@dataclass(frozen=True)
class QueryResult:
    """One query's row in evalkit's shape: ids as retrieved, values under the caller's names."""

    query_id: str
    retrieved: list[str]
    metrics: dict[str, float]


@dataclass(frozen=True, repr=False)
class RunResult(CoreRunResult):
    """A `rankproof.targets.RunResult` with evalkit's ``per_query`` view.

    ``spellings`` maps each per-case metric name as the caller wrote it
    (``"ndcg@10"``) to rankproof's canonical name (``"nDCG@10"``), so that
    ``per_query[i].metrics`` is keyed the way the caller asked. ``mean``,
    ``scores`` and everything else are the core result's, and take either
    spelling. Being the core type, it goes to `run_gate` and
    `rankproof.gate.save_baseline` unchanged.
    """

    spellings: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "spellings", MappingProxyType(dict(self.spellings)))

    __hash__ = None

    @property
    def per_query(self) -> list[QueryResult]:
        """Every query's row (always kept; means are derived from them)."""
        spelled = dict(self.spellings) or {m: m for m in self.metrics}
        out = []
        for row in self.rows:
            retrieved = list(row.response.ranked_ids) if row.response is not None else []
            values = {name: row.values[canonical] for name, canonical in spelled.items()
                      if canonical in row.values}
            out.append(QueryResult(query_id=row.case_id, retrieved=retrieved, metrics=values))
        return out


@dataclass(frozen=True)
class BootstrapResult(Result):
    """evalkit's paired-bootstrap result (``observed = mean(a) − mean(b)``).

    ``ci_low``/``ci_high``: the 95% percentile bootstrap interval of the
    mean difference (numpy's linear-interpolation quantiles of the resampled
    means). ``p_value``: the centred-null bootstrap p-value, ``(r + 1) /
    (n_resamples + 1)``, never exactly 0. ``significant``: the interval
    excludes 0 (``ci_low > 0`` or ``ci_high < 0``). Provenance: ``metric``
    as the caller named it, ``name_a``/``name_b`` the runs' names,
    ``n_queries`` paired by query id, ``n_resamples`` and ``seed``.
    """

    observed: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool
    metric: str
    name_a: str
    name_b: str
    n_queries: int
    n_resamples: int
    seed: int


def _case(query: Any, position: int, qrels: Mapping[str, Any]) -> Case:
    """rankproof's `Case` for one of evalkit's queries: ``.id``, text, and its qrels entry."""
    if not hasattr(query, "id"):
        raise InputError(f"query {position} ({type(query).__name__}) has no .id; evalkit's "
                         "queries are any objects exposing .id", field="id")
    qid = query.id
    text = getattr(query, "text", None)
    # The retriever receives the original object, so the case's text is only a label.
    label = text if isinstance(text, str) and text.strip() else str(qid)
    if not isinstance(qid, str) or qid not in qrels:
        if isinstance(qid, str):
            raise InputError(
                f"query {shown(qid)} has no entry in qrels: an unjudged query would score 0 "
                "and make a broken eval look like a worse system; judge it (an empty set "
                "means nothing is relevant) or leave it out", field="qrels")
        return Case(id=qid, query=label)  # refuses the id with rankproof's own message
    judged = qrels[qid]
    if isinstance(judged, Mapping):
        return Case(id=qid, query=label, relevance=judged)
    if isinstance(judged, str | bytes) or not isinstance(judged, Iterable):
        raise InputError(f"qrels[{shown(qid)}] must be a set of relevant ids, found "
                         f"{type(judged).__name__}", field="qrels")
    relevant = tuple(judged)
    return Case(id=qid, query=label, relevant=relevant, relevance=None if relevant else {})


def run(
    name: str,
    retriever: Callable[[Any], Sequence[str]],
    queries: Iterable[Any],
    qrels: Mapping[str, Iterable[str] | Mapping[str, int]],
    metrics: str | Sequence[str | Measure | MetricDef],
) -> RunResult:
    """Call ``retriever(query)`` for each query and measure the ranked ids against ``qrels``.

    ``retriever``: any callable ``(query) -> list[str]``, ids best first; it
    receives the query object itself. ``queries``: any objects exposing
    ``.id`` (a string). ``qrels``: ``{query id: set of relevant ids}`` (a
    ``{doc: grade}`` mapping is also taken, for graded measures).
    ``metrics``: names rankproof's parser or registry knows (``recall@10``,
    ``ndcg@10``, ``mrr``, a registered per-case metric or aggregate).

    A query missing from ``qrels`` raises `InputError` rather than scoring 0;
    so do a duplicate query id and a name that resolves to nothing. A
    retriever that raises or returns something other than a list of ids
    raises `rankproof.TargetError` naming the query. Evaluation is
    `rankproof.targets.run`'s.
    """
    if not callable(retriever):
        raise TypeError(f"retriever must be callable, got {type(retriever).__name__}")
    if not isinstance(qrels, Mapping):
        raise InputError(f"qrels must be a mapping of query id to relevant ids, found "
                         f"{type(qrels).__name__}", field="qrels")
    items = list(queries)
    cases = [_case(q, i, qrels) for i, q in enumerate(items, start=1)]
    by_id = {c.id: q for c, q in zip(cases, items, strict=True)}
    target = CallableTarget(lambda case: retriever(by_id[case.id]), name=name)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    core = core_run(name, target, cases, names)
    spellings: dict[str, str] = {}
    for spec in names:  # a trec_eval set name stands for its members, under their own names
        defs = resolve([spec])
        for d in defs:
            if d.per_case:
                key = spec if isinstance(spec, str) and len(defs) == 1 else d.name
                spellings.setdefault(key, d.name)
    return RunResult(name=core.name, rows=core.rows, metrics=core.metrics,
                     aggregates=core.aggregates, provenance=core.provenance, notes=core.notes,
                     spellings=spellings)


def paired_bootstrap(
    a: CoreRunResult,
    b: CoreRunResult,
    metric: str,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> BootstrapResult:
    """Paired bootstrap of ``mean(a) − mean(b)`` on ``metric``, queries paired by id.

    ``a`` is the candidate and ``b`` the baseline in evalkit's quickstart
    (``paired_bootstrap(candidate, baseline, "ndcg@10")``). Computed by
    `rankproof.stats.paired_test` (``"bootstrap"``, percentile interval,
    centred-null p); see `BootstrapResult` for every field. Runs that cover
    different queries raise `rankproof.PairingError` listing what each side
    lacks; a metric a run did not compute raises `InputError`.
    """
    for side, value in (("a", a), ("b", b)):
        if not isinstance(value, CoreRunResult):
            raise TypeError(f"{side} must be a RunResult (from run()), got "
                            f"{type(value).__name__}")
    r = paired_test(a.scores(metric), b.scores(metric), "bootstrap", ci_method="percentile",
                    bootstrap_p="centred", resamples=n_resamples, seed=seed)
    return BootstrapResult(
        observed=r.difference, ci_low=r.ci_low, ci_high=r.ci_high, p_value=r.p_value,
        significant=bool(r.ci_low > 0.0 or r.ci_high < 0.0), metric=metric, name_a=a.name,
        name_b=b.name, n_queries=r.n, n_resamples=n_resamples, seed=seed)
