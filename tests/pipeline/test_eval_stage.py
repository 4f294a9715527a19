"""``rankproof eval`` is expressible as an experiment file, and its stages as separate ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.pipeline._helpers import invoke, stage_json, write

from rankproof.harness import EvalReport


def test_an_eval_stage_writes_the_report_rankproof_eval_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    direct = invoke("eval", "--embedder", "hashing", "--resamples", "200", "--quiet",
                    "-o", "eval.json")
    assert direct.exit_code == 0, direct.output
    exp = write(tmp_path / "exp.yaml", "name: golden\noutput: out\nstages:\n"
                                       "  - id: golden\n    kind: eval\n    embedder: hashing\n"
                                       "    resamples: 200\n")
    piped = invoke("run", exp)
    assert piped.exit_code == 0, piped.output
    a = EvalReport.model_validate_json((tmp_path / "eval.json").read_text())
    b = EvalReport.model_validate_json((tmp_path / "out" / "golden" / "report.json").read_text())
    assert a.without_timings() == b.without_timings()
    assert stage_json(tmp_path / "out", "golden")["document"] == "report.json"


@pytest.mark.parametrize("granularity", ["chunk", "document"])
def test_retrieve_and_fuse_stages_give_the_eval_stages_numbers(tmp_path: Path,
                                                               granularity: str) -> None:
    exp = write(tmp_path / "exp.yaml", f"""\
output: out
inputs: {{granularity: {granularity}}}
stages:
  - {{id: all, kind: eval, embedder: hashing, resamples: 100, measures: [nDCG@10, AP, R@10]}}
  - {{id: bm25, kind: retrieve, method: bm25}}
  - {{id: dense, kind: retrieve, method: dense, embedder: hashing}}
  - {{id: fusion, kind: fuse, runs: [bm25, dense]}}
  - {{id: scores, kind: measure, runs: [bm25, dense, fusion], measures: [nDCG@10, AP, R@10]}}
""")
    r = invoke("run", exp)
    assert r.exit_code == 0, r.output
    out = tmp_path / "out"
    report = EvalReport.model_validate_json((out / "all" / "report.json").read_text())
    measured = json.loads((out / "scores" / "measure.json").read_text())
    got = {run["run"]: run["means"] for run in measured["runs"]}
    for stage in report.stages:
        for m in ("nDCG@10", "AP", "R@10"):
            assert got[stage.name][m] == pytest.approx(stage.means[m], abs=1e-12), (stage.name, m)
    if granularity == "document":
        assert (out / "fusion" / "chunks.trec").is_file()
