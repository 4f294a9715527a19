"""Grounding in the *cited* passages: does each claim's citation hold its words?

Lexical grounding asks whether an answer's words appear anywhere in what the
generator was shown; an answer that cites the wrong passage for a true claim
passes it. Cited grounding asks the stricter question: each sentence's
content tokens must appear in the passages **that sentence cites** (its
``[N]`` markers; a sentence without markers is held to every passage the
answer cites; with a declared ``citations`` list, the whole answer is held to
those passages). An answer that cites nothing grounds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rankproof.measures import register_metric
from rankproof.rag._answers import Context
from rankproof.rag._citations import citation_markers, citations
from rankproof.rag._grounding import GroundingScore, split_sentences, strip_markers
from rankproof.rag._metrics import rag_inputs
from rankproof.rag._text import content_tokens, tokens


def cited_grounding(answer: str, contexts: Sequence[Context],
                    declared: Sequence[int | str] | None = None) -> GroundingScore:
    """Share of the answer's content tokens found in the passages their sentence cites.

    >>> ctx = (Context("a", "Filters are washed daily."), Context("b", "Tanks hold 3 days."))
    >>> cited_grounding("Filters are washed daily [1]. Tanks hold 3 days [1].", ctx).value
    0.5
    """
    _, found = citations(answer, contexts, declared)
    valid = sorted({c.index for c in found if c.index is not None})
    if not content_tokens(strip_markers(answer)):
        return GroundingScore(None, 0, 0, "cited", reason="the answer has no content tokens")
    passage_tokens = [set(tokens(c.text)) for c in contexts]
    everything: set[str] = set().union(*(passage_tokens[i] for i in valid)) if valid else set()
    sentences = [answer] if declared is not None else split_sentences(answer)
    matched = total = 0
    missing: list[str] = []
    for sentence in sentences:
        marked = {n - 1 for n in citation_markers(sentence) if 1 <= n <= len(contexts)}
        allowed = (set().union(*(passage_tokens[i] for i in marked))
                   if marked and declared is None else everything)
        for t in content_tokens(strip_markers(sentence)):
            total += 1
            if t in allowed:
                matched += 1
            else:
                missing.append(t)
    if total == 0:
        return GroundingScore(None, 0, 0, "cited", reason="the answer has no content tokens")
    return GroundingScore(matched / total, matched, total, "cited", tuple(missing))


@register_metric("grounding_cited", higher_is_better=True)
def grounding_cited(response: Any, case: Any) -> float:
    """Share of the answer's content tokens found in the passages their sentence cites."""
    answer, contexts, _, _, declared = rag_inputs(response, case)
    value = cited_grounding(answer, contexts, declared).value
    return 0.0 if value is None else value
