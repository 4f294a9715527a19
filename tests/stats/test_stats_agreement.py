"""Known-answer tests: rankproof.stats against scipy, statsmodels and brute force.

Reference implementations: ``scipy.stats.ttest_rel``, ``scipy.stats.permutation_test``
(``permutation_type="samples"``, exact with ``n_resamples=np.inf``),
``scipy.stats.wilcoxon``, ``scipy.stats.binomtest``, ``scipy.stats.bootstrap``,
``statsmodels.stats.multitest.multipletests`` and ``statsmodels.stats.power``.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import normal_power

from rankproof.stats import (
    bootstrap_ci,
    correct,
    paired_t,
    paired_test,
    power,
    randomization_test,
    sign_test,
    wilcoxon,
)

ALTERNATIVES = ("two-sided", "greater", "less")


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def _scipy_exact(a: np.ndarray, b: np.ndarray, alternative: str) -> float:
    res = sps.permutation_test(
        (a, b),
        _mean_diff,
        permutation_type="samples",
        n_resamples=np.inf,
        alternative=alternative,
        vectorized=True,
    )
    return float(res.pvalue)


# -- paired t ----------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("confidence_level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("seed", range(5))
def test_paired_t_equals_scipy_ttest_rel(
    alternative: str, confidence_level: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    a = rng.beta(0.7, 1.3, n)
    b = np.clip(a + rng.normal(0.01, 0.1, n), 0, 1)
    ours = paired_t(a, b, alternative=alternative, confidence_level=confidence_level)
    ref = sps.ttest_rel(a, b, alternative=alternative)
    ci = ref.confidence_interval(confidence_level)
    assert ours.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-10, abs=1e-300)
    assert ours.df == int(ref.df)
    assert ours.ci_low == pytest.approx(float(ci.low), rel=1e-12)
    assert ours.ci_high == pytest.approx(float(ci.high), rel=1e-12)


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
def test_paired_t_matches_scipy_with_zero_variance() -> None:
    # Every difference equal and non-zero: t = +inf, p = 0 (scipy agrees).
    a, b = np.array([0.5, 0.75, 1.0]), np.array([0.25, 0.5, 0.75])
    ref = sps.ttest_rel(a, b)
    ours = paired_t(a, b)
    assert np.isposinf(ours.statistic) and np.isposinf(ref.statistic)
    assert ours.p_value == float(ref.pvalue) == 0.0
    assert ours.to_dict()["statistic"] is None
    # Every difference zero: undefined, nan as in scipy, and to_dict says None.
    same = paired_t(a, a)
    assert np.isnan(same.statistic) and np.isnan(same.p_value)
    assert same.to_dict()["p_value"] is None


# -- exact randomization ------------------------------------------------------------


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_exact_randomization_equals_scipy_on_dyadic_scores(alternative: str) -> None:
    """Scores that are multiples of 1/16: every sum is exact, so scipy must agree to the bit,
    including ties, zero differences and an observed mean of exactly 0."""
    rng = np.random.default_rng(7)
    for _ in range(150):
        n = int(rng.integers(2, 11))
        a = rng.integers(0, 17, n) / 16
        b = np.where(rng.random(n) < 0.3, a, rng.integers(0, 17, n) / 16)
        ours = randomization_test(a, b, alternative=alternative)
        assert ours.exact and ours.resamples == 2**n
        assert ours.p_value == _scipy_exact(a, b, alternative), (a, b)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_exact_randomization_equals_scipy_on_ndcg_like_scores(alternative: str) -> None:
    """nDCG-like values (not exactly representable) with ties and zeros. scipy's tolerance is
    relative to the observed statistic only, so it can miss theoretical ties when the observed
    mean is 0 by cancellation; those cases are checked against exact rationals below."""
    values = [0.0, 0.0, 0.1, 1 / 3, 0.4307, 0.5, 0.6131, 1.0]
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(200):
        n = int(rng.integers(2, 11))
        a = rng.choice(values, n)
        b = np.where(rng.random(n) < 0.25, a, rng.choice(values, n))
        if abs(np.sum(a - b)) < 1e-9:
            continue
        checked += 1
        ours = randomization_test(a, b, alternative=alternative)
        assert ours.p_value == pytest.approx(_scipy_exact(a, b, alternative), rel=1e-12), (a, b)
    assert checked > 100


def _brute_force(a: list[Fraction], b: list[Fraction], alternative: str) -> float:
    d = [x - y for x, y in zip(a, b, strict=True)]
    observed = sum(d)
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        s = sum(sign * x for sign, x in zip(signs, d, strict=True))
        if alternative == "greater":
            hits += s >= observed
        elif alternative == "less":
            hits += s <= observed
        else:
            hits += abs(s) >= abs(observed)
    return hits / 2 ** len(d)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_exact_randomization_equals_rational_brute_force(alternative: str) -> None:
    """Scores drawn as exact rationals: every tie in exact arithmetic must count as a tie after
    floating point (this is what the relative tolerance is for), zero-mean cases included."""
    values = [Fraction(0), Fraction(1, 10), Fraction(1, 3), Fraction(1, 2), Fraction(7, 10),
              Fraction(2, 3), Fraction(1)]
    rng = np.random.default_rng(3)
    for _ in range(60):
        n = int(rng.integers(1, 9))
        a = [values[i] for i in rng.integers(0, len(values), n)]
        b = [a[i] if rng.random() < 0.25 else values[int(rng.integers(0, len(values)))]
             for i in range(n)]
        ours = randomization_test([float(x) for x in a], [float(x) for x in b],
                                  alternative=alternative)
        assert ours.p_value == _brute_force(a, b, alternative), (a, b)


def test_exact_doctest_case_by_hand() -> None:
    # d = (0.1, 0.2, 0): |±0.1 ± 0.2 ± 0| ≥ 0.3 for 4 of the 8 sign vectors.
    r = randomization_test({"q1": 0.5, "q2": 0.7, "q3": 0.2}, {"q1": 0.4, "q2": 0.5, "q3": 0.2})
    assert (r.exact, r.resamples, r.count, r.p_value) == (True, 8, 4, 0.5)


def test_monte_carlo_randomization_close_to_exact() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.random(16), rng.random(16)  # 2^16 = 65,536 sign vectors
    exact = randomization_test(a, b, resamples=2**16)
    mc = randomization_test(a, b, resamples=20_000, seed=1)
    assert exact.exact and not mc.exact
    se = np.sqrt(exact.p_value * (1 - exact.p_value) / 20_000)
    assert abs(mc.p_value - exact.p_value) < 4 * se + 1e-4


def test_monte_carlo_p_value_formula() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.random(40), rng.random(40)
    r = randomization_test(a, b, resamples=999)
    assert r.p_value == (r.count + 1) / 1000
    assert 0 < r.p_value <= 1


# -- wilcoxon, sign ------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_wilcoxon_equals_scipy_past_the_exact_limit(alternative: str, zero_method: str) -> None:
    """Over 50 non-zero differences: scipy's normal approximation, tie correction included."""
    rng = np.random.default_rng(4)
    a = np.round(rng.random(200), 2)
    b = np.where(rng.random(200) < 0.2, a, np.round(rng.random(200), 2))
    ours = wilcoxon(a, b, alternative=alternative, zero_method=zero_method)  # type: ignore[arg-type]
    ref = sps.wilcoxon(a - b, zero_method=zero_method, alternative=alternative, method="approx")
    assert ours.statistic == pytest.approx(float(ref.statistic))
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-12)
    assert ours.nonzero == int(np.count_nonzero(a - b))


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_wilcoxon_is_exact_without_ties(alternative: str) -> None:
    rng = np.random.default_rng(5)
    a, b = rng.random(40), rng.random(40)
    ours = wilcoxon(a, b, alternative=alternative)  # type: ignore[arg-type]
    ref = sps.wilcoxon(a - b, alternative=alternative, method="exact")
    assert ours.statistic == pytest.approx(float(ref.statistic))
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-12)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
def test_wilcoxon_is_exact_with_ties_and_zeros(alternative: str, zero_method: str) -> None:
    """Ties and zeros, few queries: every sign vector enumerated (scipy's permutation
    method, which enumerates when 2**n fits its resamples) gives the same p-value, and
    ours is computed without drawing anything (the same on every call)."""
    rng = np.random.default_rng(6)
    for _ in range(4):
        a = np.round(rng.random(10), 1)
        b = np.where(rng.random(10) < 0.2, a, np.round(rng.random(10), 1))
        d = a - b
        if not np.count_nonzero(d):
            continue
        ours = wilcoxon(a, b, alternative=alternative, zero_method=zero_method)  # type: ignore[arg-type]
        ref = sps.wilcoxon(d, zero_method=zero_method, alternative=alternative,
                           method=sps.PermutationMethod(n_resamples=10**6))
        assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_sign_test_equals_binomtest(alternative: str) -> None:
    a = np.array([0.5, 0.4, 0.3, 0.3, 0.9, 0.1, 0.8, 0.7])
    b = np.array([0.4, 0.4, 0.2, 0.5, 0.1, 0.1, 0.6, 0.6])
    ours = sign_test(a, b, alternative=alternative)
    assert (ours.wins, ours.losses, ours.ties) == (5, 1, 2)
    ref = sps.binomtest(5, 6, 0.5, alternative=alternative)
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-12)


