"""Small builders for gate tests: results with chosen per-case values, and checks text."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

from rankproof.gate import ChecksFile, parse_checks
from rankproof.targets import CaseRow, RunProvenance, RunResult, TargetResponse


def result(
    values: Mapping[str, Mapping[str, float]],
    *,
    name: str = "run",
    latency: Mapping[str, float] | None = None,
    ids: Mapping[str, tuple[str, ...]] | None = None,
    measures: tuple[str, ...] = ("nDCG@10",),
    granularity: str | None = "chunk",
    judgments: str = "sha256:j",
    corpus: str | None = "sha256:c",
) -> RunResult:
    """A RunResult whose rows carry ``values[case][metric]``."""
    rows = []
    for cid, vals in values.items():
        lat = None if latency is None else latency[cid]
        response = None
        if ids is not None:
            response = TargetResponse(ranked_ids=ids[cid], latency_ms=lat or 0.0)
        rows.append(CaseRow(case_id=cid, values=dict(vals), latency_ms=lat, response=response))
    metrics = tuple(dict.fromkeys(m for v in values.values() for m in v))
    return RunResult(name=name, rows=tuple(rows), metrics=metrics,
                     provenance=RunProvenance(kind="report", measures=measures,
                                              granularity=granularity, judgments_digest=judgments,
                                              corpus_digest=corpus))


def column(metric: str, scores: Mapping[str, float], **kw: object) -> RunResult:
    """A result with one per-case metric."""
    return result({c: {metric: v} for c, v in scores.items()}, **kw)  # type: ignore[arg-type]


def checks(text: str, **kw: object) -> ChecksFile:
    return parse_checks(textwrap.dedent(text), **kw)  # type: ignore[arg-type]
