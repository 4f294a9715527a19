"""A duplicate (qid, docid) row names its remedy as the caller spells it."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import rankproof as rp


def _run_file(tmp_path: Path) -> Path:
    path = tmp_path / "dup.trec"
    path.write_text("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d1 3 1.0 t\n")
    return path


def test_python_names_the_keyword(tmp_path: Path) -> None:
    with pytest.raises(rp.InputError) as info:
        rp.read_trec_run(_run_file(tmp_path))
    err = info.value
    assert "dedupe='first' or 'max'" in str(err) and "--dedupe" not in str(err)
    assert err.line == 3 and err.field == "docid"
    assert "--dedupe first|max" in err.on_command_line()
    assert err.on_command_line().startswith(f"{err.path}, line 3, field 'docid': ")
    again = pickle.loads(pickle.dumps(err))  # crosses an engine's process boundary intact
    assert again.on_command_line() == err.on_command_line()


def test_qrels_duplicates_name_the_keyword_too() -> None:
    with pytest.raises(rp.InputError) as info:
        rp.Qrels.from_columns(["q", "q"], ["d", "d"], [1, 1])
    assert "dedupe='first'" in str(info.value)
    assert "--dedupe first|max" in info.value.on_command_line()


def test_the_command_line_names_the_flag(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    proc = subprocess.run([sys.executable, "-m", "rankproof", "measure", str(qrels),
                           str(_run_file(tmp_path)), "-m", "P@1"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "--dedupe first|max" in proc.stderr and "dedupe='first'" not in proc.stderr
    assert "line 3" in proc.stderr


def test_plain_messages_are_unchanged() -> None:
    err = rp.InputError("bad", path="f", line=2)
    assert err.on_command_line() == str(err) == "f, line 2: bad"
