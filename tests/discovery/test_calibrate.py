"""The calibrated abstention floor: hand-computed separations, reasons, stamps, stale files."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from rankproof._errors import ConfigError, InputError
from rankproof.discovery._calibrate import (
    MinScoreCalibration,
    calibrate_from_rankings,
    calibrate_min_score,
    default_calibration_path,
    identity_changes,
    load_calibration,
)
from rankproof.discovery._cases import DiscoveryCase
from rankproof.discovery._source import (
    CallableSearcher,
    CatalogSearcher,
    Ranking,
    load_catalog,
)
from rankproof.retrieval import HashingEmbedder


def fixed(table: dict[str, Ranking]) -> CallableSearcher:
    """A searcher answering each query with its fixed ranking (best first)."""

    def search(query: str, k: int) -> Sequence[tuple[str, float]]:
        return table[query][:k]

    return CallableSearcher(search, name="tests:fixed", version="1")


def case(query: str, *gold: str) -> DiscoveryCase:
    return DiscoveryCase(query, gold)


# Separable: in-scope tops 0.9, 0.7; out-of-scope tops 0.4, 0.2; one retrieval miss whose
# top (0.1) would pull the floor down if it were (wrongly) counted as in-scope.
SEPARABLE = {"alpha": (("a", 0.9),), "beta": (("b", 0.7), ("a", 0.3)),
             "none1": (("a", 0.4),), "none2": (("b", 0.2),), "gamma": (("a", 0.1),)}
SEPARABLE_CASES = [case("alpha", "a"), case("beta", "b"), case("none1"), case("none2"),
                   case("gamma", "c")]


def test_separable_scores_hand_computed() -> None:
    searcher = fixed(SEPARABLE)
    cal = calibrate_min_score(searcher, SEPARABLE_CASES)
    assert searcher.calls == 1  # one retrieval pass
    # Distinct tops 0.2 0.4 0.7 0.9 -> floors: 0.2 (commit all), midpoints 0.3 0.55 0.8,
    # and just above 0.9 (abstain on all).
    floors = [g["min_score"] for g in cal.grid]
    assert floors[:4] == pytest.approx([0.2, 0.3, 0.55, 0.8])
    assert floors[4] == math.nextafter(0.9, math.inf)
    table = [(g["sensitivity"], g["specificity"], g["youden_j"], g["objective"])
             for g in cal.grid]
    assert table == ([(1, 0, 0, 0.5), (1, 0.5, 0.5, 0.75), (1, 1, 1, 1),
                      (0.5, 1, 0.5, 0.75), (0, 1, 0, 0.5)])  # exact: small fractions
    assert cal.reason == "calibrated"
    assert cal.min_score == pytest.approx(0.55)
    assert (cal.sensitivity, cal.specificity, cal.youden_j, cal.balanced_accuracy,
            cal.objective) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert cal.separable
    assert (cal.n_positive, cal.n_abstention, cal.n_retrieval_miss) == (2, 2, 1)
    assert cal.retrieval_miss_ids == ("q4",)
    assert cal.positive_raw_scores == (0.9, 0.7) and cal.abstention_raw_scores == (0.4, 0.2)
    assert cal.positive_scores == {"n": 2, "min": 0.7, "median": pytest.approx(0.8), "max": 0.9}
    assert cal.abstention_scores == {"n": 2, "min": 0.2, "median": pytest.approx(0.3),
                                     "max": 0.4}
    assert cal.mode == "callable" and cal.corpus_name == "tests:fixed"
    assert cal.identity == {"kind": "callable", "callable": "tests:fixed", "version": "1",
                            "mode": "callable"}
    assert any("retrieval misses" in n for n in cal.notes)
    json.dumps(cal.to_dict(), allow_nan=False)


def test_the_pure_function_agrees_without_searching() -> None:
    searcher = fixed(SEPARABLE)
    rankings = [SEPARABLE[c.query] for c in SEPARABLE_CASES]
    pure = calibrate_from_rankings(SEPARABLE_CASES, rankings, mode=searcher.mode,
                                   identity=searcher.identity)
    assert pure == calibrate_min_score(searcher, SEPARABLE_CASES)
    with pytest.raises(InputError, match="1 ranking"):
        calibrate_from_rankings(SEPARABLE_CASES, rankings[:1])


def tops(pos: Sequence[float], neg: Sequence[float]) -> tuple[list[DiscoveryCase],
                                                              list[Ranking]]:
    cases = [case(f"p{i}", "g") for i in range(len(pos))] + \
            [case(f"n{i}") for i in range(len(neg))]
    rankings: list[Ranking] = [(("g", s),) for s in pos] + [(("x", s),) for s in neg]
    return cases, rankings


def test_inseparable_scores_ties_go_to_the_stricter_floor() -> None:
    # In-scope 0.5 0.7 0.9, out-of-scope 0.3 0.6 0.8. Floors and (sens, spec):
    # 0.3 (1, 0)  0.4 (1, 1/3)  0.55 (2/3, 1/3)  0.65 (2/3, 2/3)  0.75 (1/3, 2/3)
    # 0.85 (1/3, 1)  >0.9 (0, 1).  With w = 0.5, 0.4 / 0.65 / 0.85 tie at 2/3 (J = 1/3):
    # the highest (stricter) floor wins.
    cal = calibrate_from_rankings(*tops([0.5, 0.7, 0.9], [0.3, 0.6, 0.8]))
    assert cal.reason == "calibrated" and not cal.separable
    assert cal.min_score == pytest.approx(0.85)
    assert cal.sensitivity == pytest.approx(1 / 3) and cal.specificity == 1.0
    assert cal.youden_j == pytest.approx(1 / 3)
    assert cal.balanced_accuracy == pytest.approx(2 / 3)
    assert cal.objective == pytest.approx(2 / 3)
    assert [g["objective"] for g in cal.grid] == pytest.approx(
        [0.5, 2 / 3, 0.5, 2 / 3, 0.5, 2 / 3, 0.5])
    # Weight on sensitivity: 0.75 * sens + 0.25 * spec peaks at 0.4 (0.75 + 1/12).
    lenient = calibrate_from_rankings(*tops([0.5, 0.7, 0.9], [0.3, 0.6, 0.8]),
                                      sensitivity_weight=0.75)
    assert lenient.min_score == pytest.approx(0.4)
    assert lenient.objective == pytest.approx(0.75 + 0.25 / 3)
    assert (lenient.sensitivity, lenient.specificity) == pytest.approx((1.0, 1 / 3))


def test_objective_ties_go_first_to_the_larger_youden_j() -> None:
    # w = 0.25, in-scope 0.5, out-of-scope 0.2 0.3 0.8: floor 0.4 (sens 1, spec 2/3) and
    # abstain-all (0, 1) both score 0.75; J is 2/3 against 0, so 0.4 wins although lower.
    cal = calibrate_from_rankings(*tops([0.5], [0.2, 0.3, 0.8]), sensitivity_weight=0.25)
    assert cal.min_score == pytest.approx(0.4)
    assert cal.youden_j == pytest.approx(2 / 3)


def test_a_given_floor_grid_is_used_as_is() -> None:
    cal = calibrate_from_rankings(*tops([0.5, 0.7, 0.9], [0.3, 0.6, 0.8]),
                                  floor_grid=[0.65, 0.1, 0.65])
    assert [g["min_score"] for g in cal.grid] == [0.1, 0.65]
    assert cal.min_score == 0.65 and cal.sensitivity == pytest.approx(2 / 3)
    assert not cal.separable  # judged on the scores, not on the grid
    for bad in ([], [float("nan")], "0.5", [True]):
        with pytest.raises(InputError, match="floor"):
            calibrate_from_rankings(*tops([0.5], [0.2]), floor_grid=bad)  # type: ignore[arg-type]
    for w in (-0.1, 1.5, "0.5", True):
        with pytest.raises(InputError, match="sensitivity_weight"):
            calibrate_from_rankings(*tops([0.5], [0.2]), sensitivity_weight=w)  # type: ignore[arg-type]


def test_reason_no_positive_cases() -> None:
    # Only abstention cases, plus a gold case whose gold was not retrieved (a miss, not a positive).
    cases = [case("n1"), case("n2"), case("m", "g")]
    cal = calibrate_from_rankings(cases, [(("x", 0.3),), (("x", 0.4),), (("x", 0.9),)])
    assert cal.reason == "no_positive_cases" and cal.min_score is None
    assert (cal.n_positive, cal.n_abstention, cal.n_retrieval_miss) == (0, 2, 1)
    assert cal.sensitivity is None and cal.specificity == 0.0  # no floor: nothing refused
    assert cal.youden_j is None and cal.balanced_accuracy is None and cal.objective is None
    assert cal.grid == () and not cal.separable and cal.positive_scores is None


def test_reason_no_abstention_cases() -> None:
    cal = calibrate_from_rankings(*tops([0.5, 0.7], []))
    assert cal.reason == "no_abstention_cases" and cal.min_score is None
    assert cal.sensitivity == 1.0 and cal.specificity is None
    assert cal.abstention_scores is None and cal.grid == ()


def test_reason_no_cases() -> None:
    assert calibrate_from_rankings([], []).reason == "no_cases"
    only_misses = calibrate_from_rankings([case("m", "g")], [(("x", 0.9),)])
    assert only_misses.reason == "no_cases" and only_misses.n_retrieval_miss == 1
    assert only_misses.min_score is None


def test_an_abstention_case_that_retrieved_nothing_is_refused_at_any_floor() -> None:
    cases = [case("p", "g"), case("n1"), case("n2")]
    cal = calibrate_from_rankings(cases, [(("g", 0.5),), (("x", 0.6),), ()])
    assert cal.n_abstention == 2 and cal.n_abstention_empty == 1
    # Floors (sens, spec): 0.5 (1, 1/2) -> 0.75; 0.55 (0, 1/2) -> 0.25; >0.6 (0, 1) -> 0.5.
    assert cal.min_score == 0.5 and cal.specificity == 0.5
    assert cal.abstention_raw_scores == (0.6,)
    assert not cal.separable
    empty_only = calibrate_from_rankings(cases[:2], [(("g", 0.5),), ()])
    assert empty_only.separable and empty_only.youden_j == 1.0


def write_catalog(path: Path, extra: bool = False) -> Path:
    rows = [{"id": "s3-ingest", "title": "S3 ingest",
             "text": "load parquet files from object storage buckets into tables"},
            {"id": "dq-rules", "title": "Quality rules", "text": "check data quality rules"},
            {"id": "scheduler", "title": "Scheduler", "text": "run jobs on a cron schedule"}]
    if extra:
        rows.append({"id": "alerts", "title": "Alerts", "text": "page the on-call engineer"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


CATALOG_CASES = [case("load parquet files from buckets", "s3-ingest"),
                 case("run my jobs every night on a schedule", "scheduler"),
                 case("check data quality", "dq-rules"),
                 case("book a meeting room for tomorrow"),
                 case("order lunch for the team files")]


def test_save_and_load_round_trip_beside_the_catalogue(tmp_path: Path) -> None:
    cat_path = write_catalog(tmp_path / "tools.jsonl")
    cal = calibrate_min_score(cat_path, CATALOG_CASES, mode="bm25", persist=True)
    expected = tmp_path / "tools.bm25.calibration.json"
    assert sorted(p.name for p in tmp_path.iterdir()) == [expected.name, "tools.jsonl"]
    assert cal.default_path() == expected.resolve()
    assert cal.identity["digest"].startswith("sha256:") and cal.identity["mode"] == "bm25"
    assert load_calibration(cat_path, mode="bm25") == cal
    searcher = CatalogSearcher(load_catalog(cat_path), mode="bm25")
    assert MinScoreCalibration.load(expected, expect=searcher) == cal
    assert MinScoreCalibration.from_dict(json.loads(expected.read_text())) == cal
    assert load_calibration(expected, identity=searcher.identity) == cal
    # Another mode has its own file: none stored yet.
    assert load_calibration(cat_path, mode="hybrid", embedder=HashingEmbedder()) is None
    # An explicit path.
    other = cal.save(tmp_path / "elsewhere.json")
    assert load_calibration(cat_path, mode="bm25", path=other) == cal


def test_a_stale_calibration_is_refused_when_the_catalogue_changes(tmp_path: Path) -> None:
    cat_path = write_catalog(tmp_path / "tools.jsonl")
    calibrate_min_score(cat_path, CATALOG_CASES, mode="bm25", persist=True)
    write_catalog(cat_path, extra=True)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ConfigError, match=r"stale calibration.*catalogue digest changed"):
        load_calibration(cat_path, mode="bm25")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


def test_a_stale_calibration_is_refused_when_the_mode_or_model_changes(tmp_path: Path) -> None:
    cat_path = write_catalog(tmp_path / "tools.jsonl")
    cal = calibrate_min_score(cat_path, CATALOG_CASES, mode="bm25", persist=True)
    hybrid = CatalogSearcher(load_catalog(cat_path), mode="hybrid", embedder=HashingEmbedder())
    with pytest.raises(ConfigError) as err:
        MinScoreCalibration.load(cal.default_path(), expect=hybrid)
    assert "mode changed ('bm25' -> 'hybrid')" in str(err.value)
    assert "embedder model changed (None -> 'rankproof-hashing-v1" in str(err.value)
    # The same mode with another embedder: only the model is named.
    h1 = calibrate_min_score(hybrid, CATALOG_CASES)
    h1.save(tmp_path / "h.json")
    other = CatalogSearcher(load_catalog(cat_path), mode="hybrid",
                            embedder=HashingEmbedder(dim=64))
    with pytest.raises(ConfigError, match="embedder model changed") as err:
        load_calibration(tmp_path / "h.json", identity=other)
    assert "mode changed" not in str(err.value) and "digest" not in str(err.value)
    assert h1.degraded and any("hashing" in n for n in h1.notes)


def test_a_stale_calibration_is_refused_when_the_callable_version_changes(tmp_path: Path
                                                                          ) -> None:
    v1 = fixed(SEPARABLE)
    path = tmp_path / "svc.json"
    cal = calibrate_min_score(v1, SEPARABLE_CASES, persist=True, path=path)
    assert MinScoreCalibration.load(path, expect=v1) == cal
    v2 = CallableSearcher(v1.fn, name="tests:fixed", version="2")
    with pytest.raises(ConfigError, match=r"callable version changed \('1' -> '2'\)"):
        load_calibration(path, identity=v2)
    assert identity_changes(v1.identity, v2.identity) == [
        "callable version changed ('1' -> '2')"]


def test_nothing_is_searched_or_written_when_the_floor_could_not_be_kept(tmp_path: Path
                                                                         ) -> None:
    searcher = fixed(SEPARABLE)
    with pytest.raises(ConfigError, match="give path="):
        calibrate_min_score(searcher, SEPARABLE_CASES, persist=True)
    assert searcher.calls == 0
    cal = calibrate_min_score(searcher, SEPARABLE_CASES)
    with pytest.raises(ConfigError, match="callable searcher has no file"):
        cal.save()
    with pytest.raises(ConfigError, match="identity="):
        load_calibration(tmp_path / "x.json")
    with pytest.raises(ConfigError, match="give path="):
        load_calibration(searcher)
    assert list(tmp_path.iterdir()) == []


def test_unknown_gold_ids_are_refused_before_searching(tmp_path: Path) -> None:
    cat_path = write_catalog(tmp_path / "tools.jsonl")
    searcher = CatalogSearcher(load_catalog(cat_path), mode="bm25")
    with pytest.raises(InputError, match="not in the catalogue"):
        calibrate_min_score(searcher, [case("q", "nope")], persist=True)
    assert searcher.calls == 0 and [p.name for p in tmp_path.iterdir()] == ["tools.jsonl"]


def good_record() -> dict[str, object]:
    return calibrate_from_rankings(*tops([0.9], [0.1]), identity={"kind": "callable",
                                                                  "callable": "m:f"}).to_dict()


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"k": "ten"}, "k", "positive integer"),
    ({"min_score": "high"}, "min_score", "a number or null"),
    ({"reason": "guessed"}, "reason", "one of calibrated"),
    ({"identity": {}}, "identity", "non-empty object"),
    ({"sensitivity_weight": 2}, "sensitivity_weight", r"\[0, 1\]"),
    ({"grid": [{"min_score": 0.5}]}, "grid", "list of"),
    ({"min_score": None}, "min_score", "'calibrated' but min_score is null"),
    ({"schema_version": 99}, "schema_version", "the version this rankproof reads"),
    ({"surprise": 1}, "surprise", "unknown field"),
])
def test_a_malformed_file_is_refused_naming_file_and_field(
        tmp_path: Path, change: dict[str, object], field: str, message: str) -> None:
    path = tmp_path / "cal.json"
    path.write_text(json.dumps({**good_record(), **change}))
    with pytest.raises(InputError, match=message) as err:
        MinScoreCalibration.load(path)
    assert err.value.path == str(path) and err.value.field == field
    assert str(path) in str(err.value)


def test_a_file_missing_a_field_or_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    record = good_record()
    del record["identity"]
    path.write_text(json.dumps(record))
    with pytest.raises(InputError, match="missing") as err:
        MinScoreCalibration.load(path)
    assert err.value.field == "identity"
    path.write_text('{"corpus_name": "x",\n oops}')
    with pytest.raises(InputError, match="cannot read the calibration: invalid JSON") as err:
        MinScoreCalibration.load(path)
    assert err.value.line == 2
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="JSON object"):
        MinScoreCalibration.load(path)
    with pytest.raises(InputError, match="no such calibration file"):
        MinScoreCalibration.load(tmp_path / "absent.json")


def test_the_seed_record_shape_is_read_tolerantly() -> None:
    record = good_record()
    for name in ("grid", "notes", "positive_raw_scores", "objective", "schema_version"):
        del record[name]
    record["vd_degraded"] = True
    del record["degraded"]
    cal = MinScoreCalibration.from_dict(record)
    assert cal.degraded and cal.grid == () and cal.min_score == pytest.approx(0.5)


def test_the_default_file_name_is_one_safe_component(tmp_path: Path) -> None:
    p = default_calibration_path(tmp_path / "cat.jsonl", "../../etc/passwd", "bm25")
    assert p.parent == tmp_path.resolve() and p.name == "etc-passwd.bm25.calibration.json"
    assert default_calibration_path(tmp_path / "tools", "tools", "hybrid", "ce").name == \
        "tools.hybrid-rerank.calibration.json"
