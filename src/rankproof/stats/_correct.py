"""Multiple-comparison corrections of p-values."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError
from rankproof.stats._defaults import CORRECTIONS, DEFAULT_CORRECTION, Correction
from rankproof.stats._validate import FloatArray, check_choice


def correct(pvalues: npt.ArrayLike, method: Correction = DEFAULT_CORRECTION) -> FloatArray:
    """Adjusted p-values for a family of tests, in the input order, capped at 1.

    Comparing several systems or measures at once makes some "significant"
    result likely by chance; adjusting keeps the error rate of the whole
    family at α. Reject test ``i`` when ``adjusted[i] ≤ α``.

    * ``"holm"`` (default; Holm 1979): controls the family-wise error rate
      (the chance of *any* false positive) under any dependence, and is
      uniformly more powerful than Bonferroni. With ``p_(1) ≤ … ≤ p_(m)``,
      ``adj_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j))``.
    * ``"bh"`` (Benjamini & Hochberg 1995): controls the false discovery
      rate (the expected share of false positives among rejections) for
      independent or positively dependent tests; more rejections, weaker
      guarantee. ``adj_(i) = min_{j ≥ i} min(1, m p_(j) / j)``.
    * ``"bonferroni"``: ``min(1, m p)``.
    * ``"none"``: the p-values unchanged (as a float array).

    Equal to ``statsmodels.stats.multitest.multipletests(p, method=...)[1]``
    with ``"holm"``, ``"fdr_bh"`` and ``"bonferroni"``.

    >>> correct([0.01, 0.04, 0.03], "holm").tolist()
    [0.03, 0.06, 0.06]
    """
    method = check_choice(method, "method", CORRECTIONS)  # type: ignore[assignment]
    try:
        p = np.array(pvalues, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"cannot read p-values as numbers: {exc}") from None
    if p.ndim != 1:
        raise InputError(f"expected a 1-D sequence of p-values, got shape {p.shape}")
    bad = np.flatnonzero(~((p >= 0.0) & (p <= 1.0)))
    if len(bad):
        i = int(bad[0])
        raise InputError(f"p-value at position {i} is {p[i]}; expected a number in [0, 1]")
    m = len(p)
    if m == 0 or method == "none":
        return p
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(ranked * np.arange(m, 0, -1, dtype=np.float64))
    else:
        scaled = ranked / (np.arange(1, m + 1, dtype=np.float64) / m)
        adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m, dtype=np.float64)
    out[order] = np.minimum(1.0, adjusted)
    return out
