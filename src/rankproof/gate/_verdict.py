"""`run_gate`: evaluate a checks file on a run (and a baseline) into a `GateVerdict`.

A verdict is a *result*, not an exception: a failed gate is an expected,
reportable outcome that renderers turn into a table, JUnit XML or Markdown,
and that the CLI turns into exit code 1. Only a gate that cannot be
evaluated (no baseline for a baseline check, an incomparable baseline, a
scoped case with no row) raises.

Threshold checks compare the metric's mean over the checked cases (or the
aggregate over them) with the threshold, using the check's explicit ``op``.

Baseline checks are comparisons like any other: each becomes one pairing
of `rankproof.comparison.compare_pairs` (the engine `rankproof compare` and the
harness use), which pairs the run with the baseline case by case (a
mismatch is a `PairingError`, also an `InputError`), runs the two-sided
sign-flip randomization test (seed and resamples from the checks file,
recorded in every result) and adjusts the p-values of all baseline checks
of one gate together (Holm by default), because a gate with many baseline
checks would otherwise fail by chance far more often than α. A check fails
when its row's verdict is *worse*: adjusted p ≤ its α *and* the difference
points the bad way for the metric's polarity; a significant improvement
passes.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rankproof._errors import ConfigError, InputError
from rankproof.comparison import ComparisonRow, Pairing, compare_pairs, format_end
from rankproof.gate._baseline import Baseline, check_compatible
from rankproof.gate._checks import Check, ChecksFile, resolve_checks
from rankproof.measures import lookup
from rankproof.stats import DEFAULT_CORRECTION, DEFAULT_RESAMPLES, DEFAULT_SEED
from rankproof.targets import RunResult

SCHEMA_VERSION = 2
#: A baseline check's numbers, written flat in the JSON beside its comparison row.
_FLAT = ("baseline_value", "difference", "ci_low", "ci_high", "ci_level", "margin", "p_value",
         "p_corrected", "alpha", "correction", "test", "seed", "resamples", "wins", "ties",
         "losses")
Outcome = Literal["PASS", "FAIL", "WARN"]


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one check, with every number it was decided on.

    ``value``: the metric on this run over the checked cases (mean or
    aggregate). For baseline checks also ``baseline_value``, ``difference``
    (this run − baseline), its ``ci_low``/``ci_high`` (the comparison row's
    interval at ``ci_level``: the test inverted at the check's corrected level,
    so it excludes 0 — or, for a ``no_regression_beyond`` check, the margin —
    exactly when the check's verdict says so), ``margin``,
    ``p_value`` and ``p_corrected`` (``correction`` across the gate's
    baseline checks), ``alpha``, ``test``, ``seed``, ``resamples`` and
    ``wins``/``ties``/``losses`` (cases better/equal/worse for the metric's
    polarity). ``covered``/``total``: cases that contributed a value / cases
    the check was asked to cover.
    """

    id: str
    metric: str
    kind: Literal["threshold", "vs_baseline"]
    level: Literal["block", "warn"]
    passed: bool
    higher_is_better: bool
    value: float
    covered: int
    total: int
    message: str
    scope: tuple[str, ...] | None = None
    op: str | None = None
    threshold: float | None = None
    comparison: ComparisonRow | None = None

    # -- a baseline check's numbers, all read from its one comparison row --------------

    @property
    def baseline_value(self) -> float | None:
        return None if self.comparison is None else self.comparison.result.mean_b

    @property
    def difference(self) -> float | None:
        return None if self.comparison is None else self.comparison.result.difference

    @property
    def ci_low(self) -> float | None:
        return None if self.comparison is None else self.comparison.ci_low

    @property
    def ci_high(self) -> float | None:
        return None if self.comparison is None else self.comparison.ci_high

    @property
    def ci_level(self) -> float | None:
        return None if self.comparison is None else self.comparison.ci_level

    @property
    def margin(self) -> float | None:
        return None if self.comparison is None else self.comparison.margin

    @property
    def p_value(self) -> float | None:
        return None if self.comparison is None else self.comparison.result.p_value

    @property
    def p_corrected(self) -> float | None:
        return None if self.comparison is None else self.comparison.p_corrected

    @property
    def alpha(self) -> float | None:
        return None if self.comparison is None else self.comparison.alpha

    @property
    def correction(self) -> str | None:
        return None if self.comparison is None else self.comparison.correction

    @property
    def test(self) -> str | None:
        return None if self.comparison is None else self.comparison.result.test

    @property
    def seed(self) -> int | None:
        return None if self.comparison is None else self.comparison.result.seed

    @property
    def resamples(self) -> int | None:
        return None if self.comparison is None else self.comparison.result.resamples

    @property
    def wins(self) -> int | None:
        return None if self.comparison is None else self.comparison.wins

    @property
    def ties(self) -> int | None:
        return None if self.comparison is None else self.comparison.ties

    @property
    def losses(self) -> int | None:
        return None if self.comparison is None else self.comparison.losses

    @property
    def outcome(self) -> Outcome:
        """PASS, FAIL (a blocking check failed) or WARN (a warn-level check failed)."""
        if self.passed:
            return "PASS"
        return "FAIL" if self.level == "block" else "WARN"

    @property
    def blocking_failure(self) -> bool:
        return not self.passed and self.level == "block"

    @property
    def coverage(self) -> str:
        return f"{self.covered}/{self.total} cases"

    def summary(self) -> str:
        """One line, e.g. ``controls_hold: pass (4/4 cases)``."""
        word = {"PASS": "pass", "FAIL": "fail", "WARN": "warn"}[self.outcome]
        return f"{self.id}: {word} ({self.coverage})"

    def to_dict(self) -> dict[str, Any]:
        """Every field and baseline number flat (as version 1 wrote them), plus the row."""
        out: dict[str, Any] = {}
        for name in (*(n for n in self.__dataclass_fields__ if n != "comparison"), *_FLAT):
            v = getattr(self, name)
            if isinstance(v, float) and not math.isfinite(v):
                v = None
            out[name] = list(v) if isinstance(v, tuple) else v
        out["comparison"] = None if self.comparison is None else self.comparison.to_dict()
        out["outcome"] = self.outcome
        out["coverage"] = self.coverage
        return out


