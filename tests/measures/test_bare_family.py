"""A per-case metric under a bare family word (seed 001's ``precision``), families unchanged.

The rule (`rankproof.measures._registry` docstring): a family word the parser
refuses alone (``precision``: P needs a cutoff) may name a per-case metric
when the registration says ``family_word=True``; every name with a cutoff or
parameters (``precision@10``, ``P@10``, ``P(rel=2)@10``) keeps meaning the
retrieval measure.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rankproof import InputError
from rankproof.measures import (
    Measure,
    lookup,
    parse,
    parse_many,
    register_aggregate,
    register_metric,
    registered,
    resolve,
)
from rankproof.measures._registry import _unregister
from rankproof.targets import CallableTarget, Case, TargetResponse, run


def precision(response: TargetResponse, case: Case) -> float:
    """Seed 001's example: relevant ids in the top 3, over 3."""
    hits = sum(1 for i in response.ranked_ids[:3] if i in case.relevant)
    return hits / 3


@pytest.fixture
def registered_precision() -> Iterator[str]:
    register_metric("precision", precision, higher_is_better=True, family_word=True)
    yield "precision"
    _unregister("precision")


def test_the_bare_word_resolves_to_the_registered_metric(registered_precision: str) -> None:
    d = lookup("precision")
    assert (d.name, d.kind, d.per_case, d.higher_is_better, d.fn) == (
        "precision", "case", True, True, precision)
    assert d.description == "Seed 001's example: relevant ids in the top 3, over 3."
    assert "precision" in {m.name for m in registered()}


@pytest.mark.parametrize("spelling, canonical", [
    ("precision@10", "P@10"), ("P@10", "P@10"), ("prec@5", "P@5"), ("P.5", "P@5"),
    ("P(rel=2)@10", "P(rel=2)@10"), ("precision(rel=2)@3", "P(rel=2)@3"),
])
def test_names_with_a_cutoff_or_parameters_keep_the_family(
        registered_precision: str, spelling: str, canonical: str) -> None:
    d = lookup(spelling)
    assert (d.name, d.kind, d.measure) == (canonical, "retrieval", parse(canonical))
    assert parse(spelling) == parse(canonical)


def test_the_measures_parser_is_untouched(registered_precision: str) -> None:
    with pytest.raises(InputError, match="P needs a cutoff"):
        parse("precision")
    assert parse_many("precision@10") == (Measure("P", 10),)
    assert parse_many("P")[0] == Measure("P", 5)  # trec_eval's default cutoffs, as before


def test_resolve_keeps_both_meanings_apart(registered_precision: str) -> None:
    defs = resolve(["precision", "precision@3", "P@3"])
    assert [(d.name, d.kind) for d in defs] == [("precision", "case"), ("P@3", "retrieval")]


def test_a_cutoff_on_the_bare_word_is_the_family_s_error_not_the_metric_s(
        registered_precision: str) -> None:
    with pytest.raises(InputError, match=r"unknown metric 'precision@0'.*at least 1"):
        lookup("precision@0")


def test_run_computes_both_and_they_agree_on_binary_judgments(
        registered_precision: str) -> None:
    cases = (Case("a", "q", relevant=("d1", "d3")), Case("b", "q", relevant=("d9",)),
             Case("c", "q", relevant=("d2",)))
    ranking = {"a": ["d1", "d2", "d3", "d4"], "b": ["d1", "d2", "d3"], "c": ["d2"]}
    result = run("sys", CallableTarget(lambda case: ranking[case.id], "sys"), cases,
                 ["precision", "precision@3"])
    assert result.metrics == ("precision", "P@3")
    assert result.scores("precision") == pytest.approx({"a": 2 / 3, "b": 0.0, "c": 1 / 3})
    assert result.scores("P@3") == result.scores("precision")  # P@3 divides by 3 too


def test_without_the_opt_in_a_family_word_is_refused_and_says_how() -> None:
    with pytest.raises(InputError, match=r"names the retrieval measure family 'P'.*"
                                         r"family_word=True.*precision@k keeps meaning P@k"):
        register_metric("precision", precision, higher_is_better=True)
    with pytest.raises(InputError):
        lookup("precision")  # nothing was registered


@pytest.mark.parametrize("word, fragment", [
    ("recall", r"'recall' alone already names trec_eval's default cutoffs of R \(R@5, R@10"),
    ("P", r"'P' alone already names trec_eval's default cutoffs of P \(P@5, P@10"),
    ("Success", r"'Success' alone already names trec_eval's default cutoffs of Success"),
    ("map", "is a retrieval measure"),
    ("ndcg", "is a retrieval measure"),
    ("mrr", "is a retrieval measure"),
])
def test_words_that_mean_something_alone_stay_refused(word: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        register_metric(word, precision, higher_is_better=True, family_word=True)


@pytest.mark.parametrize("word", ["hit", "hits", "hitrate", "hit_rate", "prec", "R", "Judged"])
def test_other_bare_words_that_mean_nothing_alone_are_allowed(word: str) -> None:
    register_metric(word, precision, higher_is_better=True, family_word=True)
    try:
        assert lookup(word).kind == "case"
        assert lookup(f"{word}@4").kind == "retrieval"
    finally:
        _unregister(word)


def test_aggregates_never_take_a_family_word() -> None:
    with pytest.raises(InputError, match="names the retrieval measure family 'P'"):
        register_aggregate("precision", lambda rows: 0.0, higher_is_better=True)


def test_the_bare_word_is_still_one_name(registered_precision: str) -> None:
    with pytest.raises(InputError, match="already registered as a per-case metric"):
        register_metric("Precision", precision, higher_is_better=True, family_word=True)
    with pytest.raises(InputError, match="already registered"):
        register_aggregate("precision", lambda rows: 0.0, higher_is_better=True)


def test_family_word_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="family_word must be True or False"):
        register_metric("precision", precision, higher_is_better=True,
                        family_word="yes")  # type: ignore[call-overload]


def test_the_opt_in_is_harmless_for_an_ordinary_name() -> None:
    register_metric("t_ordinary", precision, higher_is_better=True, family_word=True)
    try:
        assert lookup("t_ordinary").kind == "case"
    finally:
        _unregister("t_ordinary")
