"""``rankproof measure --subtopics``: the diversity measures from the command line, equal to the
library's (which tests/measures/test_beyond.py checks against pyndeval)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.data import load_run, read_subtopic_qrels
from rankproof.measures import evaluate

runner = CliRunner()

SUBTOPICS = """\
q1 1 d1 1
q1 1 d2 1
q1 2 d2 1
q1 2 d3 1
q1 3 d5 1
q2 1 d7 1
q2 2 d8 1
q2 2 d1 0
"""
RUN = """\
q1 Q0 d2 1 9.0 r
q1 Q0 d4 2 8.0 r
q1 Q0 d3 3 7.0 r
q1 Q0 d1 4 6.0 r
q1 Q0 d5 5 5.0 r
q2 Q0 d8 1 3.0 r
q2 Q0 d9 2 2.0 r
q2 Q0 d7 3 1.0 r
"""
MEASURES = ["alpha_nDCG@5", "ERR_IA@5", "NRBP", "P_IA@5", "StRecall@5", "nDCG@5"]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "sub.qrels", tmp_path / "r.run"
    qrels.write_text(SUBTOPICS)
    run.write_text(RUN)
    return qrels, run


def test_diversity_measures_from_the_command_line(files: tuple[Path, Path]) -> None:
    qrels, run = files
    args = ["measure", str(qrels), str(run), "--subtopics", "-f", "json"]
    for m in MEASURES:
        args += ["-m", m]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    pq = evaluate(read_subtopic_qrels(qrels), load_run(run), MEASURES)
    expected = {q: dict(zip(MEASURES, row, strict=True))
                for q, row in zip(pq.qids, pq.values.tolist(), strict=True)}
    got = doc["runs"][0]["per_query"]
    for qid in ("q1", "q2"):
        for m in MEASURES:
            assert got[qid][m] == pytest.approx(expected[qid][m], abs=1e-12), (qid, m)
    assert 0.0 < got["q1"]["alpha_nDCG@5"] < 1.0


def test_without_subtopics_a_diversity_measure_says_how(files: tuple[Path, Path]) -> None:
    qrels, run = files
    result = runner.invoke(app, ["measure", str(qrels), str(run), "-m", "alpha_nDCG@5"])
    assert result.exit_code == 2
    assert "--subtopics" in result.stderr


def test_compare_reads_subtopic_qrels_too(files: tuple[Path, Path], tmp_path: Path) -> None:
    qrels, run = files
    other = tmp_path / "other.run"
    other.write_text(RUN.replace("d2 1 9.0", "d2 1 0.5").replace(" r\n", " o\n"))
    out = tmp_path / "cmp.json"
    result = runner.invoke(app, ["compare", str(qrels), str(run), str(other), "--subtopics",
                                 "-m", "alpha_nDCG@5", "-m", "P_IA@5", "-o", str(out),
                                 "--resamples", "1000"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(out.read_text())
    sub = read_subtopic_qrels(qrels)
    for row in doc["rows"]:
        pq = evaluate(sub, load_run(other), [row["measure"]])
        assert row["candidate_values"] == pytest.approx(pq.values[:, 0].tolist(), abs=1e-12)
    refused = runner.invoke(app, ["compare", str(qrels), str(run), str(other),
                                  "-m", "alpha_nDCG@5"])
    assert refused.exit_code == 2 and "--subtopics" in refused.stderr
