"""evaluate_discovery / retrieval_report: hand-computed measures, every taxonomy class."""

from __future__ import annotations

import json
import math

import pytest
from tests.discovery._fixtures import CATALOG, PLUMB

from rankproof._errors import InputError
from rankproof.discovery._cases import DiscoveryCase
from rankproof.discovery._evaluate import (
    FAILURE_CLASSES,
    DiscoveryReport,
    classify,
    evaluate_discovery,
    retrieval_report,
    score_discovery,
)
from rankproof.discovery._source import CallableSearcher, CatalogSearcher
from rankproof.retrieval import HashingEmbedder

# Case index: query -> (gold, ranking). Abstention cases sit between gold cases so the
# case ids ("q{index}") are seen to follow the position, not the gold-case count.
FIXED: dict[str, tuple[tuple[str, ...], list[tuple[str, float]]]] = {
    "A": (("g",), [("x", 3.0), ("g", 2.0), ("y", 1.0)]),             # gold at rank 2
    "N1": ((), [("x", 0.4)]),                                          # abstention, low top
    "B": (("g2",), [("g2", 5.0)]),                                     # gold at rank 1
    "C": (("g3", "g4"), [("g4", 0.9), ("x", 0.8), ("y", 0.7), ("g3", 0.6)]),  # 2 gold: 1, 4
    "D": (("m",), [("x", 1.0), ("y", 0.5)]),                           # gold not retrieved
    "N2": ((), [("x", 2.0)]),                                          # abstention, high top
    "N3": ((), []),                                                    # abstention, nothing
}
CASES = [DiscoveryCase(q, gold) for q, (gold, _) in FIXED.items()]
LOG3 = math.log2(3)
LOG5 = math.log2(5)


def searcher() -> CallableSearcher:
    asked: list[int] = []

    def fn(query: str, k: int) -> list[tuple[str, float]]:
        asked.append(k)
        return FIXED[query][1][:k]

    s = CallableSearcher(fn, name="tests:fixed")
    s.asked = asked  # type: ignore[attr-defined]
    return s


# Hand-computed per-case values (binary gains; trec_eval's AP@k divides by |gold|).
EXPECTED = {
    "q0": {"nDCG@1": 0.0, "nDCG@5": 1 / LOG3, "nDCG@10": 1 / LOG3,
           "R@1": 0.0, "R@5": 1.0, "R@10": 1.0, "P@1": 0.0, "P@5": 0.2, "P@10": 0.1,
           "RR@1": 0.0, "RR@5": 0.5, "RR@10": 0.5, "AP@1": 0.0, "AP@5": 0.5, "AP@10": 0.5},
    "q2": {"nDCG@1": 1.0, "nDCG@5": 1.0, "nDCG@10": 1.0,
           "R@1": 1.0, "R@5": 1.0, "R@10": 1.0, "P@1": 1.0, "P@5": 0.2, "P@10": 0.1,
           "RR@1": 1.0, "RR@5": 1.0, "RR@10": 1.0, "AP@1": 1.0, "AP@5": 1.0, "AP@10": 1.0},
    # g4 at rank 1, g3 at rank 4: DCG = 1 + 1/log2(5); ideal = 1 + 1/log2(3).
    "q3": {"nDCG@1": 1.0, "nDCG@5": (1 + 1 / LOG5) / (1 + 1 / LOG3),
           "nDCG@10": (1 + 1 / LOG5) / (1 + 1 / LOG3),
           "R@1": 0.5, "R@5": 1.0, "R@10": 1.0, "P@1": 1.0, "P@5": 0.4, "P@10": 0.2,
           "RR@1": 1.0, "RR@5": 1.0, "RR@10": 1.0,
           "AP@1": 0.5, "AP@5": (1 + 2 / 4) / 2, "AP@10": (1 + 2 / 4) / 2},
    "q4": dict.fromkeys(("nDCG@1", "nDCG@5", "nDCG@10", "R@1", "R@5", "R@10", "P@1", "P@5",
                         "P@10", "RR@1", "RR@5", "RR@10", "AP@1", "AP@5", "AP@10"), 0.0),
}


