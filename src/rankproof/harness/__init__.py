"""Experiments end to end: corpus + judgments → retrieval stages → measured, compared report.

The report's comparisons are the shared `rankproof.comparison.ComparisonRow`s (each with its
paired per-query values), the same rows `rankproof compare` and the gate store.
"""

from rankproof.harness._experiment import (
    DEFAULT_EVAL_MEASURES,
    STAGES,
    EvalConfig,
    collapse_to_documents,
    latency_summary,
    run_experiment,
)
from rankproof.harness._inputs import (
    EvalInputs,
    beir_inputs,
    collection_inputs,
    directory_inputs,
    golden_inputs,
)
from rankproof.harness._report import EvalReport, StageResult
from rankproof.harness._runresult import run_result_from_report

__all__ = [
    "DEFAULT_EVAL_MEASURES",
    "STAGES",
    "EvalConfig",
    "EvalInputs",
    "EvalReport",
    "StageResult",
    "beir_inputs",
    "collapse_to_documents",
    "collection_inputs",
    "directory_inputs",
    "golden_inputs",
    "latency_summary",
    "run_experiment",
    "run_result_from_report",
]
