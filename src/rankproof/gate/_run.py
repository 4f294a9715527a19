"""Getting a `RunResult` to gate: from a ``rankproof eval`` report, or by running a target."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Literal

from rankproof.data import read_model
from rankproof.engine import Executor
from rankproof.gate._baseline import DEFAULT_DIR, Baseline, load_baseline
from rankproof.gate._checks import ChecksFile, load_checks, resolve_checks
from rankproof.gate._verdict import GateVerdict, run_gate
from rankproof.harness import EvalReport, run_result_from_report
from rankproof.targets import Case, RunResult, Target, as_cases, run


def load_report(path: str | os.PathLike[str]) -> EvalReport:
    """Read and validate an `EvalReport` JSON file (``rankproof eval``'s output)."""
    return read_model(path, EvalReport, what="report", kind="rankproof eval report")


def result_from_report(path: str | os.PathLike[str], stage: str | None = None) -> RunResult:
    """`rankproof.harness.run_result_from_report` on the report stored at ``path``."""
    return run_result_from_report(load_report(path), stage)


def evaluate_target(
    checks: ChecksFile | str | os.PathLike[str],
    target: Target,
    goldens: str | os.PathLike[str] | Iterable[Case],
    *,
    baseline: Baseline | RunResult | str | os.PathLike[str] | None = None,
    baseline_dir: str | os.PathLike[str] = DEFAULT_DIR,
    name: str | None = None,
    executor: Executor | None = None,
    shard_size: int | None = None,
    checkpoint: str | os.PathLike[str] | Literal[False] | None = None,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[GateVerdict, RunResult]:
    """Run ``target`` over ``goldens`` for exactly the metrics the checks name, then gate.

    A checks *path* is validated against the golden set's case ids, so a
    scope naming an absent case is refused before the target is invoked, and
    so is a metric name still unknown now (`resolve_checks`).
    ``baseline`` may be a name or path (`load_baseline`), a `Baseline` or a
    `RunResult`. Returns the verdict and the run (to save as a baseline).
    ``executor``, ``shard_size``, ``checkpoint``, ``resume`` and ``progress``
    are `rankproof.targets.run`'s: a sharded, checkpointed, resumable target run
    (none given: the target is invoked in one call, as always).
    """
    cases = as_cases(goldens)
    spec = checks if isinstance(checks, ChecksFile) else load_checks(
        checks, known_case_ids=[c.id for c in cases])
    spec = resolve_checks(spec)  # names resolve now, before the target is invoked
    base: Baseline | RunResult | None
    if isinstance(baseline, str | os.PathLike):
        base = load_baseline(baseline, baseline_dir)
    else:
        base = baseline
    metrics = list(dict.fromkeys(c.metric for c in spec.checks))
    sharding = {} if shard_size is None else {"shard_size": shard_size}
    result = run(name or target.name, target, cases, metrics, executor=executor,
                 checkpoint=checkpoint, resume=resume, progress=progress, **sharding)
    return run_gate(spec, result, base), result
