"""Scoring answer files, and comparing arms: the RAG report and `compare_arms`.

Every RAG metric is a per-case metric of the one registry (`rankproof.measures`),
computed on a stored answer exactly as it would be on a live target's
response: the answer is the response's ``text``, the passages it was shown
its ``meta["contexts"]``, the references the case's ``meta["references"]``.
So a RAG report is a `rankproof.targets.RunResult` underneath (the gate and
baselines read it as they read any run) with the RAG extras beside it.

Answer metrics need a reference: a question whose references list is empty
(no answer exists) is not scored by them, and the report says how many were
left out. Nothing else is skipped silently: a metric that cannot compute a
case raises, naming it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rankproof._errors import ConfigError, InputError
from rankproof.comparison import Comparison, compare_scores
from rankproof.data import Qrels
from rankproof.measures import MetricDef, lookup
from rankproof.rag._answers import AnswerFile, AnswerRow, ArmManifest, References, aligned
from rankproof.rag._judge import Judge, Label, check_judge_cost
from rankproof.rag._judging import JUDGE_METRIC, JudgeSummary, run_judge
from rankproof.rag._text import answer_normalisation
from rankproof.stats import (
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    StatSettings,
)
from rankproof.targets import Case, CaseRow, RunProvenance, RunResult, TargetResponse

if TYPE_CHECKING:
    from rankproof.engine import Executor

KIND = "rankproof.rag"
SCHEMA_VERSION = 1
#: Metrics that compare the answer with reference answers (skipped for unanswerable ones).
ANSWER_METRICS: tuple[str, ...] = ("exact_match", "token_f1", "rouge_l", "bleu")
#: Metrics that read the answer against the passages it was shown.
GROUNDING_METRICS: tuple[str, ...] = ("grounding", "grounding_2gram", "grounding_3gram",
                                      "grounding_4gram", "grounding_cited",
                                      "citations_dangling", "quotes_unsupported")
#: The RAG triad, each dimension its own metric (never blended into one number).
TRIAD_METRICS: tuple[str, ...] = ("context_relevance", "grounding", "answer_relevance")
DEFAULT_METRICS: tuple[str, ...] = tuple(dict.fromkeys(
    (*ANSWER_METRICS, *GROUNDING_METRICS, *TRIAD_METRICS)))


def as_case(row: AnswerRow, references: References | None,
            qrels: Qrels | Mapping[str, Mapping[str, int]] | None) -> Case:
    """The case a stored answer is scored against (references and qrels in it).

    ``qrels`` may be given as ``qrels.to_dict()`` once, when many rows are scored.
    """
    refs = None if references is None else references.answers.get(row.query_id)
    query = row.query or (None if references is None else references.queries.get(row.query_id))
    meta: dict[str, Any] = {}
    if refs is not None:
        meta["references"] = list(refs)
    relevance = None
    if qrels is not None:
        judged = qrels.to_dict() if isinstance(qrels, Qrels) else qrels
        relevance = {d: int(v) for d, v in judged.get(row.query_id, {}).items()}
    return Case(id=row.query_id, query=query or "", relevance=relevance, meta=meta)


def as_response(row: AnswerRow) -> TargetResponse:
    """A stored answer as the response a live target would have given."""
    meta: dict[str, Any] = {"contexts": [{"id": c.id, "text": c.text} for c in row.contexts]}
    if row.citations is not None:
        meta["citations"] = list(row.citations)
    return TargetResponse(ranked_ids=tuple(c.id for c in row.contexts), text=row.answer,
                          meta=meta)


@dataclass(frozen=True)
class RagReport:
    """Per-case values of every RAG metric for one answer file, and what was left out.

    ``run`` holds the values (a `RunResult`: the gate and baselines read it);
    ``means`` are derived from it; ``unscored`` maps a metric to the query ids
    it did not score (unanswerable questions for answer metrics);
    ``manifest`` is the arm's, when its file had one.
    """

    name: str
    run: RunResult
    metrics: tuple[str, ...]
    unscored: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    manifest: ArmManifest | None = None
    source: str | None = None
    caveats: tuple[str, ...] = ()
    judge: JudgeSummary | None = None
    normalisation: tuple[str, ...] = ()
    """The answer metrics' text normalisation, step by step (`ANSWER_NORMALISATION`)."""

    @property
    def n(self) -> int:
        return len(self.run.rows)

    @property
    def means(self) -> dict[str, float]:
        """The mean of each metric over the cases it scored."""
        out = {}
        for m in self.metrics:
            values = [r.values[m] for r in self.run.rows if m in r.values]
            if values:
                out[m] = sum(values) / len(values)
        return out

    def values(self, metric: str) -> dict[str, float]:
        """``{query id: value}`` of one metric (the cases it scored)."""
        return {r.case_id: r.values[metric] for r in self.run.rows if metric in r.values}

    def to_dict(self) -> dict[str, Any]:
        return {"kind": KIND, "schema_version": SCHEMA_VERSION, "name": self.name,
                "source": self.source, "n": self.n, "metrics": list(self.metrics),
                "means": self.means,
                "unscored": {k: list(v) for k, v in self.unscored.items()},
                "manifest": None if self.manifest is None else self.manifest.to_dict(),
                "caveats": list(self.caveats),
                "normalisation": list(self.normalisation),
                "judge": None if self.judge is None else self.judge.to_dict(),
                "run": self.run.to_dict()}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)