def test_all_zero_differences_give_p_one() -> None:
    a = [0.3, 0.0, 0.7]
    assert wilcoxon(a, a).p_value == 1.0
    assert sign_test(a, a).p_value == 1.0
    assert randomization_test(a, a).p_value == 1.0


# -- bootstrap -------------------------------------------------------------------


def test_percentile_bootstrap_close_to_scipy() -> None:
    rng = np.random.default_rng(8)
    a = rng.beta(0.7, 1.3, 200)
    b = np.clip(a + rng.normal(0.02, 0.1, 200), 0, 1)
    ours = bootstrap_ci(a, b, method="percentile", resamples=20_000)
    ref = sps.bootstrap((a - b,), np.mean, method="percentile", n_resamples=20_000,
                        rng=np.random.default_rng(0)).confidence_interval
    se = float(np.std(a - b, ddof=1) / np.sqrt(200))
    assert abs(ours.ci_low - ref.low) < 0.05 * se
    assert abs(ours.ci_high - ref.high) < 0.05 * se
    assert ours.estimate == pytest.approx(float(np.mean(a - b)))
    assert ours.standard_error == pytest.approx(se, rel=0.05)


def test_studentized_bootstrap_close_to_t_interval_on_normal_data() -> None:
    rng = np.random.default_rng(9)
    d = rng.normal(0.03, 0.1, 300)
    ours = bootstrap_ci(d, np.zeros(300), method="studentized", resamples=20_000)
    t = paired_t(d, np.zeros(300))
    width = t.ci_high - t.ci_low
    assert abs(ours.ci_low - t.ci_low) < 0.05 * width
    assert abs(ours.ci_high - t.ci_high) < 0.05 * width
    assert ours.method == "studentized"


