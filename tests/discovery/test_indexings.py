"""compare_indexings: per-theme graded nDCG, named-set ranks, regressions, paired case tests."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence

import pytest

from rankproof._errors import InputError
from rankproof.discovery._cases import DiscoveryCase
from rankproof.discovery._graded import NamedSets, PackageRelevanceCase
from rankproof.discovery._indexings import ComparisonReport, Regression, compare_indexings
from rankproof.discovery._source import CallableSearcher, Catalog, CatalogItem, CatalogSearcher
from rankproof.retrieval import HashingEmbedder

T, U = "lineage", "quality"
PROBES = {T: "probe t", U: "probe u"}
CASES = [
    PackageRelevanceCase("a", {T: "core"}),
    PackageRelevanceCase("b", {T: "strong"}, thin_description=True),
    PackageRelevanceCase("c", {T: "uses-tools"}),
    PackageRelevanceCase("d", {T: "tangential"}),
    PackageRelevanceCase("e", {T: "none"}),
    PackageRelevanceCase("p", {U: "core"}),
    PackageRelevanceCase("q", {U: "strong"}, thin_description=True),
    PackageRelevanceCase("r", {U: "none"}),
]
NAMED = {T: NamedSets(T, ("d", "e"), ("b",)), U: NamedSets(U, ("r",), ("q",))}
# base: every named positive is high, every distractor low or absent.
BASE = {"probe t": ["a", "b", "c", "d", "x"], "probe u": ["p", "q", "y"]}
# new: b vanishes, d rises 4 -> 2, e appears at 6; q falls 2 -> 4, r appears at 2.
NEW = {"probe t": ["a", "d", "c", "x", "y", "e"], "probe u": ["p", "r", "y", "q"]}


def _searcher(table: dict[str, list[str]], name: str) -> CallableSearcher:
    def fn(query: str, k: int) -> Sequence[tuple[str, float]]:
        ids = table[query]
        return [(doc, 1.0 - i / 10) for i, doc in enumerate(ids)][:k]

    return CallableSearcher(fn, name=name)


def _report(**kw: object) -> ComparisonReport:
    sources = {"base": _searcher(BASE, "tests:base"), "new": _searcher(NEW, "tests:new")}
    return compare_indexings(sources, CASES, themes=[T, U], probes=PROBES, k=3,
                             named_sets=NAMED, rank_depth=10, **kw)  # type: ignore[arg-type]


def test_metrics_by_hand() -> None:
    report = _report()
    assert report.labels == ("base", "new") and report.baseline == "base"
    ideal_t = 3 + 2 / math.log2(3) + 1 / 2
    assert report.metrics["base"][T] == {"ndcg": pytest.approx(1.0), "fp_rate": 0.0,
                                         "hard_positive_recall": 1.0}
    # new, top 3 of T: a (3), d (0), c (1) -> (3 + 1/2) / ideal; d is one of two distractors
    assert report.metrics["new"][T] == {"ndcg": pytest.approx(3.5 / ideal_t),
                                        "fp_rate": 0.5, "hard_positive_recall": 0.0}
    assert report.metrics["new"][T]["ndcg"] == pytest.approx(0.73500, abs=1e-5)
    # new, top 3 of U: p (3), r (0), y -> 3 / (3 + 2/log2 3)
    assert report.metrics["new"][U]["ndcg"] == pytest.approx(3 / (3 + 2 / math.log2(3)))
    assert report.metrics["new"][U]["fp_rate"] == 1.0


def test_ranks_and_scores_of_named_ids() -> None:
    report = _report()
    assert report.ranks["base"][T] == {"b": 2, "d": 4, "e": math.inf}
    assert report.ranks["new"][T] == {"b": math.inf, "d": 2, "e": 6}
    assert report.ranks["new"][U] == {"q": 4, "r": 2}
    entry = report.deltas[T]["b"]
    assert entry["role"] == "hard_positive"
    assert entry["by_label"]["base"] == {"rank": 2, "score": pytest.approx(0.9)}
    assert entry["by_label"]["new"] == {"rank": math.inf, "score": None}
    assert report.deltas[U]["r"]["role"] == "distractor"
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["kind"] == "rankproof.discovery.comparison"
    assert data["deltas"][T]["b"]["by_label"]["new"] == {"rank": None, "score": None}
    assert data["identities"]["new"]["callable"] == "tests:new"
    assert data["modes"] == {"base": "callable", "new": "callable"}


def test_regressions_counts_vanished_fallen_and_risen() -> None:
    report = _report()
    got = report.regressions()
    assert [(r.theme, r.artifact_id, r.role, r.label) for r in got] == [
        (T, "d", "distractor", "new"), (T, "e", "distractor", "new"),
        (T, "b", "hard_positive", "new"),
        (U, "r", "distractor", "new"), (U, "q", "hard_positive", "new")]
    b = next(r for r in got if r.artifact_id == "b")
    assert (b.baseline_rank, b.rank, b.shift) == (2, math.inf, math.inf)
    assert str(b) == "lineage: hard positive 'b' fell from rank 2 under 'base' to absent " \
                     "under 'new'"
    d = next(r for r in got if r.artifact_id == "d")
    assert d.shift == 2 and "rose from rank 4" in str(d)
    # threshold: moves of 2 places no longer count; vanished/new ids always do
    assert [r.artifact_id for r in report.regressions(threshold=2)] == ["e", "b", "r"]
    assert [r.artifact_id for r in report.regressions(threshold=1)] == ["d", "e", "b", "r", "q"]
    # from the new index's point of view, going back to base regresses nothing
    assert report.regressions(baseline="new") == []
    assert isinstance(got[0], Regression)
    json.dumps([r.to_dict() for r in got], allow_nan=False)


def test_regressions_is_a_pytest_gate() -> None:
    same = {"base": _searcher(BASE, "a"), "copy": _searcher(BASE, "b")}
    report = compare_indexings(same, CASES, themes=[T, U], probes=PROBES, k=3,
                               named_sets=NAMED, rank_depth=10)
    assert not report.regressions()
    with pytest.raises(AssertionError):
        assert not _report().regressions()


def test_regressions_refusals() -> None:
    report = _report()
    with pytest.raises(InputError, match="baseline 'old'"):
        report.regressions(baseline="old")
    for bad in (-1, float("nan"), True):
        with pytest.raises(InputError) as err:
            report.regressions(threshold=bad)
        assert err.value.field == "threshold"


def _cases_searcher(gold_rank: int) -> Callable[[str, int], list[tuple[str, float]]]:
    """Themes as in BASE; case i's gold id is g{i}, placed at ``gold_rank``."""
    def fn(query: str, k: int) -> list[tuple[str, float]]:
        if query in BASE:
            ids = BASE[query]
        else:
            i = int(query.split()[-1])
            ids = [f"z{j}" for j in range(gold_rank - 1)] + [f"g{i}"]
        return [(doc, 1.0 - n / 10) for n, doc in enumerate(ids)][:k]

    return fn


