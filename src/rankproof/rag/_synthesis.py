"""Answers synthesized from retrieved passages, scored and judged: ``eval --synthesis``.

For each answerable judged query, one chat call through a provider
(`rankproof.providers.Provider`: cache, retries, rate limit, deadline, usage)
asks for an answer from the query's top-``k`` passages of one retrieval
stage, numbered ``[1]``…``[k]`` and to be cited by number. The prompt template
(`DEFAULT_PROMPT`, or the user's file) must hold ``{query}`` and
``{passages}``; it is recorded by its sha256 digest, so two runs with
different prompts never look alike.

The answers are then what an answer file would hold (`AnswerRow`), scored by
the RAG report's own metrics (`score_answers`): grounding and citations always,
the answer metrics when reference answers are given, ``judge_score`` with a
judge (advisory until calibrated, the judge's rule). A failed call is counted
by reason (`rankproof.providers.REASONS`) and its query left out of the
scores, never given an empty answer; when every call fails, `synthesize`
raises a `TargetError` naming the endpoint and the reason.

With ``echo_check``, the planted-marker citation-echo check (seed 002;
`run_echo`) runs first against the same provider and prompt: a provider whose
answer does not cite the planted passage and repeat its code is refused
(`ConfigError`), and the check writes its own artifact either way.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankproof._errors import ConfigError, InputError, TargetError
from rankproof._io import PathLike
from rankproof.data import Qrels
from rankproof.providers import Provider, ProviderConfig, ProviderError
from rankproof.rag._answers import AnswerFile, AnswerRow, ArmManifest, Context, References
from rankproof.rag._echo import DEFAULT_ARTIFACT, EchoResult, run_echo
from rankproof.rag._judge import Judge
from rankproof.rag._score import (
    DEFAULT_METRICS,
    GROUNDING_METRICS,
    RagReport,
    score_answers,
)
from rankproof.rag._text import cited_numbers

KIND = "rankproof.synthesis"
SCHEMA_VERSION = 1
DEFAULT_K = 5
MAX_K = 50
DEFAULT_PROMPT = (
    "Answer the question using only the numbered passages below. Cite the passage each "
    "claim comes from by its number in square brackets, like [1]. If the passages do not "
    "contain the answer, say that they do not.\n\n"
    "Passages:\n{passages}\n\n"
    "Question: {query}\n\n"
    "Answer:")
PLACEHOLDERS = ("{query}", "{passages}")
ECHO_QUESTION = ("What code does the inspection certificate for this site carry? Cite the "
                 "passage that says so.")
#: Metrics of a synthesized answer without references: grounding, citations, the triad's
#: reference-free dimensions.
REFERENCE_FREE_METRICS: tuple[str, ...] = (*GROUNDING_METRICS, "context_relevance",
                                           "answer_relevance")
ADVISORY = ("synthesized answers are one model's output on one prompt: their scores describe "
            "this generator with these passages, and judge_score stays advisory until the "
            "judge is calibrated against human labels")


def prompt_digest(template: str) -> str:
    """``sha256:`` + the hex digest of the template's UTF-8 bytes."""
    return "sha256:" + hashlib.sha256(template.encode("utf-8")).hexdigest()


def render_prompt(template: str, query: str, passages: Sequence[Context]) -> str:
    """The template with ``{passages}`` (``[n] text`` lines) and ``{query}`` filled in
    (plain replacement: other braces in the template stay as written)."""
    shown = "\n".join(f"[{i}] {c.text}" for i, c in enumerate(passages, 1)) or "(none)"
    return template.replace("{passages}", shown).replace("{query}", query)


