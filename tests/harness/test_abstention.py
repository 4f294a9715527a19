"""Threshold-free abstention: the AUROC of the top score, answerable vs no-answer queries."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from tests.harness._golden import golden_report
from typer.testing import CliRunner

from rankproof import InputError
from rankproof.cli import app
from rankproof.harness import (
    EvalConfig,
    EvalReport,
    auroc,
    bootstrap_auroc,
    golden_inputs,
    run_experiment,
)
from rankproof.harness._breakdown import (
    INCOMPLETE_REASON,
    NO_NEGATIVES_REASON,
    NO_POSITIVES_REASON,
    abstention,
    score_basis,
)
from rankproof.report.eval import abstention_table, eval_tables
from rankproof.report.table import render_text


def _report() -> EvalReport:
    return golden_report(400, seed=3)


# --- the statistic -------------------------------------------------------------------------

def test_hand_computed_auroc_counts_ties_as_half() -> None:
    # Pairs (pos, neg): 0.9 beats both; 0.8 beats both; 0.5 ties 0.5 (½) and beats 0.1.
    # (2 + 2 + 1.5) / (3 · 2) = 5.5 / 6
    assert auroc([0.9, 0.8, 0.5], [0.5, 0.1]) == pytest.approx(5.5 / 6)
    assert auroc([1.0, 2.0], [3.0, 4.0]) == 0.0
    assert auroc([3.0, 4.0], [1.0, 2.0]) == 1.0
    assert auroc([1.0, 1.0], [1.0]) == 0.5


def test_nothing_retrieved_ranks_below_every_score() -> None:
    assert auroc([0.0, -5.0], [None]) == 1.0
    assert auroc([None], [None, -1e300]) == 0.25  # ties with None (½), below -1e300 (0)


@pytest.mark.parametrize("seed", range(5))
def test_auroc_agrees_with_sklearn_and_mann_whitney(seed: int) -> None:
    from scipy.stats import mannwhitneyu

    rng = np.random.default_rng(seed)
    # Few distinct values, so that ties are common.
    pos = rng.integers(0, 6, size=40).astype(float)
    neg = rng.integers(0, 4, size=11).astype(float)
    u = mannwhitneyu(pos, neg, alternative="two-sided").statistic
    assert auroc(pos.tolist(), neg.tolist()) == pytest.approx(u / (40 * 11), abs=1e-12)
    sklearn = pytest.importorskip("sklearn.metrics")
    labels = [1] * 40 + [0] * 11
    assert auroc(pos.tolist(), neg.tolist()) == pytest.approx(
        sklearn.roc_auc_score(labels, np.r_[pos, neg]), abs=1e-12)


def test_auroc_needs_both_classes_and_numbers() -> None:
    with pytest.raises(InputError, match="both classes, got 0 positive and 1 negative"):
        auroc([], [0.1])
    with pytest.raises(InputError, match="NaN"):
        auroc([float("nan")], [0.1])
    with pytest.raises(InputError, match="resamples must be a positive integer"):
        bootstrap_auroc([1.0], [0.0], resamples=0)
    with pytest.raises(InputError, match="confidence_level"):
        bootstrap_auroc([1.0], [0.0], confidence_level=1.0)


def _brute_force(pos: list[float], neg: list[float], resamples: int, seed: int) -> np.ndarray:
    """The same stratified resamples, drawn and scored one at a time."""
    rng_pos, rng_neg = np.random.default_rng(seed).spawn(2)
    p, n = np.array(pos), np.array(neg)
    ip = rng_pos.integers(0, len(p), size=(resamples, len(p)))
    ineg = rng_neg.integers(0, len(n), size=(resamples, len(n)))
    return np.array([auroc(p[ip[b]].tolist(), n[ineg[b]].tolist()) for b in range(resamples)])


def test_bootstrap_interval_is_the_percentile_interval_of_resampled_aurocs() -> None:
    rng = np.random.default_rng(11)
    pos = rng.normal(1.0, 1.0, 25).round(1).tolist()
    neg = rng.normal(0.0, 1.0, 7).round(1).tolist()
    r = bootstrap_auroc(pos, neg, resamples=300, seed=5, confidence_level=0.9)
    values = _brute_force(pos, neg, 300, 5)
    low, high = np.quantile(values, [0.05, 0.95])
    assert (r.ci_low, r.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert r.auroc == auroc(pos, neg) and r.ci_low <= r.auroc <= r.ci_high
    assert (r.seed, r.resamples, r.confidence_level, r.positives, r.negatives) == (
        5, 300, 0.9, 25, 7)


def test_bootstrap_is_seeded_and_independent_of_batching() -> None:
    pos, neg = [0.3, 0.9, 0.5, 0.5, 0.7], [0.5, 0.1, 0.4]
    a = bootstrap_auroc(pos, neg, resamples=1000, seed=1)
    assert bootstrap_auroc(pos, neg, resamples=1000, seed=1, batch=37) == a
    assert bootstrap_auroc(pos, neg, resamples=1000, seed=1, batch=1) == a
    assert bootstrap_auroc(pos, neg, resamples=1000, seed=2) != a


def test_a_constant_separation_has_a_degenerate_interval() -> None:
    r = bootstrap_auroc([5.0, 6.0, 7.0], [1.0, 2.0], resamples=200, seed=0)
    assert (r.auroc, r.ci_low, r.ci_high) == (1.0, 1.0, 1.0)


# --- in the report -------------------------------------------------------------------------

def test_every_stage_scores_abstention_on_the_golden_corpus() -> None:
    report = _report()
    no_answer = set(report.inputs.no_answer_queries)
    assert len(no_answer) == 8
    for stage in report.stages:
        a = stage.abstention
        assert a is not None and a.reason is None and a.auroc is not None
        assert (a.answerable, a.no_answer) == (78, 8)
        assert (a.seed, a.resamples, a.confidence_level) == (3, 400, 0.95)
        assert a.ci_low is not None and a.ci_high is not None
        assert a.ci_low <= a.auroc <= a.ci_high
        # Recomputed from the stored top scores: the report is self-contained.
        assert set(stage.top_scores) == {*stage.latency_ms}
        pos = [v for q, v in stage.top_scores.items() if q not in no_answer]
        neg = [v for q, v in stage.top_scores.items() if q in no_answer]
        again = bootstrap_auroc(pos, neg, resamples=400, seed=3)
        assert (again.auroc, again.ci_low, again.ci_high) == (a.auroc, a.ci_low, a.ci_high)
    assert report.stage("fusion").abstention.score == "rank-based (RRF)"  # type: ignore[union-attr]
    assert report.stage("bm25").abstention.score == "score"  # type: ignore[union-attr]


def test_fusion_top_score_is_the_fused_score_as_computed() -> None:
    fusion = _report().stage("fusion")
    k = fusion.config["rrf_k"]
    values = [v for v in fusion.top_scores.values() if v is not None]
    # RRF of two inputs: the best fused score is at most 2/(k+1), at least 1/(k+1).
    assert all(1 / (k + 1) - 1e-12 <= v <= 2 / (k + 1) + 1e-12 for v in values)


def test_no_no_answer_queries_means_no_auroc_with_a_reason() -> None:
    inputs = golden_inputs("chunk", 800, 100)
    answerable = dataclasses.replace(
        inputs, queries=tuple(q for q in inputs.queries if q[0] not in inputs.no_answer),
        no_answer=())
    report, _ = run_experiment(answerable, EvalConfig(stages=("bm25",), resamples=100))
    a = report.stage("bm25").abstention
    assert a is not None and a.auroc is None and a.ci_low is None
    assert a.reason == NO_NEGATIVES_REASON and a.no_answer == 0
    table, notes = abstention_table(report)
    assert table is None and notes == [f"abstention not scored: {NO_NEGATIVES_REASON}"]


def test_incomplete_judgments_cannot_tell_no_answer_from_unjudged() -> None:
    inputs = dataclasses.replace(golden_inputs("chunk", 800, 100), complete_judgments=False)
    report, _ = run_experiment(inputs, EvalConfig(stages=("bm25",), resamples=100))
    a = report.stage("bm25").abstention
    assert a is not None and a.auroc is None and a.reason == INCOMPLETE_REASON
    assert a.no_answer == 8  # counted, but not scored


def test_helper_reasons_and_score_basis() -> None:
    top = {"a": 1.0, "b": 0.5}
    none_pos = abstention(top, [], ["a", "b"], basis="score", reason=None, resamples=10,
                          seed=0, confidence_level=0.95)
    assert none_pos.auroc is None and none_pos.reason == NO_POSITIVES_REASON
    assert score_basis({"stage": "fusion", "method": "rrf"}) == "rank-based (RRF)"
    assert score_basis({"stage": "fusion", "method": "combsum", "norm": "minmax"}) == \
        "combsum of per-query minmax-normalised scores"
    assert score_basis({"stage": "fusion", "method": "combsum", "norm": None}) == "score"
    assert score_basis({"stage": "bm25"}) == "score"


def test_an_abstention_has_an_auroc_or_a_reason() -> None:
    from rankproof.harness import Abstention

    with pytest.raises(ValueError, match="either an auroc or a reason"):
        Abstention(answerable=1, no_answer=1, score="score")
    with pytest.raises(ValueError, match="either an auroc or a reason"):
        Abstention(answerable=1, no_answer=1, score="score", auroc=0.5, reason="x")


def test_the_table_shows_auroc_interval_and_the_rank_based_label() -> None:
    report = _report()
    text = render_text([t for t, _ in eval_tables(report)])
    assert "abstention: AUROC of the top score (0.5 = chance)" in text
    a = report.stage("bm25").abstention
    assert a is not None and a.ci_low is not None and a.ci_high is not None
    row = next(line for line in text.splitlines() if line.startswith("bm25 ")
               and f"{a.auroc:.4f}" in line)
    assert row.split() == ["bm25", f"{a.auroc:.4f}", f"[{a.ci_low:.3f},", f"{a.ci_high:.3f}]",
                           "78", "8", "score"]
    assert "rank-based (RRF)" in text
    _, notes = abstention_table(report)
    assert notes[0] == "95% CI: stratified percentile bootstrap, 400 resamples, seed 3"
    assert any(n.startswith("rank-based: RRF's top score") for n in notes)


def test_cli_eval_prints_abstention_and_stores_it(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["eval", "--embedder", "hashing", "--resamples", "200",
                                      "--quiet"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "abstention: AUROC of the top score" in result.stdout
    doc = json.loads((tmp_path / "evals" / "results" / "latest.json").read_text())
    for stage in doc["stages"]:
        assert stage["abstention"]["auroc"] is not None
        assert stage["abstention"]["seed"] == 0 and stage["abstention"]["resamples"] == 200
        assert len(stage["top_scores"]) == 86