def _defs(metrics: Sequence[str]) -> list[MetricDef]:
    defs = []
    for name in metrics:
        d = lookup(name)
        if d.kind != "case" or d.fn is None:
            raise ConfigError(f"{name!r} is not a per-case metric; a RAG report computes "
                              "per-case metrics on each answer")
        defs.append(d)
    return defs


def score_answers(answers: AnswerFile, references: References | None = None, *,
                  qrels: Qrels | None = None,
                  metrics: Sequence[str] = DEFAULT_METRICS, judge: Judge | None = None,
                  repeat: int = 1, labels: Mapping[str, Label] | None = None,
                  executor: Executor | None = None,
                  strip_citations: bool = True) -> RagReport:
    """Every metric on every answer; see the module docstring for what is left out.

    The RAG metrics are registered when `rankproof.rag` is imported (which
    importing this function implies). With a ``judge``, its score of each
    answer is the metric ``judge_score`` (error rows left out and counted);
    with human ``labels`` too, the report carries the prediction-powered mean.
    ``executor`` (`rankproof.engine`) makes the judge's calls concurrently; the scores
    are the same as one call after another. The answer metrics remove citation
    markers (``[1]``) before normalising unless ``strip_citations=False``; the
    report's ``normalisation`` records the steps.
    """
    if not isinstance(strip_citations, bool):
        raise InputError(f"strip_citations must be true or false, got {strip_citations!r}",
                         field="strip_citations")
    if judge is not None and isinstance(repeat, int) and not isinstance(repeat, bool):
        check_judge_cost(len(answers.rows), repeat)  # before a metric is computed
    if references is not None:
        references.check_covers(answers.query_ids, source=answers.path or answers.name)
    defs = _defs(metrics)
    answer_metrics = set(ANSWER_METRICS)
    if references is None:
        needing = [d.name for d in defs if d.name in answer_metrics]
        if needing:
            raise InputError(f"{', '.join(needing)} compare answers with references: give "
                             "references (--references REF.jsonl) or leave them out of the "
                             "metrics", field="references")
    rows = []
    unscored: dict[str, list[str]] = {}
    summary = None
    judged: dict[str, Label] = {}
    if judge is not None:
        queries = dict(references.queries) if references is not None else None
        result, summary = run_judge(judge, answers.rows, repeat=repeat, queries=queries,
                                    labels=labels, executor=executor)
        # One mean everywhere, pooled over repeats: a case's value is the mean of its
        # valid repeats (`JudgeResult.case_means`), the first repeat's label on a nominal scale.
        judged = result.case_means() if judge.ordinal else result.scores(0)  # type: ignore[assignment]
    relevance = None if qrels is None else qrels.to_dict()  # once, not per row
    for row in answers.rows:
        case, response = as_case(row, references, relevance), as_response(row)
        if not strip_citations:
            case = dataclasses.replace(case, meta={**case.meta, "strip_citations": False})
        values: dict[str, float] = {}
        if judge is not None:
            if row.query_id in judged:
                values[JUDGE_METRIC] = float(judged[row.query_id])
            else:
                unscored.setdefault(JUDGE_METRIC, []).append(row.query_id)
        for d in defs:
            if d.name in answer_metrics and not case.meta.get("references"):
                unscored.setdefault(d.name, []).append(row.query_id)
                continue
            assert d.fn is not None
            try:
                values[d.name] = float(d.fn(response, case))
            except InputError as exc:
                raise InputError(f"{answers.name}, query {row.query_id!r}, metric {d.name}: "
                                 f"{exc.reason}", path=answers.path, field=exc.field) from None
        rows.append(CaseRow(case_id=row.query_id, values=values))
    caveats = []
    for name, ids in unscored.items():
        if name == JUDGE_METRIC:
            caveats.append(f"{name}: {len(ids)} invalid or failed verdict(s) left out (error "
                           "rows, never averaged in)")
            continue
        caveats.append(f"{name}: {len(ids)} question(s) without a reference answer are not "
                       "scored")
    if judge is not None:
        caveats.append("judge_score is an LLM judge's: advisory until calibrated against "
                       "human labels (rankproof rag calibrate-judge)")
    if "context_relevance" in {d.name for d in defs} and qrels is None:
        caveats.append("context_relevance without qrels is the lexical query-context overlap "
                       "proxy, weaker than judged relevance (--qrels)")
    names = tuple(d.name for d in defs) + ((JUDGE_METRIC,) if judge is not None else ())
    run = RunResult(name=answers.name, rows=tuple(rows), metrics=names,
                    provenance=RunProvenance(kind="report", measures=(),
                                             judge=None if summary is None
                                             else summary.identity))
    return RagReport(name=answers.name, run=run, metrics=names,
                     unscored={k: tuple(v) for k, v in unscored.items()},
                     manifest=answers.manifest, source=answers.path, caveats=tuple(caveats),
                     judge=summary,
                     normalisation=answer_normalisation(strip_citations)
                     if answer_metrics & set(names) else ())


