"""`EvalReport`: the versioned JSON document an experiment leaves behind.

Per-query values are kept for every stage and measure; means, per-category
means, comparisons and the abstention AUROC are derived from them (and from
each query's top score, kept too). Version 2 grew optional fields (per-category
means, top scores, abstention, each query's category, the evidence, the conditions each
stage's latency was measured under) without a version bump: every version-2 document
written before them still loads, with them empty.

``evidence`` keeps what a reader must see: each stage's first ``evidence_depth`` results
for every query run (no-answer ones included), the query text and the relevant judgments
(`rankproof.comparison.Evidence`), or, for a large report written to a file, a reference
to a sidecar holding them (`rankproof.comparison.EvidenceSidecar`; read either with
`rankproof.comparison.load_evidence`).

Everything that varies between two runs of the same experiment is confined to
``created_at``, latencies and ``provenance``'s `rankproof._manifest.VARYING_FIELDS` (git
state, machine, moment, command line, folders, environment), so two reports can be
compared field by field (`EvalReport.without_timings`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    model_validator,
)

from rankproof._limits import MAX_SHOWN_CHARS, shown
from rankproof._manifest import VARYING_FIELDS, provenance
from rankproof.comparison import ComparisonRow, Evidence, EvidenceSidecar, evidence_value
from rankproof.measures import polarity
from rankproof.retrieval import over_capacity, peak_load
from rankproof.stats import DEFAULT_ALPHA, DEFAULT_CORRECTION, power

SCHEMA_VERSION = 2
V1_NOTE = ("read from a version-1 report: comparison rows were rebuilt from its per-query "
           "values (power and, for rank tests, the test statistic were not stored)")


def _v1_row(data: dict[str, Any], c: dict[str, Any]) -> dict[str, Any]:
    """A version-1 ``StageComparison`` as a shared row, values from the report's stages."""
    stages = {s.get("name"): s.get("per_query", {}) for s in data.get("stages", ())}
    config = data.get("config", {})
    try:
        cand_pq, base_pq = stages[c["stage"]], stages[c["baseline"]]
        measure, test = c["measure"], c["test"]
        qids = sorted(base_pq)
        cand = [cand_pq[q][measure] for q in qids]
        base = [base_pq[q][measure] for q in qids]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"version-1 comparison without matching per-query values: {exc}"
                         ) from None
    n = len(qids)
    diffs = [a - b for a, b in zip(cand, base, strict=True)]
    resampled = test in ("randomization", "bootstrap") or c.get("ci_method") != "t"
    resamples = config.get("resamples") if resampled else None
    mean_d = c["difference"]
    sd = (math.sqrt(sum((d - mean_d) ** 2 for d in diffs) / (n - 1)) if n > 1 else 0.0)
    pw = power(mean_d, sd, n) if sd > 0 and mean_d != 0.0 else None
    result = {
        "n": c["n"], "mean_a": c["mean"], "mean_b": c["baseline_mean"], "difference": mean_d,
        "relative_difference": c["relative_difference"], "ci_low": c["ci_low"],
        "ci_high": c["ci_high"], "ci_method": c["ci_method"],
        "confidence_level": c["confidence_level"], "p_value": c["p_value"],
        "statistic": mean_d if test in ("randomization", "bootstrap") else None,
        "test": test, "alternative": "two-sided", "resamples": resamples,
        "seed": config.get("seed") if resampled else None,
        "exact": bool(test == "randomization" and resamples and 2**n <= resamples),
        "wins": c["wins"], "ties": c["ties"], "losses": c["losses"],
        "effect_size": c["effect_size"], "power": pw, "queries_needed": c["queries_needed"],
        "measure": measure,
    }
    return {"baseline": c["baseline"], "candidate": c["stage"], "measure": measure,
            "higher_is_better": polarity(measure), "result": result,
            "p_corrected": c["p_corrected"], "verdict": c["verdict"],
            "underpowered": c["underpowered"], "alpha": config.get("alpha", DEFAULT_ALPHA),
            "correction": config.get("correction", DEFAULT_CORRECTION), "qids": qids,
            "candidate_values": cand, "baseline_values": base, "notes": c.get("notes", [])}


class _V1(BaseModel):
    """What `upgrade_v1` reads of a version-1 report, typed strictly so that a field of
    the wrong type is refused by name (the rest is validated as version 2 after)."""

    model_config = ConfigDict(extra="allow", strict=True)


class _V1Stage(_V1):
    name: str
    per_query: dict[str, dict[str, float]] = Field(default_factory=dict)


class _V1Config(_V1):
    resamples: int | None = None
    alpha: float = DEFAULT_ALPHA
    correction: str = DEFAULT_CORRECTION


class _V1Comparison(_V1):
    stage: str
    baseline: str
    measure: str
    test: str
    difference: float
    n: int
    mean: float | None
    baseline_mean: float | None
    relative_difference: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str
    confidence_level: float | None
    p_value: float | None
    p_corrected: float | None
    wins: int
    ties: int
    losses: int
    effect_size: float | None
    queries_needed: int | None
    verdict: str
    underpowered: bool
    notes: list[str] = Field(default_factory=list)


