"""``rankproof gate`` and ``rankproof baseline`` end to end: exit codes 0, 1, 2 and the files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from rankproof.cli import app
from rankproof.gate import load_report

runner = CliRunner()

CHECKS = """\
checks:
  - id: ndcg_no_regression
    metric: nDCG@10
    vs_baseline: no_significant_regression
  - id: recall_floor
    metric: R@10
    op: ">="
    threshold: 0.5
  - id: latency_p95_budget
    metric: latency_p95
    op: "<="
    threshold: 5000
  - id: controls_hold
    metric: RR@10
    op: ">="
    threshold: 0.5
    scope: [alum-dose-range, bar-screen-spacing]
"""


def cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, list(args), env={"COLUMNS": "220", **(env or {})})


@pytest.fixture
def workdir(tmp_path: Path, golden_reports: dict[str, Path]) -> Path:
    (tmp_path / "checks.yaml").write_text(CHECKS)
    saved = cli("baseline", "save", str(golden_reports["base"]), "--name", "main",
                "--baseline-dir", str(tmp_path / "baselines"))
    assert saved.exit_code == 0, saved.output
    return tmp_path


def gate(workdir: Path, report: Path, *extra: str, env: dict[str, str] | None = None) -> Result:
    return cli("gate", str(workdir / "checks.yaml"), "--report", str(report), "--baseline",
               "main", "--baseline-dir", str(workdir / "baselines"), *extra, env=env)


def junit_cases(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    return {c.attrib["name"]: c for c in root.iter("testcase")}


def test_exit_0_when_the_same_configuration_reruns(workdir: Path, golden_reports: dict[str, Path],
                                                   junit_schema: Any) -> None:
    summary = workdir / "step_summary.md"
    summary.write_text("# earlier step\n")
    junit, md = workdir / "out" / "gate.xml", workdir / "out" / "gate.md"
    r = gate(workdir, golden_reports["rerun"], "--junit", str(junit), "--markdown", str(md),
             env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.exit_code == 0, r.output
    assert "gate PASSED: 4 checks" in r.stdout
    for check_id in ("ndcg_no_regression", "recall_floor", "latency_p95_budget",
                     "controls_hold"):
        assert check_id in r.stdout
    assert "+0.0000 [+0.0000, +0.0000]" in r.stdout and "2/2 cases" in r.stdout
    assert "FAIL" not in r.stdout
    junit_schema.validate(str(junit))
    cases = junit_cases(junit)
    assert sorted(cases) == ["controls_hold", "latency_p95_budget", "ndcg_no_regression",
                             "recall_floor"]
    assert all(len(c) == 0 for c in cases.values())  # passing testcases are bare
    text = md.read_text()
    assert text.startswith("### ✅ rankproof gate PASSED")
    assert "| ✅ PASS | `ndcg_no_regression` | nDCG@10 |" in text
    assert summary.read_text() == "# earlier step\n" + text + "\n"  # appended, not replaced
    assert "GitHub step summary" in r.stderr


def test_exit_1_on_a_real_regression_with_delta_ci_and_p(
        workdir: Path, golden_reports: dict[str, Path], junit_schema: Any) -> None:
    junit, md = workdir / "gate.xml", workdir / "gate.md"
    r = gate(workdir, golden_reports["small_chunks"], "--junit", str(junit), "--markdown",
             str(md), "--json", str(workdir / "verdict.json"))
    assert r.exit_code == 1, r.output
    assert "gate FAILED" in r.stdout
    line = next(x for x in r.stdout.splitlines() if x.startswith("FAIL ndcg_no_regression"))
    assert "significantly worse than the baseline" in line
    # The interval is the row's own (the test inverted at its Holm level), issue 10.
    assert "Δ -0.3612 [" in line and "% interval -0.4" in line and "p <0.0001" in line
    junit_schema.validate(str(junit))
    failure = junit_cases(junit)["ndcg_no_regression"].find("failure")
    assert failure is not None and "Δ -0.3612" in failure.attrib["message"]
    assert failure.attrib["type"] == "rankproof.regression"
    assert "wins/ties/losses" in (failure.text or "")
    root = ET.parse(junit).getroot()
    assert root.attrib["failures"] == "1" and root.attrib["tests"] == "4"
    assert "| ❌ FAIL | `ndcg_no_regression` |" in md.read_text()
    verdict = json.loads((workdir / "verdict.json").read_text())
    assert verdict["passed"] is False and verdict["checks"][0]["p_value"] < 0.001
    assert "corpus differs" in r.stdout  # chunking changed: stamped, not refused


def test_warnings_are_printed_but_do_not_fail(workdir: Path, golden_reports: dict[str, Path],
                                               junit_schema: Any) -> None:
    (workdir / "checks.yaml").write_text(
        "checks:\n  - {id: ambitious, metric: R@1, op: '>=', threshold: 0.99, level: warn}\n"
        "  - {id: floor, metric: R@10, op: '>=', threshold: 0.5}\n")
    junit = workdir / "warn.xml"
    r = cli("gate", str(workdir / "checks.yaml"), "--report", str(golden_reports["base"]),
            "--junit", str(junit))
    assert r.exit_code == 0, r.output
    assert "WARN ambitious: R@1 = 0.6987 violates >= 0.99" in r.stdout
    assert "1 warning" in r.stdout
    junit_schema.validate(str(junit))
    case = junit_cases(junit)["ambitious"]
    assert case.find("failure") is None and case.find("skipped") is None
    out = case.find("system-out")
    assert out is not None and (out.text or "").startswith("WARN: R@1 = 0.6987")
    props = {p.attrib["name"]: p.attrib["value"] for p in ET.parse(junit).iter("property")}
    assert props["rankproof.warnings"] == "1" and props["rankproof.passed"] == "true"


@pytest.mark.parametrize("checks_text, fragment", [
    ("checks:\n  - {id: a, metric: nDCG@10, op: '>=', treshold: 0.5}\n",
     "unknown key 'treshold' (did you mean 'threshold'?)"),
    ("checks:\n  - {id: a, metric: RR@10, op: '>=', threshold: 0.5, scope: [no-such-case]}\n",
     "'no-such-case' are not in the golden set / report"),
    ("checks: [\n", "invalid YAML"),
])
def test_exit_2_on_a_bad_checks_file(workdir: Path, golden_reports: dict[str, Path],
                                     checks_text: str, fragment: str) -> None:
    (workdir / "checks.yaml").write_text(checks_text)
    junit = workdir / "never.xml"
    r = gate(workdir, golden_reports["base"], "--junit", str(junit))
    assert r.exit_code == 2, r.output
    assert fragment in r.stderr and "error:" in r.stderr
    assert not junit.exists()  # nothing is written for a gate that could not be evaluated


def test_exit_2_on_bad_inputs(workdir: Path, golden_reports: dict[str, Path],
                              tmp_path: Path) -> None:
    checks = str(workdir / "checks.yaml")
    no_baseline = cli("gate", checks, "--report", str(golden_reports["base"]))
    assert no_baseline.exit_code == 2 and "none was given (--baseline" in no_baseline.stderr
    missing = cli("gate", checks, "--report", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "report not found" in missing.stderr
    incomparable = gate(workdir, golden_reports["document"])
    assert incomparable.exit_code == 2 and "granularity differs" in incomparable.stderr
    unknown = cli("gate", checks, "--report", str(golden_reports["base"]), "--baseline",
                  "nightly", "--baseline-dir", str(workdir / "baselines"))
    assert unknown.exit_code == 2 and "no baseline named 'nightly'" in unknown.stderr
    # a report with several stages needs --stage
    report = load_report(golden_reports["base"])
    stage = report.stages[0]
    two = report.model_copy(update={"stages": [stage, stage.model_copy(update={"name": "alt"})]})
    path = tmp_path / "two.json"
    path.write_text(two.model_dump_json())
    r = cli("gate", checks, "--report", str(path), "--baseline", "main", "--baseline-dir",
            str(workdir / "baselines"))
    assert r.exit_code == 2 and "choose one (--stage NAME)" in r.stderr
    ok = cli("gate", checks, "--report", str(path), "--stage", "alt", "--baseline", "main",
             "--baseline-dir", str(workdir / "baselines"))
    assert ok.exit_code == 0, ok.output
    not_a_report = tmp_path / "bad.json"
    not_a_report.write_text('{"kind": "something"}')
    bad = cli("gate", checks, "--report", str(not_a_report))
    assert bad.exit_code == 2 and "not a rankproof eval report" in bad.stderr


def test_baseline_commands(workdir: Path, golden_reports: dict[str, Path]) -> None:
    d = str(workdir / "baselines")
    listed = cli("baseline", "list", "--baseline-dir", d)
    assert listed.exit_code == 0 and "main" in listed.stdout and "chunk" in listed.stdout
    shown = cli("baseline", "show", "main", "--baseline-dir", d)
    assert shown.exit_code == 0, shown.output
    assert "nDCG@10" in shown.stdout and "0.9024" in shown.stdout
    assert "judgments digest" in shown.stdout and "sha256:" in shown.stdout
    as_json = cli("baseline", "show", "main", "--baseline-dir", d, "--format", "json")
    assert json.loads(as_json.stdout)["kind"] == "rankproof.run"
    again = cli("baseline", "save", str(golden_reports["base"]), "--name", "main",
                "--baseline-dir", d)
    assert again.exit_code == 2 and "already exists" in again.stderr
    forced = cli("baseline", "save", str(golden_reports["small_chunks"]), "--name", "main",
                 "--baseline-dir", d, "--force")
    assert forced.exit_code == 0 and "86 cases" in forced.stdout
    for bad in ("../up", "a/b", ".x"):
        r = cli("baseline", "save", str(golden_reports["base"]), "--name", bad, "--baseline-dir", d)
        assert r.exit_code == 2 and "not allowed" in r.stderr
    assert sorted(p.name for p in (workdir / "baselines").iterdir()) == ["main.json"]
    as_json = cli("baseline", "list", "--baseline-dir", d, "--format", "json")
    listed_json = json.loads(as_json.stdout)
    assert [b["name"] for b in listed_json] == ["main"] and listed_json[0]["cases"] == 86
    empty = cli("baseline", "list", "--baseline-dir", str(workdir / "none"))
    assert empty.exit_code == 0 and "no baselines" in empty.stderr
    missing = cli("baseline", "show", "nightly", "--baseline-dir", d)
    assert missing.exit_code == 2 and "saved baselines: main" in missing.stderr


def _rankproof(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command, its stdout a pipe, with a COLUMNS too narrow for the table."""
    env = {**os.environ, "COLUMNS": "40"}
    return subprocess.run([sys.executable, "-m", "rankproof", *args], capture_output=True,
                          text=True, check=False, env=env)