@dataclass(frozen=True)
class GateVerdict:
    """Every check's result for one run; ``passed`` unless a blocking check failed."""

    run: str
    checks: tuple[CheckResult, ...]
    baseline: str | None = None
    source: str | None = None
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    correction: str = DEFAULT_CORRECTION
    notes: tuple[str, ...] = field(default=())
    schema_version: int = SCHEMA_VERSION
    provenance: Mapping[str, Any] | None = None
    """The manifest block (`rankproof._manifest.provenance`) the command stamps; written
    only when present."""

    @property
    def passed(self) -> bool:
        return not any(c.blocking_failure for c in self.checks)

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        """Blocking checks that failed."""
        return tuple(c for c in self.checks if c.blocking_failure)

    @property
    def warnings(self) -> tuple[CheckResult, ...]:
        """Warn-level checks that failed (reported, never blocking)."""
        return tuple(c for c in self.checks if c.outcome == "WARN")

    @property
    def exit_code(self) -> int:
        """0 when every blocking check passed, else 1 (the CLI's convention)."""
        return 0 if self.passed else 1

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "kind": "rankproof.gate",
                "passed": self.passed, "run": self.run, "baseline": self.baseline,
                "source": self.source, "seed": self.seed, "resamples": self.resamples,
                "correction": self.correction, "notes": list(self.notes),
                "checks": [c.to_dict() for c in self.checks],
                **({} if self.provenance is None else {"provenance": dict(self.provenance)})}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)


def _fmt(x: float) -> str:
    return f"{x:.4g}" if abs(x) >= 1e-4 or x == 0 else f"{x:.2e}"


def _p(x: float) -> str:
    return "<0.0001" if x < 1e-4 else f"{x:.4f}"


def _scope_rows(check: Check, result: RunResult, what: str) -> tuple[str, ...] | None:
    if check.scope is None:
        return None
    have = set(result.case_ids)
    missing = [c for c in check.scope if c not in have]
    if missing:
        raise ConfigError(f"check {check.id!r}: scoped case(s) {', '.join(map(repr, missing))} "
                          f"produced no row in {what} {result.name!r}")
    return check.scope


