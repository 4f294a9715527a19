"""Many sign-flip randomization tests from one pass over shared sign vectors.

A family of paired comparisons (the steps of a results-history trend, the rows of a
comparison) tests many difference vectors with the same ``seed`` and ``resamples``.
`randomization_test` and the inverted interval of `paired_interval` each build
``numpy.random.default_rng(seed)`` per call, so on ``n`` differences every one of those
calls draws *the same* sign vectors: each test is a valid randomization test on its own,
and reusing one draw for all of them changes no test. `sign_flip_family` does exactly
that: the sign vectors of each query count are drawn once per pass, the sums
``Σ s_i`` they share are computed once, and each vector's sums ``Σ s_i d_i`` once, for
the p-value and for the interval at every level at the same time.

Nothing random changes, so every count — hence every p-value — and every interval end is
the number the single-test functions compute for the same ``seed`` and ``resamples``
(a test pins this). The interval at level ``1 − α`` is the ``m(α)``-th smallest lower
end (and largest upper end) of the resamples (`rankproof.stats._interval`); ``m`` grows
with ``α``, so keeping the ``m(max_level)`` extreme ends of each vector is enough for
every level up to ``max_level``, which a correction only lowers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rankproof._errors import InputError
from rankproof.stats._defaults import DEFAULT_RESAMPLES, DEFAULT_SEED
from rankproof.stats._interval import _keep, accept_count, shift_ends
from rankproof.stats._progress import ProgressCallback, report
from rankproof.stats._randomization import (
    SignFlip,
    SignFlipPlan,
    count_extreme,
    sign_flip_p,
    sign_flip_plan,
)
from rankproof.stats._validate import (
    MEMORY_BUDGET,
    FloatArray,
    check_alternative,
    check_batch,
    check_int,
    check_probability,
    check_seed,
    rows_per_batch,
)

__all__ = ["SignFlipFamily", "sign_flip_family"]


@dataclass(frozen=True, eq=False)
class SignFlipFamily:
    """The sign-flip tests of a family of difference vectors, in the order given.

    ``counts[i]`` resamples of ``totals[i]`` were at least as extreme as vector ``i``'s
    observed sum (``exact[i]``: all ``2^n`` sign vectors were enumerated); `p_value` is
    the randomization test's p-value, `bounds` the inverted test's interval at any level
    up to ``max_level``.
    """

    alternative: str
    resamples: int
    seed: int
    max_level: float
    counts: tuple[int, ...]
    totals: tuple[int, ...]
    exact: tuple[bool, ...]
    lows: tuple[FloatArray, ...]
    """Per vector, its smallest lower ends, ascending (empty for "less")."""
    highs: tuple[FloatArray, ...]
    """Per vector, its largest upper ends, descending (empty for "greater")."""

    def __len__(self) -> int:
        return len(self.counts)

    def p_value(self, i: int) -> float:
        """The p-value `randomization_test` reports for vector ``i``."""
        return sign_flip_p(self.counts[i], self.totals[i], self.exact[i])

    def bounds(self, i: int, level: float) -> tuple[float, float]:
        """The ends `paired_interval` reports for vector ``i`` at ``1 − level``."""
        level = check_probability(level, "level")
        if level > self.max_level:
            raise InputError(f"level must be at most the family's max_level "
                             f"{self.max_level}, got {level}", field="level")
        total, exact = self.totals[i], self.exact[i]
        m = _accepting(total, exact, level)
        if m == 0:
            return -math.inf, math.inf
        low = float(self.lows[i][m - 1]) if self.alternative != "less" else -math.inf
        high = float(self.highs[i][m - 1]) if self.alternative != "greater" else math.inf
        return low, high


def _accepting(total: int, exact: bool, level: float) -> int:
    """How many extreme ends the interval at ``1 − level`` reads (as `accept_count`)."""
    return accept_count((lambda c: c / total) if exact else (lambda c: (c + 1) / (total + 1)),
                        total, level)


def sign_flip_family(
    ds: Sequence[FloatArray],
    *,
    alternative: str = "two-sided",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    batch: int | None = None,
    max_level: float = 0.0,
    progress: ProgressCallback | None = None,
) -> SignFlipFamily:
    """The sign-flip test of each difference vector of ``ds`` (each already in query
    order), with ``resamples`` sign vectors from ``seed``, in one pass per query count.

    ``max_level`` > 0 also keeps what the inverted test's intervals need at every level
    up to it (`SignFlipFamily.bounds`); 0 keeps nothing but the counts. ``batch`` caps
    the resamples processed at once and changes only memory use and speed. Vectors are
    processed a few at a time, so the lookup tables held at once stay within the memory
    budget however many there are. ``progress`` is told the row-resamples done of the
    ``len(ds) × resamples`` planned after each batch (`rankproof.stats._progress`; a
    vector whose ``2^n`` sign vectors are fewer is enumerated and counts as ``resamples``).
    """
    alternative = check_alternative(alternative)
    resamples = check_int(resamples, "resamples", 1)
    seed = check_seed(seed)
    batch = check_batch(batch)
    if max_level:
        max_level = check_probability(max_level, "max_level")
    vectors = [np.asarray(d, dtype=np.float64) for d in ds]
    counts = [0] * len(vectors)
    totals = [0] * len(vectors)
    exact = [False] * len(vectors)
    lows: list[FloatArray] = [np.empty(0)] * len(vectors)
    highs: list[FloatArray] = [np.empty(0)] * len(vectors)
    planned = len(vectors) * resamples
    done = [0]

    def advance(rows: int) -> None:
        done[0] += rows
        report(progress, done[0], planned)

    by_size: dict[int, list[int]] = {}
    for i, d in enumerate(vectors):
        by_size.setdefault(len(d), []).append(i)
    for n, members in by_size.items():
        block: list[tuple[int, SignFlipPlan]] = []
        held = 0
        for position, i in enumerate(members):
            plan = sign_flip_plan(vectors[i], resamples)
            block.append((i, plan))
            held += plan.flip.table.nbytes
            if position + 1 < len(members) and held < MEMORY_BUDGET:
                continue  # build the next vector's table into this pass too
            # One pass for the block: the lookup tables held at once stay within budget.
            total, is_exact = plan.total, plan.exact
            keep = _accepting(total, is_exact, max_level) if max_level else 0
            found = _one_pass([b for _, b in block], n, alternative, seed, batch, keep,
                              advance if progress is not None else None, resamples)
            for (j, _), (count, low, high) in zip(block, found, strict=True):
                counts[j], totals[j], exact[j] = count, total, is_exact
                lows[j], highs[j] = low, high
            block, held = [], 0
    return SignFlipFamily(alternative=alternative, resamples=resamples, seed=seed,
                          max_level=max_level, counts=tuple(counts), totals=tuple(totals),
                          exact=tuple(exact), lows=tuple(lows), highs=tuple(highs))


def _one_pass(plans: Sequence[SignFlipPlan], n: int, alternative: str, seed: int,
              batch: int | None, keep: int, advance: Callable[[int], None] | None = None,
              resamples: int = 0) -> list[tuple[int, FloatArray, FloatArray]]:
    """Counts and kept interval ends of vectors of one length, from one draw of signs;
    ``advance`` is given the row-resamples each batch completes (``resamples`` per vector
    over the pass, however many sign vectors the pass draws or enumerates)."""
    flip = plans[0].flip
    total, exact = plans[0].total, plans[0].exact
    ones = SignFlip(np.ones(n)) if keep else None
    step = rows_per_batch(batch, flip.bytes_per_row() + 64, total)
    rng = np.random.default_rng(seed)
    counts = [0] * len(plans)
    lows: list[FloatArray] = [np.empty(0)] * len(plans)
    highs: list[FloatArray] = [np.empty(0)] * len(plans)
    for start in range(0, total, step):
        stop = min(total, start + step)
        pattern = flip.all_bytes(start, stop) if exact else flip.random_bytes(rng, stop - start)
        c = ones.sums(pattern) if ones is not None else None
        for k, plan in enumerate(plans):
            a = plan.flip.sums(pattern)
            counts[k] += count_extreme(a, plan.observed, alternative, plan.tolerance)
            if c is None:
                continue
            lo, hi = shift_ends(a, c, float(n), plan.observed, alternative)
            if lo is not None:
                lows[k] = _keep(lows[k], lo, keep, largest=False)
            if hi is not None:
                highs[k] = _keep(highs[k], hi, keep, largest=True)
        if advance is not None:
            weight = resamples * len(plans)
            advance(weight * stop // total - weight * start // total)
    return [(count, np.sort(low), -np.sort(-high))
            for count, low, high in zip(counts, lows, highs, strict=True)]
