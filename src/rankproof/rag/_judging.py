"""A judge from a config file, its scores beside the other RAG metrics, and its corrected mean.

The config (YAML or JSON, validated) names everything that changes a verdict —
model, rubric, scale — and where the model is served::

    name: faithfulness
    model: qwen2.5-7b-instruct
    rubric: Score 1-5 how well every claim of the answer is supported by its passages.
    scale: [1, 2, 3, 4, 5]
    endpoint: {base_url: "http://127.0.0.1:8000/v1", api_key_env: JUDGE_API_KEY}

``endpoint`` is a provider block (`rankproof.providers.ProviderConfig`, every
field but ``model``, which is the judge's: timeout, deadline, retries,
rate limit, reply cap …) or the path of a provider file (relative to the
config). ``rubric_file`` may replace ``rubric`` (relative to the config).
Scores enter a RAG report as the per-case metric ``judge_score``: invalid
verdicts and failed calls are error rows, counted by reason and left out,
never averaged in. With ``repeat`` N the mean is *pooled over repeats* (each
case's value is the mean of its valid repeats; `JudgeResult.mean`) and the
per-repeat means are reported beside it. When every call fails, `run_judge`
raises a `TargetError` naming the endpoint and the reason. With human labels
for some cases, the report adds the prediction-powered mean (`ppi_mean`): the
judge's mean over every case, corrected by its bias on the labelled ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rankproof._errors import ConfigError, InputError, TargetError
from rankproof._io import PathLike
from rankproof.data import read_jsonl, read_model, validate_model
from rankproof.measures import register_metric
from rankproof.providers import Provider, ProviderConfig, load_provider_config
from rankproof.rag._answers import AnswerRow
from rankproof.rag._judge import Judge, JudgeResult, Label, check_scale
from rankproof.rag._ppi import PPIResult, ppi_mean

if TYPE_CHECKING:
    from rankproof.engine import Executor

JUDGE_METRIC = "judge_score"


class JudgeConfig(BaseModel):
    """A judge's config file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = "judge"
    model: str = Field(min_length=1)
    rubric: str | None = None
    rubric_file: str | None = None
    scale: list[int] | list[str]
    endpoint: dict[str, Any] | str
    cache_dir: str | None = None

    @model_validator(mode="after")
    def _one_rubric(self) -> JudgeConfig:
        if (self.rubric is None) == (self.rubric_file is None):
            raise ValueError("give exactly one of rubric and rubric_file")
        return self


def load_judge(path: PathLike) -> Judge:
    """The `Judge` a config file describes, speaking to its OpenAI-compatible endpoint."""
    config = read_model(path, JudgeConfig, what="judge config")
    base = Path(path).parent
    rubric = config.rubric
    if rubric is None:
        assert config.rubric_file is not None
        rubric_path = base / config.rubric_file
        try:
            rubric = rubric_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot read the rubric: {exc.strerror}", path=str(rubric_path),
                             field="rubric_file") from None
    if isinstance(config.endpoint, str):
        provider = load_provider_config(base / config.endpoint).model_copy(
            update={"model": config.model})
    else:
        if "model" in config.endpoint:
            raise ConfigError(f"{path}: field 'endpoint.model': the judge's model is the "
                              "top-level 'model'")
        provider = validate_model({"name": config.name, **config.endpoint,
                                   "model": config.model}, ProviderConfig, str(path),
                                  what="judge config", kind="valid judge endpoint",
                                  error=ConfigError)
    call = ProviderCall(provider, list(config.scale))
    return Judge(rubric, config.model, list(config.scale), call,
                 cache_dir=None if config.cache_dir is None else base / config.cache_dir,
                 name=config.name)


class ProviderCall:
    """A judge ``call`` through `rankproof.providers.Provider` (retries, rate limit,
    deadline, reply cap, failure reasons); the judge keeps its own cache."""

    def __init__(self, config: ProviderConfig, scale: Sequence[Label] | None = None) -> None:
        self.provider = Provider(config, cache=False)
        self.endpoint = config.base_url
        self.schema = None if scale is None else verdict_schema(scale)

    def __call__(self, prompt: str, *, model: str) -> str:
        # Structured output is asked for (the provider's structured_output setting); the
        # judge validates the reply itself, so an invalid verdict stays a cached error row.
        return self.provider.chat(prompt, schema=self.schema, validate=False).content


def verdict_schema(scale: Sequence[Label]) -> type[BaseModel]:
    """The verdict as a pydantic model whose ``score`` must be one of the scale's labels
    (sent as the JSON schema of ``response_format``)."""
    from typing import Literal

    from pydantic import create_model

    labels: Any = Literal.__getitem__(tuple(scale))  # a Literal of the scale's labels
    return create_model("Verdict", __config__=ConfigDict(extra="forbid"),
                        score=(labels, ...), reason=(str, ...))


def load_labels(path: PathLike, scale: Sequence[Label]) -> dict[str, Label]:
    """Human labels ``{query_id, label}`` (JSONL) on the judge's scale; refused by line."""
    scale = check_scale(list(scale))
    labels: dict[str, Label] = {}
    for line, obj in read_jsonl(path):
        qid, label = obj.get("query_id"), obj.get("label")
        if set(obj) - {"query_id", "label"}:
            raise InputError("a label row has query_id and label only", path=str(path),
                             line=line, field=sorted(set(obj) - {"query_id", "label"})[0])
        if not isinstance(qid, str) or not qid:
            raise InputError(f"query_id must be a non-empty string, got {qid!r}",
                             path=str(path), line=line, field="query_id")
        if qid in labels:
            raise InputError(f"query {qid!r} is labelled twice", path=str(path), line=line,
                             field="query_id")
        if type(label) is not type(scale[0]) or label not in scale:
            raise InputError(f"label {label!r} is not on the judge's scale {list(scale)}",
                             path=str(path), line=line, field="label")
        labels[qid] = label
    return labels


