"""Many randomization tests from one shared draw of sign vectors (`sign_flip_family`,
`paired_tests`, and `compare_pairs`, which tests its resampled randomization rows so).

The same seed draws the same sign vectors for every test of one query count, so the
batched path must give every count, p-value and interval end the single-test functions
give — and, since it is those tests, be calibrated under a true null and agree with
``scipy.stats.permutation_test``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats as sps

from rankproof import InputError
from rankproof.comparison import Pairing, compare_pairs
from rankproof.stats import (
    StatSettings,
    paired_interval,
    paired_test,
    paired_tests,
    randomization_test,
    sign_flip_family,
)

ALTERNATIVES = ("two-sided", "greater", "less")


def _vectors(seed: int = 0) -> list[np.ndarray]:
    """Difference vectors of several lengths: enumerable ones (2^n ≤ resamples), sparse
    ones (most groups of eight all zero), ties, all zeros, all equal."""
    rng = np.random.default_rng(seed)
    out = []
    for n in (3, 9, 40, 40, 41, 300, 300, 1200):
        d = rng.choice([-0.3, -0.1, 0.0, 0.0, 0.0, 0.1, 0.2], n)
        if n >= 300:
            d[rng.random(n) < 0.9] = 0.0  # sparse: two neighbouring results
        out.append(d)
    out += [np.zeros(50), np.full(20, 0.1), rng.normal(0.02, 0.1, 64)]
    return out


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("batch", [None, 37])
def test_family_equals_one_test_at_a_time(alternative: str, batch: int | None) -> None:
    ds = _vectors()
    fam = sign_flip_family(ds, alternative=alternative, resamples=999, seed=7, batch=batch,
                           max_level=0.2)
    assert len(fam) == len(ds)
    for i, d in enumerate(ds):
        one = randomization_test(d, np.zeros(len(d)), alternative=alternative,  # type: ignore[arg-type]
                                 resamples=999, seed=7)
        assert (fam.counts[i], fam.totals[i], fam.exact[i]) == (one.count, one.resamples,
                                                                one.exact)
        assert fam.p_value(i) == one.p_value
        for confidence in (0.8, 0.95, 0.99, 0.999):
            iv = paired_interval(d, np.zeros(len(d)), confidence_level=confidence,
                                 alternative=alternative,  # type: ignore[arg-type]
                                 resamples=999, seed=7)
            assert fam.bounds(i, 1 - confidence) == (iv.low, iv.high), (i, confidence)


def test_a_vector_gets_the_same_test_whatever_the_family_holds() -> None:
    ds = _vectors(1)
    alone = [sign_flip_family([d], resamples=500, seed=3, max_level=0.05) for d in ds]
    together = sign_flip_family(ds[::-1], resamples=500, seed=3, max_level=0.05)
    for i, fam in enumerate(alone):
        j = len(ds) - 1 - i
        assert fam.counts[0] == together.counts[j]
        assert fam.bounds(0, 0.05) == together.bounds(j, 0.05)


def test_the_memory_budget_splits_passes_without_changing_a_number(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import rankproof.stats._family as family

    ds = _vectors(2)
    whole = sign_flip_family(ds, resamples=700, seed=4, max_level=0.1)
    monkeypatch.setattr(family, "MEMORY_BUDGET", 1)  # every vector its own pass
    split = sign_flip_family(ds, resamples=700, seed=4, max_level=0.1, batch=64)
    assert split.counts == whole.counts
    assert [split.bounds(i, 0.05) for i in range(len(ds))] == [
        whole.bounds(i, 0.05) for i in range(len(ds))]


def test_paired_tests_equal_paired_test_field_for_field() -> None:
    rng = np.random.default_rng(4)
    sides = []
    for n in (4, 13, 60, 60, 400):
        a = rng.random(n)
        sides.append((a, np.clip(a + rng.normal(0.03, 0.2, n) * (rng.random(n) < 0.5), 0, 1)))
    results, family = paired_tests(sides, resamples=2000, seed=5, max_level=0.1)
    for (a, b), r in zip(sides, results, strict=True):
        assert r == paired_test(a, b, resamples=2000, seed=5)
    lean, _ = paired_tests(sides, resamples=2000, seed=5, bootstrap=False)
    for full, r in zip(results, lean, strict=True):
        assert r.bootstrap_low is None and r.bootstrap_high is None
        assert r == dataclasses.replace(full, bootstrap_low=None, bootstrap_high=None)
    assert family.bounds(4, 0.1) == pytest.approx(
        (paired_interval(*sides[4], confidence_level=0.9, resamples=2000, seed=5).low,
         paired_interval(*sides[4], confidence_level=0.9, resamples=2000, seed=5).high),
        abs=0)


def test_compare_pairs_rows_are_the_single_tests() -> None:
    """Each resampled row: its own `paired_test`, and its interval the test inverted at
    the level its correction gives it."""
    rng = np.random.default_rng(9)
    qids = [f"q{i}" for i in range(80)]
    pairings = []
    for k in range(6):
        base = rng.random(80)
        cand = np.clip(base + rng.normal(0.04 * (k % 3), 0.15, 80), 0, 1)
        pairings.append(Pairing(candidate=f"c{k}", baseline="b", measure="nDCG@10",
                                candidate_scores=dict(zip(qids, cand, strict=True)),
                                baseline_scores=dict(zip(qids, base, strict=True)),
                                higher_is_better=True))
    rows = compare_pairs(pairings, stats=StatSettings(resamples=1500, seed=2))
    assert any(r.verdict != "no detectable difference" for r in rows)
    for p, row in zip(pairings, rows, strict=True):
        c = np.array([p.candidate_scores[q] for q in sorted(qids)])
        b = np.array([p.baseline_scores[q] for q in sorted(qids)])
        single = paired_test(c, b, resamples=1500, seed=2)
        assert row.result == dataclasses.replace(single, measure="nDCG@10")
        iv = paired_interval(c, b, confidence_level=row.ci_level, resamples=1500, seed=2)
        assert (row.ci_low, row.ci_high) == (iv.low, iv.high)
        assert row.excludes_zero() == (row.verdict != "no detectable difference")
    lean = compare_pairs(pairings, stats=StatSettings(resamples=1500, seed=2), bootstrap=False)
    assert [r.verdict for r in lean] == [r.verdict for r in rows]
    assert [r.p_corrected for r in lean] == [r.p_corrected for r in rows]
    assert all(r.result.bootstrap_low is None for r in lean)


def test_false_positive_rate_under_a_true_null_is_in_band() -> None:
    """2,000 exchangeable null comparisons tested as one family (one shared draw of sign
    vectors): the rejection rate at 0.05 lies in the 99% binomial band around 0.05."""
    rng = np.random.default_rng(2027)
    trials, n = 2000, 50
    ds = []
    for _ in range(trials):
        base = rng.beta(0.6, 1.2, n)
        x = np.round(np.clip(base + rng.normal(0, 0.12, n), 0, 1) * 100) / 100
        y = np.round(np.clip(base + rng.normal(0, 0.12, n), 0, 1) * 100) / 100
        swap = rng.random(n) < 0.5
        ds.append(np.where(swap, y, x) - np.where(swap, x, y))
    fam = sign_flip_family(ds, resamples=2000, seed=0)
    rate = float(np.mean([fam.p_value(i) <= 0.05 for i in range(trials)]))
    lo, hi = (float(v) / trials for v in sps.binom.ppf([0.005, 0.995], trials, 0.05))
    assert lo <= rate <= hi, rate


def test_family_agrees_with_scipy_permutation_test() -> None:
    """Within Monte-Carlo error of scipy's exact enumeration (n = 16: 65,536 sign vectors)."""
    rng = np.random.default_rng(11)
    ds = [np.round(rng.normal(shift, 0.2, 16), 2) for shift in (0.0, 0.05, 0.1, 0.15)]
    B = 4000
    fam = sign_flip_family(ds, resamples=B, seed=1)
    for i, d in enumerate(ds):
        ref = sps.permutation_test((d, np.zeros(16)), lambda x, y, axis: np.mean(x - y, axis=axis),
                                   permutation_type="samples", n_resamples=np.inf,
                                   vectorized=True).pvalue
        se = np.sqrt(max(ref * (1 - ref), 1e-4) / B)
        assert abs(fam.p_value(i) - ref) <= 4 * se + 1 / (B + 1), (i, fam.p_value(i), ref)


def test_a_level_above_max_level_is_refused() -> None:
    fam = sign_flip_family([np.array([0.1, -0.2, 0.3] * 10)], resamples=100, seed=0,
                           max_level=0.05)
    with pytest.raises(InputError, match=r"level must be at most the family's max_level "
                                         r"0\.05, got 0\.1"):
        fam.bounds(0, 0.1)
