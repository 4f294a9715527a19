"""Intervals built from the test they sit beside.

A comparison that prints an interval next to a verdict must not let them
disagree: a reader who sees ``[+0.020, +0.243]`` next to "no detectable
difference" cannot tell which to believe. The way to make disagreement
impossible is to build the interval *from the test*: the interval at level
``1 − α`` is the set of shifts ``δ`` that the test, applied to the shifted
differences ``d − δ``, does not reject at ``α``. Zero is then outside the
interval exactly when the test rejects "no difference" at ``α``.

* ``"randomization"`` (the default test's interval): the sign-flip test of
  ``d − δ`` with the *same* sign vectors (same seed, same resamples) for
  every ``δ``. For one sign vector ``s`` the resample counts as "at least
  as extreme" when ``|Σ s_i (d_i − δ)| ≥ |Σ (d_i − δ)|``; in ``δ`` that is
  a concave quadratic, so it holds on one closed interval
  ``[lo_s, hi_s]`` whose ends solve two linear equations, and it always
  holds at the observed mean. Counting the resamples whose interval
  reaches ``δ`` is therefore non-increasing as ``δ`` moves away from the
  mean on either side, the accepted set is one interval, and its ends are
  order statistics of the ``lo_s`` and ``hi_s`` — found in one streaming
  pass, whatever the batch size.
* ``"t"``: the t interval (the t-test inverted analytically).
* ``"percentile"`` / ``"studentized"``: the bootstrap intervals of
  `bootstrap_ci` (the bootstrap's own verdict is this interval's).
* ``"wilcoxon"`` / ``"sign"``: the signed-rank and sign tests inverted
  over shifts (by bisection on the test's own p-value). They test a median
  (Wilcoxon: the pseudo-median, whose estimate is Hodges–Lehmann's; sign:
  the median), so their interval is for that, and is labelled so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.stats as sps

from rankproof._errors import InputError
from rankproof.measures import Measure
from rankproof.stats._asymptotic import normal_bounds
from rankproof.stats._bootstrap import bootstrap_means
from rankproof.stats._cost import Cost, bootstrap_cost, check_cost, randomization_cost
from rankproof.stats._defaults import DEFAULT_CONFIDENCE_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED
from rankproof.stats._parametric import signed_rank, t_interval
from rankproof.stats._randomization import SignFlip
from rankproof.stats._results import Result
from rankproof.stats._validate import (
    Alternative,
    FloatArray,
    Scores,
    check_alternative,
    check_batch,
    check_choice,
    check_int,
    check_probability,
    check_seed,
    described,
    paired_scores,
    rows_per_batch,
)

IntervalMethod = Literal["randomization", "t", "percentile", "studentized", "wilcoxon", "sign"]
INTERVAL_METHODS: tuple[str, ...] = (
    "randomization", "t", "percentile", "studentized", "wilcoxon", "sign")

#: What each construction is called in tables and reports, and what it estimates.
INTERVAL_LABELS: dict[str, str] = {
    "randomization": "inverted sign-flip randomization test (mean difference)",
    "t": "t interval (mean difference)",
    "percentile": "percentile bootstrap (mean difference)",
    "studentized": "studentized bootstrap (mean difference)",
    "wilcoxon": "inverted Wilcoxon signed-rank test (Hodges-Lehmann pseudo-median difference)",
    "sign": "inverted sign test (median difference)",
    "tukey": "randomized Tukey HSD simultaneous interval (mean difference)",
}

#: Bisection steps for the rank tests' ends: 2^-64 of the search range, past float precision.
_BISECT_STEPS = 64
#: Above this many queries the Hodges–Lehmann estimate is found by bisection, not by
#: sorting all n(n+1)/2 Walsh averages.
_WALSH_LIMIT = 2000


@dataclass(frozen=True)
class PairedInterval(Result):
    """An interval for the difference between two paired systems, built from a test.

    ``low``/``high`` may be infinite: a one-sided interval, or a level the
    test cannot reach with this many queries or resamples (no shift can then
    be rejected). ``estimate`` is what the interval is centred on: the mean
    difference, or for ``"wilcoxon"``/``"sign"`` the Hodges–Lehmann
    pseudo-median / the median difference. ``label`` says which.
    """

    low: float
    high: float
    estimate: float
    confidence_level: float
    method: str
    alternative: str
    n: int
    resamples: int | None
    seed: int | None
    measure: str | None = None

    @property
    def label(self) -> str:
        """The construction in words, e.g. "inverted sign-flip randomization test …"."""
        return INTERVAL_LABELS[self.method]

    def excludes(self, value: float = 0.0) -> bool:
        """True when ``value`` lies outside the closed interval ``[low, high]``."""
        return bool(value < self.low or value > self.high)


def accept_count(p_of_count: Callable[[int], float], total: int, alpha: float) -> int:
    """The fewest "at least as extreme" resamples for which ``p > alpha`` (0 … total).

    Found by the same float formula the test reports its p-value with, so
    the interval's ends and the verdict round the same way.
    """
    lo, hi = 0, total
    if p_of_count(0) > alpha:
        return 0
    while lo < hi:  # smallest c with p(c) > alpha; p is increasing in c
        mid = (lo + hi) // 2
        if p_of_count(mid) > alpha:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _keep(kept: FloatArray, new: FloatArray, m: int, largest: bool) -> FloatArray:
    """The ``m`` smallest (or largest) of ``kept`` and ``new`` together."""
    both = np.concatenate([kept, new])
    if len(both) <= m:
        return both
    if largest:
        return np.partition(both, len(both) - m)[len(both) - m:]
    return np.partition(both, m - 1)[:m]


def randomization_bounds(
    d: FloatArray, alpha: float, alternative: str, resamples: int, seed: int,
    batch: int | None,
) -> tuple[float, float]:
    """Ends of the inverted sign-flip test of ``d`` at level ``1 − alpha`` (see module doc).

    Uses exactly the sign vectors `randomization_test` draws for the same
    ``seed`` and ``resamples`` (all ``2^n`` when they fit), so the interval
    excludes 0 exactly when that test rejects at ``alpha`` (up to the test's
    tie tolerance, which only ever makes the test more cautious).
    """
    flip, ones = SignFlip(d), SignFlip(np.ones(len(d)))
    n = float(len(d))
    observed = flip.observed()
    exact = len(d) < 63 and 2 ** len(d) <= resamples
    total = 2 ** len(d) if exact else resamples
    m = accept_count((lambda c: c / total) if exact else (lambda c: (c + 1) / (total + 1)),
                     total, alpha)
    if m == 0:
        return -math.inf, math.inf
    step = rows_per_batch(batch, flip.bytes_per_row() + 64, total)
    rng = np.random.default_rng(seed)
    low_kept = np.empty(0)
    high_kept = np.empty(0)
    for start in range(0, total, step):
        stop = min(total, start + step)
        pattern = flip.all_bytes(start, stop) if exact else flip.random_bytes(rng, stop - start)
        lo, hi = shift_ends(flip.sums(pattern), ones.sums(pattern), n, observed, alternative)
        if lo is not None:
            low_kept = _keep(low_kept, lo, m, largest=False)
        if hi is not None:
            high_kept = _keep(high_kept, hi, m, largest=True)
    low = float(low_kept.max()) if alternative != "less" else -math.inf
    high = float(high_kept.min()) if alternative != "greater" else math.inf
    return low, high


def shift_ends(
    a: FloatArray, c: FloatArray, n: float, observed: float, alternative: str
) -> tuple[FloatArray | None, FloatArray | None]:
    """Per resample, the shifts ``δ`` at which it counts as "at least as extreme".

    ``a`` holds ``Σ s_i d_i`` and ``c`` holds ``Σ s_i`` of each resample's signs, ``n``
    the number of differences and ``observed`` ``Σ d_i``. Two-sided, resample ``s``
    counts on ``[lo_s, hi_s]``; "greater" from ``lo_s`` up, "less" up to ``hi_s`` (the
    other end is None). The interval's ends are order statistics of these.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        # A resample counts at δ while |a − δc| ≥ |observed − nδ|; its ends:
        r1 = np.where(c < n, (observed - a) / (n - c), -math.inf)
        r2 = np.where(c > -n, (a + observed) / (c + n), math.inf)
    if alternative == "two-sided":
        lo, hi = np.minimum(r1, r2), np.maximum(r1, r2)
        always = (c >= n) | (c <= -n)  # all signs equal: the statistic only changes sign
        lo[always], hi[always] = -math.inf, math.inf
        return lo, hi
    if alternative == "greater":  # counts while δ ≥ r1
        return r1, None
    return None, np.where(c < n, r1, math.inf)  # "less": counts while δ ≤ r1