def test_paired_comparison_over_discovery_cases() -> None:
    cases = [DiscoveryCase(f"intent {i}", (f"g{i}",)) for i in range(12)]
    cases.insert(5, DiscoveryCase("nothing applies"))  # abstention: not a pair
    sources = {"base": CallableSearcher(_cases_searcher(1), name="t:one"),
               "same": CallableSearcher(_cases_searcher(1), name="t:same"),
               "worse": CallableSearcher(_cases_searcher(3), name="t:three")}
    report = compare_indexings(sources, CASES, themes=[T], probes=PROBES, k=3,
                               discovery_cases=cases, resamples=2000, seed=7)
    for searcher in sources.values():
        assert searcher.calls == 1  # themes and cases in one retrieval pass
    qids = [f"q{i}" for i in range(13) if i != 5]
    assert sorted(report.case_ndcg["base"]) == sorted(qids)
    assert set(report.case_ndcg["base"].values()) == {1.0}
    assert list(report.case_ndcg["worse"].values()) == [pytest.approx(0.5)] * 12  # 1/log2(4)
    comparison = report.case_comparison
    assert comparison is not None and comparison.baseline == "base"
    assert comparison.seed == 7 and comparison.resamples == 2000
    rows = {row.candidate: row for row in comparison.rows}
    assert rows["worse"].result.n == 12 and sorted(rows["worse"].qids) == sorted(qids)
    assert rows["worse"].result.difference == pytest.approx(-0.5)
    assert report.verdicts() == {"same": "no detectable difference", "worse": "worse"}
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["case_comparison"]["kind"] == "rankproof.comparison"
    assert "cases: worse" in str(report)
    assert _report().case_comparison is None and _report().verdicts() == {}


