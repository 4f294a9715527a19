"""The one comparison layer: `compare_scores`/`compare_pairs`, the shared row, pilots."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import rankproof as rp
from rankproof.cli import app
from rankproof.comparison import (
    FLAT_COLUMNS,
    Comparison,
    ComparisonRow,
    Pairing,
    compare,
    compare_evaluated,
    compare_pairs,
    compare_scores,
    pilot_deltas,
    rows_from_document,
    select_row,
)
from rankproof.stats import StatSettings, correct, paired_test

runner = CliRunner()
RNG = np.random.default_rng(3)
QIDS = [f"q{i:02d}" for i in range(25)]
BASE = {q: float(v) for q, v in zip(QIDS, RNG.uniform(0.2, 0.8, len(QIDS)), strict=True)}
UP = {q: v + 0.1 for q, v in BASE.items()}
NOISE = {q: v + float(e) for (q, v), e in zip(BASE.items(), RNG.normal(0, 0.02, len(QIDS)),
                                               strict=True)}


def _scores() -> dict[str, dict[str, dict[str, float]]]:
    return {"base": {"nDCG@10": BASE, "cost": BASE},
            "up": {"nDCG@10": UP, "cost": UP},
            "noise": {"nDCG@10": NOISE, "cost": NOISE}}


def _comparison() -> Comparison:
    return compare_scores(_scores(), higher_is_better={"cost": False},
                          stats=StatSettings(resamples=1000, seed=1))


def test_compare_scores_rows_match_a_direct_paired_test_and_one_correction() -> None:
    c = _comparison()
    assert c.baseline == "base" and c.measures == ("nDCG@10", "cost")
    assert [(r.candidate, r.measure) for r in c.rows] == [
        ("up", "nDCG@10"), ("noise", "nDCG@10"), ("up", "cost"), ("noise", "cost")]
    direct = paired_test(UP, BASE, resamples=1000, seed=1)
    row = c.rows[0]
    assert (row.result.p_value, row.result.ci_low, row.result.difference) == (
        direct.p_value, direct.ci_low, direct.difference)
    assert [r.p_corrected for r in c.rows] == pytest.approx(
        correct([r.result.p_value for r in c.rows], "holm").tolist())
    assert all(r.alpha == 0.05 and r.correction == "holm" for r in c.rows)


def test_one_polarity_rule_for_verdicts_and_wins() -> None:
    c = _comparison()
    up_ndcg, up_cost = c.rows[0], c.rows[2]
    assert up_ndcg.verdict == "better" and up_ndcg.wins == len(QIDS) and up_ndcg.losses == 0
    # the same rise on a lower-is-better measure is a regression, and every query a loss
    assert up_cost.verdict == "worse" and up_cost.wins == 0 and up_cost.losses == len(QIDS)
    assert up_cost.result.wins == len(QIDS)  # the raw sign count stays with the stats result
    assert c.regressions == (up_cost,)


def test_a_row_keeps_its_paired_values_and_round_trips_through_json() -> None:
    c = _comparison()
    row = c.rows[1]
    assert row.qids == tuple(sorted(QIDS))
    assert row.deltas() == pytest.approx({q: NOISE[q] - BASE[q] for q in QIDS})
    assert float(row.differences.mean()) == pytest.approx(row.result.difference)
    again = ComparisonRow.from_dict(json.loads(json.dumps(row.to_dict())))
    assert again == row
    assert c.per_query["noise"]["nDCG@10"] == NOISE
    doc = json.loads(c.to_json())
    assert doc["schema_version"] == 3 and doc["kind"] == "rankproof.comparison"
    assert rows_from_document(doc) == c.rows


def test_row_reading_names_the_bad_field() -> None:
    good = _comparison().rows[0].to_dict()
    with pytest.raises(rp.InputError, match="lacks qids"):
        ComparisonRow.from_dict({k: v for k, v in good.items() if k != "qids"})
    with pytest.raises(rp.InputError, match="unknown field"):
        ComparisonRow.from_dict({**good, "extra": 1})
    with pytest.raises(rp.InputError, match="differ in length"):
        ComparisonRow.from_dict({**good, "baseline_values": good["baseline_values"][:-1]})
    with pytest.raises(rp.InputError, match="verdict 'maybe'"):
        ComparisonRow.from_dict({**good, "verdict": "maybe"})
    with pytest.raises(rp.InputError, match=r"result.wins must be an integer"):
        ComparisonRow.from_dict({**good, "result": {**good["result"], "wins": "3"}})


def test_mismatched_ids_are_one_pairing_error_listing_both_sides() -> None:
    scores = _scores()
    scores["up"]["nDCG@10"] = {**{q: v for q, v in UP.items() if q != "q00"}, "zz": 0.5}
    with pytest.raises(rp.PairingError, match=r"'up' and 'base' cover different queries for "
                                              r"nDCG@10.*pairing is by query id") as err:
        compare_scores(scores, higher_is_better={"cost": False})
    assert err.value.only_left == ("zz",) and err.value.only_right == ("q00",)
    assert isinstance(err.value, rp.InputError) and isinstance(err.value, ValueError)
    with pytest.raises(rp.PairingError, match="check 'x': 'a' and 'b' cover different cases"):
        compare_pairs([Pairing(candidate="a", baseline="b", measure="m",
                               candidate_scores={"c1": 1.0}, baseline_scores={"c2": 1.0},
                               higher_is_better=True, unit="case", context="check 'x'")])


def test_pairings_may_carry_their_own_alpha() -> None:
    rows = compare_pairs([
        Pairing(candidate="n", baseline="b", measure="nDCG@10", candidate_scores=NOISE,
                baseline_scores=BASE, higher_is_better=True, alpha=0.5),
        Pairing(candidate="u", baseline="b", measure="nDCG@10", candidate_scores=UP,
                baseline_scores=BASE, higher_is_better=True),
    ], stats=StatSettings(correction="none", resamples=500))
    assert [r.alpha for r in rows] == [0.5, 0.05]
    assert rows[0].p_corrected == rows[0].result.p_value


def test_bad_arguments_are_input_errors() -> None:
    with pytest.raises(rp.InputError, match="at least two systems"):
        compare_scores({"a": {"m": BASE}})
    with pytest.raises(rp.InputError, match="baseline 'x'"):
        compare_scores(_scores(), baseline="x")
    with pytest.raises(rp.InputError, match="correction"):
        compare_scores(_scores(), stats=StatSettings(correction="fdr"))
    with pytest.raises(rp.InputError, match="alpha"):
        compare_scores(_scores(), stats=StatSettings(alpha=1.5))
    with pytest.raises(rp.InputError, match="unknown metric 'cost'"):
        compare_scores(_scores())  # no polarity given, and none registered
    with pytest.raises(rp.InputError, match="has no scores for cost"):
        compare_scores({"a": {"nDCG@10": BASE, "cost": BASE}, "b": {"nDCG@10": UP}})
    with pytest.raises(rp.InputError, match="test must be one of"):
        paired_test(UP, BASE, "z")  # type: ignore[arg-type]
    with pytest.raises(rp.InputError, match="takes the qrels first"):
        compare({"a": rp.Run.from_dict({"q": {"d": 1.0}})}, rp.Qrels.from_dict({"q": {"d": 1}}))
    with pytest.raises(rp.InputError, match="sequence of runs must hold Run objects"):
        compare({"q": {"d": 1}}, [{"q": {"d": 1.0}}, {"q": {"d": 2.0}}])
    with pytest.raises(rp.InputError, match=r"mapping \{system: PerQuery\}"):
        compare_evaluated({"a": {"q": 1.0}})  # type: ignore[dict-item]


def test_all_pairs_from_scores_use_tukey() -> None:
    c = compare_scores({s: {"nDCG@10": v["nDCG@10"]} for s, v in _scores().items()},
                       stats=StatSettings(resamples=500, pairs="all"))
    assert c.correction == "tukey-hsd" and len(c.rows) == 3
    assert all(r.correction == "tukey-hsd" for r in c.rows)
    for r in c.rows:
        assert r.p_corrected == c.tukey["nDCG@10"].p_value(r.baseline, r.candidate)


def test_plain_dicts_and_dataframes_are_accepted() -> None:
    qrels = {f"q{i}": {f"d{i}": 1, "x": 0} for i in range(8)}
    good = {f"q{i}": {f"d{i}": 2.0, "x": 1.0} for i in range(8)}
    bad = {f"q{i}": {"x": 2.0, f"d{i}": 1.0} for i in range(8)}
    c = compare(qrels, {"good": good, "bad": bad}, "RR", stats=StatSettings(resamples=200))
    assert c.systems == ("good", "bad") and c.rows[0].verdict == "worse"
    as_runs = compare(rp.Qrels.from_dict(qrels), [rp.Run.from_dict(good, name="good"),
                                                   rp.Run.from_dict(bad, name="bad")], "RR",
                      stats=StatSettings(resamples=200))
    assert as_runs.rows == c.rows
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([(q, d, s) for q, docs in bad.items() for d, s in docs.items()],
                         columns=["qid", "docid", "score"])
    assert compare(qrels, {"good": good, "bad": frame}, "RR",
                   stats=StatSettings(resamples=200)).rows == c.rows


def test_short_reprs() -> None:
    c = _comparison()
    text = repr(c)
    assert text.startswith("Comparison(3 systems, baseline 'base', 2 measure(s), 25 topics")
    assert "1 worse" in text and len(text) < 300
    row = repr(c.rows[0])
    assert row.startswith("ComparisonRow(up vs base, nDCG@10: Δ +0.1000") and "better" in row
    assert len(row) < 200


def test_to_pandas_one_row_per_comparison_row() -> None:
    pytest.importorskip("pandas")
    df = _comparison().to_pandas()
    assert list(df.columns) == list(FLAT_COLUMNS) and len(df) == 4
    assert df.loc[2, "verdict"] == "worse" and df.loc[2, "losses"] == len(QIDS)
    empty = compare_pairs([], stats=StatSettings(resamples=100))
    assert empty == ()


def test_to_pandas_without_pandas_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # what an environment without it does
    with pytest.raises(rp.MissingExtraError, match=r"rankproof\[pandas\]"):
        _comparison().to_pandas()


def test_power_pilot_from_a_comparison_json_and_a_version_1_one(tmp_path: Path) -> None:
    c = _comparison()
    path = tmp_path / "c.json"
    path.write_text(c.to_json())
    pw = runner.invoke(app, ["power", "--pilot", str(path), "--candidate", "noise", "-m",
                             "ndcg@10", "--json", "--n", "25"])
    assert pw.exit_code == 0, pw.output
    sd = float(np.std(c.rows[1].differences, ddof=1))
    assert json.loads(pw.stdout)["sd"] == pytest.approx(sd)
    # A version-1 comparison (rows without values, per_query beside them) still serves.
    doc = json.loads(c.to_json())
    doc["schema_version"] = 1
    doc["per_query"] = c.per_query
    for r in doc["rows"]:
        for key in ("alpha", "correction", "qids", "candidate_values", "baseline_values"):
            del r[key]
    cand, meas, deltas = pilot_deltas(doc, candidate="noise")
    assert (cand, meas) == ("noise", "nDCG@10")
    assert deltas == pytest.approx(c.rows[1].differences)


def test_power_pilot_errors(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(_comparison().to_json())
    bad = runner.invoke(app, ["power", "--pilot", str(path), "--candidate", "nope"])
    assert bad.exit_code == 2 and "no candidate 'nope'" in bad.stderr
    bad = runner.invoke(app, ["power", "--pilot", str(path), "-m", "P@5"])
    assert bad.exit_code == 2 and "no measure 'P@5'" in bad.stderr
    missing = runner.invoke(app, ["power", "--pilot", str(tmp_path / "none.json")])
    assert missing.exit_code == 2 and "not found" in missing.stderr
    baseline = tmp_path / "b.json"
    baseline.write_text(json.dumps({"kind": "rankproof.baseline", "schema_version": 2}))
    refused = runner.invoke(app, ["power", "--pilot", str(baseline)])
    assert refused.exit_code == 2 and "not paired differences" in refused.stderr
    with pytest.raises(rp.InputError, match="no comparison rows"):
        select_row(())