def test_gate_into_a_pipe_keeps_the_baseline_columns(tmp_path: Path,
                                                     golden_reports: dict[str, Path]) -> None:
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - id: ndcg_no_regression\n    metric: nDCG@10\n"
        "    vs_baseline: no_significant_regression\n")
    saved = _rankproof("baseline", "save", str(golden_reports["base"]), "--name", "main",
                       "--baseline-dir", str(tmp_path / "b"))
    assert saved.returncode == 0, saved.stderr
    proc = _rankproof("gate", str(tmp_path / "checks.yaml"), "--report",
                      str(golden_reports["rerun"]), "--baseline", "main", "--baseline-dir",
                      str(tmp_path / "b"))
    assert proc.returncode == 0, proc.stderr
    for needle in ("Δ [interval] (level)", "+0.0000 [+0.0000, +0.0000]", "ndcg_no_regression",
                   "coverage", "PASS"):
        assert needle in proc.stdout, needle
    junit = _rankproof("gate", str(tmp_path / "checks.yaml"), "--report",
                       str(golden_reports["rerun"]), "--baseline", "main",
                       "--baseline-dir", str(tmp_path / "b"), "--format", "junit")
    assert junit.returncode == 0, junit.stderr
    assert junit.stdout.startswith('<?xml version="1.0"')