def test_catalogues_in_bm25_searched_once_each() -> None:
    rich = Catalog((CatalogItem("lineage-graph", "Lineage graph", "column lineage for tables"),
                    CatalogItem("cron", "Cron", "schedule jobs nightly"),
                    CatalogItem("lint", "SQL lint", "style checks for queries")))
    thin = Catalog((CatalogItem("lineage-graph", "graph", "a graph"),
                    CatalogItem("cron", "Cron", "schedule jobs nightly lineage column"),
                    CatalogItem("lint", "SQL lint", "style checks for queries")))
    cases = [PackageRelevanceCase("lineage-graph", {T: "core"}, thin_description=True),
             PackageRelevanceCase("cron", {T: "none"}, observed={T: 2.0})]
    searchers = {"rich": CatalogSearcher(rich, mode="bm25"),
                 "thin": CatalogSearcher(thin, mode="bm25")}
    report = compare_indexings(searchers, cases, themes=[T], probes={T: "column lineage"},
                               k=1, named_sets=[NamedSets(T, ("cron",), ("lineage-graph",))],
                               mode="bm25", rank_depth=3)
    assert [s.calls for s in searchers.values()] == [1, 1]
    assert report.metrics["rich"][T] == {"ndcg": 1.0, "fp_rate": 0.0,
                                         "hard_positive_recall": 1.0}
    assert report.metrics["thin"][T]["ndcg"] == 0.0
    assert [(r.artifact_id, r.role) for r in report.regressions()] == [
        ("cron", "distractor"), ("lineage-graph", "hard_positive")]
    assert report.identities["thin"]["digest"] == thin.digest and not report.degraded


def test_catalogue_sources_take_the_shared_mode() -> None:
    catalog = Catalog((CatalogItem("a", "alpha lineage"), CatalogItem("b", "beta")))
    report = compare_indexings({"one": catalog, "two": catalog},
                               [PackageRelevanceCase("a", {T: "core"})], themes=[T],
                               probes={T: "lineage"}, mode="bm25", k=1, rank_depth=2)
    assert report.modes == {"one": "bm25", "two": "bm25"}
    assert report.deltas == {} and report.regressions() == []
    assert report.metrics["one"][T] == {"ndcg": 1.0}


def test_a_degraded_searcher_is_stamped() -> None:
    catalog = Catalog((CatalogItem("a", "alpha lineage"), CatalogItem("b", "beta")))
    report = compare_indexings(
        {"bm25": CatalogSearcher(catalog, mode="bm25"),
         "hybrid": CatalogSearcher(catalog, mode="hybrid", embedder=HashingEmbedder())},
        iter([PackageRelevanceCase("a", {T: "core"}), PackageRelevanceCase("c", {T: "core"})]),
        themes=[T], probes={T: "lineage"}, k=1, rank_depth=2)
    assert report.degraded and report.modes == {"bm25": "bm25", "hybrid": "hybrid"}
    assert any(n.startswith("hybrid: ") and "hashing" in n for n in report.notes)
    # a labelled artifact the catalogue lacks is said, per label
    assert any(n.startswith("bm25: 1 labelled artifact") and "c" in n for n in report.notes)
    assert "[degraded]" in str(report)


@pytest.mark.parametrize(("kw", "field", "match"), [
    ({"sources": {"only": lambda q, k: []}}, "sources", "at least two"),
    ({"probes": {T: "probe t"}}, "probes", "no probe for theme"),
    ({"themes": [T, T]}, "themes", "twice"),
    ({"named_sets": {U: NAMED[U]}, "themes": [T]}, "named_sets", "not compared"),
    ({"named_sets": {T: NAMED[U]}}, "named_sets", "key"),
    ({"k": 0}, "k", "positive"),
    ({"k": 5, "rank_depth": 4}, "rank_depth", "at least k"),
])
def test_refusals(kw: dict[str, object], field: str, match: str) -> None:
    args: dict[str, object] = {
        "sources": {"base": _searcher(BASE, "x"), "new": _searcher(NEW, "y")},
        "themes": [T, U], "probes": PROBES, "named_sets": NAMED, "k": 3, "rank_depth": 10}
    args.update(kw)
    sources = args.pop("sources")
    with pytest.raises(InputError, match=match) as err:
        compare_indexings(sources, CASES, **args)  # type: ignore[arg-type]
    assert err.value.field == field


def test_a_theme_without_relevant_items_is_refused() -> None:
    with pytest.raises(InputError, match="no artifact is relevant to theme 'empty'"):
        compare_indexings({"a": _searcher(BASE, "x"), "b": _searcher(BASE, "y")}, CASES,
                          themes=["empty"], probes={"empty": "probe t"})
