"""A measure or compare stage with the commands' settings computes what the command does.

The stages call the same library verbs as ``rankproof measure`` and ``rankproof compare``
(`rankproof.jobs.measure_files`, `compare_files`), so trec_eval's ``-M``/``-J``, the rank
order, ``--dedupe``, ``--memory-cap``, the seed and the interval level give the command's
numbers, on TREC DL 2019's real runs. A setting the settings types refuse is refused when
the file is read, with its line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.pipeline._helpers import DL, RUNS, invoke, stage_json, write

pytestmark = pytest.mark.skipif(not (RUNS / "BM25").exists(), reason="shared data is absent")
QRELS = DL / "qrels.dl19-passage.txt"


def _experiment(folder: Path, stages: str) -> Path:
    for name in ("BM25", "D_BERT_KD_TASB"):
        write(folder / "runs" / f"{name}.txt",
              (RUNS / name / "trec_results_dl19.txt").read_text())
    return write(folder / "exp.yaml", f"""\
name: settings
output: out
seed: 3
inputs:
  qrels: {QRELS}
stages:
  - {{id: bm25, kind: run_file, path: runs/BM25.txt}}
  - {{id: tasb, kind: run_file, path: runs/D_BERT_KD_TASB.txt}}
{stages}""")


STAGES = """\
  - id: scores
    kind: measure
    runs: [bm25, tasb]
    measures: [AP, nDCG@10, NumRet]
    dedupe: max
    max_retrieved: 20
    judged_only: true
    memory_cap: 2MiB
  - id: versus
    kind: compare
    baseline: bm25
    candidates: [tasb]
    measures: [AP]
    resamples: 500
    seed: 11
    confidence_level: 0.9
    evidence_depth: 0
    fail_on_regression: true
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    folder = tmp_path_factory.mktemp("settings")
    exp = _experiment(folder, STAGES)
    return folder, invoke("run", exp, "--quiet")


def test_the_measure_stage_gives_the_command_s_numbers(ran: tuple[Path, object]) -> None:
    folder, _ = ran
    stage = json.loads((folder / "out" / "scores" / "measure.json").read_text())
    for stage_id in ("bm25", "tasb"):
        run = folder / "runs" / f"{'BM25' if stage_id == 'bm25' else 'D_BERT_KD_TASB'}.txt"
        cli = invoke("measure", QRELS, run, "-m", "AP", "-m", "nDCG@10", "-m", "NumRet", "-M",
                     "20", "-J", "--memory-cap", "2MiB", "--dedupe", "max", "-f", "json",
                     "--name", stage_id, "-q")
        assert cli.exit_code == 0, cli.output
        (want,) = json.loads(cli.stdout)["runs"]
        (got,) = [r for r in stage["runs"] if r["run"] == stage_id]
        assert got["per_query"] == want["per_query"] and got["means"] == want["means"]
        assert max(v["NumRet"] for v in got["per_query"].values()) <= 20


def test_the_compare_stage_gives_the_command_s_rows_and_fails_on_a_regression(
        ran: tuple[Path, object]) -> None:
    folder, result = ran
    doc = json.loads((folder / "out" / "versus" / "comparison.json").read_text())
    runs = [folder / "runs" / f"{n}.txt" for n in ("BM25", "D_BERT_KD_TASB")]
    cli = invoke("compare", QRELS, *runs, "-m", "AP", "--resamples", "500", "--seed", "11",
                 "--confidence", "0.9", "--evidence-depth", "0", "--name", "bm25", "--name",
                 "tasb", "-f", "json", "--quiet")
    assert cli.exit_code == 0, cli.output
    want = json.loads(cli.stdout)
    (row,), (expected,) = doc["rows"], want["rows"]
    assert row["result"] == expected["result"] and row["verdict"] == expected["verdict"]
    assert row["result"]["seed"] == 11 and row["result"]["confidence_level"] == 0.9
    # TAS-B is better than BM25 on AP: no regression, so the run passed.
    assert expected["verdict"] == "better" and result.exit_code == 0  # type: ignore[attr-defined]
    flipped = _experiment(folder / "flipped", STAGES.replace(
        "baseline: bm25\n    candidates: [tasb]", "baseline: tasb\n    candidates: [bm25]"))
    r = invoke("run", flipped, "--quiet")
    assert r.exit_code == 1, r.output
    assert "significantly worse: bm25 on AP" in stage_json(folder / "flipped" / "out",
                                                           "versus")["notes"]


def test_the_rank_order_reaches_the_evaluation(tmp_path: Path) -> None:
    """``order: rank`` ranks by the run's rank column, as ``--order rank`` does: here a
    column that numbers each topic's documents from the lowest score up."""
    exp = _experiment(tmp_path, """\
  - {id: scores, kind: measure, runs: [bm25], measures: [AP, RR], order: rank}
""")
    lines = [line.split() for line in (tmp_path / "runs" / "BM25.txt").read_text().splitlines()]
    count: dict[str, int] = {}
    for fields in lines:
        count[fields[0]] = count.get(fields[0], 0) + 1
    seen: dict[str, int] = {}
    for fields in lines:  # ranks reversed: the file is in score order within each topic
        seen[fields[0]] = seen.get(fields[0], 0) + 1
        fields[3] = str(count[fields[0]] - seen[fields[0]] + 1)
    write(tmp_path / "runs" / "BM25.txt", "".join(" ".join(f) + "\n" for f in lines))
    r = invoke("run", exp, "--quiet")
    assert r.exit_code == 0, r.output
    (got,) = json.loads((tmp_path / "out" / "scores" / "measure.json").read_text())["runs"]
    by_rank, by_score = (invoke("measure", QRELS, tmp_path / "runs" / "BM25.txt", "-m", "AP",
                                "-m", "RR", "-f", "json", "-q", "--name", "bm25", *order)
                         for order in (("--order", "rank"), ()))
    assert got["means"] == json.loads(by_rank.stdout)["runs"][0]["means"]
    assert got["means"] != json.loads(by_score.stdout)["runs"][0]["means"]


@pytest.mark.parametrize(("setting", "words"), [
    ("max_retrieved: -1", "max_retrieved"),
    ("order: docid", "order"),
    ("memory_cap: 12 bananas", "expected a size such as 512MiB"),
    ("dedupe: last", "dedupe"),
])
def test_a_bad_setting_is_refused_with_its_line(tmp_path: Path, setting: str,
                                                words: str) -> None:
    exp = _experiment(tmp_path, f"""\
  - id: scores
    kind: measure
    runs: [bm25]
    {setting}
""")
    r = invoke("run", exp, "--dry-run")
    message = " ".join(r.stderr.split())
    assert r.exit_code == 2 and words in message and "line 12" in message, message
    assert not (tmp_path / "out").exists()
