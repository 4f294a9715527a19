"""Class 10: resampling and simulation requests are bounded by what they would cost.

A typo of a few zeros in ``--resamples`` or ``--simulations`` used to end in
a ``MemoryError`` traceback or a job CI kills hours later. Every entry point
now estimates the cost first (`rankproof.stats.Cost`, lower bounds of time
and memory) and refuses, with the estimate, what exceeds
`rankproof._limits.MAX_ESTIMATED_SECONDS` or `MAX_MEMORY_FRACTION` of RAM —
through the CLI with exit 2, in the library with `InputError` (or
`ConfigError` for a checks or config file).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import rankproof._limits as limits
from rankproof import ConfigError, InputError, compare, load_qrels, load_run
from rankproof.comparison import Pairing, compare_pairs, compare_scores, family_cost
from rankproof.gate import parse_checks
from rankproof.harness import EvalConfig
from rankproof.stats import (
    OPERATIONS_PER_SECOND,
    Cost,
    StatSettings,
    bootstrap_ci,
    check_cost,
    detection_table,
    paired_test,
    paired_test_cost,
    randomization_test,
    simulated_power,
    tukey_hsd_randomized,
)
from rankproof.stats._cost import randomization_cost

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
QRELS, BM25, DENSE = TOY / "qrels.txt", TOY / "bm25.run", TOY / "dense.run"
HUGE = 10**12


def rankproof(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "rankproof", *args], capture_output=True,
                          text=True, check=False, cwd=cwd, env=env, timeout=120)


def _estimate_shown(message: str) -> None:
    """A refusal says what it estimated and which bound it crossed."""
    assert "estimated to need" in message
    assert "operations/s" in message or "of memory" in message
    assert "limit" in message


# -- through the command line ------------------------------------------------------


def test_compare_with_a_trillion_resamples_is_refused_with_the_estimate() -> None:
    start = time.monotonic()
    proc = rankproof("compare", str(QRELS), str(BM25), str(DENSE), "--resamples", str(HUGE))
    assert proc.returncode == 2, proc.stderr
    assert time.monotonic() - start < 60  # refused up front, not after a MemoryError
    _estimate_shown(proc.stderr)
    assert "resamples=1000000000000" in proc.stderr and "Traceback" not in proc.stderr
    assert "hours" in proc.stderr or "days" in proc.stderr


def test_power_with_a_trillion_simulations_is_refused(tmp_path: Path) -> None:
    saved = tmp_path / "comparison.json"
    made = rankproof("compare", str(QRELS), str(BM25), str(DENSE), "--resamples", "200",
                     "-o", str(saved))
    assert made.returncode == 0, made.stderr
    proc = rankproof("power", "--pilot", str(saved), "--method", "simulated",
                     "--simulations", str(HUGE))
    assert proc.returncode == 2, proc.stderr
    _estimate_shown(proc.stderr)
    assert "simulations=1000000000000" in proc.stderr and "Traceback" not in proc.stderr


def test_eval_refuses_huge_resamples_before_reading_anything(tmp_path: Path) -> None:
    # --dry-run validates what a real run would: the refusal comes before any input is read.
    proc = rankproof("eval", str(tmp_path / "no-such-corpus"), "--dry-run",
                     "--resamples", str(HUGE))
    assert proc.returncode == 2, proc.stderr
    _estimate_shown(proc.stderr)
    assert "the comparison of the stages" in proc.stderr


def test_ordinary_requests_still_run() -> None:
    proc = rankproof("compare", str(QRELS), str(BM25), str(DENSE), "--resamples", "2000",
                     "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["resamples"] == 2000


# -- the gate's checks file and the harness config ------------------------------------

CHECKS = """\
checks:
  - id: no_regression
    metric: nDCG@10
    vs_baseline: no_significant_regression
  - id: no_rr_regression
    metric: RR@10
    vs_baseline: no_significant_regression
