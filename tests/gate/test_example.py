"""``examples/custom_client`` runs offline end to end and decides both gates as documented."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "custom_client" / "run_example.py"


def test_the_custom_client_example(tmp_path: Path, junit_schema: Any) -> None:
    env = {**os.environ, "COLUMNS": "220"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run([sys.executable, str(EXAMPLE), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=180, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "search service on http://127.0.0.1:" in out
    assert "candidate vs baseline: 28 golden queries, paired randomization test" in out
    assert "nDCG@10" in out and "+0.2895 [" in out
    assert "1. gate the candidate against baseline 'main'" in out
    assert "gate PASSED: 7 checks" in out
    assert "gate FAILED: 7 checks, 5 blocking failures" in out
    assert ("FAIL ndcg_no_regression: nDCG@10 significantly worse than the baseline" in out
            and "Δ -0.3571 [" in out and "% interval" in out)
    assert "FAIL controls_hold: RR@10 = 0.75 violates >= 1" in out
    assert out.rstrip().endswith("candidate gate: PASSED; titles_only gate: FAILED — as expected")
    for stem in ("candidate", "titles_only"):
        junit_schema.validate(str(tmp_path / f"{stem}.xml"))
        assert (tmp_path / f"{stem}.md").read_text().startswith("### ")
