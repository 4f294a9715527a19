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
from rankproof.stats._percentile import nearest_rank

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
    "nearest_rank",
    "run_experiment",
]
