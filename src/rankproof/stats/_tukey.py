"""Randomized Tukey HSD: all-pairs comparison of several systems in one test."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from rankproof._errors import InputError, PairingError
from rankproof.measures import Measure, PerQuery
from rankproof.stats._cost import check_cost, tukey_cost
from rankproof.stats._defaults import DEFAULT_ALPHA, DEFAULT_RESAMPLES, DEFAULT_SEED
from rankproof.stats._interval import accept_count
from rankproof.stats._progress import ProgressCallback, report
from rankproof.stats._randomization import TIE_RTOL
from rankproof.stats._results import Result
from rankproof.stats._validate import (
    FloatArray,
    _check_mapping,
    _shown,
    check_batch,
    check_int,
    check_probability,
    check_seed,
    described,
    rows_per_batch,
)


@dataclass(frozen=True)
class PairComparison(Result):
    """One pair of a Tukey HSD: ``difference = mean(a) − mean(b)`` and its adjusted p-value."""

    a: str
    b: str
    difference: float
    p_value: float


@dataclass(frozen=True)
class TukeyHSDResult(Result):
    """Result of :func:`tukey_hsd_randomized`.

    ``systems`` are sorted by name, ``means`` aligned with them;
    ``comparisons`` holds every pair ``(systems[i], systems[j])``, ``i < j``.
    The p-values are already adjusted for the all-pairs family (they
    control the family-wise error rate); do not correct them again.

    ``critical_difference`` is the half-width of the simultaneous
    ``1 − alpha`` intervals ``difference ± critical_difference`` (in the
    measure's units): the smallest range of means the resamples make rare
    enough, so a pair's interval excludes 0 exactly when its p-value is at
    most ``alpha``. It is infinite when no pair can reach ``alpha`` with
    this many resamples.
    """

    systems: tuple[str, ...]
    means: tuple[float, ...]
    comparisons: tuple[PairComparison, ...]
    n: int
    resamples: int
    seed: int
    measure: str | None = None
    alpha: float = DEFAULT_ALPHA
    critical_difference: float = math.inf

    def interval(self, a: str, b: str) -> tuple[float, float]:
        """The simultaneous ``1 − alpha`` interval for ``mean(a) − mean(b)``."""
        means = dict(zip(self.systems, self.means, strict=True))
        if a not in means or b not in means or a == b:
            raise KeyError(f"no comparison of {a!r} with {b!r} "
                           f"(systems: {', '.join(self.systems)})")
        diff = means[a] - means[b]
        return diff - self.critical_difference, diff + self.critical_difference

    def p_value(self, a: str, b: str) -> float:
        """The adjusted p-value of the pair ``{a, b}`` (either order)."""
        for c in self.comparisons:
            if {c.a, c.b} == {a, b} and a != b:
                return c.p_value
        raise KeyError(f"no comparison of {a!r} with {b!r} (systems: {', '.join(self.systems)})")


def _score_matrix(
    scores: Mapping[str, Mapping[str, float] | PerQuery], measure: str | Measure | None
) -> tuple[tuple[str, ...], tuple[str, ...], FloatArray]:
    if not isinstance(scores, Mapping):
        raise InputError(
            f"scores must be a mapping {{system: {{qid: score}}}}; got {type(scores).__name__}"
        )
    if len(scores) < 2:
        raise InputError(f"need at least 2 systems to compare; got {len(scores)}")
    systems = tuple(sorted(scores))
    if not all(isinstance(s, str) for s in systems):
        raise InputError("system names must be strings")
    per: dict[str, dict[str, float]] = {}
    for s in systems:
        value = scores[s]
        if isinstance(value, PerQuery):
            if measure is None:
                raise InputError("PerQuery inputs need measure=, e.g. measure='nDCG@10'")
            value = value.scores(measure)
        elif measure is not None:
            raise InputError(f"measure={str(measure)!r} is only meaningful for PerQuery inputs")
        if not isinstance(value, Mapping):
            raise InputError(
                f"scores of system {s!r} must be a {{qid: score}} mapping; "
                f"got {type(value).__name__}"
            )
        per[s] = _check_mapping(value, s)
    union = set().union(*(set(v) for v in per.values()))
    lacking = {s: sorted(union - set(v)) for s, v in per.items() if len(v) != len(union)}
    if lacking:
        first = systems[0]
        other = next(s for s in systems if set(per[s]) != set(per[first]))
        detail = "; ".join(f"{s} lacks {len(q)} ({_shown(q)})" for s, q in lacking.items())
        raise PairingError(
            f"the systems cover different queries: {detail}",
            only_left=sorted(set(per[first]) - set(per[other])),
            only_right=sorted(set(per[other]) - set(per[first])),
        )
    if not union:
        raise InputError("no queries to compare: every system is empty")
    qids = tuple(sorted(union))
    matrix = np.array([[per[s][q] for s in systems] for q in qids], dtype=np.float64)
    return systems, qids, matrix


#: Up to this many systems, a query's permutation is drawn as one index into the
#: table of all m! permutations (one uniform draw per query and resample);
#: beyond it, by sorting m uniform keys.
_MAX_TABLE_SYSTEMS = 8

Permuter = Callable[[np.random.Generator, int], FloatArray]


def _table_permuter(matrix: FloatArray) -> Permuter:
    q, m = matrix.shape
    perms = np.array(list(itertools.permutations(range(m))), dtype=np.intp)  # (m!, m)
    offsets = (np.arange(q, dtype=np.intp) * m)[None, :]
    flat = matrix.ravel()

    def permute(rng: np.random.Generator, rows: int) -> FloatArray:
        u = rng.random((rows, q))
        u *= len(perms)
        which = u.astype(np.intp)
        np.minimum(which, len(perms) - 1, out=which)
        out = np.empty((rows, m), dtype=np.float64)
        for j in range(m):
            # Column j of query i, in resample r, holds system perms[which[r, i], j].
            source = perms[:, j].take(which)
            source += offsets
            out[:, j] = flat.take(source).sum(axis=1)
        return out

    return permute


def _sort_permuter(matrix: FloatArray) -> Permuter:
    def permute(rng: np.random.Generator, rows: int) -> FloatArray:
        keys = rng.random((rows, *matrix.shape))
        order = np.argsort(keys, axis=2)
        out: FloatArray = np.take_along_axis(matrix[None, :, :], order, axis=2).sum(axis=1)
        return out

    return permute


def tukey_hsd_randomized(
    scores: Mapping[str, Mapping[str, float] | PerQuery],
    *,
    measure: str | Measure | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    batch: int | None = None,
    alpha: float = DEFAULT_ALPHA,
    progress: ProgressCallback | None = None,
) -> TukeyHSDResult:
    """Randomized Tukey HSD over every pair of systems (Carterette, TOIS 2012).

    Testing all ``m(m−1)/2`` pairs one by one inflates false positives; Tukey's
    honestly-significant-difference compares each pair's difference with the
    distribution of the *largest* difference among all systems. Randomized,
    no normality is assumed: under the null that the systems are
    exchangeable on every query, each resample permutes every query's
    scores across the systems independently, and records the range (max −
    min) of the system means. For a pair, ``p = (r + 1)/(resamples + 1)``
    where ``r`` counts resamples whose range is at least the pair's
    observed ``|mean_a − mean_b|``. These p-values control the family-wise
    error rate over all pairs.

    ``scores`` is ``{system: {qid: score}}`` (or ``{system: PerQuery}`` with
    ``measure=``); every system must cover the same queries
    (:class:`~rankproof.PairingError` otherwise). Systems and queries are
    sorted by name, so the result does not depend on their order; ``batch``
    (resamples at a time) does not change it either. ``alpha`` sets the
    level of the simultaneous intervals (``critical_difference``). ``progress`` is told
    the permutations done of ``resamples`` after each batch (`rankproof.stats._progress`);
    it changes no number.
    """
    systems, qids, matrix = _score_matrix(scores, measure)
    resamples = check_int(resamples, "resamples", 1)
    seed = check_seed(seed)
    batch = check_batch(batch)
    alpha = check_probability(alpha, "alpha")
    q, m = matrix.shape
    check_cost(tukey_cost(q, m, resamples, batch),
               described(f"tukey_hsd_randomized of {m} systems", resamples, batch, q),
               knobs="resamples (or batch)", field="resamples")
    sums = matrix.sum(axis=0)
    scale = float(np.abs(matrix).max(axis=1).sum())
    rng = np.random.default_rng(seed)
    ranges = np.empty(resamples, dtype=np.float64)
    step = rows_per_batch(batch, 32 * q * max(m, 4), resamples)
    permute = _table_permuter(matrix) if m <= _MAX_TABLE_SYSTEMS else _sort_permuter(matrix)
    for start in range(0, resamples, step):
        rows = min(resamples, start + step) - start
        totals = permute(rng, rows)  # (rows, m) column sums of the permuted matrix
        ranges[start : start + rows] = totals.max(axis=1) - totals.min(axis=1)
        report(progress, start + rows, resamples)
    ranges.sort()
    comparisons = []
    for i in range(m):
        for j in range(i + 1, m):
            observed = abs(float(sums[i] - sums[j]))
            gamma = TIE_RTOL * max(observed, scale)
            r = resamples - int(np.searchsorted(ranges, observed - gamma, side="left"))
            comparisons.append(
                PairComparison(
                    a=systems[i],
                    b=systems[j],
                    difference=float(sums[i] - sums[j]) / q,
                    p_value=min(1.0, (r + 1) / (resamples + 1)),
                )
            )
    # The pair is significant when at most k resamples reach its range (p ≤ alpha), i.e.
    # when its range exceeds the (k+1)-th largest resampled range.
    k = accept_count(lambda c: (c + 1) / (resamples + 1), resamples, alpha) - 1
    critical = math.inf if k < 0 else float(ranges[resamples - 1 - k]) / q
    return TukeyHSDResult(
        alpha=alpha,
        critical_difference=critical,
        systems=systems,
        means=tuple(float(s) / q for s in sums),
        comparisons=tuple(comparisons),
        n=len(qids),
        resamples=resamples,
        seed=seed,
        measure=None if measure is None else str(measure),
    )
