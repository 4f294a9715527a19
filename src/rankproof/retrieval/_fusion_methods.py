"""The fusion methods' table and kernels: per-run contributions, normalisations, combination.

`rankproof.retrieval._fusion` defines every method (its module docstring is
the reference); this module holds the vectorised pieces it is built from. All
arrays are per kept row of one run (rows grouped by query) or per fused
(query, document) pair; nothing loops over queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

FusionMethod = Literal["rrf", "isr", "log_isr", "logn_isr", "rbc", "borda",
                       "combsum", "combmnz", "combmax", "combmin", "combmed", "combanz",
                       "wsum", "wmnz", "interpolate"]
Norm = Literal["minmax-ranx", "minmax", "zscore"]

METHODS: tuple[str, ...] = ("rrf", "isr", "log_isr", "logn_isr", "rbc", "borda",
                            "combsum", "combmnz", "combmax", "combmin", "combmed", "combanz",
                            "wsum", "wmnz", "interpolate")
RANK_METHODS = frozenset({"rrf", "isr", "log_isr", "logn_isr", "rbc", "borda"})
"""Methods that read each run's ranks; scores only order the runs."""
SCORE_METHODS = frozenset(METHODS) - RANK_METHODS
"""Methods that combine (normalised) scores."""
NORMS: tuple[str, ...] = ("minmax-ranx", "minmax", "zscore")

RANX_FLOOR = 1e-9
"""ranx's floor on a min-max span (and a z-score sd): ``max(max - min, 1e-9)``."""
SCALE_RATIO = 10.0
"""Raw scores of runs whose score scales differ by more than this factor draw a warning."""


def default_norm(method: str) -> Norm | None:
    """The normalisation ``method`` uses when none is asked for.

    Score-based methods normalise with ranx's min-max (``"minmax-ranx"``), as
    ``ranx.fuse`` does by default; ``interpolate`` sums raw scores, as pyserini's
    interpolation does; rank-based methods read ranks and take none.

    >>> default_norm("combsum"), default_norm("interpolate"), default_norm("rrf")
    ('minmax-ranx', None, None)
    """
    if method in RANK_METHODS or method == "interpolate":
        return None
    return "minmax-ranx"


def segments(qcodes: npt.NDArray[np.integer]) -> tuple[npt.NDArray[np.int64],
                                                         npt.NDArray[np.int64]]:
    """Start index and length of each run of equal values in a grouped array."""
    n = len(qcodes)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(qcodes[1:] != qcodes[:-1]) + 1)).astype(np.int64)
    lengths = np.diff(np.concatenate((starts, [n]))).astype(np.int64)
    return starts, lengths


def normalise(scores: npt.NDArray[np.float64], qcodes: npt.NDArray[np.integer],
              norm: str) -> npt.NDArray[np.float64]:
    """Per-query normalisation of one run's kept scores (rows grouped by query).

    ``minmax-ranx``: ``(s - min) / max(max - min, 1e-9)`` — an all-equal list
    maps to 0 (ranx's ``min-max``); ``minmax``: ``(s - min) / (max - min)`` and
    an all-equal list maps to 1 (pyserini's ``normalize``); ``zscore``:
    ``(s - mean) / sd`` with the population sd, an all-equal list maps to 0.
    """
    if len(scores) == 0:
        return scores
    starts, lengths = segments(qcodes)
    if norm in ("minmax", "minmax-ranx"):
        lo = np.repeat(np.minimum.reduceat(scores, starts), lengths)
        hi = np.repeat(np.maximum.reduceat(scores, starts), lengths)
        span = hi - lo
        if norm == "minmax-ranx":
            ranx: npt.NDArray[np.float64] = (scores - lo) / np.maximum(span, RANX_FLOOR)
            return ranx
        flat = span == 0
        return np.where(flat, 1.0, (scores - lo) / np.where(flat, 1.0, span))
    mean = np.repeat(np.add.reduceat(scores, starts) / lengths, lengths)
    dev = scores - mean
    sd = np.sqrt(np.repeat(np.add.reduceat(dev * dev, starts) / lengths, lengths))
    flat = sd == 0
    return np.where(flat, 0.0, dev / np.where(flat, 1.0, sd))


