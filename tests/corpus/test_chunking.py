"""The chunker: deterministic, whitespace-snapped windows that cover the whole text."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankproof import InputError
from rankproof.corpus._corpus import Document, chunk_document, chunk_spans


def check_invariants(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    spans = chunk_spans(text, size, overlap)
    if not text:
        assert spans == []
        return spans
    assert spans[0][0] == 0
    assert spans[-1][1] == len(text)
    for (s, e) in spans:
        assert 0 <= s < e <= len(text)  # never empty
        assert e - s <= size
    for (s0, e0), (s1, e1) in itertools.pairwise(spans):
        assert s0 < s1  # progress: the loop always ends
        assert s1 <= e0  # no gap: the chunks cover the text
        assert e0 < e1
    assert len(spans) <= len(text)
    return spans


def test_docstring_example() -> None:
    assert chunk_spans("aaa bbb ccc ddd", chunk_size=8, overlap=4) == [(0, 8), (4, 12), (8, 15)]


def test_short_text_is_one_chunk() -> None:
    assert chunk_spans("hello world", 800, 100) == [(0, 11)]


def test_empty_text_has_no_chunks() -> None:
    assert chunk_spans("", 10, 2) == []


def test_boundaries_snap_back_to_whitespace() -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    spans = check_invariants(text, 20, 5)
    for s, e in spans:
        # no chunk starts or ends inside a word
        assert s == 0 or text[s - 1].isspace() or text[s].isspace()
        assert e == len(text) or text[e - 1].isspace() or text[e].isspace()


def test_text_without_whitespace_is_cut_hard() -> None:
    text = "x" * 25
    assert chunk_spans(text, 10, 3) == [(0, 10), (7, 17), (14, 24), (21, 25)]


def test_one_long_token_after_short_words_still_progresses() -> None:
    text = "a " + "y" * 50 + " b"
    check_invariants(text, 10, 9)


def test_overlap_zero_gives_a_partition() -> None:
    text = "one two three four five six seven eight nine ten"
    spans = check_invariants(text, 12, 0)
    assert "".join(text[s:e] for s, e in spans) == text


def test_chunk_ids_and_text() -> None:
    doc = Document("a/b.md", "one two three four five six")
    chunks = chunk_document(doc, 10, 2)
    assert [c.id for c in chunks] == [f"a/b.md#{i}" for i in range(len(chunks))]
    for i, c in enumerate(chunks):
        assert c.index == i and c.doc_id == "a/b.md"
        assert c.text == doc.text[c.start:c.end]


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [
        (0, 0, "chunk_size must be a positive integer, got 0"),
        (-5, 0, "chunk_size must be a positive integer, got -5"),
        (True, 0, "chunk_size must be a positive integer, got True"),
        (1.5, 0, "chunk_size must be a positive integer, got 1.5"),
        (10, -1, "overlap must be a non-negative integer, got -1"),
        (10, 10, "overlap must be smaller than chunk_size, got overlap=10 and chunk_size=10"),
        (10, 12, "overlap must be smaller than chunk_size, got overlap=12 and chunk_size=10"),
    ],
)
def test_bad_parameters(size: object, overlap: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        chunk_spans("some text", size, overlap)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("ab \n\t.é")), max_size=300),
    size=st.integers(1, 40),
    data=st.data(),
)
def test_invariants_hold_for_any_text(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    spans = check_invariants(text, size, overlap)
    assert chunk_spans(text, size, overlap) == spans  # deterministic
