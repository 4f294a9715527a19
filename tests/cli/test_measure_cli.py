"""``rankproof measure`` end to end: formats, exit codes, messages."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["measure", *args])
    return result.exit_code, result.stdout, result.stderr


def test_table_lists_each_run() -> None:
    code, out, _ = invoke(str(TOY / "qrels.txt"), str(TOY / "bm25.run"), str(TOY / "dense.run"))
    assert code == 0
    assert "bm25" in out and "dense" in out and "nDCG@10" in out


def test_json_is_versioned_and_keeps_per_query_values() -> None:
    code, out, _ = invoke(str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "-m", "AP",
                          "-m", "P.5,10", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema_version"] == 1
    run = doc["runs"][0]
    assert run["measures"] == ["AP", "P@5", "P@10"]
    assert len(run["per_query"]) == 8
    mean = sum(v["AP"] for v in run["per_query"].values()) / 8
    assert run["means"]["AP"] == pytest.approx(mean, abs=1e-15)


def test_jsonl_and_csv_agree() -> None:
    args = (str(TOY / "qrels.txt"), str(TOY / "dense.run"), "-m", "nDCG@10", "-q")
    _, jsonl, _ = invoke(*args, "--format", "jsonl")
    _, text, _ = invoke(*args, "--format", "csv")
    rows_json = [json.loads(line) for line in jsonl.splitlines()]
    rows_csv = list(csv.DictReader(io.StringIO(text)))
    assert len(rows_json) == len(rows_csv) == 9  # 8 topics + all
    for a, b in zip(rows_json, rows_csv, strict=True):
        assert (a["topic"], a["measure"]) == (b["topic"], b["measure"])
        assert a["value"] == float(b["value"])


def test_output_file_is_written_atomically(tmp_path: Path) -> None:
    out = tmp_path / "res" / "m.json"
    code, stdout, _ = invoke(str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "--format", "json",
                             "-o", str(out))
    assert code == 0 and stdout == ""
    assert json.loads(out.read_text())["runs"][0]["run"] == "bm25"
    assert [p.name for p in out.parent.iterdir()] == ["m.json"]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("q1 Q0 d1 1 abc run\n", "line 1, field 'score'"),
        ("q1 Q0 d1 1 2.0\n", "line 1, field 'columns'"),
        ("q1 Q0 d1 1 2.0 r\nq1 Q0 d1 2 1.0 r\n", "line 2, field 'docid'"),
        ("q1 Q0 d1 1 nan r\n", "line 1, field 'score'"),
        ("", "empty"),
    ],
)
def test_bad_run_exits_2_naming_file_line_field(tmp_path: Path, content: str, needle: str) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text(content)
    code, out, err = invoke(str(TOY / "qrels.txt"), str(bad))
    assert code == 2
    assert str(bad) in err and needle in err
    assert "Traceback" not in err and out == ""


def test_bad_measure_exits_2(tmp_path: Path) -> None:
    code, _, err = invoke(str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "-m", "nDCG@ten")
    assert code == 2 and "nDCG@ten" in err


def test_missing_file_exits_2(tmp_path: Path) -> None:
    code, _, err = invoke(str(TOY / "qrels.txt"), str(tmp_path / "nope.run"))
    assert code == 2 and "nope.run" in err


def test_console_script_runs_in_a_subprocess() -> None:
    """The installed entry point, not just the Typer app, works and reports errors cleanly."""
    proc = subprocess.run(
        [sys.executable, "-m", "rankproof", "measure", str(TOY / "qrels.txt"),
         str(TOY / "bm25.run"), "-m", "map", "--format", "trec"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("map                   \tall\t")
    bad = subprocess.run(
        [sys.executable, "-m", "rankproof", "measure", str(TOY / "qrels.txt"), "/nonexistent"],
        capture_output=True, text=True, check=False,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_zero_filled_topics_are_printed(tmp_path: Path) -> None:
    run = tmp_path / "partial.run"
    run.write_text("q1 Q0 d001 1 1.0 r\nzzz Q0 d1 1 1.0 r\n")
    code, _, err = invoke(str(TOY / "qrels.txt"), str(run), "-m", "AP")
    assert code == 0
    assert "7 qrels topic(s) missing from the run scored 0" in err
    assert "1 run topic(s) without judgments ignored: zzz" in err
