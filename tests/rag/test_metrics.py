"""Answer metrics: hand-computed values, agreement with rouge-score and sacrebleu, the registry.

Every expected value below is worked out by hand in the comment beside it.
The oracles (``rouge_score``, ``sacrebleu``) are dev dependencies and are
imported here only; the library computes everything itself.
"""

from __future__ import annotations

import doctest
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankproof.rag._metrics as metrics_module
from rankproof._errors import InputError, MissingExtraError
from rankproof.measures import lookup, register_metric
from rankproof.rag._answers import Context
from rankproof.rag._metrics import (
    bleu,
    bleu_tokens,
    exact_match,
    rag_inputs,
    rouge_l,
    rouge_tokens,
    token_f1,
)
from rankproof.rag._text import strip_citations, tokens
from rankproof.targets import Case, TargetResponse

sacrebleu = pytest.importorskip("sacrebleu")
rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")

EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "src" / "rankproof" / "rag" / "example"


# --------------------------------------------------------------------------- hand-computed

@pytest.mark.parametrize(("answer", "references", "expected"), [
    ("The Eiffel Tower!", ["eiffel tower"], 1.0),          # case, article, '!' all normalised away
    ("an apple", ["the apple"], 1.0),                      # articles dropped on both sides
    ("U.S.A.", ["usa"], 1.0),                              # punctuation deleted, not spaced
    ("Paris", ["Paris, France"], 0.0),                     # a part is not the whole
    ("Tour Eiffel", ["Eiffel Tower", "tour  eiffel"], 1.0),  # any one reference suffices
    ("", ["Paris"], 0.0),
    ("", ["the"], 1.0),                                    # both normalise to "" (SQuAD v1.1)
])
def test_exact_match_by_hand(answer: str, references: list[str], expected: float) -> None:
    assert exact_match(answer, references) == expected


@pytest.mark.parametrize(("answer", "references", "expected"), [
    # [in, paris, france] vs [paris]: 1 shared, P = 1/3, R = 1, F = 2(1/3)/(4/3) = 1/2
    ("in Paris, France", ["Paris"], 0.5),
    # [big, red, dog] vs [red, dog, barked]: 2 shared, P = R = 2/3, F = 2/3
    ("the big red dog", ["a red dog barked"], 2 / 3),
    # multiset overlap: [dog, dog, dog] vs [dog, cat]: 1 shared, P = 1/3, R = 1/2, F = 2/5
    ("dog dog dog", ["dog cat"], 0.4),
    # best reference: [red, dog] vs [red, dog, runs]: P = 1, R = 2/3, F = 4/5 (first ref: 0)
    ("red dog", ["blue cat", "red dog runs"], 0.8),
    ("U.S.A.", ["usa"], 1.0),
    ("", ["Paris"], 0.0),
    # nothing left on either side: no shared token, so 0 (SQuAD v1.1), though EM says 1
    ("The.", ["a"], 0.0),
])
def test_token_f1_by_hand(answer: str, references: list[str], expected: float) -> None:
    assert token_f1(answer, references) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("answer", "references", "expected"), [
    # [the cat sat on the mat] vs [the cat lay on a mat]: LCS the-cat-on-mat = 4, P = R = 4/6
    ("the cat sat on the mat", ["the cat lay on a mat"], 2 / 3),
    # rouge-score keeps articles and splits on every non-alphanumeric: [u, s, born] both sides
    ("U.S.-born", ["u s born"], 1.0),
    ("PARIS!", ["paris"], 1.0),
    # [a b c d] vs [d c b a]: LCS 1, F = 1/4; vs [a x c]: LCS 2, P = 1/2, R = 2/3, F = 4/7
    ("a b c d", ["d c b a", "a x c"], 4 / 7),
    # order matters (unlike token-F1): [b a] vs [a b]: LCS 1, P = R = 1/2
    ("b a", ["a b"], 0.5),
    ("", ["Paris"], 0.0),
    ("?!", ["Paris"], 0.0),                 # no token at all
    ("running dogs", ["the dog runs"], 0.0),  # no stemming unless asked
])
def test_rouge_l_by_hand(answer: str, references: list[str], expected: float) -> None:
    assert rouge_l(answer, references) == pytest.approx(expected, abs=1e-12)


def test_rouge_l_stemmed_by_hand() -> None:
    pytest.importorskip("nltk")
    # stemmed: [run, dog] vs [the, dog, run]: LCS 1, P = 1/2, R = 1/3, F = 2(1/6)/(5/6) = 2/5
    assert rouge_l("running dogs", ["the dog runs"], stemmer=True) == pytest.approx(0.4)
    # words of three characters or fewer are not stemmed: "ran" stays, "runs" -> "run"
    assert rouge_tokens("ran runs", stemmer=True) == ["ran", "run"]


