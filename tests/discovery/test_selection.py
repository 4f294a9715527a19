"""evaluate_selection / select / sweep_selector: hand-computed statistics, one pass, tie-breaks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.discovery._fixtures import CATALOG, PLUMB

from rankproof._errors import InputError
from rankproof.discovery._cases import DiscoveryCase
from rankproof.discovery._defaults import SWEEP_METRICS
from rankproof.discovery._selection import (
    NORMALISED_RULE,
    RAW_RULE,
    SelectionGridPoint,
    SelectionReport,
    SelectionSweep,
    evaluate_selection,
    score_selection,
    select,
    sweep_rankings,
    sweep_selector,
)
from rankproof.discovery._source import CallableSearcher, CatalogSearcher
from rankproof.retrieval import HashingEmbedder

FIXED: dict[str, tuple[tuple[str, ...], list[tuple[str, float]]]] = {
    "S0": (("a",), [("a", 1.0), ("b", 0.95), ("c", 0.5), ("d", 0.1)]),
    "S1": (("b", "z"), [("a", 0.8), ("b", 0.7), ("c", 0.2)]),   # z never retrieved
    "S2": (("m",), [("a", 0.9), ("b", 0.1)]),                   # retrieval miss
    "S3": ((), [("a", 0.3), ("b", 0.2)]),                        # abstention case
    "S4": ((), []),                                              # abstention, nothing back
    "S5": (("c", "d"), [("c", 2.0), ("d", 1.9), ("e", 1.85), ("f", 0.1)]),
}
CASES = [DiscoveryCase(q, gold) for q, (gold, _) in FIXED.items()]
RANKINGS = [tuple(r) for _, r in FIXED.values()]


def searcher() -> CallableSearcher:
    hits: list[str] = []

    def fn(query: str, k: int) -> list[tuple[str, float]]:
        hits.append(query)
        return FIXED[query][1][:k]

    s = CallableSearcher(fn, name="tests:fixed")
    s.hits = hits  # type: ignore[attr-defined]
    return s


def test_select_conservative_and_score_gap_by_hand() -> None:
    r = RANKINGS[0]  # a 1.0, b 0.95, c 0.5, d 0.1
    assert select(r) == ("a", "b")                                 # band 0.9
    assert select(r, rel=0.5) == ("a", "b", "c")                   # 0.5 >= 0.5 kept
    assert select(r, rel=0.5, max_k=2) == ("a", "b")
    assert select(r, rel=0.0, max_k=8) == ("a", "b", "c", "d")
    assert select(r, min_score=1.0) == ("a", "b")                  # top == floor commits
    assert select(r, min_score=1.01) == ()
    assert select((), rel=0.1) == ()
    # score_gap: keep while next >= 0.5 x current: .95 >= .5, .5 >= .475, .1 < .25 stop.
    assert select(r, strategy="score_gap") == ("a", "b", "c")
    assert select(r, strategy="score_gap", gap_ratio=0.96) == ("a",)
    assert select(r, strategy="score_gap", min_score=2.0) == ()
    assert select(r, strategy="score_gap", max_k=1, rel=1.0) == ("a", "b", "c")  # unused


def test_negative_scores_are_min_max_normalised_for_the_ratio_rules() -> None:
    r = (("a", 1.0), ("b", -1.0), ("c", -3.0))  # normalised: 1, 0.5, 0
    assert select(r, rel=0.5) == ("a", "b")     # raw would keep only a (band 0.5)
    assert select(r, rel=0.6) == ("a",)
    assert select(r, strategy="score_gap") == ("a", "b")  # 0.5 >= 0.5, then 0 < 0.25
    flat = (("a", -2.0), ("b", -2.0), ("c", -2.0))        # all equal: all 1.0
    assert select(flat, rel=0.99, max_k=2) == ("a", "b")
    assert select((("a", -1.0), ("b", -2.0)), rel=0.9) == ("a",)
    assert select((("a", -1.0),), min_score=-0.5) == ()   # the floor reads raw scores
    cases = [DiscoveryCase("x", ("b",)), DiscoveryCase("y", ("a",))]
    report = score_selection(cases, [r, (("a", 2.0), ("b", 1.0))], rel=0.5)
    assert report.score_rule == NORMALISED_RULE and report.n_normalised == 1
    assert report.selected == (("a", "b"), ("a", "b"))
    raw = score_selection(cases[1:], [(("a", 2.0), ("b", 1.0))], rel=0.5)
    assert raw.score_rule == RAW_RULE and raw.n_normalised == 0


def test_selection_statistics_by_hand() -> None:
    s = searcher()
    rep = evaluate_selection(s, CASES, mode="ignored", k=10)
    # S0 (a,b): p 1/2 r 1 f1 2/3 | S1 (a,): 0, 0, 0 | S5 (c,d,e): p 2/3 r 1 f1 0.8
    # S2 a miss (not counted); S3 commits (a,), S4 commits nothing.
    assert rep.selected == (("a", "b"), ("a",), ("a",), ("a",), (), ("c", "d", "e"))
    assert rep.n_gold_retrieved == 3
    assert (rep.n_cases, rep.n_gold, rep.n_abstention) == (6, 4, 2)
    assert rep.selection_precision == pytest.approx((1 / 2 + 0 + 2 / 3) / 3)
    assert rep.selection_recall == pytest.approx((1 + 0 + 1) / 3)
    assert rep.selection_f1 == pytest.approx((2 / 3 + 0 + 0.8) / 3)
    assert rep.conditional_commit_rate == pytest.approx(2 / 3)
    assert rep.mean_selected_size == pytest.approx((2 + 1 + 3) / 3)
    assert rep.abstention_accuracy == pytest.approx(1 / 2)
    assert rep.config == {"strategy": "conservative", "k": 10, "max_k": 3, "rel": 0.9,
                          "gap_ratio": 0.5, "min_score": None}
    assert rep.mode == "callable" and rep.score_rule == RAW_RULE  # a searcher's own mode wins
    assert s.calls == 1
    json.dumps(rep.to_dict(), allow_nan=False)


def test_floor_max_k_and_score_gap_change_the_statistics_as_computed() -> None:
    floored = score_selection(CASES, RANKINGS, min_score=0.5)
    assert floored.abstention_accuracy == 1.0  # S3's top 0.3 is below the floor
    assert floored.selection_f1 == pytest.approx((2 / 3 + 0 + 0.8) / 3)
    one = score_selection(CASES, RANKINGS, max_k=1)
    # S0 (a,): 1,1,1 | S1 (a,): 0,0,0 | S5 (c,): p 1 r 1/2 f1 2/3
    assert one.selection_precision == pytest.approx(2 / 3)
    assert one.selection_recall == pytest.approx(0.5)
    assert one.selection_f1 == pytest.approx((1 + 0 + 2 / 3) / 3)
    assert one.mean_selected_size == 1.0
    gap = score_selection(CASES, RANKINGS, strategy="score_gap")
    # S0 (a,b,c): p 1/3 r 1 f1 1/2 | S1 (a,b): p 1/2 r 1 f1 2/3 | S5 (c,d,e): 2/3, 1, 0.8
    assert gap.selected[1] == ("a", "b")
    assert gap.selection_precision == pytest.approx((1 / 3 + 1 / 2 + 2 / 3) / 3)
    assert gap.selection_recall == 1.0
    assert gap.selection_f1 == pytest.approx((1 / 2 + 2 / 3 + 0.8) / 3)
    assert gap.conditional_commit_rate == 1.0
    assert gap.abstention_accuracy == 0.5  # S3 commits (a, b)


def test_the_candidate_window_is_k() -> None:
    # With k=1, S1's gold b (rank 2) is never shown: S1 leaves the denominator.
    rep = evaluate_selection(searcher(), CASES, k=1)
    assert rep.k == 1 and rep.n_gold_retrieved == 2
    # S5's window is (c,): the recall denominator is the gold it was shown, {c}, not {c, d}.
    assert rep.selected[5] == ("c",)
    assert rep.selection_recall == 1.0


def test_nothing_retrieved_and_nothing_committed_are_none() -> None:
    rep = score_selection([DiscoveryCase("m", ("m",))], [(("a", 1.0),)])
    assert rep.n_gold_retrieved == 0
    assert rep.selection_precision is rep.selection_recall is rep.selection_f1 is None
    assert rep.conditional_commit_rate is rep.mean_selected_size is None
    assert rep.abstention_accuracy is None
    never = score_selection([DiscoveryCase("g", ("a",))], [(("a", 1.0),)], min_score=5.0)
    assert never.selection_precision is None  # nothing committed
    assert never.selection_recall == never.selection_f1 == never.conditional_commit_rate == 0.0
    assert never.mean_selected_size == 0.0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"strategy": "greedy"}, "strategy must be one of conservative, score_gap"),
    ({"max_k": 0}, "max_k must be a positive integer"),
    ({"rel": 1.5}, r"rel must be a number in \[0, 1\]"),
    ({"gap_ratio": -0.1}, r"gap_ratio must be a number in \[0, 1\]"),
    ({"min_score": float("nan")}, "min_score must be a finite number"),
    ({"k": 0}, "k must be a positive integer"),
])
def test_bad_selection_parameters_are_refused(kwargs: dict[str, Any], message: str) -> None:
    s = searcher()
    with pytest.raises(InputError, match=message):
        evaluate_selection(s, CASES, **kwargs)
    assert s.calls == 0


def test_the_sweep_retrieves_once_for_the_whole_grid() -> None:
    s = searcher()
    sweep = sweep_selector(s, CASES)
    assert s.calls == 1
    assert s.hits == list(FIXED)  # type: ignore[attr-defined]  # each query asked once
    assert len(sweep.points) == 5 * 6
    assert [p.params for p in sweep.points[:2]] == [
        {"max_k": 1, "rel": 0.4, "min_score": None}, {"max_k": 1, "rel": 0.5, "min_score": None}]
    # every cell is exactly what evaluate_selection reports with those knobs
    for p in sweep.points:
        alone = evaluate_selection(searcher(), CASES, max_k=p.max_k, rel=p.rel,
                                   min_score=p.min_score)
        assert p.report == alone
    assert (sweep.n_cases, sweep.n_gold, sweep.n_abstention, sweep.n_gold_retrieved) == (
        6, 4, 2, 3)


def report(f1: float | None, size: float | None, *, p: float | None = None,
           r: float | None = None) -> SelectionReport:
    return SelectionReport(selection_precision=p, selection_recall=r, selection_f1=f1,
                           conditional_commit_rate=None, n_gold_retrieved=1,
                           abstention_accuracy=None, mean_selected_size=size, n_cases=1,
                           n_gold=1, n_abstention=0)


def sweep_of(*points: SelectionGridPoint) -> SelectionSweep:
    return SelectionSweep(points=points, objective="selection_f1", strategy="conservative",
                          mode="bm25", k=10, n_cases=1, n_gold=1, n_abstention=0,
                          n_gold_retrieved=1)


def test_best_tie_breaks_toward_the_cheaper_tighter_commit() -> None:
    p1 = SelectionGridPoint(3, 0.5, None, report(0.8, 2.0))
    p2 = SelectionGridPoint(2, 0.5, None, report(0.8 + 1e-15, 1.5))  # float noise is a tie
    p3 = SelectionGridPoint(1, 0.9, None, report(0.7, 1.0))
    assert sweep_of(p1, p2, p3).best() is p2                         # smaller size
    p4 = SelectionGridPoint(1, 0.5, None, report(0.8, 1.5))
    assert sweep_of(p1, p2, p3, p4).best() is p4                     # then smaller max_k
    p5 = SelectionGridPoint(1, 0.7, None, report(0.8, 1.5))
    assert sweep_of(p1, p2, p3, p4, p5).best() is p5                 # then larger rel
    p6 = SelectionGridPoint(1, 0.7, 0.3, report(0.8, 1.5))
    assert sweep_of(p5, p6).best() is p5                             # then grid order
    sweep = sweep_of(p1, p2, p3)
    assert sweep.best("mean_selected_size") is p3                    # minimised
    assert sweep.best("mean_selected_size", minimize=False) is p1
    assert sweep.best("selection_f1", minimize=True) is p3


def test_best_refusals() -> None:
    sweep = sweep_of(SelectionGridPoint(1, 0.5, None, report(0.8, 1.0)))
    with pytest.raises(InputError, match="unknown metric 'f1'; choose from " +
                       ", ".join(SWEEP_METRICS)):
        sweep.best("f1")
    with pytest.raises(InputError, match="abstention_accuracy is undefined at every"):
        sweep.best("abstention_accuracy")
    with pytest.raises(InputError, match="no points"):
        sweep_of().best()
    with pytest.raises(InputError, match="unknown x"):
        sweep.frontier(x="recall")
    with pytest.raises(InputError, match="unknown metric"):
        sweep.table(sort_by="recall")


def test_frontier_is_pareto_sorted_and_deduplicated_by_the_tie_break() -> None:
    a = SelectionGridPoint(1, 0.9, None, report(None, 1.0, r=0.5, p=0.9))
    b = SelectionGridPoint(3, 0.5, None, report(None, 2.0, r=0.7, p=0.8))
    c = SelectionGridPoint(3, 0.4, None, report(None, 2.5, r=0.6, p=0.7))  # dominated by b
    d = SelectionGridPoint(8, 0.4, None, report(None, 4.0, r=0.9, p=0.5))
    e = SelectionGridPoint(2, 0.5, None, report(None, 1.5, r=0.7, p=0.8))  # b's twin, cheaper
    u = SelectionGridPoint(2, 0.6, None, report(None, None))               # undefined: left out
    sweep = sweep_of(a, b, c, d, e, u)
    assert sweep.frontier() == [a, e, d]
    # size as an axis is read as "smaller is better" (sorted by size ascending all the same):
    # a (1.0, R .5), e (1.5, R .7), d (4.0, R .9); b (2.0, R .7) is beaten by e.
    assert sweep.frontier(x="mean_selected_size", y="selection_recall") == [a, e, d]
    assert b not in sweep.frontier(x="mean_selected_size", y="selection_precision")


def test_table_and_to_dict() -> None:
    sweep = sweep_rankings(CASES, RANKINGS, max_k_grid=(1, 3), rel_grid=(0.5, 0.9))
    text = sweep.table()
    lines = text.splitlines()
    assert "sorted by selection_f1" in lines[0] and "3 of 4 gold cases" in lines[0]
    assert lines[1].split() == ["max_k", "rel", "P", "R", "F1", "commit", "abstain", "size"]
    assert len(lines) == 2 + 4
    best = sweep.best()
    assert lines[2].split()[:2] == [str(best.max_k), f"{best.rel:g}"]
    floored = sweep_rankings(CASES, RANKINGS, max_k_grid=(1,), rel_grid=(0.9,),
                             min_score_grid=(None, 0.5))
    assert "min_score" in floored.table(sort_by="abstention_accuracy").splitlines()[1]
    assert floored.table(sort_by="abstention_accuracy").splitlines()[2].split()[2] == "0.5"
    d = sweep.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["best"] == best.to_dict() and len(d["points"]) == 4
    assert d["objective"] == "selection_f1" and d["k"] == 10
    assert set(d["points"][0]) == {"max_k", "rel", "min_score", "report"}


def test_sweep_refuses_bad_grids_and_objectives_before_searching() -> None:
    s = searcher()
    with pytest.raises(InputError, match="unknown objective 'f1'"):
        sweep_selector(s, CASES, objective="f1")
    with pytest.raises(InputError, match="rel_grid must be a non-empty"):
        sweep_selector(s, CASES, rel_grid=())
    with pytest.raises(InputError, match="max_k must be a positive"):
        sweep_selector(s, CASES, max_k_grid=(0,))
    assert s.calls == 0


def test_plumbing_through_a_bm25_catalogue() -> None:
    s = CatalogSearcher(CATALOG, mode="bm25")
    rep = evaluate_selection(s, PLUMB, max_k=1)
    assert rep.mode == "bm25" and not rep.degraded and s.calls == 1
    assert rep.selected[:2] == (("csv-loader",), ("sql-runner",))
    assert rep.selection_f1 == 1.0 and rep.identity["digest"] == CATALOG.digest
    with pytest.raises(InputError, match="weather-api"):
        sweep_selector(s, [*PLUMB, DiscoveryCase("weather", "weather-api")], mode="bm25")
    assert s.calls == 1


def test_plumbing_hybrid_with_the_hashing_embedder_is_flagged() -> None:
    sweep = sweep_selector(CATALOG, PLUMB, mode="hybrid", embedder=HashingEmbedder(),
                           max_k_grid=(1, 2), rel_grid=(0.9,))
    assert sweep.mode == "hybrid" and sweep.degraded and sweep.vd_degraded
    assert all(p.report.degraded for p in sweep.points)
    assert any("hashing" in n for n in sweep.notes)
    assert "degraded" in sweep.table().splitlines()[0]
    assert sweep.to_dict()["degraded"] is True
