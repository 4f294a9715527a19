"""Threshold-free abstention: does a stage's top score tell answerable from no-answer queries?

A retrieval stage that "knows when nothing applies" gives its best hit a lower
score on a question the corpus cannot answer than on one it can. Choosing a
cut-off score would make the answer depend on the cut-off, so the report
scores the ranking itself: the AUROC of the top retrieval score separating
answerable queries (positives) from no-answer queries (negatives),

    AUROC = P(top score of an answerable query > that of a no-answer query)
            + ½ · P(the two are equal),

the Mann–Whitney U statistic divided by n₁·n₀ (ties count one half). 0.5 is
chance, 1 a perfect separation; below 0.5 the stage is *more* confident on
questions that have no answer.

The interval is a stratified percentile bootstrap: answerable and no-answer
queries are resampled with replacement separately (so every resample has
both classes, and the class sizes stay those observed), from
``numpy.random.default_rng(seed)`` built per call. The draws are made in
fixed-size blocks from two generators spawned from that seed, so the block
size never changes a result.

A query with no retrieved result has no top score; it ranks below every
retrieved score (it is as unsure as a stage can be).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rankproof._errors import InputError
from rankproof.stats import DEFAULT_CONFIDENCE_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED

METHOD = "stratified percentile bootstrap"
_BATCH = 2048


@dataclass(frozen=True)
class AurocResult:
    """AUROC of scores separating positives from negatives, with its bootstrap interval."""

    auroc: float
    ci_low: float
    ci_high: float
    confidence_level: float
    resamples: int
    seed: int
    positives: int
    negatives: int
    method: str = METHOD


def _as_array(scores: Sequence[float | None], what: str) -> np.ndarray:
    """Scores as float64, None (nothing retrieved) as -inf; NaN is refused."""
    values = np.array([-math.inf if s is None else float(s) for s in scores], dtype=np.float64)
    if np.isnan(values).any():
        raise InputError(f"{what} scores must be numbers or None, found NaN")
    return values


def _greater_and_ties(pos_sorted: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each negative: how many positives lie below it (left) and below-or-equal (right)."""
    left = np.searchsorted(pos_sorted, neg, side="left")
    right = np.searchsorted(pos_sorted, neg, side="right")
    return left, right


def auroc(positives: Sequence[float | None], negatives: Sequence[float | None]) -> float:
    """AUROC of ``positives`` above ``negatives`` (ties count ½); see the module docstring.

    >>> auroc([0.9, 0.8, 0.5], [0.5, 0.1])
    0.9166666666666666
    """
    pos = np.sort(_as_array(positives, "positive"))
    neg = _as_array(negatives, "negative")
    if pos.size == 0 or neg.size == 0:
        raise InputError(f"an AUROC needs both classes, got {pos.size} positive and "
                         f"{neg.size} negative scores")
    left, right = _greater_and_ties(pos, neg)
    above = pos.size - right  # positives strictly above each negative
    tied = right - left
    return float((above.sum() + 0.5 * tied.sum()) / (pos.size * neg.size))


def _counts(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """How often each of ``n`` items is drawn in each of ``size`` resamples of size ``n``."""
    idx = rng.integers(0, n, size=(size, n))
    offsets = (np.arange(size) * n)[:, None]
    return np.bincount((idx + offsets).ravel(), minlength=size * n).reshape(size, n)


def bootstrap_auroc(
    positives: Sequence[float | None],
    negatives: Sequence[float | None],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    batch: int = _BATCH,
) -> AurocResult:
    """`auroc` with a stratified percentile-bootstrap interval (see the module docstring).

    Each resample weighs the observed scores by how often they were drawn, so
    its AUROC is computed from the sorted positives' cumulative weights in
    O(n) rather than by re-sorting. ``batch`` bounds memory only.
    """
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InputError(f"resamples must be a positive integer, got {resamples!r}")
    if not 0.0 < confidence_level < 1.0:
        raise InputError(f"confidence_level must be strictly between 0 and 1, got "
                         f"{confidence_level!r}")
    point = auroc(positives, negatives)
    pos = _as_array(positives, "positive")
    order = np.argsort(pos, kind="stable")
    pos_sorted = pos[order]
    neg = _as_array(negatives, "negative")
    n1, n0 = pos.size, neg.size
    left, right = _greater_and_ties(pos_sorted, neg)
    rng_pos, rng_neg = np.random.default_rng(seed).spawn(2)
    values = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, max(1, batch)):
        size = min(max(1, batch), resamples - start)
        w_pos = _counts(rng_pos, n1, size)[:, order]  # weights in sorted order
        w_neg = _counts(rng_neg, n0, size)
        cum = np.zeros((size, n1 + 1), dtype=np.float64)
        np.cumsum(w_pos, axis=1, out=cum[:, 1:])
        below_eq, below = cum[:, right], cum[:, left]
        per_neg = (n1 - below_eq) + 0.5 * (below_eq - below)
        values[start:start + size] = (w_neg * per_neg).sum(axis=1) / (n1 * n0)
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return AurocResult(auroc=point, ci_low=float(low), ci_high=float(high),
                       confidence_level=float(confidence_level), resamples=resamples, seed=seed,
                       positives=n1, negatives=n0)

