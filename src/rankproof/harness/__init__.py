"""Experiments end to end: corpus + judgments → retrieval stages → measured, compared report.

The report's comparisons are the shared `rankproof.comparison.ComparisonRow`s (each with its
paired per-query values), the same rows `rankproof compare` and the gate store.
`compare_report_stages` compares any two stages of a saved report from those values.
"""

from rankproof.harness._abstention import AurocResult, auroc, bootstrap_auroc
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
    irds_inputs,
)
from rankproof.harness._passages import (
    SELECTION_MEASURE,
    SynthesisPassages,
    best_stage,
    synthesis_passages,
)
from rankproof.harness._report import Abstention, CategoryResult, EvalReport, StageResult
from rankproof.harness._runresult import run_result_from_report
from rankproof.harness._stages import compare_report_stages, read_report

__all__ = [
    "DEFAULT_EVAL_MEASURES",
    "SELECTION_MEASURE",
    "STAGES",
    "Abstention",
    "AurocResult",
    "CategoryResult",
    "EvalConfig",
    "EvalInputs",
    "EvalReport",
    "StageResult",
    "SynthesisPassages",
    "auroc",
    "beir_inputs",
    "best_stage",
    "bootstrap_auroc",
    "collapse_to_documents",
    "collection_inputs",
    "compare_report_stages",
    "directory_inputs",
    "golden_inputs",
    "irds_inputs",
    "latency_summary",
    "read_report",
    "run_experiment",
    "run_result_from_report",
    "synthesis_passages",
]
