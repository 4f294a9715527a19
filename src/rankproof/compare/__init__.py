"""Comparison: runs or per-query tables × measures → evaluated, paired, corrected rows.

The one place where systems are set against each other. `rankproof compare`,
the experiment harness and the gate's baseline checks all build their rows
here, so a pairing error, a polarity rule and a correction mean the same thing
wherever a comparison is made. `rankproof.stats` supplies the pure tests this
layer calls; rendering lives in `rankproof.report`.
"""

from rankproof.compare._compare import (
    Comparison,
    ComparisonRow,
    compare,
    load_comparison,
    pilot_deltas,
)

__all__ = [
    "Comparison",
    "ComparisonRow",
    "compare",
    "load_comparison",
    "pilot_deltas",
]
