"""One cached run of the golden corpus per configuration, shared by the harness tests."""

from __future__ import annotations

from functools import cache

from rankproof.harness import EvalConfig, EvalReport, golden_inputs, run_experiment


@cache
def golden_report(resamples: int, seed: int = 0) -> EvalReport:
    """bm25, dense (the labelled hashing test double) and fusion on the golden corpus."""
    config = EvalConfig(stages=("bm25", "dense", "fusion"), embedder="hashing",
                        resamples=resamples, seed=seed)
    return run_experiment(golden_inputs("chunk", 800, 100), config)[0]
