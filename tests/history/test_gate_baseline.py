"""``gate --baseline history:latest@main`` end to end: results recorded on main, then a
candidate gated against the newest of them, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.history import open_store
from tests.history._planted import DROP_AT, Planted

CHECKS = ("checks:\n  - id: ndcg_no_regression\n    metric: nDCG@10\n"
          "    vs_baseline: no_significant_regression\n")


def test_gate_against_the_latest_result_on_main(
        fresh_url: str, planted_store: tuple[str, Planted], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    files = planted_store[1].files
    runner = CliRunner()
    got = runner.invoke(app, ["history", "add", *map(str, files[:DROP_AT - 1]), "--branch",
                              "main", "--history", fresh_url])
    assert got.exit_code == 0, got.output
    got = runner.invoke(app, ["history", "add", str(files[-1]), "--branch", "feature",
                              "--history", fresh_url])
    assert got.exit_code == 0, got.output  # newer, but not on main
    checks = tmp_path / "checks.yaml"
    checks.write_text(CHECKS)
    # the drop: result 12 against the newest on main (result 11) fails the gate
    verdict = tmp_path / "verdict.json"
    got = runner.invoke(app, ["gate", str(checks), "--report", str(files[DROP_AT - 1]),
                              "--baseline", "history:latest@main", "--history", fresh_url,
                              "--json", str(verdict)])
    assert got.exit_code == 1, got.output
    assert "ndcg_no_regression" in got.stdout and "FAIL" in got.stdout
    data = json.loads(verdict.read_text())
    assert data["passed"] is False
    # provenance names the stored result (store without password, id), not the temp file
    with open_store(fresh_url) as store:
        newest = store.get("latest@main")
        where = store.where
    assert data["provenance"]["baseline_history"] == {
        "ref": "history:latest@main", "history": where, "result_id": newest.id}
    assert "baseline" not in data["provenance"]["inputs"]
    assert "rankproof-history-" not in verdict.read_text()
    with open_store(fresh_url) as store:  # the verdict itself was recorded
        assert [r.kind for r in store.results(kind="gate")] == ["rankproof.gate"]
    # an unchanged result passes; the store comes from $RANKPROOF_HISTORY this time
    monkeypatch.setenv("RANKPROOF_HISTORY", fresh_url)
    got = runner.invoke(app, ["gate", str(checks), "--report", str(files[DROP_AT - 2]),
                              "--baseline", "history:latest@main"])
    assert got.exit_code == 0, got.output
    got = runner.invoke(app, ["gate", str(checks), "--report", str(files[0]),
                              "--baseline", "history:latest@nowhere"])
    assert got.exit_code == 2 and "no stored result matches" in got.output
