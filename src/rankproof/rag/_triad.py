"""The RAG triad per case, read per dimension — and the registered grounding/citation metrics.

Three questions about one answer, each answered with the method that was
available and labelled with it:

* **context relevance** — with qrels: 1.0 when a shown passage is
  qrels-relevant (label >= ``rel_level``, default 1), else 0.0; the share of
  shown passages that are relevant is kept beside it. Without qrels: the
  share of the query's content tokens found in the shown passages — a
  *weaker proxy* (``proxy=True``): word overlap is not relevance;
* **groundedness** — lexical content-token grounding
  (`rankproof.rag._grounding.lexical_grounding`), or NLI entailment when a
  scorer is configured;
* **answer relevance** — a judge's score when one is given for the case;
  else token-F1 against the reference answers (max over references) when
  there are references; else the share of the query's content tokens found
  in the answer, a *weaker proxy*.

The three are never blended: there is no mean of them anywhere, because a
relevant context, a grounded answer and a relevant answer fail for
different reasons and a single number would hide which.

**Registered per-case metrics** (the one registry,
`rankproof.measures.register_metric`), over ``response.text`` (the answer),
``response.meta["contexts"]`` (``[{"id", "text"}]``),
``response.meta.get("citations")``, ``case.meta["references"]`` and
``case.query``: ``grounding``, ``grounding_2gram``, ``grounding_3gram``,
``grounding_4gram``, ``context_relevance``, ``answer_relevance`` (higher is
better); ``citations_dangling``, ``quotes_unsupported`` (counts, lower is
better). A registered metric must return a number, so an answer with
nothing to check scores 0.0 grounding — an arm cannot look grounded by
saying nothing. ``context_relevance`` uses the case's judgments when the
case is judged, the lexical proxy otherwise; ``answer_relevance`` uses
token-F1 when the case has references, the proxy otherwise (`triad` reports
which was used).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rankproof._errors import InputError
from rankproof.data import Qrels
from rankproof.measures import register_metric
from rankproof.rag._answers import AnswerRow, Context
from rankproof.rag._citations import audit_citations
from rankproof.rag._grounding import (
    DEFAULT_ENTAILMENT_THRESHOLD,
    EntailmentScorer,
    lexical_grounding,
    ngram_grounding,
    nli_grounding,
    strip_markers,
)
from rankproof.rag._metrics import rag_inputs, token_f1
from rankproof.rag._text import content_tokens, tokens

TRIAD_DIMENSIONS = ("context_relevance", "groundedness", "answer_relevance")

Method = Literal["qrels", "query_context_overlap", "lexical_grounding", "nli", "judge",
                 "token_f1", "query_answer_overlap"]
#: Methods that stand in for a missing better signal: flagged in every result.
PROXY_METHODS = frozenset({"query_context_overlap", "query_answer_overlap"})


@dataclass(frozen=True)
class TriadDimension:
    """One dimension of one case: value, the method behind it, and whether it is a proxy.

    ``value`` is None when the dimension could not be scored (``reason``
    says why). ``detail`` holds the method's own numbers (matched/total,
    relevant passages, the best reference).
    """

    name: str
    value: float | None
    method: Method
    detail: Mapping[str, Any] = field(default_factory=dict)
    reason: str | None = None

    @property
    def proxy(self) -> bool:
        return self.method in PROXY_METHODS

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "method": self.method, "proxy": self.proxy,
                "detail": dict(self.detail), "reason": self.reason}


@dataclass(frozen=True)
class TriadCase:
    """The triad of one case: three dimensions, side by side, never combined."""

    query_id: str
    context_relevance: TriadDimension
    groundedness: TriadDimension
    answer_relevance: TriadDimension

    def dimensions(self) -> tuple[TriadDimension, TriadDimension, TriadDimension]:
        return (self.context_relevance, self.groundedness, self.answer_relevance)

    def to_dict(self) -> dict[str, Any]:
        return {"query_id": self.query_id,
                **{d.name: d.to_dict() for d in self.dimensions()}}


def _overlap(wanted_from: str, shown_in: Sequence[str]) -> tuple[int, int]:
    """(matched, total): content tokens of ``wanted_from`` found in the tokens of ``shown_in``."""
    wanted = content_tokens(wanted_from)
    shown: set[str] = set()
    for text in shown_in:
        shown.update(tokens(text))
    return sum(t in shown for t in wanted), len(wanted)


def _relevance_map(qrels: Qrels | Mapping[str, Mapping[str, int]] | None
                   ) -> Mapping[str, Mapping[str, int]] | None:
    if qrels is None or isinstance(qrels, Mapping):
        return qrels
    if isinstance(qrels, Qrels):
        return qrels.to_dict()
    raise TypeError(f"qrels must be a Qrels or a {{qid: {{docid: rel}}}} mapping, "
                    f"got {type(qrels).__name__}")


def context_relevance(contexts: Sequence[Context], *, query: str | None = None,
                      judgments: Mapping[str, int] | None = None,
                      rel_level: int = 1) -> TriadDimension:
    """Context relevance from a query's judgments (``{docid: rel}``), else the overlap proxy.

    With ``judgments``: 1.0 when a shown passage id has a label >=
    ``rel_level``; ``detail`` holds the relevant shown ids and their share of
    the shown passages. Without: the share of ``query``'s content tokens in
    the shown passages (proxy); None when there is no query or it has no
    content tokens.
    """
    name = "context_relevance"
    if isinstance(rel_level, bool) or not isinstance(rel_level, int) or rel_level < 1:
        raise InputError(f"rel_level must be an integer >= 1, got {rel_level!r}",
                         field="rel_level")
    if judgments is not None:
        relevant = [c.id for c in contexts if judgments.get(c.id, 0) >= rel_level]
        share = len(relevant) / len(contexts) if contexts else 0.0
        return TriadDimension(name, float(bool(relevant)), "qrels",
                              {"relevant_shown": relevant, "shown": len(contexts),
                               "relevant_share": share, "rel_level": rel_level})
    if query is None:
        return TriadDimension(name, None, "query_context_overlap",
                              reason="no qrels and no query text to compare with")
    matched, total = _overlap(query, [c.text for c in contexts])
    if total == 0:
        return TriadDimension(name, None, "query_context_overlap",
                              reason="the query has no content tokens")
    return TriadDimension(name, matched / total, "query_context_overlap",
                          {"matched": matched, "total": total})


def groundedness(answer: str, contexts: Sequence[Context], *,
                 scorer: EntailmentScorer | None = None,
                 threshold: float = DEFAULT_ENTAILMENT_THRESHOLD) -> TriadDimension:
    """Groundedness: NLI entailment when ``scorer`` is given, lexical grounding otherwise."""
    name = "groundedness"
    if scorer is not None:
        nli = nli_grounding(answer, contexts, scorer, threshold=threshold)
        detail = nli.to_dict()
        detail.pop("value")
        detail.pop("reason")
        return TriadDimension(name, nli.value, "nli", detail, nli.reason)
    lex = lexical_grounding(answer, contexts)
    return TriadDimension(name, lex.value, "lexical_grounding",
                          {"matched": lex.matched, "total": lex.total,
                           "unsupported": list(lex.unsupported)}, lex.reason)


def answer_relevance(answer: str, *, query: str | None = None,
                     references: Sequence[str] | None = None,
                     judge_score: float | None = None) -> TriadDimension:
    """Answer relevance: the judge's score, else token-F1 to references, else the proxy.

    Citation markers (``[N]``) are removed from the answer first, as for
    grounding: they are not words of the answer (so this token-F1 can differ
    from the ``token_f1`` metric on an answer that carries markers). An empty
    ``references`` list (a no-answer question) counts as no references for
    this purpose: token-F1 has nothing to compare with.
    """
    name = "answer_relevance"
    answer = strip_markers(answer)
    if judge_score is not None:
        if isinstance(judge_score, bool) or not isinstance(judge_score, int | float) \
                or not math.isfinite(judge_score):
            raise InputError(f"a judge score must be a finite number, got {judge_score!r}",
                             field="judge_score")
        return TriadDimension(name, float(judge_score), "judge")
    if references:
        scores = [token_f1(answer, [r]) for r in references]
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        return TriadDimension(name, scores[best], "token_f1",
                              {"best_reference": best, "references": len(references)})
    if query is None:
        return TriadDimension(name, None, "query_answer_overlap",
                              reason="no references, no judge and no query text")
    matched, total = _overlap(query, [answer])
    if total == 0:
        return TriadDimension(name, None, "query_answer_overlap",
                              reason="the query has no content tokens")
    return TriadDimension(name, matched / total, "query_answer_overlap",
                          {"matched": matched, "total": total})


def triad(row: AnswerRow, *, query: str | None = None,
          references: Sequence[str] | None = None,
          qrels: Qrels | Mapping[str, Mapping[str, int]] | None = None,
          scorer: EntailmentScorer | None = None,
          threshold: float = DEFAULT_ENTAILMENT_THRESHOLD,
          judge_score: float | None = None, rel_level: int = 1) -> TriadCase:
    """The triad of one answer row (``query`` defaults to the row's own ``query``).

    With ``qrels`` given and the row's query id absent from them, context
    relevance is not scorable (None, with a reason): an unjudged query is not
    an irrelevant one.
    """
    q = query if query is not None else row.query
    table = _relevance_map(qrels)
    if table is not None and row.query_id not in table:
        ctx = TriadDimension("context_relevance", None, "qrels",
                             reason=f"query {row.query_id!r} has no qrels")
    else:
        ctx = context_relevance(row.contexts, query=q,
                                judgments=None if table is None else table[row.query_id],
                                rel_level=rel_level)
    return TriadCase(row.query_id, ctx,
                     groundedness(row.answer, row.contexts, scorer=scorer, threshold=threshold),
                     answer_relevance(row.answer, query=q, references=references,
                                      judge_score=judge_score))


def triads(rows: Sequence[AnswerRow], *,
           references: Mapping[str, Sequence[str]] | None = None,
           qrels: Qrels | Mapping[str, Mapping[str, int]] | None = None,
           queries: Mapping[str, str] | None = None,
           scorer: EntailmentScorer | None = None,
           threshold: float = DEFAULT_ENTAILMENT_THRESHOLD,
           judge_scores: Mapping[str, float] | None = None,
           rel_level: int = 1) -> tuple[TriadCase, ...]:
    """`triad` for every row; the qrels are converted once. Lookups are by query id."""
    table = _relevance_map(qrels)
    return tuple(
        triad(r, query=(queries or {}).get(r.query_id),
              references=None if references is None else references.get(r.query_id),
              qrels=table, scorer=scorer, threshold=threshold,
              judge_score=None if judge_scores is None else judge_scores.get(r.query_id),
              rel_level=rel_level)
        for r in rows)


# --------------------------------------------------------------- registered metrics


def _or_zero(value: float | None) -> float:
    return 0.0 if value is None else value


@register_metric("grounding", higher_is_better=True)
def grounding_metric(response: Any, case: Any) -> float:
    """Share of the answer's content tokens found in the shown passages (0 when none to check)."""
    answer, contexts, _, _, _ = rag_inputs(response, case)
    return _or_zero(lexical_grounding(answer, contexts).value)


def _ngram_metric(n: int) -> Any:
    def metric(response: Any, case: Any) -> float:
        answer, contexts, _, _, _ = rag_inputs(response, case)
        return _or_zero(ngram_grounding(answer, contexts, n).value)
    metric.__name__ = f"grounding_{n}gram"
    metric.__doc__ = (f"Share of the answer's token {n}-grams found in one shown passage "
                      "(0 when none to check).")
    return metric


for _n in (2, 3, 4):
    register_metric(f"grounding_{_n}gram", _ngram_metric(_n), higher_is_better=True)


@register_metric("citations_dangling", higher_is_better=False)
def citations_dangling_metric(response: Any, case: Any) -> float:
    """Citations pointing to no shown passage (a count; lower is better)."""
    answer, contexts, _, _, cites = rag_inputs(response, case)
    return float(audit_citations(answer, contexts, cites).n_dangling)


@register_metric("quotes_unsupported", higher_is_better=False)
def quotes_unsupported_metric(response: Any, case: Any) -> float:
    """Quoted spans of >= 3 words not verbatim in a cited passage (a count; lower is better)."""
    answer, contexts, _, _, cites = rag_inputs(response, case)
    return float(audit_citations(answer, contexts, cites).n_unsupported_quotes)


@register_metric("context_relevance", higher_is_better=True)
def context_relevance_metric(response: Any, case: Any) -> float:
    """Shown passages hold a relevant one (judged case) or query-token overlap (proxy)."""
    _, contexts, _, query, _ = rag_inputs(response, case)
    judgments = case.relevance if getattr(case, "judged", False) else None
    return _or_zero(context_relevance(contexts, query=query, judgments=judgments).value)


@register_metric("answer_relevance", higher_is_better=True)
def answer_relevance_metric(response: Any, case: Any) -> float:
    """Token-F1 to the references, or query-token overlap with the answer (proxy)."""
    answer, _, references, query, _ = rag_inputs(response, case)
    return _or_zero(answer_relevance(answer, query=query, references=references).value)