# -- corrections --------------------------------------------------------------------

_SM = {"holm": "holm", "bh": "fdr_bh", "bonferroni": "bonferroni"}


@pytest.mark.parametrize("method", ["holm", "bh", "bonferroni"])
@pytest.mark.parametrize("seed", range(20))
def test_correct_equals_statsmodels(method: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60))
    p = rng.beta(0.4, 1.0, m)
    p[rng.random(m) < 0.2] = p[0]  # ties
    if m > 3:
        p[1], p[2] = 0.0, 1.0
    ours = correct(p, method)  # type: ignore[arg-type]
    ref = multipletests(p, method=_SM[method])[1]
    np.testing.assert_allclose(ours, ref, rtol=1e-15, atol=0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40),
       st.sampled_from(["holm", "bh", "bonferroni", "none"]))
def test_correct_properties(p: list[float], method: str) -> None:
    adj = correct(p, method)  # type: ignore[arg-type]
    arr = np.array(p)
    assert adj.shape == arr.shape
    assert np.all(adj >= arr) and np.all(adj <= 1.0)
    order = np.argsort(arr, kind="stable")
    assert np.all(np.diff(adj[order]) >= 0)  # monotone in p
    if method != "none":
        np.testing.assert_allclose(adj, multipletests(arr, method=_SM[method])[1], rtol=1e-15)


def test_correct_examples() -> None:
    assert correct([0.01, 0.04, 0.03], "holm").tolist() == [0.03, 0.06, 0.06]
    assert correct([0.01, 0.04, 0.03], "none").tolist() == [0.01, 0.04, 0.03]
    assert correct([0.5, 0.6], "bonferroni").tolist() == [1.0, 1.0]
    assert correct([], "holm").tolist() == []


# -- power ----------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize(("effect", "sd", "n"), [(0.02, 0.1, 200), (0.05, 0.2, 50),
                                                 (-0.03, 0.15, 120), (0.001, 0.3, 10)])
def test_power_equals_statsmodels_normal_power(
    alternative: str, effect: float, sd: float, n: int
) -> None:
    sm_alt = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}[alternative]
    ref = normal_power(effect / sd, n, 0.05, alternative=sm_alt)
    assert power(effect, sd, n, alternative=alternative) == pytest.approx(float(ref), rel=1e-10)


def test_paired_test_t_uses_t_interval_and_scipy_values() -> None:
    rng = np.random.default_rng(12)
    a, b = rng.random(30), rng.random(30)
    r = paired_test(a, b, "t")
    ref = sps.ttest_rel(a, b)
    ci = ref.confidence_interval()
    assert r.p_value == pytest.approx(float(ref.pvalue), rel=1e-10)
    assert (r.ci_low, r.ci_high) == (pytest.approx(float(ci.low)), pytest.approx(float(ci.high)))
    assert r.ci_method == "t" and r.seed is None and r.resamples is None
