"""A baseline saved by another rankproof version is gated with a note naming both (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gate._helpers import checks, column

from rankproof._version import __version__
from rankproof.gate import load_baseline, run_gate, save_baseline

CHECKS = """\
checks:
  - id: no_regression
    metric: nDCG@10
    vs_baseline: no_significant_regression
"""
SCORES = {f"q{i}": 0.5 + i / 100 for i in range(10)}


def test_a_baseline_from_another_version_is_noted(tmp_path: Path) -> None:
    path = save_baseline(column("nDCG@10", SCORES), "main", tmp_path)
    same = run_gate(checks(CHECKS), column("nDCG@10", SCORES), load_baseline(path))
    assert not [n for n in same.notes if "saved by rankproof" in n]
    doc = json.loads(path.read_text())
    doc["tool_version"] = doc["run"]["provenance"]["tool_version"] = "0.0.1"
    path.write_text(json.dumps(doc))
    verdict = run_gate(checks(CHECKS), column("nDCG@10", SCORES), load_baseline(path))
    assert verdict.passed  # noted, not refused: the values are still compared
    notes = [n for n in verdict.notes if "saved by rankproof" in n]
    assert notes == [f"the baseline 'main' was saved by rankproof 0.0.1 and this run comes "
                     f"from rankproof {__version__}: a measure or stage changed between the "
                     "two versions would show as a difference (re-save the baseline with "
                     f"rankproof {__version__} to compare like with like)"]
