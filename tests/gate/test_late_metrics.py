"""Metric names resolve when the gate runs: a checks file may name a metric registered later.

From Python (register after `load_checks`) and from the command line
(``rankproof gate --plugin MODULE``, a dotted module or a ``.py`` path). A
name still unknown when the gate runs is a `ConfigError` (exit 2) naming the
check, its line, the closest match and every known name; every other rule of
the checks file is still enforced when it loads.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.gate._helpers import column
from typer.testing import CliRunner, Result

from rankproof import ConfigError
from rankproof.cli import app
from rankproof.gate import (
    evaluate_target,
    import_plugin,
    load_checks,
    parse_checks,
    resolve_checks,
    run_gate,
)
from rankproof.measures import lookup, register_aggregate, register_metric
from rankproof.measures._registry import _unregister
from rankproof.targets import CallableTarget, Case, TargetResponse

TOY = Path(__file__).resolve().parents[2] / "examples" / "toy"

LATE = """\
checks:
  - id: answer_floor
    metric: t_late_answered
    op: ">="
    threshold: 0.5
  - id: answer_no_regression
    metric: t_late_answered
    vs_baseline: no_significant_regression
"""


@pytest.fixture
def names() -> Iterator[list[str]]:
    """Metric names a test registers, unregistered afterwards (the registry is global)."""
    registered: list[str] = []
    yield registered
    for n in registered:
        _unregister(n)


def answered(response: TargetResponse, case: Case) -> float:
    """1 when the target returned anything."""
    return float(bool(response.ranked_ids))


def test_a_checks_file_may_name_a_metric_registered_after_it_loads(
        tmp_path: Path, names: list[str]) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(LATE)
    spec = load_checks(path)  # t_late_answered does not exist yet: not refused here
    assert [c.metric for c in spec.checks] == ["t_late_answered", "t_late_answered"]
    register_metric("t_late_answered", answered, higher_is_better=True)
    names.append("t_late_answered")
    run = column("t_late_answered", {"a": 1.0, "b": 1.0, "c": 0.0, "d": 1.0})
    verdict = run_gate(spec, run, column("t_late_answered", {"a": 1.0, "b": 0.0, "c": 0.0,
                                                             "d": 1.0}, name="main"))
    assert verdict.passed
    assert [c.metric for c in verdict.checks] == ["t_late_answered", "t_late_answered"]
    assert verdict.checks[0].value == 0.75


def test_still_unknown_when_the_gate_runs_lists_known_names_and_the_closest(
        tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(textwrap.dedent("""\
        checks:
          - id: fast
            metric: latncy_p95
            op: "<="
            threshold: 100
          - id: fine
            metric: nDCG@10
            op: ">="
            threshold: 0
          - id: typo
            metric: ndgc@10
            vs_baseline: no_significant_regression
    """))
    spec = load_checks(path)
    with pytest.raises(ConfigError) as info:
        run_gate(spec, column("nDCG@10", {"a": 1.0}), column("nDCG@10", {"a": 1.0}))
    message = str(info.value)
    assert message.startswith("cannot run the checks (2 problems):")
    assert f"{path}, line 3: check 'fast': field 'metric': unknown metric 'latncy_p95'" in message
    assert "did you mean 'latency_p95'" in message
    assert f"{path}, line 11: check 'typo': field 'metric': unknown metric 'ndgc@10'" in message
    assert "did you mean 'nDCG@10'" in message
    assert "'fine'" not in message
    assert "metric names are resolved when the gate runs" in message
    assert "rankproof gate --plugin MODULE" in message
    known = message.split("Known now: ", 1)[1]
    for name in ("latency_p95", "latency_ms", "entropy", "max_item_share[@k]", "P@k", "nDCG[@k]",
                 "AP[@k]", "Rprec", "Success@k"):
        assert name in known, name


def test_the_refusal_is_a_config_error_before_any_computation() -> None:
    spec = parse_checks(LATE)
    with pytest.raises(ConfigError, match="unknown metric 't_late_answered'"):
        resolve_checks(spec)
    # the same from run_gate, even with no baseline given: names come first
    with pytest.raises(ConfigError, match="unknown metric 't_late_answered'"):
        run_gate(spec, column("nDCG@10", {"a": 1.0}))


def test_an_aggregate_registered_later_is_refused_for_vs_baseline_when_the_gate_runs(
        names: list[str]) -> None:
    spec = parse_checks(LATE)
    register_aggregate("t_late_answered", lambda rows: 1.0, higher_is_better=True)
    names.append("t_late_answered")
    with pytest.raises(ConfigError, match=r"line 6: check 'answer_no_regression': field "
                                          r"'vs_baseline': 't_late_answered' is a run-level "
                                          r"aggregate"):
        resolve_checks(spec)


def test_an_aggregate_known_at_load_is_still_refused_at_load() -> None:
    with pytest.raises(ConfigError, match=r"'latency_p95' is a run-level aggregate"):
        parse_checks("checks:\n  - {id: x, metric: latency_p95, "
                     "vs_baseline: no_significant_regression}\n")


@pytest.mark.parametrize("body, fragment", [
    ("{id: a, metric: t_nowhere, op: '>=', threshold: 1, alpha: 0.1}", "alpha only applies"),
    ("{id: a, metric: t_nowhere, op: '>='}", "needs a threshold"),
    ("{id: a, metric: t_nowhere, treshold: 1, op: '>='}", "did you mean 'threshold'"),
    ("{id: a, metric: t_nowhere, op: '>=', threshold: high}", "threshold"),
    ("{id: a, metric: '  ', op: '>=', threshold: 1}", "field 'metric': empty metric name"),
    ("{id: a, metric: 3, op: '>=', threshold: 1}", "metric"),
    ("{id: a, metric: official, op: '>=', threshold: 1}", "one threshold cannot apply"),
])
def test_every_other_rule_still_holds_at_load(body: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match="invalid checks file") as info:
        parse_checks(f"checks:\n  - {body}\n")
    assert fragment in str(info.value)
    assert "unknown metric" not in str(info.value)


def test_a_scope_is_still_checked_at_load_for_an_unknown_metric() -> None:
    with pytest.raises(ConfigError, match="'ghost'"):
        parse_checks("checks:\n  - {id: a, metric: t_nowhere, op: '>=', threshold: 1, "
                     "scope: [a, ghost]}\n", known_case_ids=["a"])


def test_evaluate_target_resolves_names_before_invoking_the_target(names: list[str]) -> None:
    calls: list[str] = []

    def fn(case: Case) -> list[str]:
        calls.append(case.id)
        return ["d1"]

    cases = [Case("a", "q", relevant=("d1",)), Case("b", "q", relevant=("d2",))]
    target = CallableTarget(fn, "sys")
    spec = parse_checks("checks:\n  - {id: a, metric: t_late_answered, op: '>=', "
                        "threshold: 1}\n")
    with pytest.raises(ConfigError, match="unknown metric 't_late_answered'"):
        evaluate_target(spec, target, cases)
    assert calls == []  # nothing paid for
    register_metric("t_late_answered", answered, higher_is_better=True)
    names.append("t_late_answered")
    verdict, result = evaluate_target(spec, target, cases)
    assert verdict.passed and result.scores("t_late_answered") == {"a": 1.0, "b": 1.0}
    assert calls == ["a", "b"]


def test_seed_001_precision_registered_under_the_bare_family_word(names: list[str]) -> None:
    """Seed 001's example metric, gated beside the family it shares a word with."""
    spec = parse_checks("checks:\n"
                        "  - {id: mine, metric: precision, op: '>=', threshold: 0.3}\n"
                        "  - {id: family, metric: precision@3, op: '>=', threshold: 0.3}\n")
    assert [c.metric for c in spec.checks] == ["precision", "P@3"]

    @register_metric("precision", higher_is_better=True, family_word=True)
    def precision(response: TargetResponse, case: Case) -> float:
        hits = sum(1 for i in response.ranked_ids[:3] if i in case.relevant)
        return hits / 3

    names.append("precision")
    cases = [Case("a", "q", relevant=("d1", "d2")), Case("b", "q", relevant=("d2",))]
    verdict, _ = evaluate_target(spec, CallableTarget(lambda c: ["d1", "d2", "d3"], "s"), cases)
    assert [c.metric for c in verdict.checks] == ["precision", "P@3"]
    assert [c.value for c in verdict.checks] == pytest.approx([0.5, 0.5])
    assert lookup("precision").kind == "case" and lookup("precision@3").kind == "retrieval"


