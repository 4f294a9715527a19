"""`run_gate`: threshold and baseline checks, polarity, scope, coverage, comparability."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from tests.gate._helpers import checks, column, result

from rankproof import ConfigError, InputError
from rankproof.gate import run_gate
from rankproof.stats import correct, paired_test

IDS = [f"q{i:02d}" for i in range(30)]
RNG = np.random.default_rng(7)
BASE = {q: float(v) for q, v in zip(IDS, RNG.uniform(0.4, 0.9, len(IDS)), strict=True)}
WORSE = {q: v - 0.15 for q, v in BASE.items()}
BETTER = {q: v + 0.15 for q, v in BASE.items()}
NOISE = {q: v + float(d) for (q, v), d in
         zip(BASE.items(), RNG.normal(0, 0.01, len(IDS)), strict=True)}

REGRESSION = """\
    checks:
      - id: no_regression
        metric: nDCG@10
        vs_baseline: no_significant_regression
    resamples: 2000
"""


def test_threshold_checks_use_the_mean_and_the_explicit_op() -> None:
    r = column("nDCG@10", {"a": 0.5, "b": 0.7})
    v = run_gate(checks("""\
        checks:
          - {id: ge_pass, metric: nDCG@10, op: ">=", threshold: 0.6}
          - {id: ge_fail, metric: nDCG@10, op: ">=", threshold: 0.61}
          - {id: le_pass, metric: nDCG@10, op: "<=", threshold: 0.6}
          - {id: eq_pass, metric: nDCG@10, op: "==", threshold: 0.6}
          - {id: eq_fail, metric: nDCG@10, op: "==", threshold: 0.6000001}
    """), r)
    got = {c.id: c.passed for c in v.checks}
    assert got == {"ge_pass": True, "ge_fail": False, "le_pass": True, "eq_pass": True,
                   "eq_fail": False}
    failed = v.checks[1]
    assert failed.value == pytest.approx(0.6) and failed.outcome == "FAIL"
    assert "nDCG@10 = 0.6 violates >= 0.61" in failed.message
    assert not v.passed and v.exit_code == 1 and [c.id for c in v.failures] == ["ge_fail",
                                                                                 "eq_fail"]


def test_scope_and_coverage_are_reported() -> None:
    r = column("RR@10", {"c1": 1.0, "c2": 1.0, "c3": 1.0, "c4": 1.0, "other": 0.0})
    v = run_gate(checks("""\
        checks:
          - {id: controls_hold, metric: RR@10, op: ">=", threshold: 1.0,
             scope: [c1, c2, c3, c4]}
          - {id: overall, metric: RR@10, op: ">=", threshold: 0.5}
    """), r)
    assert v.checks[0].summary() == "controls_hold: pass (4/4 cases)"
    assert v.checks[1].summary() == "overall: pass (5/5 cases)"
    assert v.checks[0].scope == ("c1", "c2", "c3", "c4")


def test_a_scoped_check_whose_cases_have_no_row_raises_naming_them() -> None:
    r = column("RR@10", {"c1": 1.0})
    spec = checks("""\
        checks:
          - {id: controls_hold, metric: RR@10, op: ">=", threshold: 1.0, scope: [c1, c9, c8]}
    """)
    with pytest.raises(ConfigError, match=r"controls_hold.*'c9', 'c8' produced no row"):
        run_gate(spec, r)


def test_coverage_counts_cases_without_a_value() -> None:
    r = result({"a": {"nDCG@10": 1.0}, "b": {"nDCG@10": 0.0}, "noanswer": {}})
    v = run_gate(checks("checks:\n  - {id: c, metric: nDCG@10, op: '>=', threshold: 0.1}\n"), r)
    assert v.checks[0].coverage == "2/3 cases" and v.checks[0].value == 0.5


def test_warn_level_failures_do_not_block() -> None:
    r = column("nDCG@10", {"a": 0.2})
    v = run_gate(checks("checks:\n  - {id: soft, metric: nDCG@10, op: '>=', threshold: 0.9, "
                        "level: warn}\n"), r)
    assert v.passed and v.exit_code == 0
    assert v.checks[0].outcome == "WARN" and v.warnings == v.checks and not v.failures
    assert v.checks[0].summary() == "soft: warn (1/1 cases)"


def test_rerun_of_the_same_system_passes() -> None:
    v = run_gate(checks(REGRESSION), column("nDCG@10", BASE), column("nDCG@10", BASE,
                                                                     name="main"))
    c = v.checks[0]
    assert c.passed and c.difference == 0.0 and c.p_value == 1.0
    assert c.ties == len(IDS) and c.coverage == f"{len(IDS)}/{len(IDS)} cases"
    assert v.baseline == "main"


def test_a_real_regression_fails_with_delta_ci_and_p() -> None:
    v = run_gate(checks(REGRESSION), column("nDCG@10", WORSE), column("nDCG@10", BASE))
    c = v.checks[0]
    expected = paired_test(WORSE, BASE, resamples=2000, seed=0)
    assert not c.passed and c.outcome == "FAIL"
    assert c.difference == pytest.approx(-0.15)
    assert (c.ci_low, c.ci_high, c.p_value) == (expected.ci_low, expected.ci_high,
                                                expected.p_value)
    assert c.ci_high is not None and c.ci_high < 0
    assert c.seed == 0 and c.resamples == 2000 and c.test == "randomization"
    assert (c.wins, c.ties, c.losses) == (0, 0, len(IDS))
    assert "significantly worse" in c.message and "Δ -0.1500" in c.message
    assert "[95% interval" in c.message and "p " in c.message


def test_a_significant_improvement_passes_and_noise_passes() -> None:
    improved = run_gate(checks(REGRESSION), column("nDCG@10", BETTER), column("nDCG@10", BASE))
    assert improved.passed and "significantly better" in improved.checks[0].message
    assert improved.checks[0].wins == len(IDS)
    noisy = run_gate(checks(REGRESSION), column("nDCG@10", NOISE), column("nDCG@10", BASE))
    assert noisy.passed and "no significant regression" in noisy.checks[0].message


def test_regression_direction_follows_polarity() -> None:
    spec = checks("""\
        checks:
          - id: latency_no_regression
            metric: latency_ms
            vs_baseline: no_significant_regression
        resamples: 2000
    """)
    slow = {q: 10 + v * 10 for q, v in BASE.items()}
    fast = {q: 10 + v for q, v in BASE.items()}
    # latency rose significantly: worse, because lower latency is better
    assert not run_gate(spec, column("latency_ms", slow), column("latency_ms", fast)).passed
    # latency fell significantly: an improvement
    v = run_gate(spec, column("latency_ms", fast), column("latency_ms", slow))
    assert v.passed and v.checks[0].wins == len(IDS)   # wins counted in the good direction


def test_baseline_p_values_are_holm_adjusted_across_the_gate() -> None:
    spec = checks("""\
        checks:
          - {id: a, metric: nDCG@10, vs_baseline: no_significant_regression}
          - {id: b, metric: RR@10, vs_baseline: no_significant_regression, alpha: 0.2}
        resamples: 2000
    """)
    cur = result({q: {"nDCG@10": NOISE[q], "RR@10": WORSE[q]} for q in IDS})
    base = result({q: {"nDCG@10": BASE[q], "RR@10": BASE[q]} for q in IDS})
    v = run_gate(spec, cur, base)
    raw = [c.p_value for c in v.checks]
    assert [c.p_corrected for c in v.checks] == pytest.approx(list(correct(raw, "holm")))
    assert v.checks[1].alpha == 0.2 and v.checks[0].alpha == 0.05
    none = run_gate(checks(REGRESSION.replace("resamples: 2000", "resamples: 2000\n"
                                              "    correction: none")),
                    column("nDCG@10", NOISE), column("nDCG@10", BASE))
    assert none.checks[0].p_corrected == none.checks[0].p_value


def test_seed_is_recorded_and_changes_nothing_but_resampling() -> None:
    spec = checks(REGRESSION + "    seed: 11\n")
    v = run_gate(spec, column("nDCG@10", NOISE), column("nDCG@10", BASE))
    assert v.seed == 11 and v.checks[0].seed == 11
    again = run_gate(spec, column("nDCG@10", NOISE), column("nDCG@10", BASE))
    assert again.to_dict() == v.to_dict()


def test_a_baseline_check_without_a_baseline_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"'no_regression' compare with a baseline.*--baseline"):
        run_gate(checks(REGRESSION), column("nDCG@10", BASE))


@pytest.mark.parametrize("change, fragment", [
    ({"measures": ("nDCG@10", "RR@10")}, "measure definitions differ"),
    ({"granularity": "document"}, "granularity differs"),
    ({"judgments": "sha256:other"}, "judgments differ"),
])
def test_an_incomparable_baseline_is_refused(change: dict[str, object], fragment: str) -> None:
    current = column("nDCG@10", BASE, **change)
    with pytest.raises(ConfigError, match=fragment):
        run_gate(checks(REGRESSION), current, column("nDCG@10", BASE, name="main"))


def test_a_different_corpus_is_stamped_not_refused() -> None:
    v = run_gate(checks(REGRESSION), column("nDCG@10", BASE, corpus="sha256:new"),
                 column("nDCG@10", BASE, name="main"))
    assert v.passed and any("corpus differs" in n for n in v.notes)


def test_unpaired_cases_are_an_input_error() -> None:
    less = {q: v for q, v in BASE.items() if q != "q00"}
    with pytest.raises(InputError, match=r"cover different cases.*pairing is by case id"):
        run_gate(checks(REGRESSION), column("nDCG@10", less), column("nDCG@10", BASE))


def test_a_metric_missing_from_the_run_is_an_input_error() -> None:
    with pytest.raises(InputError, match="'RR@10' was not computed"):
        run_gate(checks("checks:\n  - {id: x, metric: RR@10, op: '>=', threshold: 0}\n"),
                 column("nDCG@10", BASE))


def test_the_verdict_is_a_frozen_json_result() -> None:
    v = run_gate(checks(REGRESSION), column("nDCG@10", WORSE), column("nDCG@10", BASE))
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.run = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.checks[0].passed = True  # type: ignore[misc]
    data = json.loads(v.to_json())
    assert data["kind"] == "rankproof.gate" and data["schema_version"] == 2
    assert data["passed"] is False and data["checks"][0]["outcome"] == "FAIL"
    assert data["checks"][0]["coverage"] == f"{len(IDS)}/{len(IDS)} cases"
    assert not isinstance(v, BaseException)


def test_unpaired_cases_are_the_shared_pairing_error_listing_both_sides() -> None:
    from rankproof import PairingError

    less = {q: v for q, v in BASE.items() if q != "q00"}
    more = {**BASE, "extra": 0.5}
    with pytest.raises(PairingError, match=r"check 'no_regression': 'run' and 'main' cover "
                                           r"different cases for nDCG@10") as err:
        run_gate(checks(REGRESSION), column("nDCG@10", less), column("nDCG@10", more,
                                                                      name="main"))
    assert err.value.only_left == () and err.value.only_right == ("extra", "q00")
    assert isinstance(err.value, InputError)


def test_a_baseline_check_holds_the_shared_row() -> None:
    v = run_gate(checks(REGRESSION), column("nDCG@10", WORSE), column("nDCG@10", BASE))
    c = v.checks[0]
    row = c.comparison
    assert row is not None and row.verdict == "worse" and row.candidate == "run"
    assert row.qids == tuple(sorted(IDS)) and row.alpha == 0.05
    assert (c.difference, c.p_value, c.losses) == (row.result.difference, row.result.p_value,
                                                   row.losses)
    data = json.loads(v.to_json())["checks"][0]
    assert data["comparison"]["candidate_values"] == [WORSE[q] for q in sorted(IDS)]
    assert data["difference"] == row.result.difference  # the flat numbers stay in the JSON
    threshold = run_gate(checks("checks:\n  - {id: t, metric: nDCG@10, op: '>=', "
                                "threshold: 0}\n"), column("nDCG@10", BASE))
    assert threshold.checks[0].comparison is None and threshold.checks[0].p_value is None


def test_power_pilot_from_a_gate_result(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankproof.cli import app

    v = run_gate(checks(REGRESSION), column("nDCG@10", NOISE), column("nDCG@10", BASE))
    path = tmp_path / "gate.json"
    path.write_text(v.to_json())
    out = CliRunner().invoke(app, ["power", "--pilot", str(path), "-m", "nDCG@10", "--json"])
    assert out.exit_code == 0, out.output
    sd = float(np.std([NOISE[q] - BASE[q] for q in IDS], ddof=1))
    assert json.loads(out.stdout)["sd"] == pytest.approx(sd)
    old = json.loads(v.to_json())
    old["schema_version"] = 1
    path.write_text(json.dumps(old))
    refused = CliRunner().invoke(app, ["power", "--pilot", str(path)])
    assert refused.exit_code == 2 and "version-1 gate result" in refused.stderr
