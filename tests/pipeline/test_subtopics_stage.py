"""Measure and compare stages over subtopic qrels (``subtopics: PATH``), as
``rankproof measure|compare --subtopics``: the diversity measures in experiment files.

The subtopic qrels are derived from TREC DL 2019's passage judgments (each relevant
passage covers the subtopic named by its grade; a non-relevant one is judged 0 for
subtopic 1), so the runs are real: BM25 and TAS-B from rank_llm's DL19 runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.pipeline._helpers import DL, RUNS, invoke, stage_json, statuses, write

from rankproof.data import load_run, read_subtopic_qrels
from rankproof.measures import evaluate

MEASURES = ["alpha_nDCG@10", "ERR_IA@10", "StRecall@10", "nDCG@10"]


def _subtopic_qrels(path: Path) -> Path:
    lines = []
    for line in (DL / "qrels.dl19-passage.txt").read_text().splitlines():
        qid, _, doc, rel = line.split()
        lines.append(f"{qid} {rel if int(rel) > 0 else 1} {doc} {1 if int(rel) > 0 else 0}")
    return write(path, "\n".join(lines) + "\n")


def _experiment(folder: Path, stages: str) -> Path:
    for name in ("BM25", "D_BERT_KD_TASB"):
        write(folder / "runs" / f"{name}.txt",
              (RUNS / name / "trec_results_dl19.txt").read_text())
    _subtopic_qrels(folder / "subtopics.txt")
    return write(folder / "exp.yaml", f"""\
name: diversity
output: out
inputs:
  qrels: {DL / 'qrels.dl19-passage.txt'}
  topics: {DL / 'topics.dl19-passage.txt'}
stages:
  - {{id: bm25, kind: run_file, path: runs/BM25.txt}}
  - {{id: tasb, kind: run_file, path: runs/D_BERT_KD_TASB.txt}}
{stages}""")


STAGES = f"""\
  - id: diversity
    kind: measure
    runs: [bm25, tasb]
    measures: [{', '.join(MEASURES)}]
    subtopics: subtopics.txt
  - id: compare
    kind: compare
    baseline: bm25
    candidates: [tasb]
    measures: [alpha_nDCG@10, ERR_IA@10]
    resamples: 200
    evidence_depth: 0
    subtopics: subtopics.txt
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("diversity")
    exp = _experiment(folder, STAGES)
    r = invoke("run", exp, "--quiet")
    assert r.exit_code == 0, r.output
    return folder


def test_measure_stage_equals_the_library_over_subtopic_qrels(ran: Path) -> None:
    doc = json.loads((ran / "out" / "diversity" / "measure.json").read_text())
    qrels = read_subtopic_qrels(ran / "subtopics.txt")
    by_name = {r.get("run", r.get("name")): r for r in doc["runs"]}
    for stage_id, name in (("bm25", "BM25"), ("tasb", "D_BERT_KD_TASB")):
        run = load_run(RUNS / name / "trec_results_dl19.txt")
        pq = evaluate(qrels, run, MEASURES)
        got = by_name[stage_id]["per_query"]
        assert set(got) == set(pq.qids)
        for row, qid in enumerate(pq.qids):
            for col, m in enumerate(MEASURES):
                assert got[qid][m] == pytest.approx(pq.values[row, col], abs=1e-12), (qid, m)
    # the diversity measures are not degenerate on these judgments
    assert 0.0 < pq.aggregate("alpha_nDCG@10") < 1.0
    assert stage_json(ran / "out", "diversity")["provenance"]["inputs"]["subtopics"]


def test_compare_stage_reads_the_subtopic_qrels(ran: Path) -> None:
    doc = json.loads((ran / "out" / "compare" / "comparison.json").read_text())
    qrels = read_subtopic_qrels(ran / "subtopics.txt")
    runs = [load_run(RUNS / n / "trec_results_dl19.txt") for n in ("BM25", "D_BERT_KD_TASB")]
    rows = {row["measure"]: row["result"] for row in doc["rows"]}
    assert set(rows) == {"alpha_nDCG@10", "ERR_IA@10"}
    for m, result in rows.items():
        means = sorted(evaluate(qrels, run, [m]).aggregate(m) for run in runs)
        assert sorted((result["mean_a"], result["mean_b"])) == pytest.approx(means, abs=1e-12)


def test_an_edited_subtopics_file_reruns_the_stages_that_read_it(ran: Path) -> None:
    exp = ran / "exp.yaml"
    again = invoke("run", exp, "--quiet")
    assert again.exit_code == 0, again.output
    assert statuses(ran / "out")["diversity"] == "cached"
    path = ran / "subtopics.txt"
    path.write_text(path.read_text().replace(" 2 ", " 3 ", 5))
    edited = invoke("run", exp, "--quiet")
    assert edited.exit_code == 0, edited.output
    seen = statuses(ran / "out")
    assert seen["diversity"] == "run" and seen["compare"] == "run" and seen["bm25"] == "cached"


def test_a_diversity_measure_without_subtopics_is_refused_when_the_file_is_read(
        tmp_path: Path) -> None:
    exp = _experiment(tmp_path, """\
  - {id: scores, kind: measure, runs: [bm25], measures: [nDCG@10, alpha_nDCG@10]}
""")
    for args in (("run", exp), ("run", exp, "--dry-run")):
        r = invoke(*args)
        assert r.exit_code == 2, r.output
        message = " ".join(r.stderr.split())
        assert "line 9, field 'stages[2]'" in message and "alpha_nDCG@10" in message, message
        assert "subtopics: PATH" in message, message
    assert not (tmp_path / "out").exists()


def test_a_missing_subtopics_file_and_a_bad_measure_are_refused(tmp_path: Path) -> None:
    exp = _experiment(tmp_path, """\
  - {id: a, kind: measure, runs: [bm25], measures: [ERR_IA@10], subtopics: nowhere.txt}
""")
    r = invoke("run", exp, "--dry-run")
    assert r.exit_code == 2 and "stages[a].subtopics" in " ".join(r.stderr.split()), r.output
    exp = _experiment(tmp_path, """\
  - {id: b, kind: measure, runs: [bm25], measures: [nDCG@10, nDGC@10]}
""")
    r = invoke("run", exp, "--dry-run")
    message = " ".join(r.stderr.split())
    assert r.exit_code == 2, r.output
    assert "field 'stages[2].measures'" in message and "nDGC" in message, message
