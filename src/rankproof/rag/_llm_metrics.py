"""LLM-based RAG metrics (RAGAS definitions) through a provider: each a per-case score in [0, 1].

Definitions follow the RAGAS paper (Es et al. 2023, "RAGAS: Automated
Evaluation of Retrieval Augmented Generation") and its public metric docs:

* ``faithfulness`` — the model splits the answer into atomic statements and
  says, for each, whether the passages support it; score = supported /
  statements. Output schema `_Statements`.
* ``answer_relevancy`` — the model writes `N_QUESTIONS` questions the answer
  would answer and says whether the answer is noncommittal; score = 0 when
  noncommittal, else the mean cosine similarity between the embeddings of
  the generated questions and of the real question (the provider must allow
  ``embeddings``), clipped to [0, 1]. Output schema `_Questions`.
* ``context_precision`` — for each passage, in rank order, was it useful to
  arrive at the reference answer; score = Σ_k precision@k · v_k / Σ_k v_k
  (0 when none is useful). Needs references. Output schema `_Useful`.
* ``context_recall`` — the model splits the reference answer into sentences
  and says whether each can be attributed to the passages; score = attributed
  / sentences. Needs references. Output schema `_Attributed`.

Every call asks for structured output validated before use, and goes through
the provider's cache (an unchanged rerun makes no call). A failed call or an
unusable reply (no statements, a verdict list that does not cover every
passage) is an error row counted by reason, never a guessed score. The
report's mean of each metric carries a percentile-bootstrap interval
(labelled so); the scores are advisory until calibrated, like the judge's.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rankproof._errors import ConfigError, InputError, TargetError
from rankproof._io import PathLike
from rankproof.data import read_jsonl
from rankproof.measures import register_metric
from rankproof.providers import Provider, ProviderError
from rankproof.rag._answers import AnswerFile, AnswerRow, References
from rankproof.rag._ppi import ppi_mean
from rankproof.rag._score import RagReport
from rankproof.stats import bootstrap_ci
from rankproof.targets import CaseRow

LLM_METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
NEEDS_REFERENCES = frozenset({"context_precision", "context_recall"})
N_QUESTIONS = 3
INTERVAL_RESAMPLES = 2000
INTERVAL_SEED = 0


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Statement(_Model):
    statement: str
    supported: bool


class _Statements(_Model):
    statements: list[_Statement]


class _Questions(_Model):
    questions: list[str] = Field(min_length=1, max_length=10)
    noncommittal: bool


class _Verdict(_Model):
    index: int
    useful: bool


class _Useful(_Model):
    verdicts: list[_Verdict]


class _Sentence(_Model):
    sentence: str
    attributed: bool


class _Attributed(_Model):
    sentences: list[_Sentence]


PROMPTS = {
    "faithfulness": (
        "Split the answer into its atomic factual statements. For each statement, say "
        "whether the numbered passages support it (supported: true) or not.\n\n"
        "Question:\n{query}\n\nPassages:\n{contexts}\n\nAnswer:\n{answer}\n\n"
        'Reply with JSON: {{"statements": [{{"statement": "...", "supported": true}}]}}'),
    "answer_relevancy": (
        f"Write {N_QUESTIONS} different questions that the answer below answers, and say "
        "whether the answer is noncommittal (evasive, vague, or says it does not know).\n\n"
        "Answer:\n{answer}\n\n"
        'Reply with JSON: {{"questions": ["..."], "noncommittal": false}}'),
    "context_precision": (
        "For each numbered passage, say whether it was useful in arriving at the reference "
        "answer to the question.\n\nQuestion:\n{query}\n\nReference answer:\n{reference}\n\n"
        "Passages:\n{contexts}\n\n"
        'Reply with JSON: {{"verdicts": [{{"index": 1, "useful": true}}]}} with one verdict '
        "per passage."),
    "context_recall": (
        "Split the reference answer into sentences. For each, say whether it can be "
        "attributed to the numbered passages (attributed: true) or not.\n\nQuestion:\n"
        "{query}\n\nPassages:\n{contexts}\n\nReference answer:\n{reference}\n\n"
        'Reply with JSON: {{"sentences": [{{"sentence": "...", "attributed": true}}]}}'),
}
SCHEMAS: dict[str, type[BaseModel]] = {
    "faithfulness": _Statements, "answer_relevancy": _Questions,
    "context_precision": _Useful, "context_recall": _Attributed}
PROMPT_DIGESTS = {m: "sha256:" + hashlib.sha256(p.encode()).hexdigest()
                  for m, p in PROMPTS.items()}


class _Unusable(Exception):
    """A valid reply that still yields no score (counted as ``unusable reply``)."""


def check_llm_metrics(names: Sequence[str], provider: Provider, has_references: bool
                      ) -> tuple[str, ...]:
    """The metric names, refused (`ConfigError`) when unknown or missing what they need."""
    unknown = [n for n in names if n not in LLM_METRICS]
    if unknown or not names:
        raise ConfigError(f"unknown LLM metric(s) {unknown}; choose from "
                          f"{', '.join(LLM_METRICS)}")
    if not has_references and NEEDS_REFERENCES & set(names):
        raise ConfigError(f"{', '.join(sorted(NEEDS_REFERENCES & set(names)))} compare the "
                          "passages with reference answers: give --references")
    if "answer_relevancy" in names and "embeddings" not in provider.config.kinds:
        raise ConfigError(f"answer_relevancy compares embeddings: provider "
                          f"{provider.config.name!r} must allow embeddings (kinds: [chat, "
                          "embeddings])")
    return tuple(dict.fromkeys(names))


def _contexts(row: AnswerRow) -> str:
    return "\n".join(f"[{i}] {c.text}" for i, c in enumerate(row.contexts, 1)) or "(none)"


def _fraction(flags: Sequence[bool], what: str) -> float:
    if not flags:
        raise _Unusable(f"the reply lists no {what}")
    return sum(flags) / len(flags)


def _score(metric: str, provider: Provider, row: AnswerRow, query: str,
           reference: str) -> float:
    prompt = PROMPTS[metric].format(query=query, answer=row.answer, reference=reference,
                                    contexts=_contexts(row))
    value: Any = provider.chat(prompt, schema=SCHEMAS[metric]).value
    if metric == "faithfulness":
        return _fraction([s.supported for s in value.statements], "statements")
    if metric == "context_recall":
        return _fraction([s.attributed for s in value.sentences], "sentences")
    if metric == "context_precision":
        k = len(row.contexts)
        useful = {v.index: v.useful for v in value.verdicts}
        if sorted(useful) != list(range(1, k + 1)) or len(value.verdicts) != k:
            raise _Unusable(f"the verdicts do not cover passages 1..{k} once each")
        flags = [useful[i] for i in range(1, k + 1)]
        hits, total = 0, 0.0
        for i, v in enumerate(flags, 1):
            hits += v
            total += (hits / i) * v
        return total / hits if hits else 0.0
    if value.noncommittal:
        return 0.0
    vectors = provider.embed([query, *value.questions]).astype(np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    if not np.all(norms > 0):
        raise _Unusable("an embedding is the zero vector")
    unit = vectors / norms[:, None]
    return float(np.clip(np.mean(unit[1:] @ unit[0]), 0.0, 1.0))


@dataclass(frozen=True)
class LLMMetricsResult:
    """Per-case scores of each LLM metric, failures by reason, and the means' intervals."""

    scores: Mapping[str, Mapping[str, float]]
    failures: Mapping[str, Mapping[str, int]]
    unscored: Mapping[str, tuple[str, ...]]
    provider: Mapping[str, Any]
    usage: Mapping[str, Any]

    def summary(self, labels: Mapping[str, Mapping[str, float]] | None = None
                ) -> dict[str, Any]:
        """The JSON's ``llm_metrics``: per metric its mean, interval, failures, prompt
        digest and schema; with human ``labels`` (`load_metric_labels`), also its
        prediction-powered mean (``ppi``, `ppi_mean`) over the labelled cases the
        metric scored, the model's score standing in for the rest."""
        out: dict[str, Any] = {}
        for metric, values in self.scores.items():
            xs = np.asarray(list(values.values()), dtype=np.float64)
            interval = None
            if len(xs) >= 2:
                ci = bootstrap_ci(xs, np.zeros_like(xs), resamples=INTERVAL_RESAMPLES,
                                  seed=INTERVAL_SEED)
                interval = {"low": ci.ci_low, "high": ci.ci_high,
                            "method": "percentile bootstrap", "confidence_level": 0.95,
                            "resamples": INTERVAL_RESAMPLES, "seed": INTERVAL_SEED}
            out[metric] = {"mean": float(xs.mean()) if len(xs) else None, "n": len(xs),
                           "interval": interval, "failures": dict(self.failures[metric]),
                           "prompt_digest": PROMPT_DIGESTS[metric],
                           "schema": SCHEMAS[metric].__name__.lstrip("_")}
            if labels is not None:
                out[metric]["ppi"] = _ppi(values, labels.get(metric, {}))
        return {"metrics": out, "provider": dict(self.provider), "usage": dict(self.usage),
                "advisory": "LLM metrics are advisory until calibrated against human labels",
                "definitions": "docs/providers.md#llm-metrics"}


