"""One citation grammar: what the answer metrics strip, grounding ignores, citations
resolve and the echo check counts is the same set of ``[n]`` markers."""
from __future__ import annotations

from rankproof.rag._citations import citation_markers
from rankproof.rag._echo import _cited
from rankproof.rag._grounding import strip_markers
from rankproof.rag._text import strip_citations

ANSWER = "Rome [2, 3]; Paris [1] and [ 4 ;5 ]. Not a marker: [a] or [1.5]."


def test_every_reader_sees_the_same_markers() -> None:
    assert citation_markers(ANSWER) == [2, 3, 1, 4, 5]
    # the echo check counts a grouped marker's numbers too (it read only "[1]" before)
    assert _cited(ANSWER, None, 5) == (1, 2, 3, 4, 5)
    stripped = "Rome; Paris and. Not a marker: [a] or [1.5]."
    assert strip_citations(ANSWER) == stripped
    assert strip_markers(ANSWER) == stripped
