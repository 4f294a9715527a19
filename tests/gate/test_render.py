"""Verdict renderers: JUnit XML (schema-valid, warn = passing case with WARN output),
Markdown and the terminal table."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import Any

import pytest
from rich.console import Console
from tests.gate._helpers import checks, column, result

from rankproof.gate import GateVerdict, run_gate
from rankproof.report.gate import verdict_lines, verdict_markdown, verdict_table
from rankproof.report.junit import verdict_junit

IDS = [f"q{i}" for i in range(12)]
BASE = {q: 0.5 + 0.03 * i for i, q in enumerate(IDS)}
WORSE = {q: v - 0.2 for q, v in BASE.items()}


def mixed_verdict() -> GateVerdict:
    """One check of every outcome: a blocking failure, a warning, a pass."""
    spec = checks("""\
        checks:
          - {id: no_regression, metric: nDCG@10, vs_baseline: no_significant_regression}
          - {id: "ambitious <&> | pipe", metric: nDCG@10, op: ">=", threshold: 0.99,
             level: warn}
          - {id: floor, metric: nDCG@10, op: ">=", threshold: 0.1}
        resamples: 1000
    """)
    return run_gate(spec, column("nDCG@10", WORSE, name="cand\x01idate"),
                    column("nDCG@10", BASE, name="main"))


def test_junit_is_schema_valid_with_one_testcase_per_check(junit_schema: Any) -> None:
    v = mixed_verdict()
    xml = verdict_junit(v, timestamp=datetime(2024, 5, 1, 12, 0, tzinfo=UTC))
    junit_schema.validate(xml)
    root = ET.fromstring(xml)
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.attrib["tests"] == "3" and suite.attrib["failures"] == "1"
    assert suite.attrib["timestamp"] == "2024-05-01T12:00:00"
    cases = suite.findall("testcase")
    assert [c.attrib["name"] for c in cases] == ["no_regression", "ambitious <&> | pipe",
                                                 "floor"]
    failure = cases[0].find("failure")
    assert failure is not None and failure.attrib["type"] == "rankproof.regression"
    assert "significantly worse" in failure.attrib["message"]
    # warn-level failure: a passing testcase whose output says WARN — not skipped, not failed
    warn = cases[1]
    assert warn.find("failure") is None and warn.find("skipped") is None
    out = warn.find("system-out")
    assert out is not None and (out.text or "").startswith("WARN: nDCG@10 = ")
    assert len(cases[2]) == 0
    # a control character in a name cannot break the document
    assert "\ufffd" in suite.attrib["name"]


def test_the_schema_rejects_what_ci_systems_would_reject(junit_schema: Any) -> None:
    """The XSD is not a rubber stamp: misplaced or unknown elements fail validation."""
    bad_order = ('<testsuites><testsuite name="s" tests="1"><testcase name="c">'
                 '<system-out>x</system-out><failure message="m"/></testcase>'
                 "</testsuite></testsuites>")
    unknown = ('<testsuites><testsuite name="s" tests="1"><testcase name="c"><warning/>'
               "</testcase></testsuite></testsuites>")
    no_name = '<testsuites><testsuite tests="1"/></testsuites>'
    for doc in (bad_order, unknown, no_name):
        assert not junit_schema.is_valid(doc)


def test_junit_of_a_passing_gate(junit_schema: Any) -> None:
    v = run_gate(checks("checks:\n  - {id: floor, metric: nDCG@10, op: '>=', threshold: 0}\n"),
                 column("nDCG@10", BASE))
    xml = verdict_junit(v)
    junit_schema.validate(xml)
    assert ET.fromstring(xml).attrib["failures"] == "0"


def test_markdown_lists_every_check_and_explains_failures() -> None:
    md = verdict_markdown(mixed_verdict())
    assert md.startswith("### ❌ rankproof gate FAILED: 3 checks, 1 blocking failure, 1 warning")
    lines = md.splitlines()
    rows = [line for line in lines if line.startswith("| ")]
    assert len(rows) == 1 + 3  # header + one per check
    assert all(r.count(" | ") == rows[0].count(" | ") for r in rows)  # pipes escaped
    assert "`ambitious <&> \\| pipe`" in md
    assert "| ❌ FAIL | `no_regression` | nDCG@10 |" in md
    assert "| ⚠️ WARN |" in md and "| ✅ PASS | `floor` |" in md
    assert "**Failed checks**" in md and "significantly worse" in md
    regression_row = rows[1]
    assert "-0.2000 [" in regression_row and "holm" in regression_row


def test_terminal_table_and_lines() -> None:
    v = mixed_verdict()
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None).print(verdict_table(v))
    text = buf.getvalue()
    assert "gate FAILED: 3 checks, 1 blocking failure, 1 warning" in text
    for word in ("FAIL", "WARN", "PASS", "12/12 cases", "no regression, α 0.05",
                 "≥ 0.99", "-0.2000 ["):
        assert word in text
    lines = verdict_lines(v)
    assert lines[0].startswith("FAIL no_regression: nDCG@10 significantly worse")
    assert lines[1].startswith("WARN ambitious <&> | pipe: nDCG@10 = ")


@pytest.mark.parametrize("op, shown", [("<=", "≤ 0.5"), (">=", "≥ 0.5"), ("==", "= 0.5")])
def test_threshold_rules_are_shown_with_their_op(op: str, shown: str) -> None:
    v = run_gate(checks(f"checks:\n  - {{id: t, metric: RR@10, op: '{op}', threshold: 0.5}}\n"),
                 result({"a": {"RR@10": 0.5}}))
    assert shown in verdict_markdown(v)