def load_metric_labels(path: PathLike) -> dict[str, dict[str, float]]:
    """Human labels of the LLM metrics: JSONL rows ``{query_id, metric, label}`` with
    ``label`` in [0, 1] on the metric's own scale; ``metric → query → label``.
    A row with another field, an unknown metric, a label outside [0, 1] or a
    (query, metric) labelled twice is refused with its line."""
    out: dict[str, dict[str, float]] = {}
    for line, obj in read_jsonl(path):
        extra = set(obj) - {"query_id", "metric", "label"}
        if extra:
            raise InputError("a label row has query_id, metric and label only",
                             path=str(path), line=line, field=sorted(extra)[0])
        qid, metric, label = obj.get("query_id"), obj.get("metric"), obj.get("label")
        if not isinstance(qid, str) or not qid:
            raise InputError(f"query_id must be a non-empty string, got {qid!r}",
                             path=str(path), line=line, field="query_id")
        if metric not in LLM_METRICS:
            raise InputError(f"metric {metric!r} is not an LLM metric "
                             f"({', '.join(LLM_METRICS)})", path=str(path), line=line,
                             field="metric")
        if isinstance(label, bool) or not isinstance(label, int | float) \
                or not 0.0 <= float(label) <= 1.0:
            raise InputError(f"label must be a number in [0, 1], got {label!r}",
                             path=str(path), line=line, field="label")
        held = out.setdefault(str(metric), {})
        if qid in held:
            raise InputError(f"query {qid!r} is labelled twice for {metric}", path=str(path),
                             line=line, field="query_id")
        held[qid] = float(label)
    return out


