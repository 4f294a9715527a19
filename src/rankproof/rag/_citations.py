"""Citations and quotes: does the answer point at passages it was shown, and quote them truly?

**What counts as a citation.** When the row has a ``citations`` field (even
an empty list) it is the whole truth and markers in the text are ignored:
the generator declared what it cites. Otherwise citations are read from the
answer's markers: ``[N]``, ``[N, M]`` (commas or semicolons) and adjacent
``[N][M]``, where N is a 1-based index into the shown ``contexts``; only
digits count (``[a]``, ``[1a]`` and ``[ ]`` are not markers). A declared
citation is an int (1-based index) or a str (a shown passage's id).
Citations are counted once each, in order of first appearance.

**Dangling.** A citation that points to no shown passage: an index outside
``1..len(contexts)`` (``[0]`` included) or an id no shown passage has.

**Quotes.** Every double-quoted span — straight ``"…"`` or curly ``“…”`` —
of at least three words (whitespace-separated, after squashing whitespace)
must appear verbatim, after whitespace normalisation on both sides, in a
*cited* shown passage. Case and punctuation must match: a quote is a claim
about exact words. A quote found only in a shown passage that the answer
did not cite is unsupported (``"uncited_passage"``: the right words, the
wrong citation); an answer that cites nothing cannot support any quote
(``"no_citation"``), because a quote with no source is what an audit must
flag; a quote in no shown passage is ``"not_found"``. Shorter quoted spans
(scare quotes, titles) are not checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rankproof.rag._answers import Context
from rankproof.rag._text import cited_numbers, squash_whitespace

MIN_QUOTE_WORDS = 3

CitationSource = Literal["field", "markers"]
QuoteReason = Literal["no_citation", "uncited_passage", "not_found"]

_QUOTE = re.compile(r"\"([^\"]*)\"|“([^“”]*)”")


@dataclass(frozen=True)
class Citation:
    """One citation: what was written (``ref``) and the 0-based passage it resolves to.

    ``index`` is None for a dangling citation.
    """

    ref: int | str
    index: int | None

    @property
    def dangling(self) -> bool:
        return self.index is None

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "index": self.index, "dangling": self.dangling}


@dataclass(frozen=True)
class QuoteCheck:
    """One checked quote: its text, whether a cited passage holds it, and why not.

    ``passage`` is the id of the first cited passage holding the quote (None
    when unsupported); ``found_in`` lists the shown passages holding it,
    cited or not, so a wrong citation can be read off.
    """

    text: str
    supported: bool
    passage: str | None
    found_in: tuple[str, ...]
    reason: QuoteReason | None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "supported": self.supported, "passage": self.passage,
                "found_in": list(self.found_in), "reason": self.reason}


@dataclass(frozen=True)
class CitationAudit:
    """A case's citations and quotes, with the counts an audit reports."""

    source: CitationSource
    citations: tuple[Citation, ...]
    quotes: tuple[QuoteCheck, ...]

    @property
    def n_citations(self) -> int:
        return len(self.citations)

    @property
    def dangling(self) -> tuple[Citation, ...]:
        return tuple(c for c in self.citations if c.dangling)

    @property
    def n_dangling(self) -> int:
        return len(self.dangling)

    @property
    def n_quotes(self) -> int:
        return len(self.quotes)

    @property
    def unsupported_quotes(self) -> tuple[QuoteCheck, ...]:
        return tuple(q for q in self.quotes if not q.supported)

    @property
    def n_unsupported_quotes(self) -> int:
        return len(self.unsupported_quotes)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "citations": self.n_citations,
                "dangling": self.n_dangling, "quotes": self.n_quotes,
                "unsupported_quotes": self.n_unsupported_quotes,
                "citation_list": [c.to_dict() for c in self.citations],
                "dangling_list": [c.ref for c in self.dangling],
                "quote_list": [q.to_dict() for q in self.quotes],
                "unsupported_list": [q.text for q in self.unsupported_quotes]}


def citation_markers(answer: str) -> list[int]:
    """The 1-based passage numbers of the ``[N]`` markers in ``answer``, in order, repeats kept.

    >>> citation_markers("Paris [1]. Old [2, 3][1].")
    [1, 2, 3, 1]
    """
    return cited_numbers(answer)


def _resolve(ref: int | str, contexts: Sequence[Context]) -> int | None:
    if isinstance(ref, int):
        return ref - 1 if 1 <= ref <= len(contexts) else None
    for i, c in enumerate(contexts):
        if c.id == ref:
            return i
    return None


def citations(answer: str, contexts: Sequence[Context],
              declared: Sequence[int | str] | None = None) -> tuple[CitationSource,
                                                                    tuple[Citation, ...]]:
    """Resolve a case's citations: the declared list when given, else the answer's markers."""
    source: CitationSource = "markers" if declared is None else "field"
    refs: Sequence[int | str] = citation_markers(answer) if declared is None else declared
    seen: set[tuple[bool, int | str]] = set()  # the id "1" and the index 1 are different
    out: list[Citation] = []
    for ref in refs:
        key: int | str = ref if isinstance(ref, str) else int(ref)
        if (isinstance(key, str), key) in seen:
            continue
        seen.add((isinstance(key, str), key))
        out.append(Citation(key, _resolve(key, contexts)))
    return source, tuple(out)


def quoted_spans(answer: str, *, min_words: int = MIN_QUOTE_WORDS) -> list[str]:
    """Double-quoted spans (straight or curly) of at least ``min_words`` words, squashed.

    Straight quotes pair left to right; a curly quote opens with “ and closes
    with ”.

    >>> quoted_spans('He said "the river floods in spring" and “no”.')
    ['the river floods in spring']
    """
    spans = (squash_whitespace(m.group(1) if m.group(1) is not None else m.group(2))
             for m in _QUOTE.finditer(answer))
    return [s for s in spans if len(s.split()) >= min_words]


def check_quote(quote: str, contexts: Sequence[Context],
                cited: Sequence[int]) -> QuoteCheck:
    """Is ``quote`` (squashed) a substring of a cited passage (squashed)?"""
    text = squash_whitespace(quote)
    found = [i for i, c in enumerate(contexts) if text in squash_whitespace(c.text)]
    found_ids = tuple(contexts[i].id for i in found)
    in_cited = [i for i in found if i in cited]
    if in_cited:
        return QuoteCheck(text, True, contexts[in_cited[0]].id, found_ids, None)
    reason: QuoteReason
    if not found:
        reason = "not_found"
    elif not cited:
        reason = "no_citation"
    else:
        reason = "uncited_passage"
    return QuoteCheck(text, False, None, found_ids, reason)


def audit_citations(answer: str, contexts: Sequence[Context],
                    declared: Sequence[int | str] | None = None, *,
                    min_words: int = MIN_QUOTE_WORDS) -> CitationAudit:
    """A case's citation audit: citations (dangling flagged) and every long quote checked.

    >>> ctx = (Context("d1", "The river floods in spring."), Context("d2", "Dry summer."))
    >>> a = audit_citations('It "floods in spring" [1][3].', ctx)
    >>> (a.n_citations, a.n_dangling, a.n_quotes, a.n_unsupported_quotes)
    (2, 1, 1, 0)
    """
    source, found = citations(answer, contexts, declared)
    cited = [c.index for c in found if c.index is not None]
    quotes = tuple(check_quote(q, contexts, cited)
                   for q in quoted_spans(answer, min_words=min_words))
    return CitationAudit(source, found, quotes)
