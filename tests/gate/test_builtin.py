"""Built-in aggregates: nearest-rank latency percentiles, item concentration, entropy."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankproof.harness import latency_summary
from rankproof.measures import lookup
from rankproof.stats import nearest_rank
from rankproof.targets import CaseRow, TargetResponse
from rankproof.targets._run import compute_aggregate


def rows_with_latency(values: list[float]) -> tuple[CaseRow, ...]:
    return tuple(CaseRow(case_id=f"q{i}", values={}, latency_ms=v) for i, v in enumerate(values))


def rows_with_ids(lists: list[list[str]]) -> tuple[CaseRow, ...]:
    return tuple(CaseRow(case_id=f"q{i}", values={},
                         response=TargetResponse(ranked_ids=tuple(ids)))
                 for i, ids in enumerate(lists))


def agg(name: str, rows: tuple[CaseRow, ...]) -> float:
    return compute_aggregate(lookup(name), rows, "test")


def test_p95_of_twenty_cases_is_not_the_maximum() -> None:
    # 20 latencies 1..20 ms, shuffled. Nearest rank: p95 -> rank ceil(0.95 * 20) = 19.
    values = [float(v) for v in (7, 3, 20, 1, 15, 9, 12, 2, 18, 5, 11, 4, 19, 6, 14, 8, 16,
                                 10, 17, 13)]
    rows = rows_with_latency(values)
    assert agg("latency_p95", rows) == 19.0
    assert agg("latency_p95", rows) != max(values)
    assert agg("latency_p50", rows) == 10.0   # rank ceil(0.5 * 20) = 10
    assert agg("latency_p99", rows) == 20.0   # rank ceil(0.99 * 20) = 20
    assert agg("latency_mean", rows) == pytest.approx(10.5)


def test_nearest_rank_edges() -> None:
    assert nearest_rank([5.0], 50) == 5.0
    assert nearest_rank([1.0, 2.0], 50) == 1.0
    assert nearest_rank([1.0, 2.0], 51) == 2.0
    assert nearest_rank(list(map(float, range(1, 101))), 95) == 95.0
    with pytest.raises(ValueError, match="undefined"):
        nearest_rank([], 50)
    with pytest.raises(ValueError, match="pct"):
        nearest_rank([1.0], 0)


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=60),
       st.sampled_from([50, 95, 99]))
def test_nearest_rank_agrees_with_the_harness(values: list[float], pct: int) -> None:
    summary = latency_summary({f"q{i}": v for i, v in enumerate(values)})
    assert nearest_rank(values, pct) == getattr(summary, f"p{pct}")
    assert nearest_rank(values, pct) in values


def test_latency_needs_latencies() -> None:
    rows = (CaseRow(case_id="a", values={}, latency_ms=1.0), CaseRow(case_id="b", values={}))
    with pytest.raises(ValueError, match="no latency"):
        agg("latency_p50", rows)


def test_max_item_share_counts_queries_not_occurrences() -> None:
    # "x" is returned twice by q0 (counted once) and once by q1: 2 of 4 queries.
    rows = rows_with_ids([["x", "x", "a"], ["b", "x"], ["c"], []])
    assert agg("max_item_share", rows) == 0.5
    # top 1 only: x (q0), b (q1), c (q2) — each in 1 of 4 queries
    assert agg("max_item_share@1", rows) == 0.25
    assert agg("max_item_share", rows_with_ids([["a"], ["a", "b"], ["a"]])) == 1.0
    assert agg("max_item_share", rows_with_ids([[], []])) == 0.0


def test_entropy_is_normalised_and_defined_for_degenerate_runs() -> None:
    assert agg("entropy", rows_with_ids([["a", "b"], ["c", "d"]])) == pytest.approx(1.0)
    assert agg("entropy", rows_with_ids([["a"], ["a"], ["a"]])) == 0.0
    assert agg("entropy", rows_with_ids([[], []])) == 0.0     # nothing returned
    assert agg("entropy", rows_with_ids([["a"], []])) == 1.0  # one id, repeated nowhere
    # a, a, b, c: H = -(1/2 ln 1/2 + 2 * 1/4 ln 1/4) = 1.5 ln 2; max ln 4 = 2 ln 2 -> 0.75
    assert agg("entropy", rows_with_ids([["a", "b"], ["a", "c"]])) == pytest.approx(0.75)
    # ids are deduplicated per response, as for max_item_share
    assert agg("entropy", rows_with_ids([["a", "a", "b"], ["c", "d"]])) == pytest.approx(1.0)
    assert agg("entropy@1", rows_with_ids([["a", "b"], ["a", "c"]])) == 0.0


@given(st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=6), min_size=1, max_size=12))
def test_concentration_metrics_stay_in_range(lists: list[list[str]]) -> None:
    rows = rows_with_ids(lists)
    for name in ("entropy", "entropy@3", "max_item_share", "max_item_share@2"):
        v = agg(name, rows)
        assert 0.0 <= v <= 1.0 and math.isfinite(v)


def test_item_aggregates_refuse_rows_without_responses() -> None:
    rows = rows_with_latency([1.0, 2.0])
    with pytest.raises(ValueError, match="reads each case's ranked ids"):
        agg("max_item_share", rows)