def test_every_measure_per_case_and_mean_by_hand() -> None:
    report = evaluate_discovery(searcher(), CASES)
    r = report.retrieval
    assert r is not None
    assert r.measures == tuple(f"{f}@{k}" for f in ("nDCG", "R", "P", "RR", "AP")
                               for k in (1, 5, 10))
    assert set(r.per_case["nDCG@10"]) == {"q0", "q2", "q3", "q4"}
    for name in r.measures:
        for qid, values in EXPECTED.items():
            assert r.per_case[name][qid] == pytest.approx(values[name], abs=1e-12), (name, qid)
        mean = sum(v[name] for v in EXPECTED.values()) / 4
        assert r.metrics[name] == pytest.approx(mean, abs=1e-12), name
    assert report.primary == pytest.approx((1 / LOG3 + 1 + (1 + 1 / LOG5) / (1 + 1 / LOG3)) / 4)
    assert report.metrics == r.metrics
    assert r.n_queries == 4


def test_taxonomy_every_class_and_abstention_accuracy() -> None:
    report = evaluate_discovery(searcher(), CASES, abstain_threshold=1.0)
    assert report.case_classes == ("surfaced_low_rank", "abstention_ok", "hit_rank_1",
                                   "hit_rank_1", "retrieval_miss", "false_action",
                                   "abstention_ok")
    assert report.failure_classes == {"hit_rank_1": 2, "surfaced_low_rank": 1,
                                      "retrieval_miss": 1, "abstention_ok": 2,
                                      "false_action": 1, "abstention_unscored": 0}
    assert list(report.failure_classes) == list(FAILURE_CLASSES)
    assert (report.n_cases, report.n_gold, report.n_abstention) == (7, 4, 3)
    assert report.abstention_accuracy == pytest.approx(2 / 3)
    assert report.abstain_threshold == 1.0


def test_without_threshold_abstention_is_counted_not_scored() -> None:
    report = evaluate_discovery(searcher(), CASES)
    assert report.failure_classes["abstention_unscored"] == 3
    assert report.failure_classes["abstention_ok"] == report.failure_classes["false_action"] == 0
    assert report.abstention_accuracy is None
    assert any("abstain_threshold" in n for n in report.notes)


def test_a_top_score_equal_to_the_threshold_is_an_action() -> None:
    case = DiscoveryCase("N2")
    assert classify(case, (("x", 2.0),), k=10, abstain_threshold=2.0) == "false_action"
    assert classify(case, (("x", 2.0),), k=10, abstain_threshold=2.0001) == "abstention_ok"
    assert classify(case, (), k=10, abstain_threshold=-1e9) == "abstention_ok"


def test_primary_k_sets_the_taxonomy_cutoff_and_joins_k_values() -> None:
    s = searcher()
    report = evaluate_discovery(s, CASES, k_values=(1,), primary_k=3)
    assert s.asked == [3] * len(CASES)  # type: ignore[attr-defined]
    assert s.calls == 1
    assert report.retrieval is not None and report.retrieval.k_values == (1, 3)
    assert report.primary == report.metrics["nDCG@3"]
    assert report.case_classes[0] == "surfaced_low_rank"
    # C's second gold is at rank 4, beyond 3: the case is still a hit at rank 1.
    assert report.case_classes[3] == "hit_rank_1"
    one = evaluate_discovery(searcher(), CASES, k_values=(1,), primary_k=1)
    assert one.case_classes[0] == "retrieval_miss"  # gold at rank 2 is outside the top 1


def test_the_searchers_order_is_kept_even_on_tied_scores() -> None:
    # trec_eval would put "g" before "a" on equal scores (id descending); the searcher
    # ranked "a" first, and that is the order scored.
    cases = [DiscoveryCase("t", ("g",))]
    s = CallableSearcher(lambda q, k: [("a", 1.0), ("g", 1.0)])
    report = evaluate_discovery(s, cases)
    assert report.case_classes == ("surfaced_low_rank",)
    assert report.metrics["RR@10"] == 0.5


def test_all_abstention_cases_give_the_taxonomy_and_no_primary() -> None:
    cases = [c for c in CASES if not c.gold]
    report = evaluate_discovery(searcher(), cases, abstain_threshold=1.0)
    assert report.retrieval is None and report.primary is None and report.metrics == {}
    assert report.failure_classes["abstention_ok"] == 2
    assert report.failure_classes["false_action"] == 1
    assert report.abstention_accuracy == pytest.approx(2 / 3)
    assert any("no case has a gold id" in n for n in report.notes)
    json.dumps(report.to_dict(), allow_nan=False)
    with pytest.raises(InputError, match="no case has a gold id"):
        retrieval_report(searcher(), cases)