def _threshold(check: Check, result: RunResult) -> CheckResult:
    if check.op is None or check.threshold is None:
        raise TypeError(f"check {check.id!r} is not a threshold check")
    d = lookup(check.metric)
    scope = _scope_rows(check, result, "run")
    rows = result.select(scope)
    if d.per_case:
        scores = result.scores(d.name, scope)
        covered = len(scores)
        if not scores:
            raise InputError(f"check {check.id!r}: no case has a value for {d.name!r}")
        value = float(np.mean(list(scores.values())))
    else:
        value = result.aggregate(d.name, scope)
        covered = len(rows)
    passed = check.holds(value)
    relation = "meets" if passed else "violates"
    message = (f"{d.name} = {_fmt(value)} {relation} {check.op} {_fmt(check.threshold)}"
               f"{' (tolerance rel 1e-9, abs 1e-12)' if check.op == '==' else ''}")
    return CheckResult(
        id=check.id, metric=d.name, kind="threshold", level=check.level, passed=passed,
        higher_is_better=d.higher_is_better, value=value, covered=covered, total=len(rows),
        message=message, scope=check.scope, op=check.op, threshold=check.threshold)


def _pairing(check: Check, result: RunResult, baseline: RunResult, base_name: str) -> Pairing:
    d = lookup(check.metric)
    scope = _scope_rows(check, result, "run")
    _scope_rows(check, baseline, "baseline")
    return Pairing(candidate=result.name, baseline=base_name, measure=d.name,
                   candidate_scores=result.scores(d.name, scope),
                   baseline_scores=baseline.scores(d.name, scope),
                   higher_is_better=d.higher_is_better, alpha=check.effective_alpha,
                   unit="case", context=f"check {check.id!r}", margin=check.margin)


def _baseline_result(check: Check, row: ComparisonRow, total: int) -> CheckResult:
    r = row.result
    direction = "lower" if row.higher_is_better else "higher"
    interval = (f"[{row.ci_level * 100:.4g}% interval {format_end(row.ci_low)}, "
                f"{format_end(row.ci_high)}]")
    stats = (f"Δ {r.difference:+.4f} {interval}, p {_p(r.p_value)}"
             + (f" ({row.correction} {_p(row.p_corrected)})" if row.correction != "none"
                else ""))
    if row.margin is not None:
        passed = row.verdict == "non-inferior"
        bound = "lower" if row.higher_is_better else "upper"
        end = row.ci_low if row.higher_is_better else row.ci_high
        if passed:
            message = (f"no regression beyond {row.margin:g} in {row.measure}: the one-sided "
                       f"{bound} bound {format_end(end)} clears {row.bound:+g}; {stats} ≤ α "
                       f"{row.alpha:g}")
        else:
            message = (f"{row.measure}: a regression larger than {row.margin:g} is not ruled "
                       f"out ({direction} is worse): the one-sided {bound} bound {format_end(end)} "
                       f"does not clear {row.bound:+g}; {stats} > α {row.alpha:g}")
    else:
        passed = row.verdict != "worse"
        if not passed:
            message = (f"{row.measure} significantly worse than the baseline ({direction} is "
                       f"worse): {_fmt(r.mean_a)} vs {_fmt(r.mean_b)}, {stats} ≤ α "
                       f"{row.alpha:g}")
        elif row.verdict == "better":
            message = f"{row.measure} significantly better than the baseline: {stats}"
        else:
            message = f"no significant regression in {row.measure}: {stats} > α {row.alpha:g}"
    return CheckResult(
        id=check.id, metric=row.measure, kind="vs_baseline", level=check.level, passed=passed,
        higher_is_better=row.higher_is_better, value=r.mean_a, covered=r.n, total=total,
        message=message, scope=check.scope, comparison=row)


def _judged(check: Check, outcome: CheckResult, result: RunResult, source: str | None
            ) -> CheckResult:
    """A judge-backed check blocks only with a calibration for this judge meeting its floor."""
    if check.judge_calibration is None or check.kappa_floor is None:
        return outcome
    from rankproof.rag import JudgeCalibration, JudgeIdentity

    path = Path(check.judge_calibration)
    if source and not path.is_absolute():
        path = Path(source).parent / path
    judge = result.provenance.judge
    if judge is None:
        blocking, reason = False, ("advisory: the run records no judge (its scores were not "
                                   "made by a judge rankproof ran)")
    else:
        ident = JudgeIdentity(str(judge.get("model")), str(judge.get("rubric_digest")),
                              tuple(judge.get("scale") or ()),
                              str(judge.get("prompt_template_digest")))
        decision = JudgeCalibration.load(path).allows_blocking(check.kappa_floor, ident)
        blocking, reason = decision.blocking, decision.reason
    if blocking:
        return dataclasses.replace(outcome, message=f"{outcome.message} ({reason})")
    return dataclasses.replace(outcome, level="warn", message=f"{outcome.message} [{reason}]")