class _V1Report(_V1):
    stages: list[_V1Stage]
    config: _V1Config = Field(default_factory=_V1Config)
    comparisons: list[_V1Comparison] = Field(default_factory=list)
    caveats: list[str] = Field(default_factory=list)


def _check_v1(data: dict[str, Any]) -> None:
    """Refuse, naming the field, a version-1 document `upgrade_v1` could not read."""
    from pydantic import ValidationError

    try:
        _V1Report.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])[:MAX_SHOWN_CHARS]
        raise ValueError(f"version-1 report: {loc}: {first['msg']}") from None


def upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 report document in version-2 form (rows rebuilt, the upgrade stamped)."""
    _check_v1(data)
    out = dict(data)
    out["schema_version"] = SCHEMA_VERSION
    out["comparisons"] = [_v1_row(data, c) for c in data.get("comparisons", ())]
    out["caveats"] = [*data.get("caveats", ()), V1_NOTE]
    return out


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LatencySummary(_Model):
    """Nearest-rank percentiles of per-query latency, in milliseconds, and the conditions
    they were measured under (`rankproof.retrieval.TimingStamp`).

    The condition fields are None in a report written before they were recorded: then
    the percentiles may include the stage's warm-up. ``warmup_queries`` were searched
    before the timed pass (their ``warmup_ms`` excluded from every percentile);
    ``threads`` is torch's intra-op thread count during the timed pass (None: torch was
    not loaded), ``threads_set`` whether rankproof set it; ``load_before``/``load_after``
    the 1-minute load average around the timed pass, on ``cpus`` CPUs.
    """

    n: int
    p50: float
    p95: float
    p99: float
    mean: float
    max: float
    warmup_queries: int | None = None
    warmup_ms: float | None = None
    threads: int | None = None
    threads_set: bool | None = None
    load_before: float | None = None
    load_after: float | None = None
    cpus: int | None = None

    @property
    def load(self) -> float | None:
        """The higher of the two load averages (None when not recorded)."""
        return peak_load(self.load_before, self.load_after)

    @property
    def loaded(self) -> bool:
        """True when the load average exceeded the CPU count during the timed pass."""
        return over_capacity(self.load_before, self.load_after, self.cpus)

    def conditions(self) -> str | None:
        """``threads=1, load 0.8/2 CPUs, warm-up 8 queries 1.2 s excluded``; None when the
        report did not record them."""
        if self.warmup_queries is None:
            return None
        parts = []
        if self.threads is None:
            parts.append("torch not loaded")
        else:
            parts.append(f"threads={self.threads}" + ("" if self.threads_set
                                                      else " (torch's own)"))
        load = self.load
        if load is not None:
            cpus = f"/{self.cpus} CPUs" if self.cpus is not None else ""
            parts.append(f"load {load:.1f}{cpus}" + (", over capacity" if self.loaded else ""))
        if self.warmup_queries:
            ms = self.warmup_ms or 0.0
            took = f"{ms / 1000:.1f} s" if ms >= 100 else f"{ms:.0f} ms"
            parts.append(f"warm-up {self.warmup_queries} "
                         f"quer{'y' if self.warmup_queries == 1 else 'ies'} {took} excluded")
        else:
            parts.append("no warm-up")
        return ", ".join(parts)

    def describe(self) -> str:
        """``p50 12.3 ms, p95 20.1 ms`` and, when recorded, the conditions in brackets."""
        text = f"p50 {self.p50:.1f} ms, p95 {self.p95:.1f} ms"
        cond = self.conditions()
        return text if cond is None else f"{text} ({cond})"


class CategoryResult(_Model):
    """Means over the scored queries of one judgment category (``n`` of them)."""

    n: int
    means: dict[str, float]


class Abstention(_Model):
    """How well a stage's top score separates answerable from no-answer queries.

    ``auroc`` is threshold-free (see `rankproof.harness.bootstrap_auroc`); it is
    None, with ``reason`` saying why, when one of the classes is empty or the
    judgments cannot tell a no-answer query from an unjudged one. ``score``
    names what was ranked (``rank-based`` for RRF fusion, whose top score is a
    function of ranks only).
    """

    answerable: int
    no_answer: int
    score: str
    auroc: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence_level: float | None = None
    resamples: int | None = None
    seed: int | None = None
    method: str | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _check(self) -> Abstention:
        if (self.auroc is None) == (self.reason is None):
            raise ValueError("an abstention result has either an auroc or a reason, not both")
        return self


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
    categories: dict[str, CategoryResult] = Field(default_factory=dict)
    """category -> means over its scored queries (empty when the inputs have no categories)."""
    top_scores: dict[str, float | None] = Field(default_factory=dict)
    """qid -> the stage's top retrieval score, for every query run (None: nothing retrieved)."""
    abstention: Abstention | None = None


def _row(value: Any) -> ComparisonRow:
    if isinstance(value, ComparisonRow):
        return value
    return ComparisonRow.from_dict(value)  # an InputError is a ValueError: pydantic reports it