@pytest.mark.parametrize(("answer", "references", "expected"), [
    # 1-grams 5/6 (one "the" clipped), 2-grams 3/5, 3-grams 2/4, 4-grams 1/3, equal lengths:
    # (5/6 · 3/5 · 1/2 · 1/3)^(1/4) = (1/12)^(1/4)
    ("the cat sat on the mat", ["the cat sat on a mat"], (1 / 12) ** 0.25),
    # effective order: 2 tokens have no 3- or 4-grams; precisions 2/2, 1/1, mean over 2 orders
    # = 1; brevity penalty exp(1 - 3/2)
    ("the cat", ["the cat sat"], math.exp(-0.5)),
    # exponential smoothing: 3/4, 1/3, then 0/2 -> 1/(2·2), 0/1 -> 1/(4·1): (1/64)^(1/4)
    ("a b c d", ["a b x d"], (1 / 64) ** 0.25),
    # all references together: "the" clipped at 2 (second ref), "the the" at 1, 0/1 trigrams
    # -> 1/2; reference lengths 2 and 4 tie at distance 1 from 3, the shorter wins: BP = 1;
    # (2/3 · 1/2 · 1/2)^(1/3)
    ("the the the", ["the cat", "the the dog sat"], (1 / 6) ** (1 / 3)),
    # 13a splits the comma and the final period off, so both sides tokenise alike
    ("Hello, world.", ["Hello , world ."], 1.0),
    ("Paris", ["paris"], 0.0),  # case is kept (sacrebleu's default)
    ("x y", ["a b"], 0.0),
    ("", ["Paris"], 0.0),
])
def test_bleu_by_hand(answer: str, references: list[str], expected: float) -> None:
    assert bleu(answer, references) == pytest.approx(expected, abs=1e-12)


def test_bleu_counts_references_together_not_the_best_one() -> None:
    # alone, the references give (1/48)^(1/3) and a shorter-answer penalty; together (1/6)^(1/3)
    together = bleu("the the the", ["the cat", "the the dog sat"])
    alone = max(bleu("the the the", ["the cat"]), bleu("the the the", ["the the dog sat"]))
    assert together > alone
    assert bleu("the the the", ["the cat"]) == pytest.approx((1 / 48) ** (1 / 3))


@pytest.mark.parametrize(("text", "expected"), [
    ("pi is 3.14, or 22/7.", ["pi", "is", "3.14", ",", "or", "22", "/", "7", "."]),
    ("1,000 in 1990-91", ["1,000", "in", "1990", "-", "91"]),
    ("well-known don't", ["well-known", "don't"]),
    ("&quot;hi&quot; &amp; bye", ['"', "hi", '"', "&", "bye"]),
    ("hyph-\nated <skipped>line", ["hyphated", "line"]),
    ("  ", []),
])
def test_bleu_tokens_follow_13a(text: str, expected: list[str]) -> None:
    assert bleu_tokens(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("It's 3:15 -- the U.S. Café", ["it", "s", "3", "15", "the", "u", "s", "caf"]),
    ("naïve co-op", ["na", "ve", "co", "op"]),
    ("", []),
])
def test_rouge_tokens_follow_rouge_score(text: str, expected: list[str]) -> None:
    assert rouge_tokens(text) == expected


def test_docstring_examples_run() -> None:
    result = doctest.testmod(metrics_module)
    assert result.attempted >= 6
    assert result.failed == 0


# --------------------------------------------------------------------------- refusals

@pytest.mark.parametrize("fn", [exact_match, token_f1, rouge_l, bleu])
def test_empty_references_are_refused(fn: object) -> None:
    with pytest.raises(InputError, match="no reference answer: a question without one "
                                         "cannot be scored") as info:
        fn("Paris", [])  # type: ignore[operator]
    assert info.value.field == "references"


@pytest.mark.parametrize("fn", [exact_match, token_f1, rouge_l, bleu])
def test_wrong_types_are_refused(fn: object) -> None:
    with pytest.raises(TypeError, match="references must be a list of strings, got str"):
        fn("Paris", "Paris")  # type: ignore[operator]
    with pytest.raises(TypeError, match="reference 2 must be a string, got int"):
        fn("Paris", ["Paris", 3])  # type: ignore[operator]
    with pytest.raises(TypeError, match="the answer must be a string, got NoneType"):
        fn(None, ["Paris"])  # type: ignore[operator]