def _ppi(scores: Mapping[str, float], labels: Mapping[str, float]) -> dict[str, Any] | None:
    """The PPI++ mean of one metric: its labelled cases that the model also scored pair the
    two; fewer than two such cases give no estimate (None), as for the judge."""
    both = [q for q in labels if q in scores]
    if len(both) < 2 or len(scores) < 2:
        return None
    result = ppi_mean(list(scores.values()), [scores[q] for q in both],
                      [labels[q] for q in both])
    return {**result.to_dict(), "labelled": len(both)}


def llm_metrics(rows: Sequence[AnswerRow], names: Sequence[str], provider: Provider, *,
                queries: Mapping[str, str], references: Mapping[str, str],
                progress: Callable[[str], None] | None = None) -> LLMMetricsResult:
    """Score every row with every metric in ``names`` (checked by `check_llm_metrics`)."""
    scores: dict[str, dict[str, float]] = {m: {} for m in names}
    failures: dict[str, dict[str, int]] = {m: {} for m in names}
    unscored: dict[str, list[str]] = {}
    for row in rows:
        query = row.query or queries.get(row.query_id, "")
        reference = references.get(row.query_id)
        for metric in names:
            if metric in NEEDS_REFERENCES and not reference:
                unscored.setdefault(metric, []).append(row.query_id)
                continue
            try:
                scores[metric][row.query_id] = _score(metric, provider, row, query,
                                                      reference or "")
            except ProviderError as exc:
                reason = exc.reason
            except _Unusable:
                reason = "unusable reply"
            else:
                continue
            failures[metric][reason] = failures[metric].get(reason, 0) + 1
            unscored.setdefault(metric, []).append(row.query_id)
        if progress is not None:
            progress(row.query_id)
    cfg = provider.config
    return LLMMetricsResult(scores, failures, {k: tuple(v) for k, v in unscored.items()},
                            {"name": cfg.name, "base_url": cfg.base_url, "model": cfg.model},
                            provider.stats.to_dict())


