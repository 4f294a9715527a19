"""Paired sign-flip randomization test on the mean difference.

Under the null hypothesis that the two systems are exchangeable on every
query, the sign of each per-query difference ``d_i = a_i - b_i`` is equally
likely to be + or −. The test statistic is the mean difference
``T = (1/n) Σ d_i``; its randomization distribution is the set of
``T* = (1/n) Σ s_i d_i`` over sign vectors ``s ∈ {−1, +1}^n``.

How it is computed (and why it is fast and reproducible):

* Queries are sorted by id before anything random happens, so the result
  does not depend on input order.
* Each resample is one row of ``⌈n/64⌉`` 64-bit words drawn from one
  ``numpy.random.default_rng(seed)`` stream, in resample order. A full-range
  64-bit draw consumes exactly one word of the generator, so the k-th
  resample gets the same bits however the work is chunked (``batch``).
* The bits are read 8 at a time. For every group of 8 queries a 256-entry
  table holds the partial sum ``Σ s_k d_k`` for each of the 256 sign
  patterns, so a resample costs ``n/8`` table look-ups and additions instead
  of ``n`` multiplications, and the signs never need to be expanded. The
  additions run in a fixed order per resample, so ``batch`` cannot change
  a single bit of any ``T*``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rankproof.measures import Measure
from rankproof.stats._cost import check_cost, randomization_cost
from rankproof.stats._defaults import DEFAULT_RESAMPLES, DEFAULT_SEED
from rankproof.stats._results import Result
from rankproof.stats._validate import (
    Alternative,
    FloatArray,
    Scores,
    check_alternative,
    check_batch,
    check_int,
    check_seed,
    described,
    paired_scores,
    rows_per_batch,
)

#: Relative tolerance for "at least as extreme": null statistics within
#: ``TIE_RTOL × max(|T|, mean |d|)`` of the observed one count as ties. Sign
#: flips that are equal in exact arithmetic can differ in the last bits
#: once summed in a different order; scipy's ``permutation_test`` uses
#: ``100 × eps × |T|``. Scaling by ``mean |d|`` as well keeps the tolerance
#: meaningful when ``T`` is near 0 through cancellation.
TIE_RTOL = 100 * float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class RandomizationResult(Result):
    """Result of :func:`randomization_test`.

    ``statistic`` is the observed mean difference ``mean(a − b)``.
    ``exact`` is True when all ``2^n`` sign vectors were enumerated; then
    ``resamples == 2^n`` and ``p_value`` is the exact fraction of them at
    least as extreme as the observed one (which is among them). Otherwise
    ``resamples`` random sign vectors were drawn and
    ``p_value = (r + 1) / (resamples + 1)``.
    """

    statistic: float
    p_value: float
    alternative: str
    n: int
    resamples: int
    exact: bool
    seed: int
    count: int
    measure: str | None = None


class SignFlip:
    """The randomization distribution of ``Σ s_i d_i`` for fixed ``d``.

    ``d`` is zero-padded to a multiple of 8 (padding contributes 0 under
    either sign). ``table[k, v]`` is the sum over the 8 queries of group
    ``j = active[k]`` of ``±d`` with the signs given by the bits of ``v`` (bit ``k`` set
    → ``+d[8j + k]``); groups of eight zeros have no row. The table is built term by
    term, so the entry for ``v`` is exactly the negation of the entry for ``255 − v``.
    """

    def __init__(self, d: FloatArray) -> None:
        n = len(d)
        self.n = n
        self.groups = (n + 7) // 8
        self.words = (self.groups + 7) // 8
        padded = np.zeros(self.groups * 8, dtype=np.float64)
        padded[:n] = d
        #: The groups holding a non-zero difference, the only ones `sums` adds; ``table``
        #: has one row per active group, in this order.
        active = np.flatnonzero(np.any(padded.reshape(self.groups, 8) != 0.0, axis=1))
        self.active = [int(j) for j in active]
        blocks = padded.reshape(self.groups, 8)[active]
        patterns = np.arange(256, dtype=np.uint8)[:, None]
        bits = (patterns >> np.arange(8, dtype=np.uint8)) & 1  # (256, 8)
        signs = bits.astype(np.float64) * 2.0 - 1.0
        table = blocks[:, 0, None] * signs[None, :, 0]
        for k in range(1, 8):
            table = table + blocks[:, k, None] * signs[None, :, k]
        self.table = np.ascontiguousarray(table)  # (active groups, 256)
        self.scale = float(np.abs(d).sum())

    def sums(self, pattern_bytes: npt.NDArray[np.uint8]) -> FloatArray:
        """``Σ s_i d_i`` for each row of sign bits, given as ``(groups, rows)`` bytes.

        Groups whose eight differences are all zero are skipped: their entries are ±0,
        and adding ±0 to a sum changes at most the sign of a zero, never a comparison,
        so the sums equal the full ones. Two results of a history that differ on a few
        queries cost a few look-ups per resample instead of ``n/8``.
        """
        if not self.active:
            return np.zeros(pattern_bytes.shape[1], dtype=np.float64)
        table = self.table
        out: FloatArray = table[0].take(pattern_bytes[self.active[0]])
        for k in range(1, len(self.active)):
            out += table[k].take(pattern_bytes[self.active[k]])
        return out

    def observed(self) -> float:
        """``Σ d_i``, computed exactly as the all-plus sign vector would be."""
        ones = np.full((self.groups, 1), 255, dtype=np.uint8)
        return float(self.sums(ones)[0])

    def random_bytes(
        self, rng: np.random.Generator, rows: int
    ) -> npt.NDArray[np.uint8]:
        """``rows`` random sign vectors as ``(groups, rows)`` bytes (stream-stable)."""
        words = rng.integers(
            0, np.iinfo(np.uint64).max, size=(rows, self.words), dtype=np.uint64, endpoint=True
        )
        as_bytes = words.astype("<u8", copy=False).view(np.uint8)[:, : self.groups]
        return np.ascontiguousarray(as_bytes.T)

    def all_bytes(self, start: int, stop: int) -> npt.NDArray[np.uint8]:
        """Sign vectors ``start .. stop-1`` of the full enumeration, as bytes."""
        codes = np.arange(start, stop, dtype=np.uint64).astype("<u8")
        as_bytes = codes.view(np.uint8).reshape(-1, 8)[:, : self.groups]
        return np.ascontiguousarray(as_bytes.T)

    def bytes_per_row(self) -> int:
        """Scratch bytes per resample (random words, two byte layouts, sums, take)."""
        return 8 * self.words + 2 * self.groups + 24


def count_extreme(
    null: FloatArray, observed: float, alternative: str, gamma: float
) -> int:
    """How many null sums are at least as extreme as ``observed`` (ties within ``gamma``)."""
    if alternative == "greater":
        return int(np.count_nonzero(null >= observed - gamma))
    if alternative == "less":
        return int(np.count_nonzero(null <= observed + gamma))
    return int(np.count_nonzero(np.abs(null) >= abs(observed) - gamma))


@dataclass(frozen=True, eq=False)
class SignFlipPlan:
    """One sign-flip test of ``d`` before anything is drawn.

    ``observed`` is ``Σ d_i`` as the all-plus sign vector computes it,
    ``tolerance`` the tie tolerance ``TIE_RTOL × max(|observed|, Σ |d_i|)``,
    ``total`` the number of sign vectors evaluated (``2^n`` when ``exact``,
    else the resamples). `sign_flip_count` (the test) and
    `rankproof.stats.null_distribution` (the picture of it) both start here,
    so they cannot disagree on what was drawn or what counts as a tie.
    """

    flip: SignFlip
    observed: float
    tolerance: float
    total: int
    exact: bool

    def sums(self, seed: int, batch: int | None) -> Iterator[FloatArray]:
        """``Σ s_i d_i`` for every sign vector, in resample order, one chunk at a time.

        Chunks hold at most ``batch`` rows (default: the memory budget); the
        values do not depend on the chunking.
        """
        flip, total, exact = self.flip, self.total, self.exact
        step = rows_per_batch(batch, flip.bytes_per_row(), total)
        rng = np.random.default_rng(seed)
        for start in range(0, total, step):
            stop = min(total, start + step)
            pattern = (flip.all_bytes(start, stop) if exact
                       else flip.random_bytes(rng, stop - start))
            yield flip.sums(pattern)


def sign_flip_plan(d: FloatArray, resamples: int) -> SignFlipPlan:
    """The `SignFlipPlan` of the sign-flip test of ``d`` (already ordered)."""
    flip = SignFlip(d)
    observed = flip.observed()
    gamma = TIE_RTOL * max(abs(observed), flip.scale)
    n = len(d)
    exact = n < 63 and 2**n <= resamples
    total = 2**n if exact else resamples
    return SignFlipPlan(flip, observed, gamma, total, exact)


def sign_flip_p(count: int, total: int, exact: bool) -> float:
    """The p-value from ``count`` extreme sign vectors of ``total``: exact, or ``(r+1)/(B+1)``."""
    return min(1.0, count / total if exact else (count + 1) / (total + 1))


def sign_flip_count(
    d: FloatArray,
    alternative: str,
    resamples: int,
    seed: int,
    batch: int | None,
) -> tuple[int, int, bool]:
    """``(count, evaluated, exact)`` for the sign-flip test of ``d`` (already ordered)."""
    plan = sign_flip_plan(d, resamples)
    count = 0
    for sums in plan.sums(seed, batch):
        count += count_extreme(sums, plan.observed, alternative, plan.tolerance)
    return count, plan.total, plan.exact


def randomization_test(
    a: Scores,
    b: Scores,
    *,
    measure: str | Measure | None = None,
    alternative: Alternative = "two-sided",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    batch: int | None = None,
) -> RandomizationResult:
    """Paired sign-flip randomization test of the mean difference ``mean(a − b)``.

    The null hypothesis is that, on every query, the two scores are
    exchangeable — so each difference is as likely to be ``+d`` as ``−d``.
    This is the default test of rankproof because it tests the quantity
    reported — the mean — without assuming normality (Smucker, Allan &
    Carterette, CIKM 2007, found it, the bootstrap and the t-test in close
    agreement on TREC data, and recommended against Wilcoxon and sign tests).
    It does assume the differences are symmetric about 0 under the null; a
    null in which the mean difference is 0 but the differences are skewed
    is only approximately covered (the test is then asymptotically valid,
    since the randomization variance ``Σ d_i²/n²`` estimates the variance of
    the mean).

    ``alternative``: "two-sided" counts ``|T*| ≥ |T|`` (for the symmetric
    sign-flip distribution this equals scipy's ``2 × min(one-sided)`` when
    enumeration is exact); "greater" counts ``T* ≥ T`` (evidence that a is
    better); "less" counts ``T* ≤ T``.

    If ``2^n ≤ resamples`` every sign vector is enumerated and the p-value
    is the exact fraction at least as extreme (the observed vector
    included). Otherwise ``resamples`` random sign vectors are drawn from
    ``numpy.random.default_rng(seed)`` and ``p = (r + 1)/(resamples + 1)``,
    which never reports 0 and keeps the test valid (Phipson & Smyth 2010).

    ``batch`` caps how many resamples are processed at once (default: as
    many as fit in about 48 MiB of scratch memory). It changes only memory
    use and speed, never the result; neither does the order of the queries.

    >>> r = randomization_test({"q1": 0.5, "q2": 0.7, "q3": 0.2},
    ...                        {"q1": 0.4, "q2": 0.5, "q3": 0.2})
    >>> r.exact, r.resamples, r.p_value
    (True, 8, 0.5)
    """
    pairs = paired_scores(a, b, measure)
    alternative = check_alternative(alternative)
    resamples = check_int(resamples, "resamples", 1)
    seed = check_seed(seed)
    batch = check_batch(batch)
    check_cost(randomization_cost(pairs.n, resamples, batch),
               described("randomization_test", resamples, batch, pairs.n),
               knobs="resamples (or batch)", field="resamples")
    d = pairs.differences
    count, total, exact = sign_flip_count(d, alternative, resamples, seed, batch)
    return RandomizationResult(
        statistic=float(d.mean()),
        p_value=sign_flip_p(count, total, exact),
        alternative=alternative,
        n=pairs.n,
        resamples=total,
        exact=exact,
        seed=seed,
        count=count,
        measure=pairs.measure,
    )
