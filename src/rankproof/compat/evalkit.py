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

* `registered` returns evalkit's live list of *names*: its built-in
  retrieval metrics (``recall@1/3/5/10/20``, ``ndcg@10``) and every per-case
  metric and aggregate of rankproof's one registry; each resolves through
  the same parser (``"recall@10" in registered()``).
* `load_checks` returns the gate's `ChecksFile` that iterates as evalkit's
  specs (``for spec in specs``): each a `CheckSpec` (the gate's `Check`) with
  ``spec.select(rows)`` (the rows it covers; a scoped case without a row is
  a ``CheckError``) and ``spec.coverage(rows)`` (``"2/2 cases"``).
* `load_corpus`, `load_queries`, `load_qrels` read a BEIR folder (or its
  files): ``{doc id: text}``, a list of queries with ``.id``/``.text`` (what
  `run` takes) and ``{query id: {doc id: grade}}``, through rankproof's BEIR
  readers. The data root is an argument, never the module's folder.

Not here, on purpose: ``runner.METRICS`` and ``register_retrieval_metric``
(evalkit's second metric table; rankproof has one registry, and every
``recall@k`` already parses). ``LLMJudge(rubric,
model, scale=5, cache_path=...)`` is rankproof's `Judge` behind a provider
(``rankproof.compat._llmjudge``), registrable with `register_metric`.
The random streams differ from
evalkit's (``numpy`` generators, not ``random.Random``): the same seed gives
other resamples, so intervals and p-values agree with evalkit's in
distribution, not digit for digit. ``docs/compat.md`` lists every
difference.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rankproof._errors import ConfigError, InputError
from rankproof._limits import shown
from rankproof.compat._llmjudge import LLMJudge
from rankproof.corpus import read_beir_corpus, read_beir_queries
from rankproof.data import read_beir_qrels
from rankproof.gate import Check, CheckResult, ChecksFile, GateVerdict
from rankproof.gate import load_checks as core_load_checks
from rankproof.gate import run_gate as core_run_gate
from rankproof.measures import (
    Measure,
    MetricDef,
    polarity,
    register_aggregate,
    resolve,
)
from rankproof.measures import register_metric as _core_register_metric
from rankproof.measures import registered as core_registered
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
    "CheckSpec",
    "ChecksFile",
    "GateVerdict",
    "GoldenCase",
    "GoldenSet",
    "HttpTarget",
    "LLMJudge",
    "QueryResult",
    "RunResult",
    "TargetResponse",
    "load_checks",
    "load_corpus",
    "load_goldens",
    "load_qrels",
    "load_queries",
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


# --------------------------------------------------------------------------- registry

#: evalkit's built-in retrieval metrics, as its table lists them (rankproof's parser
#: reads each: ``recall@10`` is ``R@10``, ``ndcg@10`` is ``nDCG@10``).
BUILTIN_RETRIEVAL = ("recall@1", "recall@3", "recall@5", "recall@10", "recall@20", "ndcg@10")


def registered() -> list[str]:
    """evalkit's live list of metric names: the built-in retrieval metrics, then every
    per-case metric and aggregate registered now (rankproof's one registry)."""
    return [*BUILTIN_RETRIEVAL, *(d.name for d in core_registered())]


# --------------------------------------------------------------------------- checks

def _row_id(row: Any) -> str:
    for attr in ("query_id", "case_id"):
        value = getattr(row, attr, None)
        if isinstance(value, str):
            return value
    if isinstance(row, Mapping) and isinstance(row.get("query_id"), str):
        return str(row["query_id"])
    raise CheckError(f"a row must carry a query_id (evalkit's per_query rows) or a case_id "
                     f"(a RunResult's rows), got {type(row).__name__}")


def _rows_of(rows: Any) -> list[Any]:
    if isinstance(rows, CoreRunResult):
        return list(rows.rows)
    if isinstance(rows, str | bytes | Mapping) or not isinstance(rows, Iterable):
        raise CheckError(f"rows must be a list of per-query rows (result.per_query), got "
                         f"{type(rows).__name__}")
    return list(rows)


class CheckSpec(Check):
    """One check of a checks file as evalkit hands it out: the gate's `Check` with
    ``select`` and ``coverage``."""

    def select(self, rows: Any) -> list[Any]:
        """The rows this check covers: all of them without ``scope``; with one, the rows of
        the scoped cases, in scope order, and a `CheckError` when a scoped case produced
        no row (a floor checked on a subset is a floor that was not checked)."""
        items = _rows_of(rows)
        if self.scope is None:
            return items
        by_id = {_row_id(r): r for r in items}
        missing = [c for c in self.scope if c not in by_id]
        if missing:
            raise CheckError(
                f"check {self.id!r}: scoped to {len(self.scope)} case(s) but {len(missing)} "
                f"produced no result: {', '.join(shown(c) for c in missing)}. A scoped check "
                "must evaluate every case it names")
        return [by_id[c] for c in self.scope]

    def coverage(self, rows: Any) -> str:
        """``"covered/scoped cases"``: how many of the cases the check names have a row
        (every row, for a check without ``scope``), to print beside its verdict."""
        items = _rows_of(rows)
        if self.scope is None:
            return f"{len(items)}/{len(items)} cases"
        ids = {_row_id(r) for r in items}
        return f"{sum(c in ids for c in self.scope)}/{len(self.scope)} cases"


class _Specs(ChecksFile):
    """A `ChecksFile` that iterates as evalkit's list of specs (``for spec in specs``)."""

    def __iter__(self) -> Iterator[CheckSpec]:  # type: ignore[override]
        return iter(self.checks)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self.checks)

    def __getitem__(self, index: int) -> CheckSpec:
        return self.checks[index]  # type: ignore[return-value]