def percentile_bounds(
    d: FloatArray, alpha: float, alternative: str, resamples: int, seed: int,
    batch: int | None, studentized: bool = False,
) -> tuple[float, float]:
    """Ends of the percentile (or studentized) bootstrap interval at level ``1 − alpha``."""
    means, sds = bootstrap_means(d, resamples, seed, batch, studentized)
    tails = {"two-sided": (alpha / 2.0, 1.0 - alpha / 2.0),
             "greater": (alpha, 1.0), "less": (0.0, 1.0 - alpha)}[alternative]
    if sds is None:
        low, high = (float(q) for q in np.quantile(means, tails))
    else:
        n = len(d)
        estimate = float(d.mean())
        se = float(d.std(ddof=1)) / math.sqrt(n)
        ok = sds > 0
        if not ok.any():
            low = high = estimate
        else:
            tstar = (means[ok] - estimate) / (sds[ok] / math.sqrt(n))
            q_lo, q_hi = np.quantile(tstar, tails)
            low, high = estimate - float(q_hi) * se, estimate - float(q_lo) * se
    if alternative == "greater":
        high = math.inf
    elif alternative == "less":
        low = -math.inf
    return low, high


def _rank_p(test: str, alternative: str) -> Callable[[FloatArray], float]:
    """The rank test's p-value of "the differences are centred on 0"."""
    def wilcoxon_p(x: FloatArray) -> float:
        return signed_rank(x, alternative, "wilcox")[1]

    def sign_p(x: FloatArray) -> float:
        wins, losses = int(np.count_nonzero(x > 0)), int(np.count_nonzero(x < 0))
        if not wins + losses:
            return 1.0
        return float(sps.binomtest(wins, wins + losses, 0.5, alternative=alternative).pvalue)

    return wilcoxon_p if test == "wilcoxon" else sign_p


