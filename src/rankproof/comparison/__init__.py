"""Comparison: runs or per-query tables × measures → evaluated, paired, corrected rows.

The one place where systems are set against each other. `rankproof compare`,
the experiment harness and the gate's baseline checks all build their rows
here (`compare_pairs` is the one engine), so a pairing error, a polarity rule
and a correction mean the same thing wherever a comparison is made, and every
saved row (`ComparisonRow`, with its paired per-query values) can serve as a
power pilot. `rankproof.stats` supplies the pure tests this layer calls;
rendering lives in `rankproof.report`.

* `compare(qrels, runs, measures)`: evaluate runs, then compare them.
* `compare_evaluated(tables, measures)`: the same from `PerQuery` tables.
* `compare_scores({system: {measure: {qid: value}}})`: from plain scores.
* `compare_pairs([Pairing, ...])`: the engine, one row per pairing.
"""

from rankproof.comparison._compare import (
    JUDGED_DEFAULT_DEPTH,
    Topics,
    compare,
    compare_evaluated,
    judged_measure,
)
from rankproof.comparison._pairs import (
    Pairing,
    Pairs,
    compare_pairs,
    compare_scores,
    family_cost,
    row_levels,
    verdict,
)
from rankproof.comparison._pilot import (
    load_comparison,
    pilot_deltas,
    rows_from_document,
    select_row,
)
from rankproof.comparison._row import (
    FLAT_COLUMNS,
    SCHEMA_VERSION,
    VERDICTS,
    Comparison,
    ComparisonRow,
    Verdict,
    format_end,
)

__all__ = [
    "FLAT_COLUMNS",
    "JUDGED_DEFAULT_DEPTH",
    "SCHEMA_VERSION",
    "VERDICTS",
    "Comparison",
    "ComparisonRow",
    "Pairing",
    "Pairs",
    "Topics",
    "Verdict",
    "compare",
    "compare_evaluated",
    "compare_pairs",
    "compare_scores",
    "family_cost",
    "format_end",
    "judged_measure",
    "load_comparison",
    "pilot_deltas",
    "row_levels",
    "rows_from_document",
    "select_row",
    "verdict",
]
