"""`EvalReport`: the versioned JSON document an experiment leaves behind.

Per-query values are kept for every stage and measure; means and comparisons
are derived from them. Everything that varies between two runs of the same
experiment is confined to ``created_at``, latencies and ``provenance``'s git
and machine fields, so two reports can be compared field by field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LatencySummary(_Model):
    """Nearest-rank percentiles of per-query latency, in milliseconds."""

    n: int
    p50: float
    p95: float
    p99: float
    mean: float
    max: float


class StageResult(_Model):
    name: str
    config: dict[str, Any]
    notes: list[str] = Field(default_factory=list)
    means: dict[str, float]
    per_query: dict[str, dict[str, float]]
    """qid -> measure -> value, for every scored query."""
    latency: LatencySummary
    latency_ms: dict[str, float]
    judged: dict[str, float] = Field(default_factory=dict)


class StageComparison(_Model):
    """One stage against the baseline on one measure (Holm-corrected across the report)."""

    stage: str
    baseline: str
    measure: str
    n: int
    baseline_mean: float
    mean: float
    difference: float
    relative_difference: float | None
    ci_low: float
    ci_high: float
    ci_method: str
    confidence_level: float
    p_value: float
    p_corrected: float
    test: str
    wins: int
    ties: int
    losses: int
    effect_size: float | None
    queries_needed: int | None
    verdict: str
    underpowered: bool
    notes: list[str] = Field(default_factory=list)


class Provenance(_Model):
    tool_version: str
    git_commit: str | None
    git_dirty: bool | None
    corpus_digest: str
    judgments_digest: str
    config_digest: str
    seed: int
    python: str
    packages: dict[str, str | None]
    machine: dict[str, Any]


class InputsSummary(_Model):
    name: str
    source: str | None
    documents: int
    chunks: int
    chunk_size: int
    overlap: int
    granularity: Literal["chunk", "document"]
    queries: int
    scored_queries: int
    no_answer_queries: list[str] = Field(default_factory=list)
    categories: dict[str, int] = Field(default_factory=dict)


class EvalReport(_Model):
    """The result of ``rankproof eval``; see the module docstring."""

    schema_version: Literal[1] = 1
    kind: Literal["rankproof.eval"] = "rankproof.eval"
    created_at: str
    config: dict[str, Any]
    provenance: Provenance
    inputs: InputsSummary
    measures: list[str]
    baseline: str
    stages: list[StageResult]
    comparisons: list[StageComparison]
    caveats: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_stages(self) -> EvalReport:
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be unique, got {names}")
        if not names or names[0] != self.baseline:
            raise ValueError(f"the first stage must be the baseline {self.baseline!r}")
        return self

    def stage(self, name: str) -> StageResult:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"no stage {name!r} (have {', '.join(s.name for s in self.stages)})")

    def without_timings(self) -> dict[str, Any]:
        """The report as a dict minus what legitimately differs between reruns."""
        data = self.model_dump(mode="json")
        data.pop("created_at")
        for stage in data["stages"]:
            stage.pop("latency")
            stage.pop("latency_ms")
        prov = data["provenance"]
        for key in ("git_commit", "git_dirty", "machine"):
            prov.pop(key)
        return data
