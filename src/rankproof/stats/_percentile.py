"""The nearest-rank percentile, shared by the harness's latency summary and the gate.

Nearest rank is the smallest observed value with at least p% of values at or
below it (rank ``ceil(p/100 · n)``). It never interpolates towards the
maximum: with 20 values, p95 is the 19th smallest, not the slowest one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rankproof._errors import InputError


def nearest_rank(values: Sequence[float], pct: float) -> float:
    """The nearest-rank percentile: ``sorted(values)[ceil(pct/100 · n) − 1]`` (rank ≥ 1)."""
    if not values:
        raise InputError("a percentile of no values is undefined")
    if not 0 < pct <= 100:
        raise InputError(f"pct must be in (0, 100], got {pct!r}")
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return float(ordered[rank - 1])
