"""A judge from a config file, its scores beside the other RAG metrics, and its corrected mean.

The config (YAML or JSON, validated) names everything that changes a verdict —
model, rubric, scale — and where the model is served::

    name: faithfulness
    model: qwen2.5-7b-instruct
    rubric: Score 1-5 how well every claim of the answer is supported by its passages.
    scale: [1, 2, 3, 4, 5]
    endpoint: {base_url: "http://127.0.0.1:8000/v1", api_key_env: JUDGE_API_KEY}

``rubric_file`` may replace ``rubric`` (relative to the config). Scores enter a
RAG report as the per-case metric ``judge_score``: invalid verdicts are error
rows, counted and left out, never averaged in. With human labels for some
cases, the report adds the prediction-powered mean (`ppi_mean`): the judge's
mean over every case, corrected by its bias on the labelled ones.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rankproof._errors import ConfigError, InputError
from rankproof._io import PathLike
from rankproof.data import read_jsonl, read_model
from rankproof.measures import register_metric
from rankproof.rag._answers import AnswerRow
from rankproof.rag._judge import Judge, JudgeResult, Label, OpenAICompatible, check_scale
from rankproof.rag._ppi import PPIResult, ppi_mean

if TYPE_CHECKING:
    from rankproof.engine import Executor

JUDGE_METRIC = "judge_score"


class _Endpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    base_url: str = Field(min_length=1)
    api_key_env: str | None = None
    timeout: float = Field(default=60.0, gt=0)


class JudgeConfig(BaseModel):
    """A judge's config file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = "judge"
    model: str = Field(min_length=1)
    rubric: str | None = None
    rubric_file: str | None = None
    scale: list[int] | list[str]
    endpoint: _Endpoint
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
    key = None
    if config.endpoint.api_key_env is not None:
        key = os.environ.get(config.endpoint.api_key_env)
        if key is None:
            raise ConfigError(f"{path}: the environment variable "
                              f"{config.endpoint.api_key_env} (endpoint.api_key_env) is not set")
    call = OpenAICompatible(config.endpoint.base_url, api_key=key,
                            timeout=config.endpoint.timeout)
    return Judge(rubric, config.model, list(config.scale), call,
                 cache_dir=None if config.cache_dir is None else base / config.cache_dir,
                 name=config.name)


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

    def to_dict(self) -> dict[str, Any]:
        return {"identity": dict(self.identity), "calls": self.calls, "repeat": self.repeat,
                "n_errors": self.n_errors, "mean": self.mean,
                "self_agreement": self.self_agreement, "repeat_kappa": self.repeat_kappa,
                "ppi": None if self.ppi is None else self.ppi.to_dict()}


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
    scores = result.scores(0)
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
    summary = JudgeSummary(identity_dict(judge), result.calls, repeat, result.n_errors,
                           result.mean, result.self_agreement, result.repeat_kappa, ppi)
    return result, summary


@register_metric(JUDGE_METRIC, higher_is_better=True)
def judge_score(response: Any, case: Any) -> float:
    """The LLM judge's score of the answer (its first repeat; error rows have none)."""
    value = response.meta.get(JUDGE_METRIC) if response.meta else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"case {case.id!r} has no judge score (run the judge first)",
                         field=JUDGE_METRIC)
    return float(value)