#: The shared comparison row (`rankproof.comparison.ComparisonRow`) as a report field: read
#: with `ComparisonRow.from_dict`, written with `to_dict`, so the report stores exactly
#: the rows `rankproof compare` and the gate store.
Row = Annotated[ComparisonRow, PlainValidator(_row),
                PlainSerializer(lambda row: row.to_dict(), return_type=dict)]


#: A report's evidence: inline (`Evidence`) or a sidecar reference (`EvidenceSidecar`), read
#: with `rankproof.comparison.evidence_value` (which checks every field and bound) and
#: written with ``to_dict``, in the shape every rankproof document stores.
EvidenceField = Annotated[Evidence | EvidenceSidecar, PlainValidator(evidence_value),
                          PlainSerializer(lambda value: value.to_dict(), return_type=dict)]


class Provenance(_Model):
    """The report's provenance: the one manifest block (`rankproof._manifest.provenance`)
    plus the eval-specific digests. The manifest fields after ``machine`` are optional so
    that reports written before them still load (with them null/empty)."""

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
    manifest_version: int | None = None
    environment_digest: str | None = None
    lock_digest: str | None = None
    lock_file: str | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    upstream: list[dict[str, Any]] = Field(default_factory=list)
    output_dir: str | None = None
    cwd: str | None = None
    command: list[str] | None = None
    created_at: str | None = None
    scope: dict[str, str] | None = None
    embed_model: dict[str, Any] | None = None
    """The dense stage's model identity (name, digest of its files, where it was loaded
    from), when a real embedding model ran."""
    engine: dict[str, Any] | None = None
    """What ran the experiment's distributable work (`rankproof.engine`'s ``describe()``:
    engine, workers, …); None in a report written before engines existed. It never changes
    a number."""


def eval_provenance(*, seed: int, corpus_digest: str, judgments_digest: str,
                    config_digest: str, inputs: Mapping[str, Any] | None = None,
                    output: str | Path | None = None,
                    scope: Mapping[str, str] | None = None,
                    embed_model: Mapping[str, Any] | None = None,
                    engine: Mapping[str, Any] | None = None) -> Provenance:
    """The eval report's provenance: the one manifest block plus the eval digests.

    Its scope says ``queries: full`` (every judged query of the inputs is evaluated) and
    ``pool: unknown`` unless a caller (an experiment file) declares it."""
    block = provenance(seed=seed, inputs=inputs, output=output,
                       scope={"queries": "full", **(scope or {})},
                       extra={"corpus_digest": corpus_digest,
                              "judgments_digest": judgments_digest,
                              "config_digest": config_digest,
                              **({"embed_model": dict(embed_model)} if embed_model else {}),
                              **({"engine": dict(engine)} if engine else {})})
    return Provenance.model_validate(block)


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
    query_categories: dict[str, str] = Field(default_factory=dict)
    """qid -> judgment category, for every query run (empty when the inputs have none)."""


class EvalReport(_Model):
    """The result of ``rankproof eval``; see the module docstring."""

    schema_version: Literal[2] = 2
    kind: Literal["rankproof.eval"] = "rankproof.eval"
    created_at: str
    config: dict[str, Any]
    provenance: Provenance
    inputs: InputsSummary
    measures: list[str]
    baseline: str
    stages: list[StageResult]
    comparisons: list[Row]
    caveats: list[str] = Field(default_factory=list)
    evidence: EvidenceField | None = None
    synthesis: dict[str, Any] | None = None
    """``eval --synthesis``: answers generated from the best stage's passages, scored
    (`rankproof.rag.SynthesisResult.to_dict`); None when no answer was synthesized."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        version = data.get("schema_version") if isinstance(data, dict) else None
        if type(version) is int and version == 1:  # not True, which equals 1
            return upgrade_v1(data)
        return data

    @model_validator(mode="after")
    def _check_stages(self) -> EvalReport:
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be unique, got {shown(names)}")
        if not names or names[0] != self.baseline:
            raise ValueError(f"the first stage must be the baseline {shown(self.baseline)}")
        return self

    def stage(self, name: str) -> StageResult:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"no stage {name!r} (have {', '.join(s.name for s in self.stages)})")

    def stamped(self, *, inputs: Mapping[str, Any] | None = None,
                output: str | Path | None = None,
                scope: Mapping[str, str] | None = None) -> EvalReport:
        """This report with its provenance stamped again with the input files it was built
        from and the output it is written to (the digests and seed kept)."""
        prov = self.provenance
        return self.model_copy(update={"provenance": eval_provenance(
            seed=prov.seed, corpus_digest=prov.corpus_digest,
            judgments_digest=prov.judgments_digest, config_digest=prov.config_digest,
            inputs=inputs, output=output, scope=scope or prov.scope,
            embed_model=prov.embed_model, engine=prov.engine)})

    def without_timings(self) -> dict[str, Any]:
        """The report as a dict minus what legitimately differs between reruns."""
        data = self.model_dump(mode="json")
        data.pop("created_at")
        for stage in data["stages"]:
            stage.pop("latency")
            stage.pop("latency_ms")
        prov = data["provenance"]
        for key in VARYING_FIELDS:
            prov.pop(key, None)
        return data
