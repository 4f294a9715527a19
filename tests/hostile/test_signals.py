"""Class 4: SIGTERM (what CI sends on cancel or timeout) and SIGINT during a write leave no
temporary file or folder and no partial output; the exit is 143 or 130.

Each test runs the real command in a subprocess with the documented test-only hook
``RANKPROOF_TEST_PAUSE_BEFORE_RENAME`` (`rankproof._io`): the write creates the flag file
once its temporary files are complete, and waits; the test then sends a real signal at
that one moment, so the test is deterministic rather than a race against the clock."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest
from tests.hostile._writes import (
    BM25,
    PAUSE_ENV,
    QRELS,
    beir_folder,
    checks,
    leftovers,
    report,
    start,
    tree,
    wait_for,
)

SIGNALS = [pytest.param(signal.SIGTERM, 143, id="SIGTERM"),
           pytest.param(signal.SIGINT, 130, id="SIGINT")]


def _interrupt(args: list[object], workdir: Path, flag: Path, sig: int) -> tuple[int, str]:
    proc = start(*args, cwd=workdir, extra_env={PAUSE_ENV: str(flag)})
    wait_for(flag, proc)
    assert leftovers(workdir), "the write was paused with its temporary file in place"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    flag.unlink(missing_ok=True)
    return proc.returncode, err


@pytest.mark.parametrize(("sig", "code"), SIGNALS)
def test_an_interrupted_output_is_as_it_was(sig: int, code: int, tmp_path: Path) -> None:
    out = tmp_path / "means.csv"
    out.write_text("run,topic,measure,value\nold,all,AP,0.1\n")
    before = tree(tmp_path)
    rc, err = _interrupt(["measure", QRELS, BM25, "-f", "csv", "-o", out], tmp_path,
                         tmp_path.parent / f"{tmp_path.name}.flag", sig)
    assert rc == code, err
    assert "Traceback" not in err
    assert tree(tmp_path) == before and leftovers(tmp_path) == []


@pytest.mark.parametrize(("sig", "code"), SIGNALS)
def test_an_interrupted_gate_writes_none_of_its_outputs(sig: int, code: int,
                                                        tmp_path: Path) -> None:
    rep = tmp_path / "report.json"
    shutil.copyfile(report(), rep)
    chk = checks(tmp_path)
    (tmp_path / "j.xml").write_text("<old/>\n")
    before = tree(tmp_path)
    rc, err = _interrupt(["gate", chk, "--report", rep, "--junit", tmp_path / "j.xml",
                          "--markdown", tmp_path / "m.md", "--json", tmp_path / "v.json"],
                         tmp_path, tmp_path.parent / f"{tmp_path.name}.flag", sig)
    assert rc == code, err
    assert tree(tmp_path) == before and leftovers(tmp_path) == []


@pytest.mark.parametrize(("sig", "code"), SIGNALS)
def test_an_interrupted_baseline_save_saves_nothing(sig: int, code: int,
                                                    tmp_path: Path) -> None:
    rc, err = _interrupt(["baseline", "save", report(), "--name", "main", "--baseline-dir",
                          tmp_path / "b"], tmp_path, tmp_path.parent / f"{tmp_path.name}.flag",
                         sig)
    assert rc == code, err
    assert not (tmp_path / "b" / "main.json").exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize(("sig", "code"), SIGNALS)
def test_an_interrupted_adaptation_leaves_no_folder(sig: int, code: int, force: bool,
                                                    tmp_path: Path) -> None:
    src = beir_folder(tmp_path)
    out = tmp_path / "out"
    if force:  # a previous adaptation, which an interrupted --force must leave intact
        out.mkdir()
        (out / "docs").mkdir()
        (out / "docs" / "old.txt").write_text("old\n")
        (out / "judgments.jsonl").write_text("{}\n")
    before = tree(tmp_path)
    rc, err = _interrupt(["adapt", "beir", src, out, *(["--force"] if force else [])],
                         tmp_path, tmp_path.parent / f"{tmp_path.name}.flag", sig)
    assert rc == code, err
    assert tree(tmp_path) == before and leftovers(tmp_path) == []
    assert out.exists() == force
