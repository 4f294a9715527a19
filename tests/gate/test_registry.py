"""The one metric namespace: retrieval measures, per-case metrics, aggregates."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rankproof.measures import (
    lookup,
    parse,
    polarity,
    register_aggregate,
    register_metric,
    registered,
)
from rankproof.measures._registry import _unregister


@pytest.fixture
def cleanup() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for n in names:
        _unregister(n)


def test_retrieval_measures_resolve_through_the_measures_parser() -> None:
    for spelling in ("nDCG@10", "ndcg@10", "ndcg_cut.10", "ndcg_cut_10"):
        d = lookup(spelling)
        assert d.kind == "retrieval" and d.name == "nDCG@10" and d.measure == parse("nDCG@10")
        assert d.needs_judgments and d.per_case
    assert lookup("mrr@10").name == "RR@10"
    assert polarity("R@5") is True


def test_builtins_and_their_polarity() -> None:
    assert polarity("latency_p50") is polarity("latency_p95") is polarity("latency_p99") is False
    assert polarity("latency_mean") is False and polarity("latency_ms") is False
    assert polarity("max_item_share") is False and polarity("max_item_share@5") is False
    assert polarity("entropy") is True
    assert lookup("latency_ms").kind == "case"
    assert lookup("latency_p95").kind == "aggregate"
    d = lookup("max_item_share@5")
    assert (d.name, d.cutoff, d.takes_cutoff, d.needs_responses) == (
        "max_item_share@5", 5, True, True)
    names = {d.name for d in registered()}
    assert {"latency_p50", "latency_p95", "latency_p99", "latency_mean", "max_item_share",
            "entropy", "latency_ms"} <= names


def test_polarity_raises_on_unknown_names_with_a_suggestion() -> None:
    with pytest.raises(ValueError, match=r"unknown metric 'ndgc@10'.*did you mean 'nDCG@10'"):
        polarity("ndgc@10")
    with pytest.raises(ValueError, match=r"did you mean 'latency_p95'"):
        polarity("latncy_p95")
    with pytest.raises(ValueError, match="unknown metric 'no_such_thing'"):
        lookup("no_such_thing")
    with pytest.raises(ValueError, match="empty metric name"):
        lookup("  ")


def test_register_metric_as_decorator_and_call(cleanup: list[str]) -> None:
    @register_metric("t_has_text", higher_is_better=True)
    def has_text(response: object, case: object) -> float:
        """1 when the response carries text."""
        return 1.0

    cleanup.append("t_has_text")
    d = lookup("t_has_text")
    assert d.kind == "case" and d.higher_is_better and d.fn is has_text
    assert d.description == "1 when the response carries text."
    assert not d.needs_judgments

    def short(response: object, case: object) -> float:
        return 0.0

    assert register_metric("t_short", short, higher_is_better=False,
                           needs_judgments=True, description="d") is short
    cleanup.append("t_short")
    assert polarity("t_short") is False and lookup("t_short").needs_judgments


def test_polarity_is_a_required_keyword_and_a_bool(cleanup: list[str]) -> None:
    with pytest.raises(TypeError, match="higher_is_better"):
        register_metric("t_nopolarity")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="higher_is_better"):
        register_aggregate("t_nopolarity")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"higher_is_better must be True or False, got int 1"):
        register_metric("t_int_polarity", higher_is_better=1)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        register_metric("t_positional", lambda r, c: 0.0, True)  # type: ignore[call-overload]
    assert "t_int_polarity" not in {d.name for d in registered()}


def test_duplicates_raise_whatever_the_kind(cleanup: list[str]) -> None:
    register_metric("t_dup", lambda r, c: 0.0, higher_is_better=True)
    cleanup.append("t_dup")
    with pytest.raises(ValueError, match="already registered as a per-case metric"):
        register_metric("t_dup", lambda r, c: 0.0, higher_is_better=True)
    with pytest.raises(ValueError, match="already registered as a per-case metric"):
        register_aggregate("t_dup", lambda rows: 0.0, higher_is_better=True)
    with pytest.raises(ValueError, match="already registered"):
        register_metric("T_DUP", lambda r, c: 0.0, higher_is_better=True)
    with pytest.raises(ValueError, match="already registered as an aggregate"):
        register_metric("latency_p95", lambda r, c: 0.0, higher_is_better=False)
    # the decorator form refuses at registration too, before the function is defined
    with pytest.raises(ValueError, match="already registered"):
        register_aggregate("entropy", higher_is_better=True)


@pytest.mark.parametrize("name, why", [
    ("map", "retrieval measure"),
    ("recall", "family"),
    ("hit", "family"),
    ("P.5", "retrieval measure"),
    ("ndcg_cut.10", "retrieval measure"),
    ("AP", "retrieval measure"),
])
def test_names_the_measures_parser_accepts_cannot_be_registered(name: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        register_metric(name, lambda r, c: 0.0, higher_is_better=True)
    with pytest.raises(ValueError, match=why):
        register_aggregate(name, lambda rows: 0.0, higher_is_better=True)


@pytest.mark.parametrize("name", ["", "with space", "nDCG@10", "x@5", "1abc", "a/b"])
def test_malformed_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not valid"):
        register_metric(name, lambda r, c: 0.0, higher_is_better=True)


def test_cutoff_rules_of_aggregates(cleanup: list[str]) -> None:
    with pytest.raises(ValueError, match="takes no cutoff"):
        lookup("latency_p95@5")
    with pytest.raises(ValueError, match="at least 1"):
        lookup("max_item_share@0")
    register_aggregate("t_needs_k", lambda rows, k: float(k), higher_is_better=True,
                       cutoff="required")
    cleanup.append("t_needs_k")
    with pytest.raises(ValueError, match="needs a cutoff"):
        lookup("t_needs_k")
    assert lookup("t_needs_k@3").cutoff == 3
    with pytest.raises(ValueError, match="cutoff must be"):
        register_aggregate("t_bad_rule", lambda rows: 0.0, higher_is_better=True,
                           cutoff="sometimes")  # type: ignore[call-overload]