def compare_arms(arms: Sequence[AnswerFile], references: References | None = None, *,
                 qrels: Qrels | None = None, metrics: Sequence[str] = DEFAULT_METRICS,
                 allow_arm_mismatch: bool = False, alpha: float = DEFAULT_ALPHA,
                 correction: str = DEFAULT_CORRECTION, resamples: int = DEFAULT_RESAMPLES,
                 seed: int = DEFAULT_SEED) -> tuple[Comparison, list[RagReport]]:
    """Every arm against the first, per metric, paired by query id (one family, Holm).

    Arms must answer the same queries (`aligned`); arms whose manifests differ
    in prompt template, generator checkpoint or decoding are refused unless
    ``allow_arm_mismatch``, which stamps a caveat: a difference in answers
    could then come from any of them.
    """
    if len(arms) < 2:
        raise InputError(f"rag compare needs at least two answer files, got {len(arms)}")
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        raise InputError(f"two arms share a name ({', '.join(names)}); rename a file")
    aligned(arms)
    caveats: list[str] = []
    base = arms[0]
    for arm in arms[1:]:
        if base.manifest is None or arm.manifest is None:
            caveats.append(f"{arm.name} vs {base.name}: no arm manifest on "
                           f"{'both' if base.manifest is None and arm.manifest is None else 'one'}"
                           " side, so what else differs between the arms is not recorded")
            continue
        diff = base.manifest.differences(arm.manifest)
        if diff and not allow_arm_mismatch:
            raise InputError(f"{arm.name} and {base.name} differ in {', '.join(diff)}: a "
                             "difference in the answers could come from any of them; pass "
                             "--allow-arm-mismatch to compare anyway (stamped)",
                             path=arm.path, field="__manifest__")
        if diff:
            caveats.append(f"{arm.name} vs {base.name}: the arms differ in {', '.join(diff)} "
                           "(--allow-arm-mismatch)")
    reports = [score_answers(a, references, qrels=qrels, metrics=metrics) for a in arms]
    shared = [m for m in reports[0].metrics
              if all(set(r.values(m)) == set(reports[0].values(m)) and r.values(m)
                     for r in reports)]
    scores = {r.name: {m: r.values(m) for m in shared} for r in reports}
    stats = StatSettings(alpha=alpha, correction=correction,  # type: ignore[arg-type]
                         resamples=resamples, seed=seed)
    result = compare_scores(scores, baseline=base.name, stats=stats, unit="query")
    for r in reports:
        caveats.extend(f"{r.name}: {c}" for c in r.caveats)
    return dataclasses.replace(result, caveats=tuple(dict.fromkeys(caveats))), reports