def test_stemming_without_nltk_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    metrics_module._porter.cache_clear()
    monkeypatch.setitem(sys.modules, "nltk.stem.porter", None)  # import now fails
    try:
        with pytest.raises(MissingExtraError, match="pip install nltk"):
            rouge_l("running", ["runs"], stemmer=True)
        assert rouge_l("running", ["running"]) == 1.0  # unstemmed needs nothing
    finally:
        metrics_module._porter.cache_clear()


# --------------------------------------------------------------------------- agreement

_WORDS = """
the a an The cat Cat dog DOG Paris paris river Seine tower Eiffel 1990-91 3.14 1,000 42
U.S. don't it's e-mail café naïve co-op &amp; &quot;hi&quot; <skipped> (approx.) $5 50%
x/y ok! why? end. A.B.C well-known Mr. — “quoted” running runs ran studies studying
generously happiness e.g., 2024. v2.0 #tag @user [1] {x} ~ ^ _under_ back\\slash
Straße ÉCOLE İstanbul 7-8 .5 ,comma ...
"""
_VOCAB = [*_WORDS.split(), "tab\there", "multi\nline", "hyph-\nated", "trailing- ", " lead"]


def _sentence(rng: np.random.Generator, base: list[str] | None = None) -> str:
    """A random sentence; with ``base``, a mutation of it (kept, dropped, swapped, replaced)."""
    if base is None or rng.random() < 0.15:
        words = [str(w) for w in rng.choice(_VOCAB, size=int(rng.integers(0, 14)))]
    else:
        words = []
        for w in base:
            r = rng.random()
            if r < 0.65:
                words.append(w)
            elif r < 0.8:
                words.append(str(rng.choice(_VOCAB)))
            elif r < 0.9:
                words.extend([w, str(rng.choice(_VOCAB))])
        if len(words) > 1 and rng.random() < 0.3:
            i = int(rng.integers(0, len(words) - 1))
            words[i], words[i + 1] = words[i + 1], words[i]
    text = ""
    for w in words:
        text += ("" if not text or rng.random() < 0.1 else " ") + w
    if rng.random() < 0.1:
        text += rng.choice(["  ", "\n", " .", "."])
    return text


def _generated(n: int, seed: int) -> list[tuple[str, list[str]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        answer = _sentence(rng)
        base = answer.split(" ")
        refs = [_sentence(rng, base) for _ in range(int(rng.integers(1, 4)))]
        out.append((answer, refs))
    return out


GENERATED = _generated(400, seed=20261201)


def _oracle_rouge(answer: str, refs: list[str], scorer: Any) -> float:
    """rouge-score's value: ``score(target, prediction)``, the best reference's F-measure."""
    return max(scorer.score(r, answer)["rougeL"].fmeasure for r in refs)


def test_generated_sentences_cover_the_hard_parts() -> None:
    joined = " ".join(a for a, _ in GENERATED)
    for piece in ("&amp;", "3.14", "1990-91", "café", "\n"):
        assert piece in joined
    assert any(not a.strip() for a, _ in GENERATED)
    assert sum(len(r) > 1 for _, r in GENERATED) > 100
    assert sum(0 < bleu(a, r) < 1 for a, r in GENERATED) > 150  # partial overlaps, not 0/1


def test_rouge_l_agrees_with_rouge_score() -> None:
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    for answer, refs in GENERATED:  # the raw texts, markers kept, as the package reads them
        assert rouge_l(answer, refs, strip_citations=False) == pytest.approx(
            _oracle_rouge(answer, refs, scorer), abs=1e-6), (answer, refs)


def test_stemmed_rouge_l_agrees_with_rouge_score() -> None:
    pytest.importorskip("nltk")
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    for answer, refs in GENERATED:
        assert rouge_l(answer, refs, stemmer=True, strip_citations=False) == pytest.approx(
            _oracle_rouge(answer, refs, scorer), abs=1e-6), (answer, refs)


def test_bleu_agrees_with_sacrebleu() -> None:
    for answer, refs in GENERATED:
        expected = sacrebleu.sentence_bleu(answer, refs).score / 100
        assert bleu(answer, refs, strip_citations=False) == pytest.approx(
            expected, abs=1e-6), (answer, refs)


def test_bleu_tokens_agree_with_sacrebleu_13a() -> None:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    tokenize = Tokenizer13a()
    for answer, refs in GENERATED:
        for text in (answer, *refs):
            assert bleu_tokens(text) == tokenize(text.rstrip()).split(), text


_FUZZ_ALPHABET = [*"aZ09 .,-'&;<>/:$%()[]{}~^_`\"\\!?@#*+=|\t\n\r\u00a0é—“",
                  "&quot;", "&amp;", "&lt;", "&gt;", "<skipped>", "-\n", "İ", "\u212a"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FUZZ_ALPHABET), max_size=25).map("".join))
