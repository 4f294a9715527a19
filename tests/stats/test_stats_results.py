"""Result objects, `paired_test` bookkeeping, power, Tukey HSD, and the public names."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankproof.stats as rs
from rankproof.measures import PerQuery, parse
from rankproof.stats import (
    TEST_INTERVALS,
    bootstrap_ci,
    detection_table,
    paired_interval,
    paired_t,
    paired_test,
    power,
    queries_needed,
    randomization_test,
    sign,
    sign_test,
    simulated_power,
    tukey_hsd_randomized,
    wilcoxon,
)

EXPECTED_NAMES = [
    "ASYMPTOTIC_MIN_QUERIES", "BERRY_ESSEEN_C", "BOOTSTRAP_P", "CORRECTIONS",
    "DEFAULT_ALPHA", "DEFAULT_CONFIDENCE_LEVEL", "DEFAULT_CORRECTION", "DEFAULT_PAIRS",
    "DEFAULT_RESAMPLES", "DEFAULT_SEED", "DEFAULT_TEST", "INTERVAL_LABELS",
    "INTERVAL_METHODS", "OPERATIONS_PER_SECOND", "PAIRS", "PROCEDURES", "TESTS", "TEST_INTERVALS",
    "BootstrapResult", "Correction", "Cost",
    "DetectionTable", "IntervalMethod", "NullDistribution", "PairComparison", "PairedInterval",
    "PairedResult", "PairedScores", "PairsName", "ProgressCallback", "RandomizationResult",
    "Result",
    "SignFlipFamily", "SignTestResult",
    "SimulatedPower", "StatSettings", "TTestResult", "Tally", "TestName", "TukeyHSDResult",
    "WilcoxonResult",
    "bootstrap_ci", "check_choice", "check_cost", "check_int", "check_probability",
    "choose_procedure", "correct",
    "detection_table", "nearest_rank", "null_distribution", "paired_interval", "paired_scores",
    "paired_t", "paired_test", "paired_test_cost", "paired_tests", "power", "queries_needed",
    "randomization_test", "sign", "sign_flip_family", "sign_test", "simulated_power",
    "tukey_cost",
    "tukey_hsd_randomized", "wilcoxon",
]


def test_public_names_are_pinned_and_sorted() -> None:
    assert rs.__all__ == EXPECTED_NAMES
    # ruff's RUF022 order (CONSTANTS, Classes, functions), as every package's __all__
    key = [(0 if n.isupper() else 1 if n[:1].isupper() else 2, n) for n in rs.__all__]
    assert sorted(key) == key
    for name in rs.__all__:
        assert hasattr(rs, name)
    assert sign is sign_test


def _pair(n: int = 60, seed: int = 0) -> tuple[dict[str, float], dict[str, float]]:
    rng = np.random.default_rng(seed)
    a = np.round(rng.beta(0.6, 1.2, n), 3)
    b = np.clip(np.round(a - rng.normal(0.03, 0.1, n), 3), 0, 1)
    b[:5] = a[:5]
    q = [f"q{i}" for i in range(n)]
    return dict(zip(q, a.tolist(), strict=True)), dict(zip(q, b.tolist(), strict=True))


def test_every_result_is_frozen_and_strict_json() -> None:
    a, b = _pair()
    results = [
        randomization_test(a, b, resamples=500),
        paired_t(a, b),
        bootstrap_ci(a, b, resamples=500),
        wilcoxon(a, b),
        sign_test(a, b),
        paired_test(a, b, resamples=500),
        simulated_power(list(a.values()), 0.02, 30, simulations=50),
        detection_table(0.1),
        tukey_hsd_randomized({"x": a, "y": b, "z": a}, resamples=200),
        paired_t(a, b, alternative="greater"),  # infinite CI end → null
    ]
    for r in results:
        text = r.to_json()
        assert json.loads(text) == r.to_dict()
        field = dataclasses.fields(r)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(r, field, 1)
    assert results[-1].to_dict()["ci_high"] is None
    assert results[8].to_dict()["comparisons"][0].keys() == {"a", "b", "difference", "p_value"}


def test_paired_result_fields() -> None:
    a, b = _pair()
    r = paired_test(a, b, seed=3)
    d = np.array([a[q] - b[q] for q in sorted(a)])
    # The interval follows the test (issue 10): the randomization test inverted.
    assert r.n == 60 and r.test == "randomization" and r.ci_method == "randomization"
    assert r.seed == 3 and r.resamples == 10_000 and not r.exact
    assert r.mean_a == pytest.approx(np.mean(list(a.values())))
    assert r.difference == pytest.approx(d.mean())
    assert r.relative_difference == pytest.approx(d.mean() / r.mean_b)
    assert (r.wins, r.ties, r.losses) == (int((d > 0).sum()), int((d == 0).sum()),
                                          int((d < 0).sum()))
    assert r.ties >= 5
    assert r.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert r.power == pytest.approx(power(d.mean(), d.std(ddof=1), 60))
    assert r.queries_needed == queries_needed(d.mean(), d.std(ddof=1))
    assert r.ci_low < r.difference < r.ci_high
    assert r.p_value == randomization_test(a, b, seed=3).p_value
    boot = bootstrap_ci(a, b, seed=3)
    assert (r.bootstrap_low, r.bootstrap_high) == (boot.ci_low, boot.ci_high)
    inverted = paired_interval(a, b, "randomization", seed=3)
    assert (r.ci_low, r.ci_high) == (inverted.low, inverted.high)
    assert r.significant() == (r.p_value <= 0.05) == (r.ci_low > 0 or r.ci_high < 0)


def test_paired_result_undefined_quantities_are_none() -> None:
    a = {"q1": 0.5, "q2": 0.25, "q3": 0.0}
    b = {"q1": 0.0, "q2": 0.0, "q3": 0.0}
    r = paired_test(a, b)
    assert r.relative_difference is None  # mean_b == 0
    same = paired_test(a, a)
    assert same.effect_size is None and same.power is None and same.queries_needed is None
    assert same.p_value == 1.0 and same.ties == 3
    shifted = paired_test({"q1": 0.5, "q2": 0.75}, {"q1": 0.25, "q2": 0.5}, "t")
    assert shifted.effect_size is None  # SD of differences is 0


@pytest.mark.parametrize("test", ["randomization", "t", "bootstrap", "wilcoxon", "sign"])
def test_paired_test_each_test(test: str) -> None:
    a, b = _pair(80, seed=1)
    r = paired_test(a, b, test, resamples=2000)  # type: ignore[arg-type]
    assert r.test == test and 0 < r.p_value <= 1
    expected_ci = {"randomization": "randomization", "t": "t", "bootstrap": "percentile",
                   "wilcoxon": "wilcoxon", "sign": "sign"}[test]
    assert r.ci_method == expected_ci == TEST_INTERVALS[test]
    if test == "wilcoxon":
        assert r.p_value == wilcoxon(a, b).p_value
    if test == "sign":
        assert r.p_value == sign_test(a, b).p_value and r.statistic == r.wins
    if test == "t":
        assert r.p_value == pytest.approx(paired_t(a, b).p_value)


def test_paired_test_studentized_interval_and_exact_small_n() -> None:
    a = {f"q{i}": v for i, v in enumerate([0.5, 0.3, 0.9, 0.1, 0.4])}
    b = {f"q{i}": v for i, v in enumerate([0.4, 0.3, 0.5, 0.2, 0.1])}
    r = paired_test(a, b, ci_method="studentized", resamples=4000)
    assert r.exact and r.ci_method == "studentized"
    assert r.p_value == randomization_test(a, b).p_value


def test_bootstrap_p_value_agrees_with_t_on_large_normal_sample() -> None:
    rng = np.random.default_rng(4)
    d = rng.normal(0.02, 0.1, 400)
    z = np.zeros(400)
    pb = paired_test(d, z, "bootstrap", resamples=20_000).p_value
    pt = paired_t(d, z).p_value
    assert pb == pytest.approx(pt, abs=0.01)


def test_perquery_inputs() -> None:
    m1, m2 = parse("nDCG@10"), parse("AP")
    pa = PerQuery(("q1", "q2", "q3"), (m1, m2), np.array([[0.5, 0.1], [0.2, 0.3], [0.9, 0.4]]))
    pb = PerQuery(("q3", "q1", "q2"), (m1, m2), np.array([[0.8, 0.4], [0.4, 0.1], [0.2, 0.1]]))
    r = paired_test(pa, pb, "t", measure="ndcg_cut.10")
    assert r.measure == "nDCG@10"
    assert r.difference == pytest.approx((0.1 + 0.0 + 0.1) / 3)
    assert rs.paired_scores(pa, pb, "AP").qids == ("q1", "q2", "q3")


# -- power ----------------------------------------------------------------------------


def test_power_known_values() -> None:
    assert power(0.02, 0.1, 200) == pytest.approx(0.8074, abs=1e-4)
    assert power(0.0, 0.1, 200) == pytest.approx(0.05)
    assert power(0.0, 0.1, 200, alternative="greater") == pytest.approx(0.05)
    assert power(0.02, 0.1, 200) == power(-0.02, 0.1, 200)
    assert queries_needed(0.02, 0.1) == 197
    assert queries_needed(1.0, 0.01) == 2


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-3, 1.0), st.floats(1e-3, 1.0), st.floats(0.5, 0.99),
       st.sampled_from([0.01, 0.05, 0.1]), st.sampled_from(["two-sided", "greater"]))
def test_queries_needed_is_the_smallest_sufficient_n(
    effect: float, sd: float, target: float, alpha: float, alternative: str
) -> None:
    n = queries_needed(effect, sd, target, alpha, alternative)  # type: ignore[arg-type]
    assert power(effect, sd, n, alpha, alternative) >= target  # type: ignore[arg-type]
    if n > 2:
        assert power(effect, sd, n - 1, alpha, alternative) < target  # type: ignore[arg-type]


def test_simulated_power_close_to_normal_approximation() -> None:
    rng = np.random.default_rng(0)
    pilot = rng.normal(0.0, 0.1, 2000)
    sd = float(pilot.std(ddof=1))
    for test in ("t", "randomization"):
        sim = simulated_power(pilot, 0.02, 150, simulations=2000, seed=1, test=test,  # type: ignore[arg-type]
                              resamples=1000)
        assert sim.power == pytest.approx(power(0.02, sd, 150), abs=4 * sim.standard_error + 0.02)
        assert sim.detections == round(sim.power * 2000)
        assert sim.pilot_sd == pytest.approx(sd)
    null = simulated_power(pilot, 0.0, 100, simulations=2000, seed=2)
    assert null.power == pytest.approx(0.05, abs=0.02)


def test_detection_table_shape_and_values() -> None:
    t = detection_table(0.1)
    assert t.effects == (0.02, 0.05, 0.10) and t.ns == (50, 100, 200, 500)
    assert t.matrix.shape == (3, 4)
    assert t.matrix[0, 2] == pytest.approx(power(0.02, 0.1, 200))
    assert t.queries_needed == (197, 32, 8)
    assert np.all(np.diff(t.matrix, axis=1) >= 0) and np.all(np.diff(t.matrix, axis=0) >= 0)
    assert t.method == "normal" and t.seed is None
    one_sided = detection_table(0.1, effects=(0.02, -0.02), alternative="greater")
    assert one_sided.queries_needed[1] is None
    pilot = np.random.default_rng(0).normal(0, 0.1, 50)
    tp = detection_table(pilot, effects=(0.05,), ns=(30,))
    assert tp.sd == pytest.approx(float(pilot.std(ddof=1)))


# -- Tukey HSD -----------------------------------------------------------------------


def test_tukey_two_systems_equals_randomization_test() -> None:
    """With two systems, permuting a query's scores is a sign flip and the range is |difference|."""
    a, b = _pair(80, seed=5)
    tk = tukey_hsd_randomized({"a": a, "b": b}, resamples=20_000, seed=1)
    rt = randomization_test(a, b, resamples=20_000, seed=2)
    assert tk.p_value("a", "b") == pytest.approx(rt.p_value, abs=0.01)
    assert tk.comparisons[0].difference == pytest.approx(rt.statistic)


