"""`run`: a target over a golden set, measured case by case; `RunResult` keeps every row.

Per-case rows are the result; means and aggregates are derived from them.
That is what lets a gate pair a run with a baseline case by case (a mean
alone cannot be tested for significance) and check a scoped subset of cases.

Retrieval measures are computed for all cases at once: the responses become
one `Run` (rank order as returned), the judgments one `Qrels`, and the
vectorised measures engine evaluates them with trec_eval's semantics — so a
gate's ``nDCG@10`` is the same number ``rankproof measure`` prints.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from rankproof._errors import InputError, MissingExtraError, RankproofError
from rankproof._version import __version__
from rankproof.data import Qrels, Run
from rankproof.engine import Executor, LocalExecutor
from rankproof.measures import Measure, MetricDef, evaluate, lookup, resolve
from rankproof.targets._base import Target
from rankproof.targets._case import Case, TargetResponse
from rankproof.targets._checkpoint import Checkpoint, goldens_digest, target_identity
from rankproof.targets._goldens import load_goldens
from rankproof.targets._shards import DEFAULT_SHARD_SIZE, Progress, invoke_checked, invoke_sharded

SCHEMA_VERSION = 1
_SHOWN = 5


def _shown(items: Sequence[str]) -> str:
    head = ", ".join(map(repr, items[:_SHOWN]))
    return head + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def _finite(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InputError(f"{what} must be a number, got {type(value).__name__} {value!r}")
    f = float(value)
    if not math.isfinite(f):
        raise InputError(f"{what} must be finite, got {f!r}")
    return f


@dataclass(frozen=True)
class CaseRow:
    """One case of a run: its id, its metric values and what the target answered.

    ``values`` maps canonical metric names to finite floats. ``response``
    is None when the row was rebuilt from a report, which keeps per-query
    values and latencies but not the ranked ids. ``latency_ms`` is the
    response's latency (or the report's per-query latency).
    """

    case_id: str
    values: Mapping[str, float]
    latency_ms: float | None = None
    response: TargetResponse | None = None
    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.case_id, str) or not self.case_id:
            raise InputError(f"case id must be a non-empty string, got {self.case_id!r}")
        values = {str(k): _finite(v, f"case {self.case_id!r}: value of {k!r}")
                  for k, v in self.values.items()}
        object.__setattr__(self, "values", MappingProxyType(values))
        if self.latency_ms is not None:
            lat = _finite(self.latency_ms, f"case {self.case_id!r}: latency_ms")
            if lat < 0:
                raise InputError(f"case {self.case_id!r}: latency_ms must be >= 0, got {lat}")
            object.__setattr__(self, "latency_ms", lat)
        object.__setattr__(self, "tags", tuple(self.tags))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [f"{k}={v:.4g}" for k, v in list(self.values.items())[:_SHOWN]]
        if len(self.values) > _SHOWN:
            parts.append(f"and {len(self.values) - _SHOWN} more")
        if self.latency_ms is not None:
            parts.append(f"{self.latency_ms:.4g} ms")
        return f"CaseRow({', '.join([repr(self.case_id), *parts])})"


@dataclass(frozen=True)
class RunProvenance:
    """Where a `RunResult` came from, and what a baseline must agree with to be compared.

    ``measures`` (canonical retrieval measure names), ``granularity`` and
    ``judgments_digest`` decide whether two results measure the same thing;
    `rankproof.gate` refuses a baseline comparison when they differ.
    """

    kind: Literal["target", "report"]
    measures: tuple[str, ...] = ()
    granularity: str | None = None
    judgments_digest: str | None = None
    corpus_digest: str | None = None
    config_digest: str | None = None
    target: str | None = None
    stage: str | None = None
    tool_version: str = __version__
    created_at: str = ""
    judge: Mapping[str, Any] | None = None
    """The identity of the LLM judge whose scores the run holds (model, rubric digest, scale,
    prompt template digest), when it holds any: a judge-backed gate check compares it with
    its calibration."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "measures": list(self.measures),
               "granularity": self.granularity, "judgments_digest": self.judgments_digest,
               "corpus_digest": self.corpus_digest, "config_digest": self.config_digest,
               "target": self.target, "stage": self.stage, "tool_version": self.tool_version,
               "created_at": self.created_at}
        if self.judge is not None:
            out["judge"] = dict(self.judge)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunProvenance:
        try:
            return cls(kind=data["kind"], measures=tuple(data.get("measures") or ()),
                       granularity=data.get("granularity"),
                       judgments_digest=data.get("judgments_digest"),
                       corpus_digest=data.get("corpus_digest"),
                       config_digest=data.get("config_digest"), target=data.get("target"),
                       stage=data.get("stage"),
                       tool_version=data.get("tool_version") or "unknown",
                       created_at=data.get("created_at") or "",
                       judge=data.get("judge") if isinstance(data.get("judge"), Mapping)
                       else None)
        except (KeyError, TypeError) as exc:
            raise InputError(f"malformed run provenance: {exc}", field="provenance") from None