def rank_estimate(d: FloatArray, test: str) -> float:
    """Hodges–Lehmann pseudo-median (``"wilcoxon"``) or the median (``"sign"``) of ``d``."""
    if test == "sign":
        return float(np.median(d))
    n = len(d)
    if n <= _WALSH_LIMIT:
        i, j = np.triu_indices(n)
        return float(np.median((d[i] + d[j]) / 2.0))
    # Beyond the limit: the shift at which the signed ranks balance (monotone in δ).
    def excess(delta: float) -> float:
        x = d - delta
        x = x[x != 0]
        ranks = sps.rankdata(np.abs(x))
        return float(ranks[x > 0].sum() - ranks[x < 0].sum())

    lo, hi = float(d.min()), float(d.max())
    for _ in range(_BISECT_STEPS):
        mid = (lo + hi) / 2.0
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def rank_bounds(
    d: FloatArray, test: str, alpha: float, alternative: str
) -> tuple[float, float, float]:
    """``(low, high, estimate)``: the rank test inverted over shifts by bisection.

    From the estimate (where the test does not reject) towards a point it
    does reject: zero itself when the test rejects zero (so the end falls
    between the estimate and zero, and zero is excluded by construction),
    else a shift beyond every difference. With too few queries for any
    shift to be rejected, that end is infinite.
    """
    p_of = _rank_p(test, alternative)
    estimate = rank_estimate(d, test)
    spread = float(np.abs(d).max()) * 2.0 + 1.0

    def accepted(delta: float) -> bool:
        return p_of(d - delta) > alpha

    def end(direction: float) -> float:
        if not accepted(estimate):
            return estimate
        zero_rejected = (0.0 - estimate) * direction > 0 and not accepted(0.0)
        far = 0.0 if zero_rejected else estimate + direction * spread
        if accepted(far):
            return direction * math.inf
        inside, outside = estimate, far
        for _ in range(_BISECT_STEPS):
            mid = (inside + outside) / 2.0
            if mid in (inside, outside):
                break
            if accepted(mid):
                inside = mid
            else:
                outside = mid
        return inside

    low = end(-1.0) if alternative != "less" else -math.inf
    high = end(1.0) if alternative != "greater" else math.inf
    return low, high, estimate


