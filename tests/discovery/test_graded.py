"""Graded themes and named sets: levels, gains, graded qrels, derived sets, rates, files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rankproof._errors import InputError
from rankproof.discovery._defaults import LEVEL_GAINS, RELEVANCE_LEVELS
from rankproof.discovery._graded import (
    NamedSetReport,
    NamedSets,
    PackageRelevanceCase,
    derive_named_sets,
    evaluate_named_sets,
    fp_rate_on_distractors,
    level_histogram,
    load_package_cases,
    read_package_meta,
    recall_on_hard_positives,
    save_package_cases,
    score_named_sets,
    to_graded_qrels,
)
from rankproof.discovery._source import CallableSearcher, Catalog, CatalogItem, rank_run
from rankproof.measures import evaluate

T = "lineage"


def _cases() -> list[PackageRelevanceCase]:
    """a core, b strong (thin), c uses-tools, d tangential (observed high), e none, f unlabelled."""
    return [
        PackageRelevanceCase("a", {T: "core"}),
        PackageRelevanceCase("b", {T: "strong"}, thin_description=True),
        PackageRelevanceCase("c", {T: "uses-tools"}, thin_description=True),
        PackageRelevanceCase("d", {T: "tangential"}, observed={T: 0.8}),
        PackageRelevanceCase("e", {T: "none"}, observed={T: 0.3}),
        PackageRelevanceCase("f", {"other": "core"}, observed={T: 0.95}),
    ]


def test_levels_and_gains() -> None:
    assert RELEVANCE_LEVELS == ("none", "tangential", "uses-tools", "strong", "core")
    gains = [PackageRelevanceCase(x, {T: lv}).gain(T)
             for x, lv in zip("vwxyz", RELEVANCE_LEVELS, strict=True)]
    assert gains == [0.0, 0.0, 1.0, 2.0, 3.0]
    case = PackageRelevanceCase("a", {T: "strong"})
    assert case.level(T) == "strong" and case.level("unlabelled") == "none"
    assert case.gain("unlabelled") == 0.0
    assert case.gain(T, gains={"core": 3.0}) == 0.0  # a level the mapping lacks gains 0
    assert case.gain(T, gains={**LEVEL_GAINS, "strong": 5}) == 5.0


def test_case_round_trip_and_refusals() -> None:
    case = PackageRelevanceCase("a", {T: "core"}, evidence={T: "ships lineage"},
                                observed={T: 1}, thin_description=True,
                                is_distractor={"x": False}, metadata={"team": "data"})
    assert PackageRelevanceCase.from_dict(case.to_dict()) == case
    assert PackageRelevanceCase("b").to_dict() == {"artifact_id": "b", "labels": {}}
    with pytest.raises(InputError, match="'critical'") as err:
        PackageRelevanceCase.from_dict({"artifact_id": "a", "labels": {T: "critical"}})
    assert err.value.field == "labels"
    with pytest.raises(InputError) as err:
        PackageRelevanceCase.from_dict({"artifact_id": "a", "label": {T: "core"}})
    assert err.value.field == "label"
    for bad, fld in (({"artifact_id": ""}, "artifact_id"), ({}, "artifact_id"),
                     ({"artifact_id": "a", "observed": {T: "high"}}, "observed"),
                     ({"artifact_id": "a", "observed": {T: float("nan")}}, "observed"),
                     ({"artifact_id": "a", "thin_description": "yes"}, "thin_description"),
                     ({"artifact_id": "a", "is_distractor": {T: 1}}, "is_distractor"),
                     ({"artifact_id": "a", "labels": ["core"]}, "labels")):
        with pytest.raises(InputError) as err:
            PackageRelevanceCase.from_dict(bad)
        assert err.value.field == fld, bad


def test_to_graded_qrels_omits_zero_gains() -> None:
    queries, qrels = to_graded_qrels(_cases(), T, probe="where did this column come from")
    assert queries == {T: "where did this column come from"}
    assert qrels.to_dict() == {T: {"a": 3, "b": 2, "c": 1}}
    queries, qrels = to_graded_qrels(_cases(), T, query_id="t1")
    assert queries == {"t1": T}  # the probe defaults to the theme name
    _, qrels = to_graded_qrels(_cases(), T, gains={**LEVEL_GAINS, "tangential": 1})
    assert qrels.to_dict() == {T: {"a": 3, "b": 2, "c": 1, "d": 1}}


def test_to_graded_qrels_refusals() -> None:
    with pytest.raises(InputError, match="no artifact is relevant"):
        to_graded_qrels(_cases(), "unknown-theme")
    with pytest.raises(InputError, match="whole number") as err:
        to_graded_qrels(_cases(), T, gains={"core": 1.5})
    assert err.value.field == "gains"
    with pytest.raises(InputError, match="'crucial'"):
        to_graded_qrels(_cases(), T, gains={"crucial": 4})
    with pytest.raises(InputError, match="different levels"):
        to_graded_qrels([*_cases(), PackageRelevanceCase("a", {T: "strong"})], T)


def test_graded_ndcg_by_hand() -> None:
    """nDCG@5 of d, c, a, x, b (gains 0, 1, 3, -, 2) against the ideal a, b, c."""
    _, qrels = to_graded_qrels(_cases(), T)
    ranking = (("d", 0.9), ("c", 0.9), ("a", 0.5), ("x", 0.4), ("b", 0.1))
    # Ties (d, c at 0.9) keep the searcher's order, not trec_eval's id order.
    run = rank_run({T: ranking})
    got = evaluate(qrels, run, ["nDCG@5"]).scores("nDCG@5")[T]
    dcg = 1 / math.log2(3) + 3 / math.log2(4) + 2 / math.log2(6)
    ideal = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert got == pytest.approx(dcg / ideal)
    assert got == pytest.approx(0.60998, abs=1e-5)  # 2.90464 / 4.76186
    # Core first beats uses-tools first at the same recall.
    core_first = evaluate(qrels, rank_run({T: (("a", 1), ("c", 1))}), ["nDCG@2"])
    tools_first = evaluate(qrels, rank_run({T: (("c", 1), ("a", 1))}), ["nDCG@2"])
    assert core_first.mean("nDCG@2") > tools_first.mean("nDCG@2")


def test_level_histogram() -> None:
    assert level_histogram(_cases(), T) == {"none": 2, "tangential": 1, "uses-tools": 1,
                                            "strong": 1, "core": 1}
    assert level_histogram([], T) == dict.fromkeys(RELEVANCE_LEVELS, 0)
    assert list(level_histogram(_cases(), "other")) == list(RELEVANCE_LEVELS)


def test_derive_named_sets() -> None:
    sets = derive_named_sets(_cases(), T, observed_floor=0.5)
    # d (tangential, 0.8) and f (unlabelled = none, 0.95) are at or above the floor; e (0.3)
    # is not. b is strong and thin; c is thin but only uses-tools.
    assert sets == NamedSets(T, ("d", "f"), ("b",))
    assert derive_named_sets(_cases(), T, observed_floor=0.8).distractors == ("d", "f")
    assert derive_named_sets(_cases(), T, observed_floor=0.81).distractors == ("f",)
    assert derive_named_sets(_cases(), T, observed_floor=0.0).distractors == ("d", "e", "f")


def test_derive_named_sets_overrides_sorting_and_duplicates() -> None:
    cases = [*_cases(),
             PackageRelevanceCase("g", {T: "none"}, is_distractor={T: True}),  # no score
             PackageRelevanceCase("aa", {T: "core"}, thin_description=True),
             PackageRelevanceCase("b", {T: "strong"}, thin_description=True)]  # repeated
    cases[3] = PackageRelevanceCase("d", {T: "tangential"}, observed={T: 0.8},
                                    is_distractor={T: False})
    sets = derive_named_sets(cases, T, observed_floor=0.5)
    assert sets.distractors == ("f", "g")
    assert sets.hard_positives == ("aa", "b")
    assert derive_named_sets(list(reversed(cases)), T, observed_floor=0.5) == sets
    # gains decide relevance: tangential worth 1 is no longer a distractor candidate
    assert derive_named_sets(_cases(), T, observed_floor=0.5,
                             gains={**LEVEL_GAINS, "tangential": 1}).distractors == ("f",)
    with pytest.raises(InputError, match="is_distractor"):
        derive_named_sets([PackageRelevanceCase("a", {T: "core"}, is_distractor={T: True})],
                          T, observed_floor=0.5)
    with pytest.raises(InputError) as err:
        derive_named_sets(_cases(), T, observed_floor=float("nan"))
    assert err.value.field == "observed_floor"


def test_named_sets_normalise_and_round_trip() -> None:
    sets = NamedSets(T, ("z", "a", "z"), ("m",))
    assert sets.distractors == ("a", "z")
    assert NamedSets.from_dict(json.loads(json.dumps(sets.to_dict()))) == sets
    assert sets.named == {"a": "distractor", "z": "distractor", "m": "hard_positive"}
    with pytest.raises(InputError, match="both"):
        NamedSets(T, ("a",), ("a",))
    with pytest.raises(InputError) as err:
        NamedSets.from_dict({"theme": T, "distractor": ["a"]})
    assert err.value.field == "distractor"


def test_rates_by_hand() -> None:
    ranking = (("d", 0.9), ("a", 0.8), ("f", 0.7), ("x", 0.6), ("b", 0.5))
    assert fp_rate_on_distractors(ranking, ["d", "f", "e"], k=3) == pytest.approx(2 / 3)
    assert fp_rate_on_distractors(ranking, ["d", "f", "e"], k=1) == pytest.approx(1 / 3)
    assert fp_rate_on_distractors(ranking, ["d", "d", "e"], k=3) == pytest.approx(1 / 2)
    assert fp_rate_on_distractors(ranking, [], k=3) == 0.0
    assert recall_on_hard_positives(ranking, ["b", "a", "b"], k=5) == 1.0
    assert recall_on_hard_positives(ranking, ["b", "a", "b"], k=4) == 0.5
    assert recall_on_hard_positives(["a", "b"], ["b"], k=2) == 1.0  # plain ids work too
    assert recall_on_hard_positives(ranking, [], k=3) == 0.0
    with pytest.raises(InputError):
        fp_rate_on_distractors(ranking, ["d"], k=0)


def test_score_named_sets_names_the_ids() -> None:
    ranking = (("d", 0.9), ("a", 0.8), ("f", 0.7), ("x", 0.6), ("b", 0.5))
    report = score_named_sets(ranking, NamedSets(T, ("f", "d", "e"), ("b", "a", "q")), k=3,
                              ids=["a", "b", "d", "e", "f", "x"])
    assert report.fp_rate == pytest.approx(2 / 3)
    assert report.distractors_seen == ("d", "f")  # rank order
    assert report.hard_positive_recall == pytest.approx(1 / 3)
    assert report.hard_positives_missed == ("b", "q")
    assert report.absent == ("q",)
    assert report.notes == ("1 named id(s) are not in the searched catalogue: q",)
    assert json.loads(json.dumps(report.to_dict()))["distractors_seen"] == ["d", "f"]
    assert "seen: d, f" in str(report)


def test_evaluate_named_sets_searches_once() -> None:
    searcher = CallableSearcher(lambda q, k: [("d", 3.0), ("a", 2.0), ("b", 1.0)][:k],
                                name="tests:fixed")
    report = evaluate_named_sets(searcher, NamedSets(T, ("d",), ("b",)), probe="lineage", k=2)
    assert isinstance(report, NamedSetReport)
    assert searcher.calls == 1
    assert (report.fp_rate, report.hard_positive_recall) == (1.0, 0.0)
    assert report.hard_positives_missed == ("b",)
    assert report.mode == "callable" and report.identity["callable"] == "tests:fixed"
    relabelled = evaluate_named_sets(searcher, NamedSets(T, ("d",), ("b",)), "renamed",
                                     probe="lineage", k=3)
    assert relabelled.theme == "renamed" and relabelled.hard_positive_recall == 1.0


def test_evaluate_named_sets_on_a_catalogue() -> None:
    catalog = Catalog((CatalogItem("lineage-graph", "Lineage graph", "column lineage tracking"),
                       CatalogItem("cron", "Cron", "schedule jobs"),
                       CatalogItem("thin", "thin", "")))
    report = evaluate_named_sets(catalog, NamedSets(T, ("cron",), ("thin",)),
                                 probe="column lineage", mode="bm25", k=1)
    assert report.distractors_seen == () and report.hard_positives_missed == ("thin",)
    assert report.mode == "bm25" and not report.degraded
    assert report.identity["digest"] == catalog.digest


def test_package_files_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    meta = {"probes": {T: "column lineage"}, "catalog": "sha256:abc"}
    save_package_cases(_cases(), path, meta=meta)
    assert load_package_cases(path) == _cases()
    assert read_package_meta(path) == meta
    save_package_cases(_cases(), path)
    assert read_package_meta(path) == {}
    assert json.loads(path.read_text().splitlines()[0]) == {"artifact_id": "a",
                                                            "labels": {T: "core"}}


@pytest.mark.parametrize(("lines", "line", "field", "match"), [
    ([{"artifact_id": "a", "labels": {T: "core"}},
      {"artifact_id": "b", "labels": {T: "vital"}}], 2, "labels", "'vital'"),
    ([{"__meta__": ["probes"]}, {"artifact_id": "a"}], 1, "__meta__", "object"),
    ([{"__meta__": {"probes": {T: ""}}}, {"artifact_id": "a"}], 1, "__meta__.probes",
     "probe"),
    ([{"__meta__": {}, "extra": 1}, {"artifact_id": "a"}], 1, "__meta__", "only"),
    ([{"artifact_id": "a"}, {"__meta__": {}}], 2, "__meta__", "first line"),
    ([{"artifact_id": "a", "level": "core"}], 1, "level", "unknown key"),
    ([{"artifact_id": "a"}, {"artifact_id": "a"}], 2, "artifact_id", "twice"),
])
def test_bad_files_are_refused_by_line_and_field(tmp_path: Path, lines: list[object],
                                                 line: int, field: str, match: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    for read in (load_package_cases, read_package_meta):
        with pytest.raises(InputError, match=match) as err:
            read(path)
        assert (err.value.path, err.value.line, err.value.field) == (str(path), line, field)
        assert str(path) in str(err.value) and f"line {line}" in str(err.value)


def test_refused_saves_write_nothing(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    with pytest.raises(InputError) as err:
        save_package_cases(_cases(), path, meta={"probes": {T: 3}})
    assert err.value.field == "__meta__.probes"
    with pytest.raises(InputError, match="twice"):
        save_package_cases([*_cases(), PackageRelevanceCase("a")], path)
    with pytest.raises(InputError, match="not JSON"):
        save_package_cases([PackageRelevanceCase("a", metadata={"x": {1, 2}})], path)
    assert not path.exists()
    path.write_text("keep\n")
    with pytest.raises(InputError):
        save_package_cases(_cases(), path, meta=["not", "a", "mapping"])  # type: ignore[arg-type]
    assert path.read_text() == "keep\n"
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"__meta__": {}}) + "\n")
    with pytest.raises(InputError, match="no package cases"):
        load_package_cases(empty)
