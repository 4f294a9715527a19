"""Experiments as code: ``rankproof run EXPERIMENT.yaml [--only STAGE ...] [--dry-run]``.

An experiment file (`load_experiment`, validated completely before anything runs) names
the inputs and a graph of stages — retrieve, run_file, fuse, measure, compare, eval, gate,
report (`STAGE_KINDS`) — each calling the library function its own CLI command calls.
`plan` says what would run; `run` runs it, each stage into ``OUTPUT/<id>/`` with a
``stage.json`` (its content-addressed cache key, digests, timings, provenance), skipping a
stage whose key and outputs are unchanged, and writes ``OUTPUT/run.json``.
"""

from rankproof.pipeline._config import Experiment, load_experiment, parse_experiment
from rankproof.pipeline._models import KIND_MODELS, STAGE_KINDS
from rankproof.pipeline._runner import (
    RUN_KIND,
    PlannedStage,
    RunSummary,
    StageRun,
    plan,
    run,
    stage_key,
)

__all__ = [
    "KIND_MODELS",
    "RUN_KIND",
    "STAGE_KINDS",
    "Experiment",
    "PlannedStage",
    "RunSummary",
    "StageRun",
    "load_experiment",
    "parse_experiment",
    "plan",
    "run",
    "stage_key",
]