def interval_bounds(
    d: FloatArray, method: str, alpha: float, alternative: str, resamples: int, seed: int,
    batch: int | None,
) -> tuple[float, float, float]:
    """``(low, high, estimate)`` of ``method`` at level ``1 − alpha`` for differences ``d``."""
    if method in ("wilcoxon", "sign"):
        return rank_bounds(d, method, alpha, alternative)
    mean = float(d.mean())
    if method == "randomization":
        low, high = randomization_bounds(d, alpha, alternative, resamples, seed, batch)
    elif method == "t":
        _, _, _, low, high = t_interval(d, alternative, 1.0 - alpha)
    else:
        low, high = percentile_bounds(d, alpha, alternative, resamples, seed, batch,
                                      studentized=method == "studentized")
    return float(low), float(high), mean


def interval_cost(n: int, method: str, resamples: int, batch: int | None) -> Cost:
    """What `paired_interval` costs (a randomization pass, a bootstrap, or a few sorts)."""
    if method == "randomization":
        return randomization_cost(n, resamples, batch)
    if method in ("percentile", "studentized"):
        return bootstrap_cost(n, resamples, batch, studentized=method == "studentized")
    steps = 2 * _BISECT_STEPS if method in ("wilcoxon", "sign") else 1
    return Cost(steps * n * max(1.0, math.log2(max(n, 2))), 16.0 * n)


def paired_interval(
    a: Scores,
    b: Scores,
    method: IntervalMethod = "randomization",
    *,
    measure: str | Measure | None = None,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    alternative: Alternative = "two-sided",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    batch: int | None = None,
    procedure: Literal["resample", "normal"] = "resample",
) -> PairedInterval:
    """An interval for ``a − b`` that agrees with the paired test of the same name.

    ``method`` names the test to invert (see the module docstring):
    "randomization" (default, the default test's interval), "t",
    "percentile"/"studentized" (bootstrap), "wilcoxon", "sign". With the
    same ``resamples`` and ``seed`` as the test, the interval at
    ``confidence_level`` excludes 0 exactly when the test's p-value is at
    most ``1 − confidence_level``. ``alternative="greater"`` gives the
    one-sided lower bound ``[low, ∞)`` (what a non-inferiority check
    needs), ``"less"`` the upper bound. ``procedure="normal"`` inverts the normal limit of
    the randomization test instead (method "randomization" only; ``resamples`` is then 0
    in the result), as `paired_test` does with the same option.

    >>> r = paired_interval([0.5, 0.7, 0.2, 0.9], [0.4, 0.5, 0.2, 0.6], confidence_level=0.8)
    >>> round(r.low, 4), round(r.high, 4)
    (0.0, 0.3)
    """
    pairs = paired_scores(a, b, measure)
    method = check_choice(method, "method", INTERVAL_METHODS)  # type: ignore[assignment]
    alternative = check_alternative(alternative)
    confidence_level = check_probability(confidence_level, "confidence_level")
    resamples = check_int(resamples, "resamples", 1)
    seed = check_seed(seed)
    batch = check_batch(batch)
    procedure = check_choice(procedure, "procedure", ("resample", "normal"))  # type: ignore[assignment]
    if pairs.n < 2 and method in ("t", "studentized"):
        raise InputError(f"the {method} interval needs at least 2 queries; got {pairs.n}")
    if procedure == "normal":
        if method != "randomization":
            raise InputError(f"procedure='normal' inverts the randomization test; got "
                             f"method={method!r}", field="procedure")
        d = pairs.differences
        nlow, nhigh = normal_bounds(d, 1.0 - confidence_level, alternative)
        return PairedInterval(
            low=nlow, high=nhigh, estimate=float(d.mean()), confidence_level=confidence_level,
            method=method, alternative=alternative, n=pairs.n, resamples=0, seed=None,
            measure=pairs.measure)
    check_cost(interval_cost(pairs.n, method, resamples, batch),
               described(f"paired_interval ({method})", resamples, batch, pairs.n),
               knobs="resamples (or batch)", field="resamples")
    low, high, estimate = interval_bounds(pairs.differences, method, 1.0 - confidence_level,
                                          alternative, resamples, seed, batch)
    random = method in ("randomization", "percentile", "studentized")
    return PairedInterval(
        low=low, high=high, estimate=estimate, confidence_level=confidence_level,
        method=method, alternative=alternative, n=pairs.n,
        resamples=resamples if random else None, seed=seed if random else None,
        measure=pairs.measure)