def run_gate(
    checks: ChecksFile,
    result: RunResult,
    baseline: Baseline | RunResult | None = None,
) -> GateVerdict:
    """Evaluate every check of ``checks`` on ``result`` (and ``baseline`` for baseline checks).

    Metric names are resolved first (`resolve_checks`): a metric registered
    after the checks file was loaded is found, and one still unknown is a
    `ConfigError`. Raises `ConfigError` also when a baseline check has no
    baseline, when the
    baseline is not comparable (measures, granularity or judgments differ),
    or when a scoped case has no row; `InputError` when a checked metric was
    not computed; `PairingError` (an `InputError` too) when the run and the
    baseline cover different cases. Otherwise returns the verdict, passed or not.
    """
    checks = resolve_checks(checks)
    base_run: RunResult | None
    base_name: str | None
    if isinstance(baseline, Baseline):
        base_run, base_name = baseline.result, baseline.name
    elif isinstance(baseline, RunResult):
        base_run, base_name = baseline, baseline.name
    elif baseline is None:
        base_run, base_name = None, None
    else:
        raise TypeError(f"baseline must be a Baseline or RunResult, got {type(baseline).__name__}")
    notes: list[str] = list(result.notes)
    rows: dict[str, CheckResult] = {}
    if checks.needs_baseline:
        if base_run is None or base_name is None:
            ids = ", ".join(repr(c.id) for c in checks.checks if c.kind == "vs_baseline")
            raise ConfigError(f"check(s) {ids} compare with a baseline, but none was given "
                              "(--baseline NAME|PATH)")
        check_compatible(result.provenance, base_run.provenance, base_name)
        blind = [side for side, r in (("this run", result), (f"baseline {base_name!r}", base_run))
                 if r.provenance.judgments_digest is None]
        if blind:
            notes.append(f"the judgments could not be compared: {' and '.join(blind)} "
                         f"record{'s' if len(blind) == 1 else ''} no judgments digest (a "
                         "comparison JSON keeps none); make sure both sides were measured "
                         "with the same qrels")
        a, b = result.provenance.corpus_digest, base_run.provenance.corpus_digest
        if a and b and a != b:
            notes.append(f"the corpus differs from the baseline's (digest {b[:19]}… → "
                         f"{a[:19]}…): documents or chunking changed since {base_name!r}")
        a, b = result.provenance.tool_version, base_run.provenance.tool_version
        if a != b:
            notes.append(f"the baseline {base_name!r} was saved by rankproof {b} and this run "
                         f"comes from rankproof {a}: a measure or stage changed between the "
                         "two versions would show as a difference (re-save the baseline with "
                         f"rankproof {a} to compare like with like)")
        a, b = result.provenance.config_digest, base_run.provenance.config_digest
        if a and b and a != b:
            notes.append(f"the experiment's configuration differs from the baseline's (digest "
                         f"{b[:19]}… → {a[:19]}…): a stage's parameters or model (e.g. the "
                         f"embedding model's files) changed since {base_name!r}")
        vs = [c for c in checks.checks if c.kind == "vs_baseline"]
        compared = compare_pairs([_pairing(c, result, base_run, base_name) for c in vs],
                                 stats=checks.stats)
        rows = {c.id: _baseline_result(c, row, len(result.select(c.scope)))
                for c, row in zip(vs, compared, strict=True)}
    results = tuple(_judged(c, rows[c.id] if c.kind == "vs_baseline"
                            else _threshold(c, result), result, checks.source)
                    for c in checks.checks)
    return GateVerdict(run=result.name, checks=results, baseline=base_name,
                       source=checks.source, seed=checks.seed, resamples=checks.resamples,
                       correction=checks.correction, notes=tuple(notes))