def test_bleu_tokens_agree_with_sacrebleu_on_odd_text(text: str) -> None:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    assert bleu_tokens(text) == Tokenizer13a()(text.rstrip()).split()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=25) | st.lists(st.sampled_from(_FUZZ_ALPHABET), max_size=25).map("".join))
def test_rouge_tokens_agree_with_rouge_score_on_odd_text(text: str) -> None:
    from rouge_score.tokenize import tokenize
    assert rouge_tokens(text) == tokenize(text, None)


def _bundled_pairs() -> list[tuple[str, str, list[str]]]:
    """(file, answer, references) for every answered question of the bundled QA set."""
    references: dict[str, list[str]] = {}
    answers: list[tuple[str, str, str]] = []
    for path in sorted(EXAMPLE_DIR.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or "query_id" not in row:
                continue
            if isinstance(row.get("answers"), list):
                references[row["query_id"]] = row["answers"]
            elif isinstance(row.get("answer"), str):
                answers.append((path.name, row["query_id"], row["answer"]))
    return [(name, answer, references[qid]) for name, qid, answer in answers
            if references.get(qid)]


def test_agreement_on_the_bundled_qa_set() -> None:
    pairs = _bundled_pairs()
    if not pairs:
        pytest.skip(f"no bundled answers with references under {EXAMPLE_DIR}")
    assert len(pairs) >= 30
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    stemmed = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    for name, raw, raw_refs in pairs:
        # the packages read the answers as rankproof's metrics do: without citation markers
        answer, refs = strip_citations(raw), [strip_citations(r) for r in raw_refs]
        assert rouge_l(raw, raw_refs) == pytest.approx(
            _oracle_rouge(answer, refs, scorer), abs=1e-6), (name, answer)
        assert rouge_l(raw, raw_refs, stemmer=True) == pytest.approx(
            _oracle_rouge(answer, refs, stemmed), abs=1e-6), (name, answer)
        assert bleu(raw, raw_refs) == pytest.approx(
            sacrebleu.sentence_bleu(answer, refs).score / 100, abs=1e-6), (name, answer)


# --------------------------------------------------------------------------- properties

_text = st.text(alphabet=st.sampled_from(list("ab c.,-'!A1 \n")), max_size=30)


@settings(max_examples=60, deadline=None)
@given(answer=_text, refs=st.lists(_text, min_size=1, max_size=3))
def test_metrics_lie_in_the_unit_interval(answer: str, refs: list[str]) -> None:
    for fn in (exact_match, token_f1, rouge_l, bleu):
        assert 0.0 <= fn(answer, refs) <= 1.0
    if exact_match(answer, refs) == 1.0 and token_f1(answer, refs) != 1.0:
        assert tokens(answer) == []  # only when nothing is left to compare (SQuAD v1.1)
        assert token_f1(answer, refs) == 0.0


@settings(max_examples=60, deadline=None)
@given(answer=_text, refs=st.lists(_text, min_size=1, max_size=3))
def test_adding_a_reference_never_lowers_a_max_metric(answer: str, refs: list[str]) -> None:
    for fn in (exact_match, token_f1, rouge_l):
        assert fn(answer, [*refs, answer]) >= fn(answer, refs)


# --------------------------------------------------------------------------- registry

def _pair(text: str | None = "The Eiffel Tower", **meta: object) -> tuple[TargetResponse, Case]:
    response = TargetResponse(ranked_ids=("d1",), text=text, meta=meta.pop("response", {}))
    case = Case(id="q1", query="What is the tallest structure in Paris?", meta=meta)
    return response, case


@pytest.mark.parametrize(("name", "expected"), [
    ("exact_match", 1.0),                                  # "the" dropped by SQuAD
    ("token_f1", 1.0),
    ("rouge_l", 0.8),                                      # [the eiffel tower] vs [eiffel tower]
    # [The Eiffel Tower]: 1-grams 2/3, 2-grams 1/2, 3-grams 0/1 -> 1/2; closest reference
    # length 3 (la tour Eiffel), BP = 1: (1/6)^(1/3)
    ("bleu", (1 / 6) ** (1 / 3)),
])
def test_registered_metrics_resolve_and_compute(name: str, expected: float) -> None:
    d = lookup(name)
    assert (d.name, d.kind, d.higher_is_better, d.needs_judgments) == (name, "case", True, False)
    response, case = _pair(references=["Eiffel Tower", "la tour Eiffel"])
    assert d.fn is not None
    assert d.fn(response, case) == pytest.approx(expected)
    assert d.fn.__name__ == name and d.description


def test_registered_bleu_is_sacrebleus_number() -> None:
    response, case = _pair("The Eiffel Tower", references=["Eiffel Tower", "la tour Eiffel"])
    fn = lookup("bleu").fn
    assert fn is not None
    expected = sacrebleu.sentence_bleu("The Eiffel Tower", ["Eiffel Tower", "la tour Eiffel"])
    assert fn(response, case) == pytest.approx(expected.score / 100, abs=1e-9)


@pytest.mark.parametrize("name", ["exact_match", "token_f1", "rouge_l", "bleu"])
def test_names_are_taken_once(name: str) -> None:
    with pytest.raises(InputError, match="already registered"):
        register_metric(name, lambda response, case: 0.0, higher_is_better=True)


@pytest.mark.parametrize("name", ["exact_match", "token_f1", "rouge_l", "bleu"])
def test_registered_metric_refuses_cases_without_references(name: str) -> None:
    fn = lookup(name).fn
    assert fn is not None
    with pytest.raises(InputError, match=f"case 'q1': {name} compares the answer with "
                                         "reference answers, and case.meta has no "
                                         "'references'"):
        fn(*_pair())
    with pytest.raises(InputError, match=f"case 'q1': {name} cannot score a question declared "
                                         r"to have no answer \(empty 'references'\)"):
        fn(*_pair(references=[]))
    with pytest.raises(InputError, match="case 'q1': the response has no text"):
        fn(*_pair(None, references=["x"]))


def test_rag_inputs_reads_the_convention() -> None:
    response, case = _pair("Eiffel [1]", references=["Eiffel Tower"], response={
        "contexts": [{"id": "p1", "text": "The Eiffel Tower ...", "score": 3.5},
                     Context("p2", "Paris")],
        "citations": [1, "p2"]})
    answer, contexts, refs, query, citations = rag_inputs(response, case)
    assert answer == "Eiffel [1]"
    assert contexts == (Context("p1", "The Eiffel Tower ..."), Context("p2", "Paris"))
    assert refs == ("Eiffel Tower",)
    assert query == "What is the tallest structure in Paris?"
    assert citations == (1, "p2")


def test_rag_inputs_absent_fields() -> None:
    assert rag_inputs(*_pair("x")) == ("x", (), None, "What is the tallest structure in Paris?",
                                       None)
    assert rag_inputs(*_pair("", references=[]))[2] == ()


@pytest.mark.parametrize(("response_meta", "case_meta", "field", "message"), [
    ({"contexts": "p1"}, {}, "meta.contexts",
     r"response.meta\['contexts'\] must be a list of \{id, text\} objects, got str"),
    ({"contexts": [["p1", "text"]]}, {}, "meta.contexts[0]",
     r"each shown passage is an \{id, text\} object, got list"),
    ({"contexts": [{"id": "", "text": "t"}]}, {}, "meta.contexts[0].id",
     "a passage id must be a non-empty string, got ''"),
    ({"contexts": [{"id": "p1"}]}, {}, "meta.contexts[0].text",
     "passage 'p1' text must be a string, got NoneType"),
    ({"contexts": [{"id": "p1", "text": "a"}, {"id": "p1", "text": "b"}]}, {},
     "meta.contexts[1].id", "passage 'p1' is shown twice"),
    ({"citations": 1}, {}, "meta.citations",
     r"response.meta\['citations'\] must be a list of passage numbers or ids, got int"),
    ({"citations": [True]}, {}, "meta.citations",
     r"a citation is a passage number \(1-based\) or a passage id, got True"),
    ({}, {"references": "Paris"}, "meta.references",
     r"case.meta\['references'\] must be a list of answers, got str"),
    ({}, {"references": ["Paris", " "]}, "meta.references",
     "reference 2 must be a non-empty string, got ' '"),
])
def test_rag_inputs_refusals(response_meta: dict[str, object], case_meta: dict[str, object],
                             field: str, message: str) -> None:
    response, case = _pair("x", response=response_meta, **case_meta)
    with pytest.raises(InputError, match="case 'q1': " + message) as info:
        rag_inputs(response, case)
    assert info.value.field == field