def test_tukey_identifies_the_different_system() -> None:
    rng = np.random.default_rng(6)
    qids = [f"q{i}" for i in range(150)]
    base = rng.beta(0.6, 1.2, 150)
    scores = {
        name: dict(zip(qids, np.clip(base + rng.normal(shift, 0.05, 150), 0, 1).tolist(),
                       strict=True))
        for name, shift in [("bm25", 0.0), ("bm25+rm3", 0.002), ("dense", 0.1)]
    }
    tk = tukey_hsd_randomized(scores, resamples=3000)
    assert tk.systems == ("bm25", "bm25+rm3", "dense")
    assert tk.p_value("bm25", "dense") < 0.01 and tk.p_value("dense", "bm25+rm3") < 0.01
    assert tk.p_value("bm25", "bm25+rm3") > 0.05
    # Tukey is more conservative than an uncorrected pairwise test.
    pair = randomization_test(scores["bm25"], scores["bm25+rm3"], resamples=3000)
    assert tk.p_value("bm25", "bm25+rm3") >= pair.p_value - 0.02
    assert math.isclose(sum(tk.means) / 3, np.mean([np.mean(list(s.values()))
                                                    for s in scores.values()]))


def test_tukey_identical_systems_have_p_one() -> None:
    a = {f"q{i}": v for i, v in enumerate([0.1, 0.5, 0.0, 0.9])}
    tk = tukey_hsd_randomized({"x": a, "y": dict(a), "z": dict(a)}, resamples=200)
    assert all(c.p_value == 1.0 and c.difference == 0.0 for c in tk.comparisons)
