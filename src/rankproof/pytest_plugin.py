"""pytest plugin: the ``rankproof_gate`` fixture (registered through the ``pytest11`` entry point).

A team gates search quality in its own test suite::

    def test_search_quality(rankproof_gate):
        rankproof_gate("checks.yaml", target=my_target, goldens="goldens.jsonl")

The fixture runs the target over the golden cases for exactly the metrics
the checks name, evaluates the checks (against ``baseline=`` when given),
and fails the test with one line per failed check — the numbers included —
rather than an assertion traceback. Warn-level failures do not fail the
test; they are emitted as `GateWarning`, which pytest lists in its warnings
summary. A checks file or golden set that cannot be used (a `ConfigError`
or `InputError`) also fails the test, with the reason.

Relative paths are looked up beside the test module first, then in the
current directory, so ``"checks.yaml"`` next to the test works whatever
directory pytest is started from.

This module is imported by every pytest session in an environment where
rankproof is installed, so it imports nothing heavy at module level.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rankproof.gate import Baseline, GateVerdict
    from rankproof.targets import Case, RunResult, Target


class GateWarning(UserWarning):
    """A warn-level check of a rankproof gate failed (reported, never blocking)."""


def failure_message(verdict: GateVerdict) -> str:
    """The text a failed gate shows: a headline, then one line per check that did not pass."""
    failures = verdict.failures
    lines = [f"rankproof gate failed: {len(failures)} of {len(verdict.checks)} check(s) "
             f"blocked run {verdict.run!r}"
             + (f" (baseline {verdict.baseline!r})" if verdict.baseline else "")]
    for c in verdict.checks:
        mark = {"PASS": "ok  ", "FAIL": "FAIL", "WARN": "warn"}[c.outcome]
        detail = c.message if not c.passed else c.summary()
        lines.append(f"  {mark} {c.id} [{c.metric}, {c.coverage}]: {detail}")
    lines += [f"  note: {n}" for n in verdict.notes]
    return "\n".join(lines)


class RankproofGate:
    """The callable behind the ``rankproof_gate`` fixture; ``result`` holds the last run."""

    def __init__(self, test_dir: Path) -> None:
        self.test_dir = test_dir
        self.result: RunResult | None = None
        self.verdict: GateVerdict | None = None

    def _path(self, value: str | os.PathLike[str], what: str) -> Path:
        p = Path(value)
        if p.is_absolute():
            return p
        for base in (self.test_dir, Path.cwd()):
            if (base / p).exists():
                return base / p
        pytest.fail(f"rankproof gate: {what} {str(p)!r} not found beside the test "
                    f"({self.test_dir}) or in the current directory ({Path.cwd()})",
                    pytrace=False)

    def __call__(
        self,
        checks: str | os.PathLike[str],
        *,
        target: Target,
        goldens: str | os.PathLike[str] | list[Case] | tuple[Case, ...],
        baseline: Baseline | RunResult | str | os.PathLike[str] | None = None,
        baseline_dir: str | os.PathLike[str] | None = None,
        name: str | None = None,
    ) -> GateVerdict:
        """Run ``target`` on ``goldens``, evaluate ``checks``; fail the test on a blocking failure.

        Returns the verdict when it passed (warnings emitted as `GateWarning`).
        """
        from rankproof._errors import RankproofError
        from rankproof.gate import DEFAULT_DIR, evaluate_target

        checks_path = self._path(checks, "checks file")
        golden_arg: Any = goldens
        if isinstance(goldens, str | os.PathLike):
            golden_arg = self._path(goldens, "golden set")
        base: Any = baseline
        if isinstance(baseline, os.PathLike) or (
                isinstance(baseline, str) and ("/" in baseline or baseline.endswith(".json"))):
            base = self._path(baseline, "baseline")
        try:
            verdict, result = evaluate_target(
                checks_path, target, golden_arg, baseline=base,
                baseline_dir=baseline_dir if baseline_dir is not None else DEFAULT_DIR,
                name=name)
        except RankproofError as exc:
            pytest.fail(f"rankproof gate could not be evaluated: {exc}", pytrace=False)
        self.result, self.verdict = result, verdict
        for c in verdict.warnings:
            warnings.warn(GateWarning(f"rankproof gate warning {c.id} [{c.metric}, "
                                      f"{c.coverage}]: {c.message}"), stacklevel=2)
        if not verdict.passed:
            pytest.fail(failure_message(verdict), pytrace=False)
        return verdict


@pytest.fixture
def rankproof_gate(request: pytest.FixtureRequest) -> RankproofGate:
    """``rankproof_gate(checks, target=..., goldens=..., baseline=None)``: gate a target."""
    return RankproofGate(Path(request.path).parent)
