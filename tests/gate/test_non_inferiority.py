"""``vs_baseline: {no_regression_beyond: MARGIN}``: pass only when a larger regression is ruled out.

``no_significant_regression`` passes whenever the test cannot show the run
is worse — including when the run is noisy and no test could. The
non-inferiority rule asks for evidence: the one-sided interval's bound must
clear ``−MARGIN`` (``+MARGIN`` for lower-is-better metrics), at the gate's
corrected level, which is the one-sided randomization test of the shifted
differences rejecting "worse by at least MARGIN".
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.gate._helpers import checks, column, result
from typer.testing import CliRunner

from rankproof import ConfigError
from rankproof.cli import app
from rankproof.gate import run_gate
from rankproof.stats import paired_interval, paired_test

IDS = [f"q{i:02d}" for i in range(40)]
RNG = np.random.default_rng(11)
BASE = {q: float(v) for q, v in zip(IDS, RNG.uniform(0.4, 0.9, len(IDS)), strict=True)}
SAME = {q: v + float(d) for (q, v), d in zip(BASE.items(), RNG.normal(0, 0.01, len(IDS)),
                                              strict=True)}
SLIGHTLY_WORSE = {q: v - 0.004 for q, v in SAME.items()}
WORSE = {q: v - 0.03 for q, v in SAME.items()}
NOISY = {q: v + float(d) for (q, v), d in zip(BASE.items(), RNG.normal(0, 0.2, len(IDS)),
                                               strict=True)}

NON_INFERIOR = """\
    checks:
      - id: within_margin
        metric: nDCG@10
        vs_baseline: {no_regression_beyond: 0.01}
    resamples: 2000
