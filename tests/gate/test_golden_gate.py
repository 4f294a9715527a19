"""On the bundled golden corpus: which configuration change is a *real* regression?

The gate must pass a rerun of the same configuration and fail one that is
worse by a real margin (the CLI end of this is in ``test_cli.py``). Two
candidates were measured at default settings (BM25 stage, chunk level, 78
scored queries, randomization test with 10 000 resamples, seed 0):

* chunks a tenth the size (80 characters): nDCG@10 0.902 → 0.541,
  Δ −0.361 [−0.426, −0.297], p ≈ 1e-4 — a regression the gate must catch;
* BM25 without stemming: nDCG@10 0.902 → 0.871, Δ −0.032 [−0.067, +0.002],
  p ≈ 0.08 — *not* significant at α = 0.05 on 78 queries, so a gate that
  failed it would be failing on noise. That is why the end-to-end test
  uses small chunks.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.gate._helpers import checks

from rankproof.gate import load_report, run_gate
from rankproof.harness import EvalConfig, golden_inputs, run_experiment, run_result_from_report

REGRESSION = """\
checks:
  - id: ndcg_no_regression
    metric: nDCG@10
    vs_baseline: no_significant_regression
  - id: rr_no_regression
    metric: RR@10
    vs_baseline: no_significant_regression
"""


def test_small_chunks_are_a_significant_regression(golden_reports: dict[str, Path]) -> None:
    base = run_result_from_report(load_report(golden_reports["base"]))
    small = run_result_from_report(load_report(golden_reports["small_chunks"]))
    v = run_gate(checks(REGRESSION), small, base)
    assert not v.passed
    ndcg = v.checks[0]
    assert ndcg.difference == pytest.approx(-0.3612, abs=1e-4)
    assert ndcg.ci_high is not None and ndcg.ci_high < -0.2
    assert ndcg.p_value is not None and ndcg.p_value < 1e-3
    assert ndcg.coverage == "78/86 cases"  # 8 no-answer queries carry no retrieval values


def test_a_rerun_passes(golden_reports: dict[str, Path]) -> None:
    base = run_result_from_report(load_report(golden_reports["base"]))
    rerun = run_result_from_report(load_report(golden_reports["rerun"]))
    v = run_gate(checks(REGRESSION), rerun, base)
    assert v.passed and all(c.difference == 0.0 and c.p_value == 1.0 for c in v.checks)


def test_bm25_without_stemming_is_not_a_significant_regression(
        golden_reports: dict[str, Path]) -> None:
    base = run_result_from_report(load_report(golden_reports["base"]))
    report, _ = run_experiment(golden_inputs("chunk", 800, 100),
                               EvalConfig(stages=("bm25",), bm25_stemmer=None))
    v = run_gate(checks(REGRESSION), run_result_from_report(report), base)
    ndcg = v.checks[0]
    assert ndcg.difference is not None and ndcg.difference < 0    # worse on average ...
    assert ndcg.p_value is not None and 0.05 < ndcg.p_value < 0.2  # ... but not detectably
    assert v.passed
