"""Citations and quotes: every count below is worked out by hand in the comments."""

from __future__ import annotations

import pytest

from rankproof.rag._answers import Context
from rankproof.rag._citations import (
    MIN_QUOTE_WORDS,
    Citation,
    audit_citations,
    check_quote,
    citation_markers,
    citations,
    quoted_spans,
)

D1 = Context("d1", "The river floods in spring, said the mayor.")
D2 = Context("d2", "Dry summers follow wet springs.")
D3 = Context("d3", "Nothing here.")
SHOWN = (D1, D2, D3)


def test_markers_forms() -> None:
    assert citation_markers("a [1] b [2, 3][4] c [ 5 ; 6 ]") == [1, 2, 3, 4, 5, 6]
    assert citation_markers("not markers: [a] [1a] [ ] [] (1) [1.5]") == []
    assert citation_markers("repeats [2] kept [2]") == [2, 2]


def test_markers_resolve_and_dangle() -> None:
    # markers 1, 2, 5, 1 -> distinct in order 1, 2, 5; 5 > 3 shown passages -> dangling
    answer = 'The river "floods in spring" [1]. Summers are dry [2, 5][1].'
    a = audit_citations(answer, SHOWN)
    assert a.source == "markers"
    assert a.citations == (Citation(1, 0), Citation(2, 1), Citation(5, None))
    assert (a.n_citations, a.n_dangling) == (3, 1)
    assert [c.ref for c in a.dangling] == [5]
    # the quote has 3 words and is verbatim in d1, which is cited
    assert (a.n_quotes, a.n_unsupported_quotes) == (1, 0)
    q = a.quotes[0]
    assert (q.text, q.supported, q.passage, q.found_in, q.reason) == (
        "floods in spring", True, "d1", ("d1",), None)


def test_zero_is_dangling() -> None:
    a = audit_citations("see [0] and [3]", SHOWN)
    assert [(c.ref, c.index) for c in a.citations] == [(0, None), (3, 2)]
    assert a.n_dangling == 1


def test_declared_field_wins_over_markers() -> None:
    # field: "d2" -> index 1; 9 -> outside 1..3; "dx" -> no such id. The [1] marker is ignored.
    answer = "“The river floods   in spring” [1]."
    a = audit_citations(answer, SHOWN, ["d2", 9, "dx"])
    assert a.source == "field"
    assert [(c.ref, c.index) for c in a.citations] == [("d2", 1), (9, None), ("dx", None)]
    assert (a.n_citations, a.n_dangling) == (3, 2)
    # curly quote, whitespace squashed: in d1, but only d2 is cited -> wrong citation
    q = a.quotes[0]
    assert (q.text, q.supported, q.found_in, q.reason) == (
        "The river floods in spring", False, ("d1",), "uncited_passage")
    assert a.n_unsupported_quotes == 1


def test_empty_declared_list_means_no_citations() -> None:
    a = audit_citations('It "floods in spring" [1].', SHOWN, [])
    assert (a.source, a.n_citations) == ("field", 0)
    assert a.quotes[0].reason == "no_citation"


def test_index_and_id_are_different_citations() -> None:
    ctx = (Context("a", "x"), Context("1", "y"))
    _, found = citations("", ctx, [1, "1", 1])
    assert [(c.ref, c.index) for c in found] == [(1, 0), ("1", 1)]


def test_quote_without_any_citation_is_unsupported() -> None:
    a = audit_citations('It "floods in spring".', SHOWN)
    assert (a.source, a.n_citations, a.n_quotes, a.n_unsupported_quotes) == ("markers", 0, 1, 1)
    assert a.quotes[0].found_in == ("d1",) and a.quotes[0].reason == "no_citation"


def test_quote_must_be_verbatim() -> None:
    # lower-case "the" at the start: d1 has "The river ..." -> not found anywhere
    a = audit_citations('"the river floods in spring" [1] and "the river floods quickly" [1]',
                        SHOWN)
    assert [q.reason for q in a.quotes] == ["not_found", "not_found"]
    assert a.quotes[0].found_in == ()
    assert a.to_dict()["unsupported_list"] == ["the river floods in spring",
                                               "the river floods quickly"]


def test_whitespace_is_normalised_on_both_sides() -> None:
    ctx = (Context("p", "It floods\n   in spring."),)
    q = check_quote("floods in\tspring", ctx, [0])
    assert q.supported and q.text == "floods in spring"


def test_short_quotes_are_not_checked() -> None:
    assert MIN_QUOTE_WORDS == 3
    assert quoted_spans('"spring" and "in spring" and “wet  dry springs”') == ["wet dry springs"]
    assert quoted_spans('"a b"', min_words=2) == ["a b"]
    a = audit_citations('"spring" [1] and "in spring" [1]', SHOWN)
    assert (a.n_quotes, a.n_unsupported_quotes) == (0, 0)


def test_straight_quotes_pair_left_to_right() -> None:
    assert quoted_spans('"one two three" x "four five six" y "unclosed seven eight') == [
        "one two three", "four five six"]


def test_audit_to_dict_lists_everything() -> None:
    a = audit_citations('"Dry summers follow" [2][4]', SHOWN)
    d = a.to_dict()
    assert (d["citations"], d["dangling"], d["quotes"], d["unsupported_quotes"]) == (2, 1, 1, 0)
    assert d["dangling_list"] == [4]
    assert d["quote_list"][0]["passage"] == "d2"
    assert d["citation_list"][0] == {"ref": 2, "index": 1, "dangling": False}


def test_no_contexts_every_citation_dangles() -> None:
    a = audit_citations("x [1]", ())
    assert a.n_dangling == 1


@pytest.mark.parametrize("answer", ["", "Plain answer."])
def test_nothing_to_audit(answer: str) -> None:
    a = audit_citations(answer, SHOWN)
    assert (a.n_citations, a.n_dangling, a.n_quotes, a.n_unsupported_quotes) == (0, 0, 0, 0)