@dataclass(frozen=True)
class JudgeSummary:
    """What a judge added to a report: who judged, how often it failed, and the PPI mean."""

    identity: Mapping[str, Any]
    calls: int
    repeat: int
    n_errors: int
    mean: float | None
    self_agreement: float | None
    repeat_kappa: float | None
    ppi: PPIResult | None = None
    failures: Mapping[str, int] = field(default_factory=dict)
    cases: int = 0
    cases_affected: int = 0
    repeat_means: tuple[float | None, ...] = ()
    endpoint: str | None = None

    def failure_line(self) -> str | None:
        """``3 of 44 call(s) failed (connection refused 2, HTTP 500 1); 3 of 22 case(s)
        affected``, or None when nothing failed."""
        if not self.n_errors:
            return None
        total = self.cases * self.repeat
        reasons = ", ".join(f"{r} {n}" for r, n in self.failures.items())
        share = f"{self.cases_affected / self.cases:.0%}" if self.cases else "—"
        return (f"{self.n_errors} of {total} verdict(s) failed ({reasons}); "
                f"{self.cases_affected} of {self.cases} case(s) affected ({share})")

    def to_dict(self) -> dict[str, Any]:
        return {"identity": dict(self.identity), "calls": self.calls, "repeat": self.repeat,
                "n_errors": self.n_errors, "mean": self.mean,
                "mean_definition": MEAN_DEFINITION,
                "repeat_means": list(self.repeat_means),
                "failures": dict(self.failures), "cases": self.cases,
                "cases_affected": self.cases_affected, "endpoint": self.endpoint,
                "self_agreement": self.self_agreement, "repeat_kappa": self.repeat_kappa,
                "ppi": None if self.ppi is None else self.ppi.to_dict()}


MEAN_DEFINITION = ("pooled over repeats: the mean over cases of each case's mean over its "
                   "valid repeats")


def identity_dict(judge: Judge) -> dict[str, Any]:
    ident = judge.identity
    return {"model": ident.model, "rubric_digest": ident.rubric_digest,
            "scale": list(ident.scale),
            "prompt_template_digest": ident.prompt_template_digest}


def run_judge(judge: Judge, rows: Sequence[AnswerRow], *, repeat: int = 1,
              queries: Mapping[str, str] | None = None,
              labels: Mapping[str, Label] | None = None,
              executor: Executor | None = None) -> tuple[JudgeResult, JudgeSummary]:
    """Judge every row (concurrently on ``executor``, when given: `Judge.judge`); with
    human ``labels``, add the prediction-powered mean."""
    result = judge.judge(rows, repeat, queries=queries, executor=executor)
    endpoint = getattr(judge.call, "endpoint", None) or getattr(judge.call, "url", None)
    failures = result.failures()
    if result.verdicts and result.n_errors == len(result.verdicts):
        raise _all_failed(judge.name, endpoint, failures, len(result.verdicts))
    scores: Mapping[str, Label | float] = (result.case_means() if judge.ordinal
                                           else result.scores(0))
    ppi = None
    if labels:
        numeric = all(isinstance(v, int | float) for v in scores.values())
        if not numeric:
            raise InputError("a corrected mean needs a numeric scale", field="labels")
        labelled = [q for q in labels if q in scores]
        if len(labelled) < 2:
            raise InputError(f"{len(labelled)} labelled case(s) have a valid judge score; "
                             "a corrected mean needs at least 2", field="labels")
        ppi = ppi_mean([float(v) for v in scores.values()],
                       [float(scores[q]) for q in labelled],
                       [float(labels[q]) for q in labelled])
    cases = {v.query_id for v in result.verdicts}
    affected = {v.query_id for v in result.verdicts if not v.ok}
    summary = JudgeSummary(identity_dict(judge), result.calls, repeat, result.n_errors,
                           result.mean, result.self_agreement, result.repeat_kappa, ppi,
                           failures, len(cases), len(affected),
                           tuple(result.repeat_means()), endpoint)
    return result, summary


_UNREACHABLE = ("connection refused", "timeout", "transport error")


def _all_failed(name: str, endpoint: str | None, failures: Mapping[str, int],
                total: int) -> TargetError:
    """Every verdict failed: one error naming the endpoint and the reason(s)."""
    who = "the judge" if name == "judge" else f"the judge {name!r}"
    where = f"{who} at {endpoint}" if endpoint else who
    ranked = sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))
    reasons = "; ".join(f"{r} ({n} of {total} calls)" for r, n in ranked)
    verb = "could not be reached" if ranked and ranked[0][0] in _UNREACHABLE else \
        "failed every call"
    return TargetError(f"{where} {verb}: {reasons}", target=endpoint)


@register_metric(JUDGE_METRIC, higher_is_better=True)
def judge_score(response: Any, case: Any) -> float:
    """The LLM judge's score of the answer (its first repeat; error rows have none)."""
    value = response.meta.get(JUDGE_METRIC) if response.meta else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"case {case.id!r} has no judge score (run the judge first)",
                         field=JUDGE_METRIC)
    return float(value)
