"""Coverage by simulation: the default interval covers the true difference ≥ 95% of the time.

The default interval is the randomization test inverted over shifts (so that
it agrees with the verdict by construction); agreeing with the test is worth
nothing if it does not also cover the truth. The generator is the nDCG-like
null of ``test_stats_calibration.py`` with one system shifted up by a fixed
amount and clipped to [0, 1]; the truth is the realised population mean
difference of that generator (one million simulated queries). The percentile
bootstrap's coverage is measured beside it: it under-covers on few queries,
which is one reason it is no longer the interval next to the verdict.

Marked slow (it runs in CI); about a minute.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sps
from tests.stats.test_stats_calibration import exchangeable

from rankproof.stats import bootstrap_ci, paired_interval

pytestmark = pytest.mark.slow

TRIALS = 1000
RESAMPLES = 2000
SHIFT = 0.03
LEVEL = 0.95


def shifted(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """nDCG-like correlated pair; the first system gains ``SHIFT`` per query (clipped)."""
    a, b = exchangeable(100)(rng, n)
    return np.clip(a + SHIFT, 0.0, 1.0), b


def true_difference() -> float:
    a, b = shifted(np.random.default_rng(2026), 1_000_000)
    return float((a - b).mean())


def coverage(n: int, truth: float) -> tuple[float, float]:
    rng = np.random.default_rng(1000 + n)
    inverted = percentile = 0
    for trial in range(TRIALS):
        a, b = shifted(rng, n)
        iv = paired_interval(a, b, confidence_level=LEVEL, resamples=RESAMPLES, seed=trial)
        inverted += iv.low <= truth <= iv.high
        boot = bootstrap_ci(a, b, confidence_level=LEVEL, resamples=RESAMPLES, seed=trial)
        percentile += boot.ci_low <= truth <= boot.ci_high
    return inverted / TRIALS, percentile / TRIALS


@pytest.mark.parametrize("n", [25, 50, 100])
def test_default_interval_covers_the_truth(n: int) -> None:
    truth = true_difference()
    assert 0.02 < truth < SHIFT  # clipping at 1 takes a little of the shift away
    inverted, percentile = coverage(n, truth)
    low = float(sps.binom.ppf(0.005, TRIALS, LEVEL)) / TRIALS  # 99% band's lower end
    print(f"n={n}: inverted randomization {inverted:.3f}, percentile bootstrap {percentile:.3f}")
    assert inverted >= low, f"n={n}: coverage {inverted} below the 99% band ({low})"
    if n == 25:
        # The percentile bootstrap is too narrow on few queries: it covers less.
        assert percentile < inverted
