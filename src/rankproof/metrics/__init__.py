"""Metrics of a system under test: one namespace, per-case rows, run-level aggregates.

`lookup` resolves any metric name: a retrieval measure (whatever
`rankproof.measures.parse` accepts, resolved through the measures registry,
never copied), a per-case metric (`register_metric`), or a run-level
aggregate (`register_aggregate`). A name is exactly one of these; polarity is
required at registration and `polarity` raises on an unknown name.

`run` evaluates a `rankproof.targets.Target` over a golden set into a
`RunResult` that keeps every case's row; `RunResult.from_report` builds the
same shape from one stage of a ``rankproof eval`` report, so the gate checks
both the same way.

Built in: the per-case ``latency_ms``; the aggregates ``latency_p50``,
``latency_p95``, ``latency_p99`` (nearest rank), ``latency_mean``,
``max_item_share[@k]`` and ``entropy[@k]``.
"""

from rankproof.metrics import _builtin  # noqa: F401  (registers the built-in metrics)
from rankproof.metrics._registry import (
    MetricDef,
    lookup,
    polarity,
    register_aggregate,
    register_metric,
    registered,
    resolve,
)
from rankproof.metrics._run import CaseRow, RunProvenance, RunResult, judgments_digest, run
from rankproof.stats._percentile import nearest_rank

__all__ = [
    "CaseRow",
    "MetricDef",
    "RunProvenance",
    "RunResult",
    "judgments_digest",
    "lookup",
    "nearest_rank",
    "polarity",
    "register_aggregate",
    "register_metric",
    "registered",
    "resolve",
    "run",
]
