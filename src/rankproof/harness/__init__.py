"""Experiments end to end: corpus + judgments → retrieval stages → measured, compared report."""

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
from rankproof.harness._report import EvalReport, StageComparison, StageResult
from rankproof.harness._runresult import run_result_from_report

__all__ = [
    "DEFAULT_EVAL_MEASURES",
    "STAGES",
    "EvalConfig",
    "EvalInputs",
    "EvalReport",
    "StageComparison",
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
