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
* `load_result` reads any rankproof JSON that keeps per-query values (an
  eval report, ``rankproof measure`` JSON, a comparison, a run result, a
  baseline) as the `RunResult` to gate; `load_baseline_input` the same for
  the baseline side (a saved baseline's name works too).
* `resolve_checks` resolves the checks' metric names when the gate runs
  (`run_gate` calls it), so metrics registered after the file loaded — from
  Python or by `import_plugin` (``rankproof gate --plugin``) — are found.

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
from rankproof.gate._checks import (
    Check,
    ChecksFile,
    load_checks,
    parse_checks,
    resolve_checks,
)
from rankproof.gate._fixture import (
    HEADLINE_METRICS,
    FixtureResult,
    HeadlineCheck,
    check_fixture,
    fixture_dir,
    load_expected,
    observe_fixture,
    proposed_expected,
)
from rankproof.gate._inputs import load_baseline_input, load_result, result_from_document
from rankproof.gate._plugins import import_plugin
from rankproof.gate._run import evaluate_target, load_report, result_from_report
from rankproof.gate._verdict import CheckResult, GateVerdict, run_gate

__all__ = [
    "DEFAULT_DIR",
    "HEADLINE_METRICS",
    "Baseline",
    "Check",
    "CheckResult",
    "ChecksFile",
    "FixtureResult",
    "GateVerdict",
    "HeadlineCheck",
    "baseline_path",
    "check_compatible",
    "check_fixture",
    "compatibility_problems",
    "evaluate_target",
    "fixture_dir",
    "import_plugin",
    "list_baselines",
    "load_baseline",
    "load_baseline_input",
    "load_checks",
    "load_expected",
    "load_report",
    "load_result",
    "observe_fixture",
    "parse_checks",
    "proposed_expected",
    "resolve_checks",
    "result_from_document",
    "result_from_report",
    "run_gate",
    "save_baseline",
]