@dataclass(frozen=True)
class RunResult:
    """Every case's row of one run, plus the aggregates asked for; means are derived.

    ``metrics``: the per-case metrics every row carries (canonical names,
    rows from a report's unscored queries may lack the retrieval ones).
    ``aggregates``: run-level values computed over all rows.
    """

    name: str
    rows: tuple[CaseRow, ...]
    metrics: tuple[str, ...]
    aggregates: Mapping[str, float] = field(default_factory=dict)
    provenance: RunProvenance = field(default_factory=lambda: RunProvenance(kind="target"))
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        ids = [r.case_id for r in self.rows]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise InputError(f"run {self.name!r}: case {dup!r} has two rows")
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "metrics", tuple(self.metrics))
        object.__setattr__(self, "aggregates", MappingProxyType(dict(self.aggregates)))
        object.__setattr__(self, "notes", tuple(self.notes))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [repr(self.name), f"{len(self.rows):,} case{'s' if len(self.rows) != 1 else ''}"]
        if self.metrics:
            parts.append(f"metrics {', '.join(self.metrics[:_SHOWN])}"
                         + (f" and {len(self.metrics) - _SHOWN} more"
                            if len(self.metrics) > _SHOWN else ""))
        if self.aggregates:
            parts.append(f"aggregates {', '.join(list(self.aggregates)[:_SHOWN])}"
                         + (f" and {len(self.aggregates) - _SHOWN} more"
                            if len(self.aggregates) > _SHOWN else ""))
        return f"RunResult({', '.join(parts)})"

    # -- access -------------------------------------------------------------
    @property
    def case_ids(self) -> tuple[str, ...]:
        return tuple(r.case_id for r in self.rows)

    def select(self, case_ids: Iterable[str] | None = None) -> tuple[CaseRow, ...]:
        """The rows of ``case_ids`` (all rows for None); a missing case raises, naming it."""
        if case_ids is None:
            return self.rows
        wanted = list(dict.fromkeys(case_ids))
        by_id = {r.case_id: r for r in self.rows}
        missing = [c for c in wanted if c not in by_id]
        if missing:
            raise InputError(f"run {self.name!r} has no row for case(s) {_shown(missing)}")
        return tuple(by_id[c] for c in wanted)

    def scores(self, metric: str | Measure, case_ids: Iterable[str] | None = None
               ) -> dict[str, float]:
        """``{case id: value}`` of a per-case metric, for the rows that have it."""
        d = lookup(metric)
        if not d.per_case:
            raise InputError(f"{d.name!r} is an aggregate (one value per run), not per case")
        if d.name not in self.metrics:
            have = ", ".join(self.metrics) or "none"
            raise InputError(f"metric {d.name!r} was not computed for run {self.name!r} "
                             f"(per-case metrics: {have})")
        return {r.case_id: r.values[d.name] for r in self.select(case_ids) if d.name in r.values}

    def mean(self, metric: str | Measure, case_ids: Iterable[str] | None = None) -> float:
        """Mean of a per-case metric over the rows that have it."""
        s = self.scores(metric, case_ids)
        if not s:
            raise InputError(f"run {self.name!r}: no case has a value for {lookup(metric).name!r}")
        return float(np.mean(list(s.values())))

    def aggregate(self, metric: str, case_ids: Iterable[str] | None = None) -> float:
        """An aggregate over all rows (stored) or over the rows of ``case_ids`` (recomputed)."""
        d = lookup(metric)
        if d.kind != "aggregate":
            raise InputError(f"{d.name!r} is a per-case metric; use mean()")
        if case_ids is None and d.name in self.aggregates:
            return self.aggregates[d.name]
        return compute_aggregate(d, self.select(case_ids), self.name)

    def value(self, metric: str, case_ids: Iterable[str] | None = None) -> float:
        """The number a threshold check compares: the mean, or the aggregate."""
        d = lookup(metric)
        return self.mean(d.name, case_ids) if d.per_case else self.aggregate(d.name, case_ids)

    # -- serialisation --------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values; responses keep their ranked ids, text and latency (not meta)."""
        rows = []
        for r in self.rows:
            row: dict[str, Any] = {"case_id": r.case_id, "values": dict(r.values),
                                   "latency_ms": r.latency_ms}
            if r.tags:
                row["tags"] = list(r.tags)
            if r.response is not None:
                row["ranked_ids"] = list(r.response.ranked_ids)
                if r.response.text is not None:
                    row["text"] = r.response.text
            rows.append(row)
        doc = {"schema_version": SCHEMA_VERSION, "kind": "rankproof.run", "name": self.name,
               "metrics": list(self.metrics), "aggregates": dict(self.aggregates),
               "provenance": self.provenance.to_dict(), "notes": list(self.notes),
               "rows": rows}
        latency = self.latency_summary()
        if latency is not None:
            doc["latency"] = latency
        return doc

    def latency_summary(self) -> dict[str, float] | None:
        """The cases' latency: n, nearest-rank p50/p95/p99, mean and max in milliseconds
        (None when no case was timed). Stored in the JSON so a report shows it without
        computing it."""
        from rankproof.stats import nearest_rank

        values = [float(r.latency_ms) for r in self.rows if r.latency_ms is not None]
        if not values:
            return None
        return {"n": float(len(values)), "p50": nearest_rank(values, 50),
                "p95": nearest_rank(values, 95), "p99": nearest_rank(values, 99),
                "mean": sum(values) / len(values), "max": max(values)}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_pandas(self) -> Any:
        """A pandas DataFrame: one row per case (index ``case_id``), one column per metric.

        Columns are ``metrics`` in order (NaN where a row lacks a value, e.g. an
        unscored query of a report), then ``latency_ms`` (unless it is already
        a metric). Run-level ``aggregates`` are one number per run, not per
        case, so they stay on the result. pandas is the optional ``pandas``
        extra, imported only here.
        """
        try:
            import pandas as pd
        except ImportError:
            raise MissingExtraError("RunResult.to_pandas needs pandas: pip install "
                                    "'rankproof[pandas]'") from None
        columns = list(self.metrics)
        data: dict[str, list[float]] = {
            m: [r.values.get(m, math.nan) for r in self.rows] for m in columns}
        if "latency_ms" not in data:
            data["latency_ms"] = [math.nan if r.latency_ms is None else r.latency_ms
                                  for r in self.rows]
        return pd.DataFrame(data, index=pd.Index(list(self.case_ids), name="case_id"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunResult:
        """Rebuild a result written by `to_dict`; malformed input raises `InputError`."""
        if not isinstance(data, Mapping) or data.get("kind") != "rankproof.run":
            raise InputError("not a rankproof run result (kind must be 'rankproof.run')")
        if data.get("schema_version") != SCHEMA_VERSION:
            raise InputError(f"unsupported run schema_version {data.get('schema_version')!r} "
                             f"(this rankproof reads {SCHEMA_VERSION})")
        try:
            rows = []
            for i, raw in enumerate(data["rows"]):
                response = None
                if raw.get("ranked_ids") is not None:
                    response = TargetResponse(ranked_ids=tuple(raw["ranked_ids"]),
                                              text=raw.get("text"),
                                              latency_ms=raw.get("latency_ms") or 0.0)
                try:
                    rows.append(CaseRow(case_id=raw["case_id"], values=dict(raw["values"]),
                                        latency_ms=raw.get("latency_ms"), response=response,
                                        tags=tuple(raw.get("tags") or ())))
                except (InputError, KeyError, TypeError, ValueError) as exc:
                    raise InputError(f"row {i + 1}: {exc}", field="rows") from None
            return cls(name=data["name"], rows=tuple(rows), metrics=tuple(data["metrics"]),
                       aggregates={str(k): float(v) for k, v in data["aggregates"].items()},
                       provenance=RunProvenance.from_dict(data["provenance"]),
                       notes=tuple(data.get("notes") or ()))
        except KeyError as exc:
            raise InputError(f"run result is missing {exc}") from None


def compute_aggregate(d: MetricDef, rows: Sequence[CaseRow], run_name: str) -> float:
    """Evaluate an aggregate on rows, refusing rows that lack what it reads."""
    if not rows:
        raise InputError(f"run {run_name!r}: no rows to compute {d.name!r} over")
    if d.needs_responses:
        lacking = [r.case_id for r in rows if r.response is None]
        if lacking:
            raise InputError(
                f"{d.name!r} reads each case's ranked ids, which run {run_name!r} does not keep "
                f"for {len(lacking)} case(s) (e.g. {_shown(lacking)}); a report keeps per-query "
                "values only — evaluate a target with rankproof.targets.run instead")
    try:
        value = d.aggregate(rows)
    except RankproofError:
        raise
    except Exception as exc:
        raise RankproofError(f"aggregate {d.name!r} raised {type(exc).__name__}: {exc}") from exc
    return _finite(value, f"aggregate {d.name!r}")


# -- run ----------------------------------------------------------------------

def as_cases(goldens: str | os.PathLike[str] | Iterable[Case]) -> tuple[Case, ...]:
    """A golden set as cases: a path is read with `load_goldens`; cases are checked
    (all `Case`, unique ids, at least one)."""
    if isinstance(goldens, str | os.PathLike):
        return load_goldens(goldens)
    cases = tuple(goldens)
    if not cases:
        raise InputError("the golden set has no cases")
    for i, c in enumerate(cases):
        if not isinstance(c, Case):
            raise TypeError(f"goldens item {i + 1} is a {type(c).__name__}, not a Case")
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InputError(f"case id {dup!r} appears twice in the golden set")
    return cases


def judgments_digest(cases: Sequence[Case]) -> str:
    """sha256 of the judged cases' judgments (id → relevance), independent of case order."""
    rows = sorted((c.id, sorted(dict(c.relevance).items())) for c in cases
                  if c.relevance is not None)
    text = json.dumps(rows, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _invoke(target: Target, cases: Sequence[Case], defs: Sequence[MetricDef], *,
            executor: Executor | None, shard_size: int,
            checkpoint: str | os.PathLike[str] | Literal[False] | None, resume: bool,
            progress: Progress | None) -> tuple[list[TargetResponse], Checkpoint | None]:
    """Every case's response: in one call (today's path), or shard by shard; and the
    checkpoint to remove once the run has completed."""
    if isinstance(shard_size, bool) or not isinstance(shard_size, int) or shard_size < 1:
        raise InputError(f"shard_size must be an integer >= 1, got {shard_size!r}",
                         field="shard_size")
    if resume and checkpoint is False:
        raise InputError("resume=True reads a checkpoint; checkpoint=False turns it off",
                         field="resume")
    sharded = (executor is not None or resume or progress is not None
               or checkpoint not in (None, False))
    if not sharded:
        return invoke_checked(target, cases), None
    if executor is None:
        executor = LocalExecutor()
    opener = None
    if checkpoint is not False:
        identity = {"target": target_identity(target), "goldens": goldens_digest(cases),
                    "metrics": [d.name for d in defs]}
        opener = functools.partial(Checkpoint.open, checkpoint, identity, shard_size=shard_size,
                                   cases=len(cases), resume=resume)
    return invoke_sharded(target, cases, executor=executor, shard_size=shard_size,
                          checkpoint=opener, progress=progress)


def _unused(prefix: str, taken: set[str]) -> str:
    name = prefix
    while name in taken:
        name += "~"
    return name


def retrieval_values(
    cases: Sequence[Case], responses: Sequence[TargetResponse], measures: Sequence[Measure],
) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Per-case values of retrieval measures, all cases in one call of the measures engine.

    Each response's ids, in the order returned, become that case's ranking
    (a repeated id keeps its first position: a document is not credited
    twice). Every case must be judged. A judged case with nothing relevant is
    a topic whose only judgment is a placeholder non-relevant document, so the
    engine scores it exactly as trec_eval scores a topic without relevant
    documents (0 for nDCG, RR, recall …) instead of dropping it.
    """
    qid: list[str] = []
    docid: list[str] = []
    score: list[float] = []
    duplicates = 0
    all_ids: set[str] = set()
    for case, response in zip(cases, responses, strict=True):
        ranked = list(dict.fromkeys(response.ranked_ids))
        duplicates += len(response.ranked_ids) - len(ranked)
        all_ids.update(ranked)
        n = len(ranked)
        qid.extend([case.id] * n)
        docid.extend(ranked)
        score.extend(float(n - i) for i in range(n))
    case_ids = {c.id for c in cases}
    if not qid:  # nothing retrieved at all: one ignored placeholder row keeps the Run valid
        qid, docid, score = [_unused("~rankproof:none", case_ids)], ["~"], [1.0]
    q_q: list[str] = []
    q_d: list[str] = []
    q_r: list[int] = []
    judged_docs = {d for c in cases for d in (c.relevance or {})}
    placeholder = _unused("~rankproof:no-relevant-documents", all_ids | judged_docs)
    empty = []
    for case in cases:
        relevance = dict(case.relevance or {})
        if not relevance:
            empty.append(case.id)
            relevance = {placeholder: 0}
        for d, g in relevance.items():
            q_q.append(case.id)
            q_d.append(d)
            q_r.append(g)
    qrels = Qrels.from_columns(q_q, q_d, np.array(q_r, dtype=np.int64))
    run_ = Run.from_columns(qid, docid, np.array(score, dtype=np.float64), name="target")
    # A target that retrieved nothing shares no topic with the qrels (only the placeholder
    # row): that is a result (every case scores 0), not the swapped-columns mistake.
    pq = evaluate(qrels, run_, list(measures), topics="complete-allow-disjoint")
    out: dict[str, dict[str, float]] = {c.id: {} for c in cases}
    for m in measures:
        for q, v in pq.scores(m).items():
            out[q][str(m)] = v
    notes = []
    if duplicates:
        notes.append(f"{duplicates} repeated id(s) in responses counted once (first position)")
    if empty:
        notes.append(f"{len(empty)} judged case(s) with no relevant document score 0 on "
                     f"retrieval measures: {_shown(empty)}")
    return out, notes


def run(
    name: str,
    target: Target,
    goldens: str | os.PathLike[str] | Iterable[Case],
    metrics: str | Iterable[str | Measure | MetricDef],
    *,
    executor: Executor | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    checkpoint: str | os.PathLike[str] | Literal[False] | None = None,
    resume: bool = False,
    progress: Progress | None = None,
) -> RunResult:
    """Run ``target`` on every golden case and compute ``metrics`` for each.

    ``goldens`` is a path (read with `rankproof.targets.load_goldens`) or
    cases. ``metrics`` mixes retrieval measures, per-case metrics and
    aggregates by name. Nothing is invoked until every name resolves and
    every case has what the metrics need: a case without judgments raises
    `InputError` naming it (for metrics that need judgments) instead of
    scoring 0, which would make a broken golden set look like a bad system.

    Large runs are sharded. With an ``executor`` (`rankproof.engine`), or
    any of ``checkpoint``, ``resume`` or ``progress``, the cases are invoked
    in shards of ``shard_size`` on the executor (one local worker when none
    is given), with the target's ``max_concurrency`` bound held across all
    workers (`rankproof.targets.shard_plan`). Each finished shard is written
    to ``checkpoint`` (default: a folder under the rankproof cache named
    after a digest of the target, the cases and the metrics;
    ``checkpoint=False``: none); an existing checkpoint is refused unless
    ``resume=True``, which reads its shards instead of invoking them. The
    folder is removed once the run completes. ``progress(done, total)`` is
    called with the cases answered so far. The metrics are computed after
    every shard is in, exactly as for an unsharded run, so the result is the
    same whichever engine, shard size or resumption produced the responses.
    """
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"a run needs a non-empty name, got {name!r}", field="name")
    cases = as_cases(goldens)
    defs = resolve(list(metrics) if not isinstance(metrics, str) else [metrics])
    needing = [d.name for d in defs if d.needs_judgments]
    unjudged = [c.id for c in cases if not c.judged]
    if needing and unjudged:
        raise InputError(f"case(s) {_shown(unjudged)} have no judgments, which "
                         f"{', '.join(needing)} need{'s' if len(needing) == 1 else ''}; "
                         "add 'relevant' or 'relevance' to each (an empty list means "
                         "'nothing is relevant')")
    responses, ck = _invoke(target, cases, defs, executor=executor, shard_size=shard_size,
                            checkpoint=checkpoint, resume=resume, progress=progress)
    values: dict[str, dict[str, float]] = {c.id: {} for c in cases}
    notes: list[str] = []
    measures = [d.measure for d in defs if d.measure is not None]
    if measures:
        found, notes = retrieval_values(cases, responses, measures)
        for cid, v in found.items():
            values[cid].update(v)
    for d in defs:
        if d.kind != "case" or d.fn is None:
            continue
        for case, response in zip(cases, responses, strict=True):
            where = f"metric {d.name!r}, case {case.id!r}"
            try:
                raw = d.fn(response, case)
            except Exception as exc:
                raise RankproofError(f"{where}: raised {type(exc).__name__}: {exc}") from exc
            values[case.id][d.name] = _finite(raw, f"{where}: the value")
    rows = tuple(
        CaseRow(case_id=c.id, values=values[c.id], latency_ms=r.latency_ms, response=r,
                tags=c.tags)
        for c, r in zip(cases, responses, strict=True))
    aggregates = {d.name: compute_aggregate(d, rows, name) for d in defs
                  if d.kind == "aggregate"}
    result = RunResult(
        name=name, rows=rows, metrics=tuple(d.name for d in defs if d.per_case),
        aggregates=aggregates,
        provenance=RunProvenance(
            kind="target", measures=tuple(str(m) for m in measures),
            judgments_digest=judgments_digest(cases), target=getattr(target, "name", None),
            created_at=datetime.now(UTC).isoformat(timespec="seconds")),
        notes=tuple(notes))
    if ck is not None:
        ck.remove()  # the run completed: nothing left to resume
    return result