# -- the command line: --plugin ------------------------------------------------------------

runner = CliRunner()

PLUGIN = """\
from rankproof.measures import register_aggregate


@register_aggregate("t_plugin_cases", higher_is_better=True)
def cases(rows):
    "How many cases the run has."
    return float(len(rows))
"""

CHECKS = """\
checks:
  - id: enough_cases
    metric: t_plugin_cases
    op: ">="
    threshold: 8
  - id: quality
    metric: nDCG@10
    op: ">="
    threshold: 0.1
"""


def cli(*args: str) -> Result:
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project folder (the cwd) with a measure JSON of the toy bm25 run and a checks file."""
    monkeypatch.chdir(tmp_path)
    made = cli("measure", str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "-f", "json", "-o",
               "bm25.json")
    assert made.exit_code == 0, made.output
    (tmp_path / "checks.yaml").write_text(CHECKS)
    before = set(sys.modules)
    yield tmp_path
    _unregister("t_plugin_cases")
    for name in set(sys.modules) - before:
        if name.startswith(("rankproof_plugin_", "t_evalplugins", "t_helper")):
            del sys.modules[name]


def test_without_the_plugin_the_name_is_unknown_exit_2(project: Path) -> None:
    r = cli("gate", "checks.yaml", "--report", "bm25.json")
    assert r.exit_code == 2, r.output
    assert "unknown metric 't_plugin_cases'" in r.stderr and "--plugin MODULE" in r.stderr
    assert "Traceback" not in r.output


def test_a_plugin_file_registers_the_metric(project: Path) -> None:
    (project / "my_metrics.py").write_text(PLUGIN)
    r = cli("gate", "checks.yaml", "--report", "bm25.json", "--plugin", "my_metrics.py",
            "-f", "json")
    assert r.exit_code == 0, r.output
    assert '"metric": "t_plugin_cases"' in r.stdout and '"value": 8.0' in r.stdout


def test_a_dotted_module_importable_from_the_current_directory(project: Path) -> None:
    package = project / "t_evalplugins"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "metrics.py").write_text(PLUGIN)
    r = cli("gate", "--plugin", "t_evalplugins.metrics", "checks.yaml", "--report", "bm25.json")
    assert r.exit_code == 0, r.output
    assert "PASS" in r.stdout


def test_a_plugin_file_may_import_its_neighbours(project: Path) -> None:
    folder = project / "evals"
    folder.mkdir()
    (folder / "t_helper_cases.py").write_text(PLUGIN)
    (folder / "metrics.py").write_text("import t_helper_cases  # noqa: F401\n")
    r = cli("gate", "checks.yaml", "--report", "bm25.json", "--plugin", "evals/metrics.py")
    assert r.exit_code == 0, r.output
    assert str(folder) not in sys.path  # only while it imported


@pytest.mark.parametrize("plugin, files, fragment", [
    ("t_no_such_module", {}, "--plugin 't_no_such_module': no module named 't_no_such_module' "
                             "importable from the current directory"),
    ("missing.py", {}, "--plugin 'missing.py': no such file"),
    ("broken.py", {"broken.py": "def f(:\n"}, "--plugin 'broken.py': syntax error"),
    ("raises.py", {"raises.py": "raise RuntimeError('no API key')\n"},
     "--plugin 'raises.py': importing it raised RuntimeError: no API key"),
    ("needs.py", {"needs.py": "import t_not_installed_dep\n"},
     "--plugin 'needs.py': importing it failed: No module named 't_not_installed_dep'"),
    ("taken.py", {"taken.py": "from rankproof.measures import register_metric\n"
                              "register_metric('latency_p95', lambda r, c: 0.0, "
                              "higher_is_better=False)\n"},
     "--plugin 'taken.py': importing it failed: metric 'latency_p95' is already registered"),
    ("exits.py", {"exits.py": "raise SystemExit(4)\n"},
     "--plugin 'exits.py': importing it raised SystemExit: 4"),
    ("not a module", {}, "--plugin 'not a module' is neither a dotted module name"),
])
def test_a_plugin_that_cannot_be_imported_is_exit_2_naming_it(
        project: Path, plugin: str, files: dict[str, str], fragment: str) -> None:
    for name, text in files.items():
        (project / name).write_text(text)
    r = cli("gate", "checks.yaml", "--report", "bm25.json", "--plugin", plugin)
    assert r.exit_code == 2, r.output
    assert fragment in " ".join(r.stderr.split()), r.stderr
    assert "Traceback" not in r.output and "internal error" not in r.output


def test_import_plugin_from_python(project: Path) -> None:
    (project / "my_metrics.py").write_text(PLUGIN)
    module = import_plugin(str(project / "my_metrics.py"))
    assert module.__name__ == "rankproof_plugin_my_metrics"
    assert lookup("t_plugin_cases").kind == "aggregate"
    with pytest.raises(ConfigError, match="give a dotted module name"):
        import_plugin("  ")
