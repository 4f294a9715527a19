"""The pytest plugin: ``rankproof_gate`` in a team's own test suite (run with pytester)."""

from __future__ import annotations

import json
import sys
import textwrap
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from rankproof.gate import save_baseline
from rankproof.targets import CallableTarget, Case, run

REPO = Path(__file__).resolve().parents[2]
GOLDENS = [
    {"id": "pump", "query": "pump maintenance", "relevant": ["d1"]},
    {"id": "valve", "query": "valve repair", "relevant": ["d2"]},
    {"id": "meter", "query": "meter reading", "relevant": ["d3"]},
    {"id": "leak", "query": "leak detection", "relevant": ["d4"]},
]
GOOD = {"pump": ["d1", "d9"], "valve": ["d2"], "meter": ["d3", "d1"], "leak": ["d4"]}
BAD = {"pump": ["d9", "d8"], "valve": ["d8"], "meter": ["d9"], "leak": ["d8", "d4"]}

TEST_MODULE = """\
from rankproof.targets import CallableTarget

ANSWERS = {answers!r}
target = CallableTarget(lambda case: ANSWERS[case.id], "search")


def test_search_quality(rankproof_gate):
    verdict = rankproof_gate("checks.yaml", target=target, goldens="goldens.jsonl"{extra})
    assert verdict.passed
    assert rankproof_gate.result.name == "search"
"""

CHECKS = """\
checks:
  - id: ndcg_floor
    metric: nDCG@10
    op: ">="
    threshold: 0.8
  - id: mrr_floor
    metric: RR@10
    op: ">="
    threshold: 0.9
  - id: latency_budget
    metric: latency_p95
    op: "<="
    threshold: 10000
"""


def lines(*patterns: str) -> list[str]:
    """fnmatch patterns with '[' taken literally (it opens a character class otherwise)."""
    return [p.replace("[", "[[]") for p in patterns]


def plugin_args() -> list[str]:
    """``-p`` only when the entry point is not installed (installing registers it)."""
    installed = any(ep.value == "rankproof.pytest_plugin"
                    for ep in entry_points(group="pytest11"))
    return ["-p", "no:cacheprovider"] + ([] if installed else ["-p", "rankproof.pytest_plugin"])


def project(pytester: pytest.Pytester, answers: dict[str, list[str]], checks: str = CHECKS,
            extra: str = "", where: str = ".") -> None:
    folder = pytester.path / where
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "checks.yaml").write_text(checks)
    (folder / "goldens.jsonl").write_text("".join(json.dumps(g) + "\n" for g in GOLDENS))
    (folder / "test_quality.py").write_text(TEST_MODULE.format(answers=answers, extra=extra))


def test_the_entry_point_is_declared() -> None:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {"rankproof": "rankproof.pytest_plugin"}


def test_the_plugin_defers_its_own_imports() -> None:
    """Every pytest session in the environment imports the plugin, so the gate, metrics and
    harness are imported only when the fixture is used. (``import rankproof`` itself still
    loads numpy and pyarrow through the package's ``__init__``.)"""
    import subprocess

    code = ("import sys, rankproof.pytest_plugin; "
            "print(sorted(m for m in ('rankproof.gate', 'rankproof.harness', "
            "'rankproof.measures', 'rankproof.targets', 'httpx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_a_passing_gate_passes_the_test(pytester: pytest.Pytester) -> None:
    project(pytester, GOOD)
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(passed=1)


def test_a_failing_gate_lists_each_failed_check(pytester: pytest.Pytester) -> None:
    project(pytester, BAD)
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(lines(
        "*rankproof gate failed: 2 of 3 check(s) blocked run 'search'",
        "*FAIL ndcg_floor [nDCG@10, 4/4 cases]: nDCG@10 = 0.1577 violates >= 0.8",
        "*FAIL mrr_floor [RR@10, 4/4 cases]: RR@10 = 0.125 violates >= 0.9",
        "*ok   latency_budget [latency_p95, 4/4 cases]: latency_budget: pass (4/4 cases)",
    ))
    assert "Traceback" not in result.stdout.str()
    assert "def test_search_quality" not in result.stdout.str()  # no code dump, just the list


def test_warn_level_failures_become_warnings(pytester: pytest.Pytester) -> None:
    warn = CHECKS.replace("threshold: 0.9\n", "threshold: 0.9\n    level: warn\n")
    project(pytester, {**GOOD, "meter": ["d9", "d3"]}, checks=warn)
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(lines("*GateWarning: rankproof gate warning mrr_floor "
                                      "[RR@10, 4/4 cases]: RR@10 = 0.875 violates >= 0.9*"))


def test_a_bad_checks_file_fails_with_the_reason(pytester: pytest.Pytester) -> None:
    project(pytester, GOOD, checks=CHECKS.replace("threshold: 0.8", "treshold: 0.8"))
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*rankproof gate could not be evaluated: invalid checks file (1 problem):*",
        "*unknown key 'treshold' (did you mean 'threshold'?)*",
    ])


def test_paths_are_found_beside_the_test_module(pytester: pytest.Pytester) -> None:
    project(pytester, GOOD, where="tests/search")
    result = pytester.runpytest(*plugin_args())  # cwd is the project root, not tests/search
    result.assert_outcomes(passed=1)
    (pytester.path / "tests" / "search" / "checks.yaml").unlink()
    failed = pytester.runpytest(*plugin_args())
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*checks file 'checks.yaml' not found beside the test*"])


def test_baseline_checks_through_the_fixture(pytester: pytest.Pytester) -> None:
    cases = [Case.from_dict(g) for g in GOLDENS]
    baseline = run("search", CallableTarget(lambda c: GOOD[c.id], "search"), cases,
                   ["nDCG@10"])
    save_baseline(baseline, "main", pytester.path / "baselines")
    checks = textwrap.dedent("""\
        checks:
          - id: no_regression
            metric: nDCG@10
            vs_baseline: no_significant_regression
            alpha: 0.2
        resamples: 1000
    """)
    extra = ", baseline='main', baseline_dir='baselines'"
    project(pytester, GOOD, checks=checks, extra=extra)
    pytester.runpytest(*plugin_args()).assert_outcomes(passed=1)
    project(pytester, BAD, checks=checks, extra=extra)
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(lines(
        "*blocked run 'search' (baseline 'main')",
        "*FAIL no_regression [nDCG@10, 4/4 cases]: nDCG@10 significantly worse than the "
        "baseline*Δ -0.8423 [80% interval*",
    ))
