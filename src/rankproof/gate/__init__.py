"""The regression gate: checks, baselines and verdicts for CI.

* `load_checks` / `parse_checks` read and validate a checks file
  (`ChecksFile` of `Check`); every problem is a `rankproof.ConfigError`.
* `save_baseline` / `load_baseline` / `list_baselines` store a run's
  per-case rows under a name (`Baseline`).
* `run_gate(checks, result, baseline)` evaluates the checks on a
  `rankproof.targets.RunResult` into a frozen `GateVerdict` of
  `CheckResult` — a result, not an exception.
* `evaluate_target` is the one-call path used by the pytest plugin: run a
  target over goldens for exactly the checked metrics, then gate.

Rendering (table, Markdown, JUnit) lives in `rankproof.report`.
"""

from rankproof.gate._baseline import (
    DEFAULT_DIR,
    Baseline,
    baseline_path,
    check_compatible,
    compatibility_problems,
    list_baselines,
    load_baseline,
    save_baseline,
)
from rankproof.gate._checks import Check, ChecksFile, load_checks, parse_checks
from rankproof.gate._run import evaluate_target, load_report, result_from_report
from rankproof.gate._verdict import CheckResult, GateVerdict, run_gate

__all__ = [
    "DEFAULT_DIR",
    "Baseline",
    "Check",
    "CheckResult",
    "ChecksFile",
    "GateVerdict",
    "baseline_path",
    "check_compatible",
    "compatibility_problems",
    "evaluate_target",
    "list_baselines",
    "load_baseline",
    "load_checks",
    "load_report",
    "parse_checks",
    "result_from_report",
    "run_gate",
    "save_baseline",
]
