"""``rankproof gate --target URL --goldens PATH``: a sharded run, interrupted, then ``--resume``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.targets._service import Service, write_goldens
from typer.testing import CliRunner, Result

from rankproof.cli import app
from rankproof.targets._checkpoint import default_root

runner = CliRunner()

CHECKS = """\
checks:
  - id: ndcg_floor
    metric: nDCG@10
    op: ">="
    threshold: 0.2
  - id: recall_floor
    metric: R@5
    op: ">="
    threshold: 0.2
"""

pytestmark = pytest.mark.usefixtures("own_cache")


def gate(tmp_path: Path, url: str, *extra: str) -> Result:
    return runner.invoke(app, ["gate", str(tmp_path / "checks.yaml"), "--target", url,
                               "--goldens", str(tmp_path / "goldens.jsonl"), "--shard-size",
                               "10", "--max-concurrency", "3", "-f", "json", *extra],
                         env={"COLUMNS": "200"})


def test_gate_target_run_resumes_after_an_interruption(svc: Service, tmp_path: Path) -> None:
    (tmp_path / "checks.yaml").write_text(CHECKS)
    write_goldens(tmp_path / "goldens.jsonl", 50)
    svc.fail_from = 30
    failed = gate(tmp_path, svc.url)
    assert failed.exit_code == 2, failed.output
    assert "case 'q03" in failed.stderr and "HTTP 500" in failed.stderr
    assert failed.stdout == ""
    assert "30 of 50 cases are checkpointed; rerun with --resume" in failed.stderr
    [folder] = list(default_root().iterdir())
    assert len(list(folder.glob("shard-*.jsonl"))) == 3

    refused = gate(tmp_path, svc.url)
    assert refused.exit_code == 2
    assert "pass --resume" in refused.stderr and refused.stdout == ""

    svc.fail_from = None
    svc.reset()
    resumed = gate(tmp_path, svc.url, "--resume", "--workers", "2")
    assert resumed.exit_code == 0, resumed.output
    assert set(svc.hits) == {f"q{i:03d}" for i in range(30, 50)}  # only the missing cases
    assert svc.max_in_flight <= 3
    verdict = json.loads(resumed.stdout)  # standard output is the verdict and nothing else
    assert verdict["passed"] is True
    prov = verdict["provenance"]
    assert prov["engine"] == {"engine": "local", "workers": 2}
    assert prov["target"]["max_in_flight"] <= 3 and prov["target"]["resumed"] is True
    assert "goldens" in prov["inputs"]
    # Progress went to standard error: from the 30 restored cases to all 50.
    assert "30/50 cases answered" in resumed.stderr and "50/50 cases" in resumed.stderr
    assert not folder.exists()

    # The same run from scratch gives the same verdict.
    svc.reset()
    fresh = gate(tmp_path, svc.url)
    assert fresh.exit_code == 0, fresh.output
    strip = ("provenance",)
    assert ({k: v for k, v in json.loads(fresh.stdout).items() if k not in strip}
            == {k: v for k, v in verdict.items() if k not in strip})
    assert sum(svc.hits.values()) == 50


def test_gate_target_options_are_checked_before_anything_runs(svc: Service,
                                                              tmp_path: Path) -> None:
    (tmp_path / "checks.yaml").write_text(CHECKS)
    write_goldens(tmp_path / "goldens.jsonl", 5)
    cases = [
        (["--resume"], "--resume only apply to a target run; give --target URL"),
        (["--workers", "2"], "--workers only apply to a target run"),
        (["--target", svc.url], "--target needs --goldens PATH"),
        (["--target", svc.url, "--goldens", str(tmp_path / "goldens.jsonl"), "--report",
          "x.json"], "--target runs a service; --report/--stage check a file"),
        (["--target", svc.url, "--goldens", str(tmp_path / "goldens.jsonl"), "--header",
          "no-colon"], "--header must look like 'Name: value'"),
        (["--target", "ftp://example.org/x", "--goldens", str(tmp_path / "goldens.jsonl")],
         "url must be an absolute http:// or https:// URL"),
        (["--target", svc.url, "--goldens", str(tmp_path / "goldens.jsonl"), "--address",
          "auto"], "--address is for --engine ray"),
    ]
    for extra, message in cases:
        result = runner.invoke(app, ["gate", str(tmp_path / "checks.yaml"), *extra],
                               env={"COLUMNS": "300"})
        assert result.exit_code == 2, (extra, result.output)
        assert message in " ".join(result.stderr.split()), (extra, result.stderr)
    assert svc.hits == {}
