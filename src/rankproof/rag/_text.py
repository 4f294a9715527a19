"""Answer text as the answer metrics read it: SQuAD normalisation, tokens, content tokens.

Exact match and token-F1 follow the SQuAD v1.1 evaluation script's
normalisation — lower-case, drop ASCII punctuation, drop the articles *a*,
*an*, *the*, collapse whitespace — so that numbers agree with every paper that
reports them. Grounding and the triad's proxies look at *content* tokens: the
normalised tokens minus `STOP_WORDS`, one fixed English list documented here,
so that "the", "of" and "is" cannot make an answer look grounded.

Before that normalisation the answer metrics remove citation markers
(``[1]``, ``[1, 2]``, ``[3; 4]``: `strip_citations`), the first step of
`ANSWER_NORMALISATION`: a marker points at a passage, it is not a word of the
answer, so ``exact_match("42 MLD [1]", ["42 MLD"])`` is 1 (the RAG protocol,
seed 003). ``strip_citations=False`` on each metric keeps them.
"""

from __future__ import annotations

import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)

#: English function words left out of content tokens (articles, pronouns, auxiliaries,
#: prepositions, conjunctions, common adverbs). Fixed, so grounding figures are reproducible.
_STOP_WORDS_TEXT = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it
its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())


#: One citation marker and the whitespace before it: ``[1]``, ``[1, 2]``, ``[3; 4]``.
CITATION_MARKER = re.compile(r"\s*\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")

#: The answer metrics' normalisation, step by step, as reports record it.
ANSWER_NORMALISATION: tuple[str, ...] = (
    "strip citation markers [n]", "lower case", "drop ASCII punctuation",
    "drop articles a/an/the", "collapse whitespace")


def strip_citations(text: str) -> str:
    """``text`` without its citation markers (`CITATION_MARKER`).

    >>> strip_citations("42 MLD [1]. Rome [2, 3]")
    '42 MLD. Rome'
    """
    return CITATION_MARKER.sub("", text).strip()


def cited_numbers(text: str) -> list[int]:
    """The passage numbers ``text`` cites, in order, repeats kept: one grammar
    (`CITATION_MARKER`) for the answer metrics, grounding, citations and the echo check.

    >>> cited_numbers("Rome [2, 3]; Paris [1] and [2]")
    [2, 3, 1, 2]
    """
    return [int(n) for m in CITATION_MARKER.finditer(text) for n in re.split(r"[,;]", m.group(1))]


def answer_normalisation(strip: bool = True) -> tuple[str, ...]:
    """`ANSWER_NORMALISATION`, without its first step when citations are kept."""
    return ANSWER_NORMALISATION if strip else ANSWER_NORMALISATION[1:]


def normalize_answer(text: str) -> str:
    """SQuAD v1.1's normalisation: lower case, no punctuation, no articles, single spaces."""
    lowered = text.lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    no_articles = _ARTICLES.sub(" ", no_punct)
    return " ".join(no_articles.split())


def tokens(text: str) -> list[str]:
    """The SQuAD tokens of ``text`` (normalised, split on whitespace)."""
    return normalize_answer(text).split()


def content_tokens(text: str) -> list[str]:
    """`tokens` without `STOP_WORDS`: the words that carry the claim."""
    return [t for t in tokens(text) if t not in STOP_WORDS]


def squash_whitespace(text: str) -> str:
    """Runs of whitespace as one space, trimmed (for verbatim quote matching)."""
    return " ".join(text.split())
