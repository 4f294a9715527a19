"""`compare` and the `compare` / `power` commands, on real TREC DL 2019 runs."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import SHARED_DATA
from typer.testing import CliRunner

import rankproof as rp
from rankproof.cli import app
from rankproof.comparison import compare, pilot_deltas
from rankproof.stats import StatSettings, correct, paired_test

RUNS = SHARED_DATA / "rankllm_runs"
QRELS = SHARED_DATA / "trec_dl" / "qrels.dl19-passage.txt"
SYSTEMS = ["BM25", "BM25_RM3", "D_BERT_KD_TASB", "OPEN_AI_ADA2", "SPLADE_P_P_ENSEMBLE_DISTIL",
           "REP_LLAMA"]
runner = CliRunner()


@cache
def _runs() -> dict[str, rp.Run]:
    return {s: rp.read_trec_run(RUNS / s / "trec_results_dl19.txt", name=s) for s in SYSTEMS}


@cache
def _dl19() -> rp.Qrels:
    return rp.read_trec_qrels(QRELS)


@cache
def _comparison() -> object:
    return compare(_dl19(), _runs(), ["nDCG@10", "AP(rel=2)"],
                   stats=StatSettings(resamples=2000, seed=7))


def test_rows_cover_every_candidate_and_measure() -> None:
    c = _comparison()
    assert c.baseline == "BM25" and c.n_topics == 43
    assert [(r.candidate, r.measure) for r in c.rows] == [
        (s, m) for m in ("nDCG@10", "AP(rel=2)") for s in SYSTEMS[1:]
    ]


def test_holm_is_applied_across_the_whole_call() -> None:
    c = _comparison()
    raw = [r.result.p_value for r in c.rows]
    assert [r.p_corrected for r in c.rows] == pytest.approx(correct(raw, "holm").tolist())


def test_rows_equal_a_direct_paired_test() -> None:
    c = _comparison()
    row = c.rows_for("nDCG@10")[0]
    pq = {s: rp.evaluate(_dl19(), _runs()[s], "nDCG@10") for s in ("BM25", "BM25_RM3")}
    direct = paired_test(pq["BM25_RM3"], pq["BM25"], measure="nDCG@10", resamples=2000, seed=7)
    assert row.result == direct
    assert row.result.mean_b == pytest.approx(0.5058, abs=5e-5)


def test_verdicts_on_dl19() -> None:
    c = _comparison()
    verdicts = {(r.candidate, r.measure): r.verdict for r in c.rows}
    for s in SYSTEMS[2:]:  # the neural systems beat BM25 clearly on both measures
        assert verdicts[(s, "nDCG@10")] == "better"
        assert verdicts[(s, "AP(rel=2)")] == "better"
    rm3 = next(r for r in c.rows if r.candidate == "BM25_RM3" and r.measure == "nDCG@10")
    assert rm3.verdict == "no detectable difference" and rm3.underpowered
    assert rm3.result.queries_needed is not None and rm3.result.queries_needed > 43


def test_unjudged_caveat_fires_on_deep_measures_only() -> None:
    c = _comparison()
    ap = [r for r in c.rows if r.measure == "AP(rel=2)"]
    assert all(any("Judged@100" in n for n in r.notes) for r in ap)
    ndcg = [r for r in c.rows if r.measure == "nDCG@10"]
    assert not any(r.notes for r in ndcg)  # Judged@10 >= 0.9 for every DL19 run


def test_worse_uses_polarity_and_fail_on_regression_exits_1(tmp_path: Path) -> None:
    # Swap roles: BM25 as candidate against REP_LLAMA is significantly worse.
    c = compare(_dl19(), {"REP_LLAMA": _runs()["REP_LLAMA"], "BM25": _runs()["BM25"]},
                "nDCG@10", stats=StatSettings(resamples=2000))
    assert c.regressions and c.regressions[0].candidate == "BM25"
    result = runner.invoke(app, ["compare", str(QRELS),
                                 str(RUNS / "REP_LLAMA/trec_results_dl19.txt"),
                                 str(RUNS / "BM25/trec_results_dl19.txt"), "-m", "nDCG@10",
                                 "--resamples", "2000", "--fail-on-regression"])
    assert result.exit_code == 1, result.output
    assert "significantly worse" in result.stderr
    ok = runner.invoke(app, ["compare", str(QRELS), str(RUNS / "BM25/trec_results_dl19.txt"),
                             str(RUNS / "REP_LLAMA/trec_results_dl19.txt"), "-m", "nDCG@10",
                             "--resamples", "2000", "--fail-on-regression"])
    assert ok.exit_code == 0, ok.output


def test_same_seed_same_comparison_and_json_roundtrip(tmp_path: Path) -> None:
    a = compare(_dl19(), _runs(), "nDCG@10", stats=StatSettings(resamples=1000, seed=3))
    b = compare(_dl19(), dict(reversed(list(_runs().items()))), "nDCG@10",
                stats=StatSettings(resamples=1000, seed=3), baseline="BM25")
    pa = {r.candidate: r.result.p_value for r in a.rows}
    pb = {r.candidate: r.result.p_value for r in b.rows}
    assert pa == pb
    doc = json.loads(a.to_json())
    assert doc["kind"] == "rankproof.comparison" and doc["seed"] == 3
    cand, meas, deltas = pilot_deltas(doc, candidate="REP_LLAMA")
    assert (cand, meas) == ("REP_LLAMA", "nDCG@10")
    assert deltas.mean() == pytest.approx(a.rows_for("nDCG@10")[-1].result.difference)


def test_intersection_with_different_topics_raises_pairing_error(tmp_path: Path) -> None:
    partial = tmp_path / "partial.run"
    lines = (RUNS / "BM25" / "trec_results_dl19.txt").read_text().splitlines()
    first_topic = lines[0].split()[0]
    partial.write_text("\n".join(ln for ln in lines if ln.split()[0] != first_topic) + "\n")
    runs = {"BM25": _runs()["BM25"], "partial": rp.read_trec_run(partial)}
    with pytest.raises(rp.PairingError) as err:
        compare(_dl19(), runs, "nDCG@10", topics="intersection")
    assert first_topic in err.value.only_right
    # The default (complete) pairs every topic and records the zero-fill.
    c = compare(_dl19(), runs, "nDCG@10", stats=StatSettings(resamples=500))
    assert c.n_topics == 43 and any("scored 0" in cav for cav in c.caveats)


def test_all_pairs_uses_tukey() -> None:
    runs = {s: _runs()[s] for s in ("BM25", "BM25_RM3", "REP_LLAMA")}
    c = compare(_dl19(), runs, "nDCG@10", stats=StatSettings(resamples=2000, pairs="all"))
    assert len(c.rows) == 3 and c.correction == "tukey-hsd"
    for r in c.rows:
        assert r.p_corrected == c.tukey["nDCG@10"].p_value(r.baseline, r.candidate)


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="at least two runs"):
        compare(_dl19(), {"a": _runs()["BM25"]})
    with pytest.raises(ValueError, match="baseline 'nope'"):
        compare(_dl19(), _runs(), baseline="nope")
    with pytest.raises(ValueError, match="correction"):
        compare(_dl19(), _runs(), stats=StatSettings(correction="fdr"))


def test_markdown_and_power_commands(tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    md = runner.invoke(app, ["compare", str(QRELS), str(RUNS / "BM25/trec_results_dl19.txt"),
                             str(RUNS / "BM25_RM3/trec_results_dl19.txt"), "-m", "nDCG@10",
                             "--resamples", "1000", "--format", "md", "-o", str(out)])
    assert md.exit_code == 0, md.output
    # `report OUT.json --md`'s bytes: names Markdown-escaped, the verdict row per measure
    assert md.stdout.startswith("# comparison: 2 systems against BM25/trec\\_results\\_dl19")
    assert "| nDCG@10 | BM25\\_RM3/trec\\_results\\_dl19 | 0.5058 | 0.5216 |" in md.stdout
    pw = runner.invoke(app, ["power", "--pilot", str(out), "--json"])
    assert pw.exit_code == 0, pw.output
    table = json.loads(pw.stdout)
    assert table["effects"] == [0.02, 0.05, 0.1] and table["ns"] == [50, 100, 200, 500]
    assert np.all(np.diff(np.array(table["power"]), axis=1) >= 0)  # more queries, more power
    both = runner.invoke(app, ["power", "--pilot", str(out), "--sd", "0.2"])
    assert both.exit_code == 2 and "exactly one" in both.stderr
    same = runner.invoke(app, ["power", "--pilot", str(out), "--format", "json"])
    assert json.loads(same.stdout) == table
    text = runner.invoke(app, ["power", "--pilot", str(out), "--n", "50", "--n", "100",
                               "--n", "200", "--n", "500", "--n", "1000", "--n", "2000"])
    assert text.exit_code == 0, text.output
    header = next(line for line in text.stdout.splitlines() if "n=2000" in line)
    assert "queries for 80% power" in header  # off a terminal no column is dropped
    assert "…" not in text.stdout


def test_positives_only_qrels_get_one_caveat_instead_of_row_notes() -> None:
    qrels = rp.Qrels.from_dict({f"q{i}": {f"d{i}": 1} for i in range(6)})
    a = rp.Run.from_dict({f"q{i}": {f"d{i}": 2.0, "x": 1.0} for i in range(6)}, name="a")
    b = rp.Run.from_dict({f"q{i}": {"x": 2.0, f"d{i}": 1.0} for i in range(6)}, name="b")
    c = compare(qrels, [a, b], "nDCG@10", stats=StatSettings(resamples=200))
    assert not any(r.notes for r in c.rows)
    assert any("only relevant documents" in cav for cav in c.caveats)