def test_retrieval_report_is_the_same_measures() -> None:
    full = evaluate_discovery(searcher(), CASES)
    only = retrieval_report(searcher(), CASES)
    assert full.retrieval is not None
    assert only.metrics == full.retrieval.metrics
    assert only.per_case == full.retrieval.per_case
    assert only.primary == full.primary


def test_metric_selection_and_unknown_metric() -> None:
    report = evaluate_discovery(searcher(), CASES, metrics=("ndcg", "mrr"), k_values=(5,))
    assert report.retrieval is not None
    assert report.retrieval.measures == ("nDCG@5", "nDCG@10", "RR@5", "RR@10")
    fam = evaluate_discovery(searcher(), CASES, metrics=("AP",), k_values=(10,))
    assert fam.retrieval is not None and fam.retrieval.measures == ("AP@10",)
    assert fam.primary is None  # nDCG not asked for
    with pytest.raises(InputError, match=r"unknown metric 'f1'.*ndcg, recall, precision, mrr"):
        evaluate_discovery(searcher(), CASES, metrics=("f1",))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"k_values": ()}, "k_values must be a non-empty"),
    ({"k_values": (0,)}, "k_values must be a positive integer"),
    ({"primary_k": 0}, "primary_k must be a positive integer"),
    ({"abstain_threshold": "high"}, "abstain_threshold must be a number"),
])
def test_bad_parameters_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        evaluate_discovery(searcher(), CASES, **kwargs)  # type: ignore[arg-type]


def test_bad_cases_and_rankings_are_refused() -> None:
    with pytest.raises(InputError, match="no cases"):
        evaluate_discovery(searcher(), [])
    with pytest.raises(InputError, match="not a DiscoveryCase"):
        evaluate_discovery(searcher(), ["A"])  # type: ignore[list-item]
    with pytest.raises(InputError, match="1 rankings for 7 cases"):
        score_discovery(CASES, [()])


def test_unknown_gold_id_is_refused_before_any_search() -> None:
    s = CatalogSearcher(CATALOG, mode="bm25")
    bad = [*PLUMB, DiscoveryCase("tell me the weather", ("weather-api",))]
    with pytest.raises(InputError, match="weather-api"):
        evaluate_discovery(s, bad)
    with pytest.raises(InputError, match="weather-api"):
        retrieval_report(s, bad)
    assert s.calls == 0
    fn = CallableSearcher(lambda q, k: [], catalog_ids=CATALOG.ids)
    with pytest.raises(InputError, match="weather-api"):
        evaluate_discovery(fn, bad)
    assert fn.calls == 0


def test_plumbing_through_a_bm25_catalogue() -> None:
    s = CatalogSearcher(CATALOG, mode="bm25")
    report = evaluate_discovery(s, PLUMB, abstain_threshold=1e9)
    assert isinstance(report, DiscoveryReport)
    assert s.calls == 1
    assert report.mode == "bm25" and not report.degraded and not report.vd_degraded
    assert report.identity["digest"] == CATALOG.digest
    assert report.case_classes == ("hit_rank_1", "hit_rank_1", "abstention_ok")
    assert report.primary == 1.0
    json.dumps(report.to_dict(), allow_nan=False)
    by_catalog = evaluate_discovery(CATALOG, PLUMB, mode="bm25")
    assert by_catalog.metrics == report.metrics


def test_plumbing_hybrid_with_the_hashing_embedder_is_flagged() -> None:
    report = evaluate_discovery(CATALOG, PLUMB, mode="hybrid", embedder=HashingEmbedder())
    assert report.mode == "hybrid"
    assert report.degraded and report.vd_degraded
    assert report.retrieval is not None and report.retrieval.degraded
    assert any("hashing" in n for n in report.notes)
    assert "degraded" in str(report)
    assert report.to_dict()["degraded"] is True


def test_gold_cases_with_nothing_retrieved_score_zero() -> None:
    cases = [DiscoveryCase("a", "g"), DiscoveryCase("b"), DiscoveryCase("c", ("h",))]
    report = score_discovery(cases, [(), (), ()], abstain_threshold=0.5)
    assert report.case_classes == ("retrieval_miss", "abstention_ok", "retrieval_miss")
    assert report.retrieval is not None
    assert report.primary == 0.0 and set(report.metrics.values()) == {0.0}
    assert report.retrieval.per_case["RR@10"] == {"q0": 0.0, "q2": 0.0}
    assert any("retrieved anything" in n for n in report.retrieval.notes)