def load_checks(path: str | os.PathLike[str], *,
                known_case_ids: Iterable[str] | None = None) -> ChecksFile:
    """evalkit's ``load_checks``: `rankproof.gate.load_checks` (the same validation and
    messages), returned as a checks file that iterates as `CheckSpec`\\s and goes to
    `run_gate` unchanged."""
    core = core_load_checks(path, known_case_ids=None if known_case_ids is None
                            else list(known_case_ids))
    specs = tuple(CheckSpec.model_construct(
        **{name: getattr(c, name) for name in Check.model_fields}) for c in core.checks)
    return _Specs.model_construct(
        checks=specs, **{name: getattr(core, name) for name in ChecksFile.model_fields
                         if name != "checks"})


# --------------------------------------------------------------------------- BEIR loaders

@dataclass(frozen=True)
class BeirQuery:
    """One BEIR query as `run` takes it: ``.id`` and ``.text``."""

    id: str
    text: str


def _beir_file(path: str | os.PathLike[str], name: str) -> Path:
    p = Path(path)
    return p / name if p.is_dir() else p


def load_corpus(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{doc id: text}`` from a BEIR ``corpus.jsonl`` (or the folder holding it); the
    title and text joined as rankproof's BEIR adapter joins them."""
    return read_beir_corpus(_beir_file(path, "corpus.jsonl"))


def load_queries(path: str | os.PathLike[str]) -> list[BeirQuery]:
    """The queries of a BEIR ``queries.jsonl`` (or its folder), in file order."""
    return [BeirQuery(q, t) for q, t in read_beir_queries(_beir_file(path, "queries.jsonl"))
            .items()]


def load_qrels(path: str | os.PathLike[str], split: str = "test"
               ) -> dict[str, dict[str, int]]:
    """``{query id: {doc id: grade}}`` from a BEIR qrels TSV (or ``FOLDER/qrels/SPLIT.tsv``),
    the shape `run` takes for graded measures."""
    p = Path(path)
    return read_beir_qrels(p / "qrels" / f"{split}.tsv" if p.is_dir() else p).to_dict()


# --------------------------------------------------------------------------- the gate

#: The gate's hints name the CLI's options; a compat caller has the call's arguments.
_HINTS = (
    ("(--baseline NAME|PATH)", "(run_gate(specs, result, baseline))"),
    ("(from Python, or with rankproof gate --plugin MODULE)",
     "(@register_metric(name, higher_is_better=...) before run_gate)"),
)


def _in_api_words(message: str) -> str:
    for cli, api in _HINTS:
        message = message.replace(cli, api)
    return message


def run_gate(checks: ChecksFile, result: CoreRunResult,
             baseline: Any = None) -> GateVerdict:
    """evalkit's checks runner: `rankproof.gate.run_gate`, its refusals (`CheckError`)
    worded for this call (``baseline=``, ``register_metric``) rather than the CLI."""
    try:
        return core_run_gate(checks, result, baseline)
    except ConfigError as exc:
        raise CheckError(_in_api_words(str(exc))) from None
