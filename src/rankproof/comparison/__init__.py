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
* `compare_tables(qrels, tables, measures)`: `compare` after the runs were evaluated
  elsewhere (one engine task per run file: ``rankproof compare --engine``).
* `compare_scores({system: {measure: {qid: value}}})`: from plain scores.
* `compare_pairs([Pairing, ...])`: the engine, one row per pairing.
* `collect_evidence(qrels, runs)`: what a reader must see of the runs (`Evidence`: top
  ids, gold, query text), stored in comparisons and eval reports; `load_evidence` reads
  it back, inline or from a verified sidecar.
* `summarise_null(result, differences)`: a row's null distribution as a bounded
  `NullSummary` (histogram or reference curve) stored in the row, what a report's figure
  draws, so the renderer computes nothing.
* `sample_regressions(qids, baseline, candidate)`: a seeded sample of the queries that got
  worse, for a reviewer (`rankproof inspect`).
"""

from rankproof.comparison._collect import collect_evidence
from rankproof.comparison._compare import (
    JUDGED_DEFAULT_DEPTH,
    Topics,
    compare,
    compare_evaluated,
    compare_tables,
    judged_measure,
)
from rankproof.comparison._evidence import (
    MAX_EVIDENCE_DEPTH,
    MAX_INLINE_EVIDENCE_IDS,
    Evidence,
    EvidenceSidecar,
    evidence_value,
    load_evidence,
    sidecar_name,
    split_evidence,
)
from rankproof.comparison._null import NULL_TESTS, NullSummary, summarise_null
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
from rankproof.comparison._queries import read_queries
from rankproof.comparison._regressions import (
    REGRESSION_SAMPLE_SIZE,
    Regressions,
    sample_regressions,
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
    "MAX_EVIDENCE_DEPTH",
    "MAX_INLINE_EVIDENCE_IDS",
    "NULL_TESTS",
    "REGRESSION_SAMPLE_SIZE",
    "SCHEMA_VERSION",
    "VERDICTS",
    "Comparison",
    "ComparisonRow",
    "Evidence",
    "EvidenceSidecar",
    "NullSummary",
    "Pairing",
    "Pairs",
    "Regressions",
    "Topics",
    "Verdict",
    "collect_evidence",
    "compare",
    "compare_evaluated",
    "compare_pairs",
    "compare_scores",
    "compare_tables",
    "evidence_value",
    "family_cost",
    "format_end",
    "judged_measure",
    "load_comparison",
    "load_evidence",
    "pilot_deltas",
    "read_queries",
    "row_levels",
    "rows_from_document",
    "sample_regressions",
    "select_row",
    "sidecar_name",
    "split_evidence",
    "summarise_null",
    "verdict",
]
