"""The example experiment reproduces the README's Vaswani table, and its ``--only`` rerun
reuses the cached retrieval stages.

The example's dense stage is MiniLM; here it is the hashing test double (MiniLM over
11,429 documents takes ten minutes on two CPUs; the double, with bm25, seconds), so the
dense and fusion rows are the double's, checked against ``rankproof eval`` with the same
double, and bm25's row is the README's, to the fourth decimal. (The MiniLM run's real output
is in docs/experiments.md.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.pipeline._helpers import SHARED, invoke, stage_json, statuses, write

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "experiments" / "vaswani.yaml"


def _hashing_copy(tmp_path: Path) -> Path:
    text = EXAMPLE.read_text()
    assert "embedder: minilm" in text and "root: ../../../shared/data" in text
    text = text.replace("embedder: minilm", "embedder: hashing")
    text = text.replace("root: ../../../shared/data", f"root: {SHARED}")
    text = text.replace("resamples: 10000", "resamples: 1000")
    return write(tmp_path / "vaswani.yaml", text)


def test_the_vaswani_example_and_its_cached_only_rerun(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    exp = _hashing_copy(tmp_path)
    out = tmp_path / "out"
    r = invoke("run", exp, "-o", out)
    assert r.exit_code == 0, r.output
    measured = json.loads((out / "measure" / "measure.json").read_text())
    means = {run["run"]: run["means"] for run in measured["runs"]}
    # the README's bm25 row (docs/collections.md: rankproof eval --collection vaswani)
    assert [round(means["bm25"][m], 4) for m in ("nDCG@10", "AP", "R@100")] == \
        [0.4434, 0.2643, 0.6204]
    # dense and fusion are what rankproof eval reports with the same embedder
    monkeypatch.chdir(tmp_path)
    direct = invoke("eval", "--collection", "vaswani", "--data-root", SHARED, "--embedder",
                    "hashing", "-m", "nDCG@10", "-m", "AP", "-m", "R@100", "--resamples", "200",
                    "--evidence-depth", "0", "--quiet", "-o", "eval.json")
    assert direct.exit_code == 0, direct.output
    report = json.loads((tmp_path / "eval.json").read_text())
    for stage in report["stages"]:
        for m, value in stage["means"].items():
            assert means[stage["name"]][m] == pytest.approx(value, abs=1e-12)
    keys = {s: stage_json(out, s)["key"] for s in ("bm25", "dense", "fusion")}
    again = invoke("run", exp, "-o", out, "--only", "compare", "report")
    assert again.exit_code == 0, again.output
    got = statuses(out)
    assert got == {"bm25": "cached", "dense": "cached", "fusion": "cached",
                   "measure": "skipped", "compare": "run", "report": "run"}
    assert {s: stage_json(out, s)["key"] for s in keys} == keys
    assert "report.md" in stage_json(out, "report")["outputs"]