def merge_llm_metrics(report: RagReport, result: LLMMetricsResult) -> RagReport:
    """``report`` with each case's LLM-metric scores added to its row (the metrics appended,
    their unscored cases and an advisory caveat recorded)."""
    names = tuple(m for m in result.scores if m not in report.metrics)
    rows = tuple(CaseRow(case_id=r.case_id, values={
        **r.values, **{m: result.scores[m][r.case_id] for m in names
                       if r.case_id in result.scores[m]}}) for r in report.run.rows)
    metrics = report.metrics + names
    caveats = [*report.caveats, "the LLM metrics (" + ", ".join(names) + ") are a model's "
               "judgements: advisory until calibrated against human labels"]
    for m in names:
        failed = sum(result.failures[m].values())
        if failed:
            caveats.append(f"{m}: {failed} failed call(s) or unusable repl(ies) left out "
                           f"({', '.join(f'{r} {n}' for r, n in result.failures[m].items())})")
    return dataclasses.replace(
        report, run=dataclasses.replace(report.run, rows=rows, metrics=metrics),
        metrics=metrics, unscored={**report.unscored, **result.unscored},
        caveats=tuple(caveats))


def score_llm_metrics(report: RagReport, answers: AnswerFile, names: Sequence[str],
                      provider: Provider, references: References | None = None,
                      labels: Mapping[str, Mapping[str, float]] | None = None
                      ) -> tuple[RagReport, dict[str, Any], list[str]]:
    """``rag score --llm-metrics`` over a scored report: the metrics added to its rows
    (`merge_llm_metrics`), the JSON's ``llm_metrics`` summary, and one line per metric
    with failures (count, share of cases, reasons). Every call failing raises a
    `TargetError` naming the endpoint and the reasons; ``names`` are checked first
    (`check_llm_metrics`)."""
    chosen = check_llm_metrics(names, provider, references is not None)
    refs = {} if references is None else {q: "; ".join(a)
                                          for q, a in references.answers.items()}
    queries = {} if references is None else dict(references.queries)
    result = llm_metrics(answers.rows, chosen, provider, queries=queries, references=refs)
    failed = {m: sum(f.values()) for m, f in result.failures.items()}
    if sum(failed.values()) and not any(result.scores.values()):
        reasons: dict[str, int] = {}
        for f in result.failures.values():
            for r, n in f.items():
                reasons[r] = reasons.get(r, 0) + n
        total = sum(reasons.values())
        shown = "; ".join(f"{r} ({n} of {total} calls)" for r, n in
                          sorted(reasons.items(), key=lambda kv: -kv[1]))
        raise TargetError(f"the LLM metrics' provider at {provider.endpoint} failed every "
                          f"call: {shown}", target=provider.endpoint)
    lines = [f"{m}: {failed[m]} of {len(answers.rows)} case(s) failed "
             f"({failed[m] / max(1, len(answers.rows)):.0%}): "
             + ", ".join(f"{r} {n}" for r, n in f.items())
             for m, f in result.failures.items() if f]
    return merge_llm_metrics(report, result), result.summary(labels), lines


def _from_meta(name: str) -> Callable[[Any, Any], float]:
    def metric(response: Any, case: Any) -> float:
        value = response.meta.get(name) if response.meta else None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError(f"case {case.id!r} has no {name} score (run rankproof rag score "
                             "--llm-metrics first)", field=name)
        return float(value)

    metric.__name__ = name
    metric.__doc__ = f"The LLM metric {name} (docs/providers.md), read from the response."
    return metric


for _name in LLM_METRICS:
    register_metric(_name, _from_meta(_name), higher_is_better=True)
