"""Targets — the systems under test — and the golden sets they are evaluated on.

A `Target` turns a `Case` into a `TargetResponse` (ranked ids, optional text,
latency, meta). Three come built in:

* `CallableTarget` — a Python function;
* `RetrieverTarget` — one of rankproof's own retrieval stages;
* `HttpTarget` — a search service over HTTP (httpx; one retry on a 5xx or a
  transport error, never on a 4xx).

A target that fails raises `rankproof.TargetError` naming the case, rather
than returning an empty list that would be scored as a bad ranking.
`load_goldens` reads cases from JSONL, YAML or CSV into a `GoldenSet` (a tuple
of cases with ``get(id)`` and ``ids()``); `register_loader` adds a format.
`run` evaluates a target over a golden set into a `RunResult` that keeps
every case's row (retrieval measures, per-case metrics registered in
`rankproof.measures`, and run-level aggregates). Built-in metrics over
responses: ``latency_ms``, ``latency_p50/p95/p99``, ``latency_mean``,
``max_item_share[@k]`` and ``entropy[@k]``.

A large run is sharded: ``run(..., executor=...)`` invokes shards of cases on
a `rankproof.engine` executor (local threads or Ray), never more requests in
flight than the target's ``max_concurrency`` (`shard_plan` says how they are
spread), checkpoints each finished shard so that ``resume=True`` continues an
interrupted run, and computes the metrics exactly as an unsharded run does.
"""

from rankproof.targets import _builtin  # noqa: F401  (registers the built-in metrics)
from rankproof.targets._base import CallableTarget, Target
from rankproof.targets._case import Case, TargetResponse
from rankproof.targets._goldens import GoldenSet, load_goldens, register_loader
from rankproof.targets._http import HttpTarget, default_build_payload, default_extract
from rankproof.targets._retriever import RetrieverTarget
from rankproof.targets._run import (
    CaseRow,
    RunProvenance,
    RunResult,
    as_cases,
    compute_aggregate,
    judgments_digest,
    run,
)
from rankproof.targets._shards import ShardPlan, shard_plan

__all__ = [
    "CallableTarget",
    "Case",
    "CaseRow",
    "GoldenSet",
    "HttpTarget",
    "RetrieverTarget",
    "RunProvenance",
    "RunResult",
    "ShardPlan",
    "Target",
    "TargetResponse",
    "as_cases",
    "compute_aggregate",
    "default_build_payload",
    "default_extract",
    "judgments_digest",
    "load_goldens",
    "register_loader",
    "run",
    "shard_plan",
]
