"""The checks file: what loads, and one test per refusal rule (each message checked)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest

from rankproof import ConfigError
from rankproof.gate import Check, load_checks, parse_checks

GOOD = """\
checks:
  - id: quality_floor
    metric: ndcg@10
    op: ">="
    threshold: 0.8
  - id: no_regression
    metric: nDCG@10
    vs_baseline: no_significant_regression
    alpha: 0.01
  - id: controls_hold
    metric: RR@10
    op: "=="
    threshold: 1
    scope: [c1, c2]
    level: warn
"""


def refused(text: str, *fragments: str, **kw: object) -> str:
    with pytest.raises(ConfigError) as info:
        parse_checks(textwrap.dedent(text), source="checks.yaml", **kw)  # type: ignore[arg-type]
    message = str(info.value)
    for f in fragments:
        assert f in message, f"{f!r} not in {message!r}"
    return message


def one(body: str) -> str:
    """A checks file with one check whose lines are ``body`` (indented under the dash)."""
    lines = textwrap.dedent(body).strip().splitlines()
    return "checks:\n  - " + "\n    ".join(lines) + "\n"


def test_a_valid_file_loads_with_canonical_metrics_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(GOOD)
    spec = load_checks(path, known_case_ids=["c1", "c2", "c3"])
    assert [c.id for c in spec.checks] == ["quality_floor", "no_regression", "controls_hold"]
    floor, regression, controls = spec.checks
    assert floor.metric == "nDCG@10" and floor.kind == "threshold" and floor.level == "block"
    assert regression.kind == "vs_baseline" and regression.effective_alpha == 0.01
    assert controls.scope == ("c1", "c2") and controls.level == "warn"
    assert floor.line == 2 and controls.line == 10
    assert (spec.seed, spec.resamples, spec.correction) == (0, 10_000, "holm")
    assert spec.needs_baseline and spec.source == str(path)
    assert Check(id="x", metric="AP", vs_baseline="no_significant_regression"
                 ).effective_alpha == 0.05


def test_equality_uses_a_fixed_tolerance() -> None:
    c = Check(id="x", metric="RR@10", op="==", threshold=0.3)
    assert c.holds(0.1 + 0.2)                   # 0.30000000000000004
    assert c.holds(0.3 * (1 + 5e-10))
    assert not c.holds(0.3 * (1 + 5e-9))
    zero = Check(id="z", metric="RR@10", op="==", threshold=0.0)
    assert zero.holds(1e-13) and not zero.holds(1e-11)
    assert "rel_tol" not in Check.model_fields and "tolerance" not in Check.model_fields
    le = Check(id="le", metric="latency_p95", op="<=", threshold=100)
    assert le.holds(100.0) and not le.holds(math.nextafter(100.0, 200.0))


# -- one test per refusal rule -------------------------------------------------

def test_refuses_both_forms() -> None:
    refused(one("""
        id: both
        metric: nDCG@10
        op: ">="
        threshold: 0.5
        vs_baseline: no_significant_regression
    """), "check 'both'", "line 2", "either op + threshold or vs_baseline, not both")


def test_refuses_neither_form() -> None:
    refused(one("""
        id: neither
        metric: nDCG@10
    """), "check 'neither'", "give either op + threshold", "vs_baseline")


def test_refuses_op_without_threshold_and_threshold_without_op() -> None:
    refused(one("""
        id: half
        metric: nDCG@10
        op: ">="
    """), "check 'half'", "op '>=' needs a threshold")
    refused(one("""
        id: other_half
        metric: nDCG@10
        threshold: 0.5
    """), "check 'other_half'", "threshold needs an op")


def test_refuses_unknown_keys_and_suggests_the_close_match() -> None:
    msg = refused(one("""
        id: typo
        metric: nDCG@10
        op: ">="
        treshold: 0.5
    """), "line 5", "check 'typo'", "unknown key 'treshold' (did you mean 'threshold'?)")
    assert "needs a threshold" not in msg  # the typo is reported once, not echoed
    refused(one("""
        id: far
        metric: nDCG@10
        vs_baseline: no_significant_regression
        colour: red
    """), "unknown key 'colour'; allowed: id, metric")
    refused("""\
        chekcs: []
    """, "unknown top-level key 'chekcs' (did you mean 'checks'?)", "missing the 'checks' list")


def test_refuses_duplicate_ids() -> None:
    refused("""\
        checks:
          - id: same
            metric: nDCG@10
            op: ">="
            threshold: 0.5
          - id: same
            metric: RR@10
            op: ">="
            threshold: 0.5
    """, "line 6", "duplicate id 'same' (first used at line 2)")


def test_refuses_a_file_with_zero_checks() -> None:
    refused("checks: []\n", "zero checks")
    refused("checks:\n", "zero checks")


def test_refuses_alpha_on_a_threshold_check() -> None:
    refused(one("""
        id: alpha_misplaced
        metric: nDCG@10
        op: ">="
        threshold: 0.5
        alpha: 0.1
    """), "check 'alpha_misplaced'", "alpha only applies to vs_baseline checks")


def test_refuses_an_empty_scope() -> None:
    refused(one("""
        id: empty_scope
        metric: nDCG@10
        op: ">="
        threshold: 0.5
        scope: []
    """), "check 'empty_scope'", "scope is empty")


def test_refuses_a_repeated_scope() -> None:
    refused(one("""
        id: repeated_scope
        metric: nDCG@10
        op: ">="
        threshold: 0.5
        scope: [a, b, a]
    """), "check 'repeated_scope'", "scope lists 'a' more than once")


def test_refuses_scope_ids_absent_from_the_known_cases() -> None:
    text = one("""
        id: scoped
        metric: nDCG@10
        op: ">="
        threshold: 0.5
        scope: [a, ghost, b]
    """)
    refused(text, "line 6", "check 'scoped'", "field 'scope'", "'ghost'",
            known_case_ids=["a", "b"])
    assert parse_checks(text).checks[0].scope == ("a", "ghost", "b")  # unknown ids: not checked


def test_refuses_unknown_metric_names_with_a_suggestion() -> None:
    refused(one("""
        id: bad_metric
        metric: nDGC@10
        op: ">="
        threshold: 0.5
    """), "line 3", "check 'bad_metric'", "field 'metric'", "unknown metric 'nDGC@10'",
        "did you mean 'nDCG@10'")


def test_refuses_invalid_yaml_with_its_line() -> None:
    refused("checks:\n  - id: a\n   metric: x\n", "checks.yaml, line 3", "invalid YAML")
    refused("checks: [\n", "invalid YAML", "line 2")


def test_refuses_a_key_repeated_within_a_check() -> None:
    refused(one("""
        id: twice
        metric: nDCG@10
        op: ">="
        threshold: 0.5
        threshold: 0.9
    """), "line 6", "key 'threshold' repeated (first at line 5)")


def test_refuses_vs_baseline_on_a_run_level_aggregate() -> None:
    refused(one("""
        id: p95_regression
        metric: latency_p95
        vs_baseline: no_significant_regression
    """), "check 'p95_regression'", "run-level aggregate", "use op + threshold")


@pytest.mark.parametrize("body, fragment", [
    ("id: t\nmetric: nDCG@10\nop: '>'\nthreshold: 0.5", "field 'op': Input should be '<=', '>='"),
    ("id: t\nmetric: nDCG@10\nop: '>='\nthreshold: yes", "field 'threshold'"),
    ("id: t\nmetric: nDCG@10\nop: '>='\nthreshold: '0.5'", "field 'threshold'"),
    ("id: t\nmetric: nDCG@10\nop: '>='\nthreshold: .nan", "field 'threshold'"),
    ("id: t\nmetric: nDCG@10\nvs_baseline: no_regression", "field 'vs_baseline'"),
    ("id: t\nmetric: nDCG@10\nvs_baseline: no_significant_regression\nalpha: 1.5",
     "field 'alpha'"),
    ("id: t\nmetric: nDCG@10\nop: '>='\nthreshold: 0.5\nlevel: error", "field 'level'"),
    ("id: 7\nmetric: nDCG@10\nop: '>='\nthreshold: 0.5", "field 'id': Input should be a valid "
                                                         "string (quote it)"),
    ("id: t\nmetric: nDCG@10\nop: '>='\nthreshold: 0.5\nscope: a", "field 'scope'"),
])
def test_refuses_values_of_the_wrong_type(body: str, fragment: str) -> None:
    refused(one(body), fragment)


def test_refuses_a_file_that_is_not_a_mapping_of_checks() -> None:
    refused("", "expected a mapping with a 'checks' list, found an empty file")
    refused("- id: a\n", "found a list")
    refused("checks: {id: a}\n", "'checks' must be a list")
    refused("checks:\n  - just a string\n", "check 1: expected a mapping")
    refused("checks:\n  - {id: a, metric: AP, vs_baseline: no_significant_regression}\n"
            "resamples: 10\n", "field 'resamples'")


def test_all_problems_are_reported_at_once() -> None:
    msg = refused("""\
        checks:
          - id: a
            metric: nDCG@10
          - id: b
            metric: nDCG@10
            op: ">="
            threshold: 0.5
            alpha: 0.1
    """, "2 problems", "check 'a'", "check 'b'")
    assert msg.count("\n  - ") == 2


def test_load_checks_reports_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="checks file not found"):
        load_checks(tmp_path / "nope.yaml")