@dataclass(frozen=True)
class SynthesisSettings:
    """How answers are synthesized: passages per answer, the prompt, the echo check.

    ``prompt_source`` names where a replaced prompt came from (recorded beside its
    digest); `from_options` reads a prompt file.
    """

    k: int = DEFAULT_K
    prompt: str = DEFAULT_PROMPT
    prompt_source: str = "default"
    echo_check: bool = False
    echo_artifact: Path = DEFAULT_ARTIFACT
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= MAX_K:
            raise ConfigError(f"the synthesis k (--synthesis-k) must be an integer in 1..{MAX_K}"
                              f", got {self.k!r}")
        if not isinstance(self.prompt, str) or not self.prompt.strip():
            raise ConfigError("the synthesis prompt template is empty")
        missing = [p for p in PLACEHOLDERS if p not in self.prompt]
        if missing:
            raise InputError(f"the synthesis prompt template must contain {' and '.join(missing)}"
                             " (where the question and the numbered passages go)",
                             path=None if self.prompt_source == "default"
                             else self.prompt_source, field="prompt")
        if self.max_tokens is not None and (isinstance(self.max_tokens, bool)
                                            or not isinstance(self.max_tokens, int)
                                            or self.max_tokens < 1):
            raise ConfigError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")

    @classmethod
    def from_options(cls, *, k: int = DEFAULT_K, prompt_file: PathLike | None = None,
                     echo_check: bool = False,
                     echo_artifact: PathLike = DEFAULT_ARTIFACT) -> SynthesisSettings:
        """Settings from the command's options; a prompt file is read as UTF-8 text."""
        prompt, source = DEFAULT_PROMPT, "default"
        if prompt_file is not None:
            source = str(prompt_file)
            try:
                prompt = Path(prompt_file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                reason = getattr(exc, "strerror", None) or "not UTF-8 text"
                raise InputError(f"cannot read the synthesis prompt: {reason}", path=source,
                                 field="prompt") from None
        return cls(k=k, prompt=prompt, prompt_source=source, echo_check=echo_check,
                   echo_artifact=Path(echo_artifact))

    @property
    def digest(self) -> str:
        return prompt_digest(self.prompt)


@dataclass(frozen=True)
class SynthesisQuery:
    """One query to answer: its id, its text and the ranked passages it is answered from."""

    query_id: str
    query: str
    passages: tuple[Context, ...]

    @classmethod
    def of(cls, query_id: str, query: str,
           passages: Sequence[tuple[str, str]]) -> SynthesisQuery:
        """From ``(id, text)`` pairs, best first (as `rankproof.harness.synthesis_passages`
        gives them)."""
        return cls(query_id, query, tuple(Context(i, t) for i, t in passages))


@dataclass(frozen=True)
class SynthesisResult:
    """What synthesis produced: per-query answers and scores, calls, failures by reason."""

    settings: SynthesisSettings
    provider: Mapping[str, Any]
    queries: tuple[SynthesisQuery, ...]
    answers: tuple[AnswerRow, ...]
    failed: Mapping[str, str]
    """query id → the reason its answer call failed."""
    usage: Mapping[str, Any]
    report: RagReport | None
    echo: EchoResult | None = None
    stage: str | None = None
    selected_by: str | None = None
    caveats: tuple[str, ...] = field(default_factory=tuple)

    @property
    def failures(self) -> dict[str, int]:
        """Failed answer calls by reason."""
        out: dict[str, int] = {}
        for reason in self.failed.values():
            out[reason] = out.get(reason, 0) + 1
        return dict(sorted(out.items()))

    def failure_line(self) -> str | None:
        """``2 of 78 answer(s) failed (HTTP 500 2)``, or None when none failed."""
        if not self.failed:
            return None
        reasons = ", ".join(f"{r} {n}" for r, n in self.failures.items())
        share = f"{len(self.failed) / len(self.queries):.0%}"
        return (f"{len(self.failed)} of {len(self.queries)} answer(s) failed ({reasons}); "
                f"{len(self.failed)} of {len(self.queries)} queries left out ({share})")

    def to_dict(self) -> dict[str, Any]:
        """The eval report's ``synthesis`` field."""
        rag = self.report
        scores = {} if rag is None else {r.case_id: dict(r.values) for r in rag.run.rows}
        by_id = {a.query_id: a for a in self.answers}
        cases: list[dict[str, Any]] = []
        for q in self.queries:
            row = by_id.get(q.query_id)
            case: dict[str, Any] = {
                "query_id": q.query_id, "query": q.query,
                "contexts": [{"id": c.id, "text": c.text} for c in q.passages]}
            if row is None:
                case.update(answer=None, error=self.failed.get(q.query_id))
            else:
                case.update(answer=row.answer,
                            cited=sorted({n for n in cited_numbers(row.answer)}),
                            scores=scores.get(q.query_id, {}))
            cases.append(case)
        return {
            "kind": KIND, "schema_version": SCHEMA_VERSION,
            "stage": self.stage, "selected_by": self.selected_by, "k": self.settings.k,
            "provider": dict(self.provider),
            "prompt_template_digest": self.settings.digest,
            "prompt_source": self.settings.prompt_source,
            "queries": len(self.queries), "answered": len(self.answers),
            "failed": len(self.failed), "failures": self.failures,
            **{k: self.usage.get(k) for k in ("calls", "cache_hits", "retries",
                                               "prompt_tokens", "completion_tokens", "cost")},
            "metrics": [] if rag is None else list(rag.metrics),
            "means": {} if rag is None else rag.means,
            "unscored": {} if rag is None else {k: list(v) for k, v in rag.unscored.items()},
            "judge": None if rag is None or rag.judge is None else rag.judge.to_dict(),
            "echo_check": None if self.echo is None else {
                **self.echo.to_dict(), "artifact": str(self.settings.echo_artifact)},
            "advisory": ADVISORY,
            "caveats": list(self.caveats),
            "cases": cases,
        }


_UNREACHABLE = ("connection refused", "timeout", "transport error")


def _all_failed(provider: Provider, failed: Mapping[str, str]) -> TargetError:
    counts: dict[str, int] = {}
    for reason in failed.values():
        counts[reason] = counts.get(reason, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    reasons = "; ".join(f"{r} ({n} of {len(failed)} calls)" for r, n in ranked)
    verb = "could not be reached" if ranked[0][0] in _UNREACHABLE else "failed every call"
    name = provider.config.name
    who = "the synthesis provider" + ("" if name == "provider" else f" {name!r}")
    return TargetError(f"{who} at {provider.endpoint} {verb}: {reasons}",
                       target=provider.endpoint)


def echo_check(provider: Provider, settings: SynthesisSettings,
               passages: Sequence[Context]) -> EchoResult:
    """Seed 002's planted-marker check of ``provider`` with the synthesis prompt, over
    ``passages`` (a code planted in the middle one); `ConfigError` when it fails."""
    if not passages:
        raise ConfigError("the echo check needs passages to plant its marker in")

    def ask(question: str, contexts: list[dict[str, str]]) -> tuple[str, Any]:
        shown = [Context(c["id"], c["text"]) for c in contexts]
        prompt = render_prompt(settings.prompt, question, shown)
        return provider.chat(prompt, max_tokens=settings.max_tokens).content, None

    result = run_echo(f"{provider.config.name} at {provider.endpoint}", ask,
                      passages=[c.text for c in passages], question=ECHO_QUESTION,
                      planted_index=len(passages) // 2, artifact=settings.echo_artifact)
    if not result.passed:
        what = []
        if not result.cites_planted:
            what.append(f"it cited {list(result.cited) or 'no passage'}, not passage "
                        f"[{result.planted_index + 1}] where the marker was planted")
        if not result.echoes_marker:
            what.append("its answer does not repeat the planted code")
        raise ConfigError(f"the synthesis provider {provider.config.name!r} at "
                          f"{provider.endpoint} failed the citation-echo check: "
                          f"{'; '.join(what)} (details in {settings.echo_artifact}); its "
                          "answers' citations cannot be trusted, so nothing was synthesized")
    return result


def synthesize(queries: Sequence[SynthesisQuery], provider: ProviderConfig | Provider,
               settings: SynthesisSettings | None = None, *,
               references: References | None = None, qrels: Qrels | None = None,
               judge: Judge | None = None, stage: str | None = None,
               selected_by: str | None = None,
               progress: Callable[[str], None] | None = None) -> SynthesisResult:
    """Answer every query from its passages, then score (and judge) the answers.

    See the module docstring. ``references`` add the answer metrics (every query must
    have a reference row); ``qrels`` make ``context_relevance`` judged rather than the
    lexical proxy. Calls run ``max_concurrency`` at a time; the result does not depend
    on the order they finish in.
    """
    settings = settings or SynthesisSettings()
    if not queries:
        raise InputError("there is no answerable judged query to synthesize an answer for")
    if references is not None:  # before any call: every query needs its reference row
        references.check_covers([q.query_id for q in queries], source="synthesis")
    owned = not isinstance(provider, Provider)
    client = Provider(provider) if not isinstance(provider, Provider) else provider
    if "chat" not in client.config.kinds:
        raise ConfigError(f"provider {client.config.name!r} does not allow chat calls (its "
                          f"kinds are {list(client.config.kinds)}); synthesis needs chat")
    try:
        echo = None
        if settings.echo_check:
            # The first query's own passages: the check runs on what synthesis will see.
            first = next((q.passages for q in queries if q.passages), ())
            echo = echo_check(client, settings, first[:settings.k])

        def answer(q: SynthesisQuery) -> tuple[str, str | None, str | None]:
            prompt = render_prompt(settings.prompt, q.query, q.passages[:settings.k])
            try:
                reply = client.chat(prompt, max_tokens=settings.max_tokens)
            except ProviderError as exc:
                return q.query_id, None, exc.reason
            finally:
                if progress is not None:
                    progress(q.query_id)
            return q.query_id, reply.content, None

        with ThreadPoolExecutor(max_workers=client.config.max_concurrency) as pool:
            outcomes = list(pool.map(answer, queries))
    finally:
        if owned:
            client.close()
    failed = {qid: reason for qid, _, reason in outcomes if reason is not None}
    if len(failed) == len(queries):
        raise _all_failed(client, failed)
    by_id = {q.query_id: q for q in queries}
    rows = tuple(AnswerRow(query_id=qid, answer=text, query=by_id[qid].query,
                           contexts=by_id[qid].passages[:settings.k])
                 for qid, text, _ in outcomes if text is not None)
    cfg = client.config
    manifest = ArmManifest(prompt_template_digest=settings.digest,
                           generator_checkpoint=cfg.model,
                           decoding={"temperature": cfg.temperature,
                                     "max_tokens": settings.max_tokens},
                           name="synthesis")
    answers = AnswerFile(rows=rows, manifest=manifest, name="synthesis")
    metrics = DEFAULT_METRICS if references is not None else REFERENCE_FREE_METRICS
    report = score_answers(answers, references, qrels=qrels, metrics=metrics, judge=judge)
    caveats = [f"synthesis: {c}" for c in report.caveats]
    if references is None:
        caveats.append("synthesis: no reference answers, so the answer metrics (exact_match, "
                       "token_f1, rouge_l, bleu) are not computed; grounding and citations are")
    judged = report.judge
    if judged is not None and (line := judged.failure_line()) is not None:
        caveats.append(f"synthesis: the judge at {judged.endpoint}: {line}")
    result = SynthesisResult(
        settings=settings, provider={"name": cfg.name, "base_url": cfg.base_url,
                                     "model": cfg.model},
        queries=tuple(queries), answers=rows, failed=failed, usage=client.stats.to_dict(),
        report=report, echo=echo, stage=stage, selected_by=selected_by)
    if (failed_line := result.failure_line()) is not None:
        caveats.append(f"synthesis: {failed_line}")
    return dataclasses.replace(result, caveats=tuple(dict.fromkeys(caveats)))