"""


def _one(run: dict[str, float], text: str = NON_INFERIOR):  # type: ignore[no-untyped-def]
    return run_gate(checks(text), column("nDCG@10", run), column("nDCG@10", BASE)).checks[0]


def test_a_small_regression_within_the_margin_passes() -> None:
    c = _one(SLIGHTLY_WORSE)
    assert c.passed and c.comparison is not None
    row = c.comparison
    assert row.verdict == "non-inferior" and row.margin == 0.01 and row.ci_high == np.inf
    assert row.ci_low > -0.01
    assert "no regression beyond 0.01" in c.message and "clears -0.01" in c.message


def test_a_regression_beyond_the_margin_fails() -> None:
    c = _one(WORSE)
    assert not c.passed and c.outcome == "FAIL"
    assert c.comparison is not None and c.comparison.verdict == "not shown non-inferior"
    assert c.comparison.ci_low <= -0.01
    assert "a regression larger than 0.01 is not ruled out" in c.message


def test_noise_passes_no_significant_regression_but_not_non_inferiority() -> None:
    """The point of the rule: absence of evidence of a regression is not evidence of absence."""
    lenient = _one(NOISY, NON_INFERIOR.replace("{no_regression_beyond: 0.01}",
                                               "no_significant_regression"))
    strict = _one(NOISY)
    assert lenient.passed and not strict.passed


@pytest.mark.parametrize("run", [SLIGHTLY_WORSE, WORSE, NOISY, SAME])
def test_the_verdict_is_the_one_sided_test_against_the_margin(run: dict[str, float]) -> None:
    c = _one(run)
    assert c.comparison is not None
    shifted = {q: v + 0.01 for q, v in run.items()}
    one = paired_test(shifted, BASE, alternative="greater", resamples=2000, seed=0)
    bound = paired_interval(run, BASE, alternative="greater", resamples=2000, seed=0)
    assert c.comparison.result.p_value == one.p_value
    assert c.comparison.ci_low == bound.low
    assert c.passed == (one.p_value <= 0.05) == (bound.low > -0.01)
    # The reported difference stays the real one, not the shifted one.
    assert c.difference == pytest.approx(np.mean([run[q] - BASE[q] for q in IDS]))


def test_lower_is_better_metrics_bound_the_increase() -> None:
    base = {q: 100.0 + i for i, q in enumerate(IDS)}
    slower = {q: v + 2.0 + 0.1 * (i % 3) for i, (q, v) in enumerate(base.items())}
    spec = checks("""\
        checks:
          - {id: lat, metric: latency_ms, vs_baseline: {no_regression_beyond: 5}}
          - {id: lat_tight, metric: latency_ms, vs_baseline: {no_regression_beyond: 1}}
        resamples: 2000
    """)
    v = run_gate(spec, result({q: {"latency_ms": slower[q]} for q in IDS}, latency=slower),
                 result({q: {"latency_ms": base[q]} for q in IDS}, latency=base))
    loose, tight = v.checks
    assert loose.comparison is not None and tight.comparison is not None
    assert loose.passed and loose.comparison.ci_low == -np.inf and loose.comparison.ci_high < 5
    assert not tight.passed and tight.comparison.ci_high >= 1
    # Two baseline checks, corrected together (Holm step-down): the smaller p is tested at
    # α/2 (a 97.5% bound) and, once it is rejected, the other at α (95%).
    assert (loose.comparison.ci_level, tight.comparison.ci_level) == pytest.approx((0.975, 0.95))


@pytest.mark.parametrize(("rule", "fragment"), [
    ("{no_regression_beyond: 0}", "must be a positive number"),
    ("{no_regression_beyond: -0.01}", "must be a positive number"),
    ("{no_regression_beyond: .inf}", "must be a positive number"),
    ("{no_regression_beyond: abc}", "must be a positive number"),
    ("{no_regression_beyond: true}", "must be a positive number"),
    ("{no_regresion_beyond: 0.01}", "expected {no_regression_beyond: MARGIN}"),
    ("{no_regression_beyond: 0.01, alpha: 0.1}", "expected {no_regression_beyond: MARGIN}"),
    ("no_regression", "expected 'no_significant_regression' or {no_regression_beyond"),
])
def test_bad_rules_are_refused_with_the_field_and_line(rule: str, fragment: str) -> None:
    text = f"checks:\n  - id: c\n    metric: nDCG@10\n    vs_baseline: {rule}\n"
    with pytest.raises(ConfigError) as info:
        checks(text, source="checks.yaml")
    message = str(info.value)
    assert "checks.yaml, line" in message and "field 'vs_baseline'" in message
    assert fragment in message and message.count("\n  - ") == 1


def test_end_to_end_through_the_cli(tmp_path: Path) -> None:
    """Measure JSON in, exit codes and the margin in the verdict JSON out."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d{q} 1\n{q} 0 e{q} 1\n" for q in IDS))
    def run_file(name: str, lose: int) -> Path:
        path = tmp_path / name
        rows = []
        for i, q in enumerate(IDS):
            order = [f"x{q}", f"d{q}", f"e{q}"] if i < lose else [f"d{q}", f"e{q}", f"x{q}"]
            rows += [f"{q} Q0 {d} {r} {10 - r} {name}\n" for r, d in enumerate(order, 1)]
        path.write_text("".join(rows))
        return path
    runner = CliRunner()
    outputs = {}
    for name, lose in (("base", 0), ("same", 0), ("worse", 20)):
        out = tmp_path / f"{name}.json"
        r = runner.invoke(app, ["measure", str(qrels), str(run_file(name, lose)), "-m",
                                "nDCG@10", "-f", "json", "-o", str(out)])
        assert r.exit_code == 0, r.output
        outputs[name] = out
    spec = tmp_path / "checks.yaml"
    spec.write_text("checks:\n  - id: ni\n    metric: nDCG@10\n"
                    "    vs_baseline: {no_regression_beyond: 0.02}\nresamples: 2000\n")
    codes = {}
    for name in ("same", "worse"):
        verdict = tmp_path / f"{name}-verdict.json"
        r = runner.invoke(app, ["gate", str(spec), "--report", str(outputs[name]), "--baseline",
                                str(outputs["base"]), "--json", str(verdict)])
        codes[name] = r.exit_code
        data = json.loads(verdict.read_text())
        assert data["checks"][0]["margin"] == 0.02
    assert codes == {"same": 0, "worse": 1}
