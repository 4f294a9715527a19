"""Closed-form paired tests: the t-test, and the rank/sign tests kept for comparison."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats as sps

from rankproof._errors import InputError
from rankproof.measures import Measure
from rankproof.stats._defaults import DEFAULT_CONFIDENCE_LEVEL
from rankproof.stats._results import Result
from rankproof.stats._validate import (
    Alternative,
    FloatArray,
    Scores,
    check_alternative,
    check_choice,
    check_probability,
    paired_scores,
)

ZeroMethod = Literal["wilcox", "pratt", "zsplit"]


@dataclass(frozen=True)
class TTestResult(Result):
    """Result of :func:`paired_t`.

    ``statistic = mean(d) / (sd(d) / √n)`` with ``d = a − b`` and the sample
    SD (``ddof=1``); ``df = n − 1``. ``ci_low``/``ci_high`` bound the mean
    difference at ``confidence_level``; for a one-sided ``alternative`` the
    interval is one-sided (the other end infinite), as in scipy. When every
    difference is equal the statistic is undefined (``nan``, or ``±inf`` if
    the common difference is not 0), again as in scipy.
    """

    statistic: float
    p_value: float
    df: int
    alternative: str
    mean_difference: float
    standard_error: float
    ci_low: float
    ci_high: float
    confidence_level: float
    n: int
    measure: str | None = None


@dataclass(frozen=True)
class WilcoxonResult(Result):
    """Result of :func:`wilcoxon` (scipy's statistic and p-value, recorded with its options)."""

    statistic: float
    p_value: float
    alternative: str
    zero_method: str
    n: int
    nonzero: int
    measure: str | None = None


@dataclass(frozen=True)
class SignTestResult(Result):
    """Result of :func:`sign_test`: wins (a > b), losses, ties and the binomial p-value."""

    p_value: float
    alternative: str
    wins: int
    losses: int
    ties: int
    n: int
    measure: str | None = None


def t_interval(
    d: FloatArray, alternative: str, confidence_level: float
) -> tuple[float, float, float, float, float]:
    """``(t, p, se, low, high)`` for the one-sample t-test of ``mean(d) = 0``."""
    n = len(d)
    mean = float(d.mean())
    se = float(d.std(ddof=1)) / math.sqrt(n)
    df = n - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        t = float(np.divide(mean, se))
    dist = sps.t(df)
    if math.isnan(t):
        p = math.nan
    elif alternative == "greater":
        p = float(dist.sf(t))
    elif alternative == "less":
        p = float(dist.cdf(t))
    else:
        p = float(min(1.0, 2.0 * dist.sf(abs(t))))
    if alternative == "two-sided":
        q = float(dist.ppf(0.5 + confidence_level / 2.0))
        low, high = mean - q * se, mean + q * se
    elif alternative == "greater":
        low, high = mean - float(dist.ppf(confidence_level)) * se, math.inf
    else:
        low, high = -math.inf, mean + float(dist.ppf(confidence_level)) * se
    return t, p, se, low, high


def paired_t(
    a: Scores,
    b: Scores,
    *,
    measure: str | Measure | None = None,
    alternative: Alternative = "two-sided",
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> TTestResult:
    """Paired t-test of the mean difference, with its t-interval.

    Equals ``scipy.stats.ttest_rel(a, b, alternative=...)`` (statistic,
    p-value and ``confidence_interval(confidence_level)``). It is reported
    beside the randomization test: with the few dozen to few thousand
    queries of IR test collections the two usually agree (Smucker et al.,
    CIKM 2007), and the t-interval is the familiar way to bound the
    difference. It assumes the mean difference is roughly normal, which the
    central limit theorem gives for moderate ``n`` unless the differences
    are very skewed.

    >>> r = paired_t({"q1": 0.5, "q2": 0.7, "q3": 0.2}, {"q1": 0.4, "q2": 0.5, "q3": 0.1})
    >>> round(r.statistic, 4), r.df
    (4.0, 2)
    """
    pairs = paired_scores(a, b, measure)
    alternative = check_alternative(alternative)
    confidence_level = check_probability(confidence_level, "confidence_level")
    if pairs.n < 2:
        raise InputError(f"the t-test needs at least 2 queries; got {pairs.n}")
    d = pairs.differences
    t, p, se, low, high = t_interval(d, alternative, confidence_level)
    return TTestResult(
        statistic=t,
        p_value=p,
        df=pairs.n - 1,
        alternative=alternative,
        mean_difference=float(d.mean()),
        standard_error=se,
        ci_low=low,
        ci_high=high,
        confidence_level=confidence_level,
        n=pairs.n,
        measure=pairs.measure,
    )


#: Up to this many non-zero differences the signed-rank p-value is exact (the null
#: distribution enumerated by dynamic programming); beyond it, the normal approximation.
EXACT_SIGNED_RANK_LIMIT = 50


def _signed_rank_exact(x: np.ndarray, ranks: np.ndarray, alternative: str) -> float:
    """Exact p-value of the signed-rank sum W+ given the ranks (ties averaged), conditional
    on them: every rank is + or − with probability 1/2 under the null.

    Why not scipy's ``method="auto"``: with ties or zeros and few queries it switches to
    a permutation test, which draws random resamples (a p-value that changes from call to
    call, beyond 13 queries) and costs seconds per call, and the interval inverts the test
    by bisection over a hundred calls. Averaged ranks are multiples of 1/2, so doubled
    they are integers and the distribution of W+ is a small convolution.
    """
    doubled = np.rint(2.0 * ranks).astype(np.int64)
    total = int(doubled.sum())
    counts = np.zeros(total + 1, dtype=np.float64)  # exact: at most 2**50 < 2**53
    counts[0] = 1.0
    for r in doubled.tolist():
        if r:
            counts[r:] = counts[r:] + counts[:-r].copy()
        else:
            counts *= 2.0
    counts /= counts.sum()
    w = int(doubled[x > 0].sum())
    upper = float(counts[w:].sum())
    lower = float(counts[: w + 1].sum())
    if alternative == "greater":
        return upper
    if alternative == "less":
        return lower
    return min(1.0, 2.0 * min(upper, lower))


def signed_rank(d: np.ndarray, alternative: str, zero_method: str = "wilcox"
                ) -> tuple[float, float]:
    """``(statistic, p)`` of the Wilcoxon signed-rank test on the differences ``d``.

    The statistic is scipy's (W+ one-sided, min(W+, W−) two-sided). The p-value is exact
    (`_signed_rank_exact`) for "wilcox" and "pratt" up to `EXACT_SIGNED_RANK_LIMIT`
    non-zero differences, ties included; otherwise scipy's normal approximation with its
    tie correction. Deterministic either way.
    """
    if not np.count_nonzero(d):
        return 0.0, 1.0
    if zero_method == "wilcox":
        x = d[d != 0]
        ranks = sps.rankdata(np.abs(x))
    else:
        all_ranks = sps.rankdata(np.abs(d))
        x, ranks = d[d != 0], all_ranks[d != 0]
    r_plus, r_minus = float(ranks[x > 0].sum()), float(ranks[x < 0].sum())
    stat = min(r_plus, r_minus) if alternative == "two-sided" else r_plus
    if zero_method in ("wilcox", "pratt") and len(x) <= EXACT_SIGNED_RANK_LIMIT:
        return stat, _signed_rank_exact(x, ranks, alternative)
    res = sps.wilcoxon(d, zero_method=zero_method, alternative=alternative, method="approx")
    return float(res.statistic), float(res.pvalue)


def wilcoxon(
    a: Scores,
    b: Scores,
    *,
    measure: str | Measure | None = None,
    alternative: Alternative = "two-sided",
    zero_method: ZeroMethod = "wilcox",
) -> WilcoxonResult:
    """Wilcoxon signed-rank test (``scipy.stats.wilcoxon``) — available, never the default.

    Why not the default: it does not test the mean difference. Its null is
    that the differences are symmetric about 0; it is sensitive to the
    *median* / pseudo-median. IR score differences are typically skewed
    (many small wins, a few large losses, or the reverse), and then the
    signed-rank test rejects even when the mean difference — the number
    reported — is exactly 0, inflating false positives (Smucker, Allan &
    Carterette, CIKM 2007, recommend against it for IR; see also
    ``tests/stats/test_calibration.py``, which measures this).

    ``zero_method`` is scipy's: "wilcox" drops zero differences (default),
    "pratt" ranks them and then drops them, "zsplit" splits them. When every
    difference is zero, the p-value is 1.
    """
    pairs = paired_scores(a, b, measure)
    alternative = check_alternative(alternative)
    zero_method = check_choice(zero_method, "zero_method", ("wilcox", "pratt", "zsplit"))  # type: ignore[assignment]
    d = pairs.differences
    nonzero = int(np.count_nonzero(d))
    stat, p = signed_rank(d, alternative, zero_method)
    return WilcoxonResult(
        statistic=stat,
        p_value=p,
        alternative=alternative,
        zero_method=zero_method,
        n=pairs.n,
        nonzero=nonzero,
        measure=pairs.measure,
    )


def sign_test(
    a: Scores,
    b: Scores,
    *,
    measure: str | Measure | None = None,
    alternative: Alternative = "two-sided",
) -> SignTestResult:
    """Sign test: are wins (a > b) and losses equally likely? — available, never the default.

    Ties are dropped and ``wins`` is compared with ``Binomial(wins + losses,
    1/2)`` (``scipy.stats.binomtest``). Why not the default: it ignores how
    large each difference is, so it tests whether a wins on *more queries*,
    not whether it is better *on average*. On skewed IR differences (many
    small wins, a few large losses) it rejects when the mean difference is
    0, and it wastes power when the mean moves through a few large changes.
    With no wins and no losses the p-value is 1.
    """
    pairs = paired_scores(a, b, measure)
    alternative = check_alternative(alternative)
    d = pairs.differences
    wins = int(np.count_nonzero(d > 0))
    losses = int(np.count_nonzero(d < 0))
    trials = wins + losses
    p = 1.0
    if trials:
        p = float(sps.binomtest(wins, trials, 0.5, alternative=alternative).pvalue)
    return SignTestResult(
        p_value=p,
        alternative=alternative,
        wins=wins,
        losses=losses,
        ties=pairs.n - trials,
        n=pairs.n,
        measure=pairs.measure,
    )


#: The sign test under its short name.
sign = sign_test