"""


def test_a_checks_file_with_huge_resamples_is_a_config_error() -> None:
    text = CHECKS + f"resamples: {HUGE}\n"
    with pytest.raises(ConfigError) as err:
        parse_checks(textwrap.dedent(text), source="checks.yaml")
    message = str(err.value)
    assert "checks.yaml" in message and "'resamples'" in message
    _estimate_shown(message)


def test_a_checks_file_with_ordinary_resamples_loads() -> None:
    assert parse_checks(CHECKS + "resamples: 20000\n", source="c.yaml").resamples == 20000


def test_the_eval_config_refuses_with_a_config_error() -> None:
    config = EvalConfig(stages=("bm25", "dense"), resamples=HUGE)
    with pytest.raises(ConfigError) as err:
        config.check()
    _estimate_shown(str(err.value))
    EvalConfig(stages=("bm25", "dense")).check()  # the default is fine


# -- the library: every entry point ------------------------------------------------

A = {f"q{i}": float(i % 7) / 7 for i in range(60)}
B = {f"q{i}": float(i % 5) / 5 for i in range(60)}


@pytest.mark.parametrize("call", [
    lambda: randomization_test(A, B, resamples=HUGE),
    lambda: bootstrap_ci(A, B, resamples=HUGE),
    lambda: bootstrap_ci(A, B, resamples=HUGE, method="studentized"),
    lambda: paired_test(A, B, resamples=HUGE),
    lambda: paired_test(A, B, test="bootstrap", ci_method="t", resamples=HUGE),
    lambda: tukey_hsd_randomized({"a": A, "b": B, "c": A}, resamples=HUGE),
], ids=["randomization", "bootstrap", "studentized", "paired", "paired-bootstrap", "tukey"])
def test_every_resampling_function_refuses_a_trillion_resamples(call: object) -> None:
    start = time.monotonic()
    with pytest.raises(InputError) as err:
        call()  # type: ignore[operator]
    assert time.monotonic() - start < 10
    assert err.value.field == "resamples"
    _estimate_shown(str(err.value))
    assert "resamples=1000000000000" in str(err.value)


def test_a_huge_batch_is_refused_on_memory() -> None:
    # Fewer resamples than the time bound refuses, but all of them in one chunk.
    with pytest.raises(InputError) as err:
        randomization_test(A, B, resamples=10**9, batch=10**9)
    assert "of memory" in str(err.value) and "batch=1000000000" in str(err.value)
    assert randomization_test(A, B, resamples=1000, batch=10**9).resamples == 1000


@pytest.mark.parametrize("call", [
    lambda: simulated_power(list(A.values()), 0.02, 50, simulations=HUGE),
    lambda: simulated_power(list(A.values()), 0.02, 50, test="randomization",
                            resamples=10**9),
    lambda: detection_table(list(A.values()), method="simulated", simulations=HUGE),
], ids=["t", "randomization-signs", "table"])
def test_simulations_are_bounded(call: object) -> None:
    with pytest.raises(InputError) as err:
        call()  # type: ignore[operator]
    assert err.value.field == "simulations"
    _estimate_shown(str(err.value))


def test_compare_refuses_before_evaluating() -> None:
    qrels = load_qrels(QRELS)
    runs = {"bm25": load_run(BM25), "dense": load_run(DENSE)}
    with pytest.raises(InputError) as err:
        compare(qrels, runs, ["AP", "nDCG@10"], stats=StatSettings(resamples=HUGE))
    assert "2 paired tests on up to 8 ids" in str(err.value)
    with pytest.raises(InputError, match="Tukey HSD"):
        compare(qrels, {**runs, "again": load_run(BM25)}, "AP",
                stats=StatSettings(resamples=HUGE, pairs="all"))


def test_a_family_is_bounded_as_a_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each row alone is within the bound; forty of them in one call are not.
    one = paired_test_cost(60, "randomization", None, 10_000)
    monkeypatch.setattr(limits, "MAX_ESTIMATED_SECONDS", one.seconds * 20)
    paired_test(A, B)
    scores = {f"s{i}": {"AP": A if i % 2 else B} for i in range(41)}
    with pytest.raises(InputError) as err:
        compare_scores(scores)
    assert "40 paired tests" in str(err.value)
    pairings = [Pairing(candidate=f"c{i}", baseline="b", measure="AP", candidate_scores=A,
                        baseline_scores=B, higher_is_better=True) for i in range(40)]
    with pytest.raises(InputError, match="40 paired tests"):
        compare_pairs(pairings)
    assert len(compare_pairs(pairings[:5])) == 5


def test_the_memory_bound_follows_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "machine_memory_bytes", lambda: 64 * 2**20)  # a 64 MiB box
    with pytest.raises(InputError) as err:
        bootstrap_ci(A, B, resamples=2_000_000)  # 2e6 kept means: more than 32 MiB
    assert "of memory" in str(err.value) and "32 MiB" in str(err.value)
    monkeypatch.setattr(limits, "machine_memory_bytes", lambda: None)  # unknown: time only
    assert bootstrap_ci(A, B, resamples=1000).resamples == 1000


def test_check_cost_raises_the_requested_error() -> None:
    enormous = Cost(operations=1e30, memory_bytes=0.0)
    with pytest.raises(ConfigError, match="lower resamples"):
        check_cost(enormous, "x", error=ConfigError)
    with pytest.raises(InputError) as err:
        check_cost(enormous, "x", field="resamples")
    assert err.value.field == "resamples"
    assert check_cost(Cost(1.0, 1.0), "x") == Cost(1.0, 1.0)
    with pytest.raises(ConfigError, match="resamples must be at least 1"):
        family_cost([10], resamples=0, error=ConfigError)


def test_estimates_are_lower_bounds_of_the_real_time() -> None:
    # The estimate must err short: the real run takes at least as long as estimated.
    rng = np.random.default_rng(0)
    a, b = rng.random(1000), rng.random(1000)
    cost = randomization_cost(1000, 100_000)
    start = time.perf_counter()
    randomization_test(a, b, resamples=100_000)
    elapsed = time.perf_counter() - start
    assert cost.seconds <= elapsed
    assert cost.operations / OPERATIONS_PER_SECOND == cost.seconds
    assert limits.MAX_ESTIMATED_SECONDS == 3600 and limits.MAX_MEMORY_FRACTION == 0.5