def rank_contribution(method: str, ranks: npt.NDArray[np.float64], *, k: float,
                      phi: float) -> npt.NDArray[np.float64]:
    """What a document at 1-based ``rank`` adds for a rank-based method (Borda aside)."""
    if method == "rrf":
        return 1.0 / (k + ranks)
    if method == "rbc":
        return (1.0 - phi) * np.power(phi, ranks - 1.0)
    return 1.0 / (ranks * ranks)  # isr, log_isr, logn_isr


def median_range(scores: npt.NDArray[np.float64], qcodes: npt.NDArray[np.integer]) -> float:
    """The median over queries of one run's per-query score range (max - min)."""
    if len(scores) == 0:
        return 0.0
    starts, _ = segments(qcodes)
    span = np.maximum.reduceat(scores, starts) - np.minimum.reduceat(scores, starts)
    return float(np.median(span))


def scale_warning(names: Sequence[str], ranges: Sequence[float]) -> str | None:
    """The note stamped on a raw-score fusion whose runs' score scales differ.

    A run's scale is the median over queries of its per-query score range
    (max - min of the scores it contributes); the warning is given when the
    largest scale exceeds ``SCALE_RATIO`` (10) times the smallest, or when one
    run's scores are flat everywhere and another's are not.
    """
    if len(ranges) < 2:
        return None
    lo, hi = min(ranges), max(ranges)
    if hi == 0 or (lo > 0 and hi <= SCALE_RATIO * lo):
        return None
    ratio = "flat vs varying" if lo == 0 else f"{hi / lo:,.0f}×"
    shown = ", ".join(f"{n} {r:.4g}" for n, r in zip(names, ranges, strict=True))
    return (f"fusion: raw scores on different scales (median per-query score range: {shown}; "
            f"{ratio}, more than {SCALE_RATIO:g}×): the largest scale dominates the sum; "
            "normalise (norm 'minmax-ranx') unless this is intended")


def combine(method: str, groups: Sequence[npt.NDArray[np.int64]],
            values: Sequence[npt.NDArray[np.float64]], weights: Sequence[float],
            n_pairs: int, *, sigma: float,
            absent: Sequence[npt.NDArray[np.float64]] | None = None) -> npt.NDArray[np.float64]:
    """The fused score of every (query, document) pair.

    ``groups[i]`` are the pair indices of run ``i``'s kept rows (each pair at most
    once per run) and ``values[i]`` their contributions, unweighted; ``absent[i]``
    (Borda only) is what run ``i`` gives every pair it did not retrieve. Runs are
    added one after the other in the order given, so the floating-point result
    is reproducible (and equals ranx's, which adds in the same order).
    """
    total = np.zeros(n_pairs, dtype=np.float64)
    hits = np.zeros(n_pairs, dtype=np.int64)
    if method in ("combmax", "combmin"):
        pick = np.fmax if method == "combmax" else np.fmin
        total[:] = np.nan
        for g, v, w in zip(groups, values, weights, strict=True):
            total[g] = pick(total[g], w * v if w != 1.0 else v)
        return total
    if method == "combmed":
        table = np.full((len(groups), n_pairs), np.nan)
        for i, (g, v, w) in enumerate(zip(groups, values, weights, strict=True)):
            table[i, g] = w * v if w != 1.0 else v
        med: npt.NDArray[np.float64] = np.nanmedian(table, axis=0)
        return med
    present_weight = np.zeros(n_pairs, dtype=np.float64)
    for i, (g, v, w) in enumerate(zip(groups, values, weights, strict=True)):
        if absent is not None:
            dense = absent[i].copy()
            dense[g] = v
            total += w * dense if w != 1.0 else dense
        elif method == "wmnz":  # ranx: the scores' sum times the present runs' weights
            total[g] += v
            present_weight[g] += w
        else:
            total[g] += w * v if w != 1.0 else v
        hits[g] += 1
    if method in ("combmnz", "isr"):
        return total * hits
    if method == "wmnz":
        return total * present_weight
    if method in ("log_isr", "logn_isr"):
        factor: npt.NDArray[np.float64] = np.log(hits + (sigma if method == "logn_isr" else 0.0))
        return total * factor
    if method == "combanz":
        return total / hits
    return total  # rrf, rbc, borda, combsum, wsum, interpolate
