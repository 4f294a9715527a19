"""The sign-flip randomization test by its normal limit, with a proved error bound.

With many queries, drawing 10,000 sign vectors of a million differences is 10^10
operations, and what it estimates is known in closed form to high accuracy: under the
randomization null, ``T* = Σ s_i d_i`` is a sum of independent, symmetric, bounded terms
with mean 0 and variance ``V = Σ d_i²``. By the Berry–Esseen inequality for independent,
non-identically distributed terms (Shevtsova 2010, constant ``C₀ ≤ 0.5600``),

    sup_x |P(T* ≤ x √V) − Φ(x)| ≤ C₀ · Σ |d_i|³ / V^{3/2}  =: ε₁,

so the normal p-value ``2 Φ(−|T| / √V)`` differs from the *exact* randomization p-value
(the one over all ``2^n`` sign vectors, which the Monte Carlo p estimates) by at most
``2 ε₁`` two-sided, ``ε₁`` one-sided. `sign_flip_normal` returns both numbers; the
comparison engine uses the normal procedure only where that bound proves the verdict
(see `rankproof.comparison` and docs/scaling.md), and records it in the row.

The interval is the same normal test inverted over shifts ``δ`` of the differences:
with ``m = mean(d)`` and ``v = mean(d²) − m²`` the test of ``d − δ`` accepts exactly
while ``|m − δ| < z √(v / (n − z²))`` (``z`` the normal quantile of the level), so the
interval excludes 0 exactly when the normal p-value is at most the level.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from rankproof.stats._validate import FloatArray

#: Shevtsova (2010)'s Berry–Esseen constant for independent, non-identically distributed
#: summands: ``sup |F_n − Φ| ≤ BERRY_ESSEEN_C · Σ E|X_i|³ / (Σ σ_i²)^{3/2}``.
BERRY_ESSEEN_C = 0.56

#: Below this many queries the comparison engine always resamples (a Monte Carlo row
#: costs under a few seconds there, and every figure stays what it always was).
ASYMPTOTIC_MIN_QUERIES = 50_000

#: What `rankproof.stats.PairedResult.procedure` says for each way of computing a p-value.
PROCEDURES: tuple[str, ...] = ("monte-carlo", "exact", "normal")


def sign_flip_normal(d: FloatArray, alternative: str) -> tuple[float, float]:
    """``(p, bound)``: the normal-limit p-value of the sign-flip test of ``d`` and the
    Berry–Esseen bound on its distance from the exact randomization p-value.

    All differences zero: every sign vector gives the observed 0, so ``p = 1`` exactly.
    """
    v = float(np.dot(d, d))
    if v == 0.0:
        return 1.0, 0.0
    t = float(d.sum())
    third = float(np.sum(np.abs(d) ** 3))
    one_tail = min(1.0, BERRY_ESSEEN_C * third / v ** 1.5)
    z = t / math.sqrt(v)
    if alternative == "greater":
        return float(0.5 * math.erfc(z / math.sqrt(2.0))), one_tail
    if alternative == "less":
        return float(0.5 * math.erfc(-z / math.sqrt(2.0))), one_tail
    return float(math.erfc(abs(z) / math.sqrt(2.0))), min(1.0, 2.0 * one_tail)


def normal_bounds(d: FloatArray, alpha: float, alternative: str) -> tuple[float, float]:
    """Ends of the normal sign-flip test of ``d`` inverted at level ``1 − alpha``."""
    n = len(d)
    m = float(d.mean())
    v = max(0.0, float(np.dot(d, d)) / n - m * m)
    z = float(ndtri(1.0 - (alpha / 2.0 if alternative == "two-sided" else alpha)))
    if z <= 0.0 or n <= z * z:
        return -math.inf, math.inf
    half = z * math.sqrt(v / (n - z * z))
    low = m - half if alternative != "less" else -math.inf
    high = m + half if alternative != "greater" else math.inf
    return low, high


def decided(p: float, bound: float, low_level: float, high_level: float) -> bool:
    """True when every p-value within ``bound`` of ``p`` is on the same side of every
    level in ``[low_level, high_level]``: at most the lowest, or above the highest."""
    return p + bound <= low_level or p - bound > high_level


def choose_procedure(d: FloatArray, test: str, low_level: float, high_level: float,
                     alternative: str = "two-sided") -> str:
    """"normal" where the normal limit provably gives the exact randomization test's
    verdict at every level in ``[low_level, high_level]``, else "resample".

    Only for the randomization test on at least `ASYMPTOTIC_MIN_QUERIES` differences
    (``d``, in query order): the normal p-value ``p`` and its Berry–Esseen bound ``ε``
    (`sign_flip_normal`) must put every p-value within ``ε`` of ``p`` on one side of the
    levels (`decided`). A family's corrections test each row at a level between
    ``α/m`` and ``α`` (Holm, Benjamini–Hochberg, Bonferroni, none), so the comparison
    engine passes those two.

    >>> import numpy as np
    >>> choose_procedure(np.tile([0.2, -0.1, 0.3, 0.0], 25_000), "randomization", 0.025, 0.05)
    'normal'
    >>> choose_procedure(np.array([0.2, -0.1, 0.3]), "randomization", 0.025, 0.05)
    'resample'
    """
    if test != "randomization" or len(d) < ASYMPTOTIC_MIN_QUERIES:
        return "resample"
    p, bound = sign_flip_normal(d, alternative)
    return "normal" if decided(p, bound, low_level, high_level) else "resample"
