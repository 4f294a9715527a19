"""Class 3: a command with several outputs checks every destination first, renders
everything in memory, then commits; when any part fails, every earlier file is as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.hostile._writes import (
    PAUSE_ENV,
    checks,
    leftovers,
    report,
    start,
    tree,
    wait_for,
)
from typer.testing import CliRunner

from rankproof import InputError
from rankproof._io import commit_all
from rankproof.cli import app

runner = CliRunner()


def cli(*args: object, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "120", **(env or {})})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _gate_files(tmp_path: Path) -> tuple[Path, Path, Path, Path, Path]:
    rep = tmp_path / "report.json"
    shutil.copyfile(report(), rep)
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.xml").write_text("<old/>\n")
    return rep, checks(tmp_path), out / "old.xml", out / "new.md", out / "verdict.json"


def test_gate_checks_every_destination_before_writing_any(tmp_path: Path) -> None:
    rep, chk, junit, md, _ = _gate_files(tmp_path)
    blocked = tmp_path / "a-folder"
    blocked.mkdir()
    before = tree(tmp_path)
    code, _, err = cli("gate", chk, "--report", rep, "--junit", junit, "--markdown", md,
                       "--json", blocked)
    assert code == 2 and "is a directory" in err
    assert tree(tmp_path) == before


def test_gate_rolls_back_earlier_files_when_a_later_rename_fails(tmp_path: Path) -> None:
    """The JSON destination turns into a folder after every file was checked and staged:
    its rename fails, and the JUnit file already renamed is put back as it was."""
    rep, chk, junit, md, js = _gate_files(tmp_path)
    flag = tmp_path / "paused"
    proc = start("gate", chk, "--report", rep, "--junit", junit, "--markdown", md, "--json", js,
                 cwd=tmp_path, extra_env={PAUSE_ENV: str(flag)})
    wait_for(flag, proc)
    js.mkdir()
    (js / "keep").write_text("x")  # a non-empty folder: no rename can replace it
    before = tree(tmp_path)
    del before["paused"]
    flag.unlink()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "verdict.json" in err and ".tmp" not in err
    assert tree(tmp_path) == before
    assert junit.read_text() == "<old/>\n" and not md.exists()
    assert leftovers(tmp_path) == []


def test_gate_writes_all_three_when_it_can(tmp_path: Path) -> None:
    rep, chk, junit, md, js = _gate_files(tmp_path)
    code, _, err = cli("gate", chk, "--report", rep, "--junit", junit, "--markdown", md,
                       "--json", js)
    assert code == 0, err
    assert junit.read_text().startswith("<?xml") and md.read_text() and js.read_text()


def test_an_unwritable_step_summary_is_a_warning_not_a_failed_gate(tmp_path: Path) -> None:
    rep, chk, _, md, _ = _gate_files(tmp_path)
    summary = tmp_path / "summary-is-a-folder"
    summary.mkdir()
    code, _, err = cli("gate", chk, "--report", rep, "--markdown", md,
                       env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert code == 0, err
    assert "warning" in err and "GITHUB_STEP_SUMMARY" in err
    assert md.exists()


def test_eval_refuses_a_bad_destination_before_touching_latest_json(tmp_path: Path) -> None:
    latest = tmp_path / "evals" / "results" / "latest.json"
    latest.parent.mkdir(parents=True)
    latest.write_text('{"kind": "rankproof.eval", "old": true}\n')
    before = tree(tmp_path)
    for bad in (tmp_path, tmp_path / "evals" / "results" / "latest.json" / "x"):
        proc = start("eval", "--stages", "bm25", "--quiet", "-o", bad, cwd=tmp_path)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 2, err
        assert "cannot write here" in err
    assert tree(tmp_path) == before


def test_eval_keeps_latest_json_when_its_output_fails_at_the_rename(tmp_path: Path) -> None:
    latest = tmp_path / "evals" / "results" / "latest.json"
    latest.parent.mkdir(parents=True)
    latest.write_text('{"kind": "rankproof.eval", "old": true}\n')
    out = tmp_path / "report.json"
    flag = tmp_path / "paused"
    proc = start("eval", "--stages", "bm25", "--quiet", "--resamples", "200", "-o", out,
                 cwd=tmp_path, extra_env={PAUSE_ENV: str(flag)})
    wait_for(flag, proc, timeout=240)
    out.mkdir()
    (out / "keep").write_text("x")
    flag.unlink()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert latest.read_text() == '{"kind": "rankproof.eval", "old": true}\n'
    assert leftovers(tmp_path) == []


def test_commit_all_restores_from_backups_and_removes_what_was_new(tmp_path: Path) -> None:
    old = tmp_path / "old.txt"
    old.write_text("before\n")
    new = tmp_path / "new.txt"
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "x").write_text("x")
    with pytest.raises(InputError, match="folder: cannot write here"):
        commit_all([(old, "after\n"), (new, b"fresh\n"), (folder, "no\n")])
    assert old.read_text() == "before\n" and not new.exists()
    assert leftovers(tmp_path) == []
    commit_all([(old, "after\n"), (new, b"fresh\n")])
    assert old.read_text() == "after\n" and new.read_text() == "fresh\n"
