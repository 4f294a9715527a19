"""``--cross-check`` for the measures beyond trec_eval: ERR@k (ir_measures' gdeval
provider), Compat (its compat provider), binary RBP (its cwl_eval provider) and
Judged@k (its judged provider), on TREC DL 2019 with three rank_llm runs.

The same rules as every cross-check: one ranking and one topic set for both
evaluators, the default tolerance 1e-4 (gdeval prints 5 decimals, so ERR agrees
to 5e-6, not to 1e-9), and what ir_measures cannot compute is listed with the
reason, never dropped.
"""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.data import Qrels, Run, load_qrels, load_run
from rankproof.measures import cross_check

pytest.importorskip("ir_measures")

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
QRELS = DATA / "trec_dl" / "qrels.dl19-passage.txt"
RUNS = DATA / "rankllm_runs"
SYSTEMS = ("BM25", "D_BERT_KD_TASB", "REP_LLAMA")  # REP_LLAMA: thousands of tied scores
EXACT = ("Compat", "Compat(normalize=0,p=0.8)", "RBP(p=0.8,rel=1)", "RBP(p=0.5,rel=2)",
         "Judged@10", "Judged@100")
GDEVAL = ("ERR@10", "ERR@20")
NOT_MAPPED = {
    "RBP(p=0.8)": "ir_measures' RBP (cwl_eval) has binary gains (RBP(rel=r)); trec_eval's "
                  "graded RBP has no counterpart there",
    "ERR": "ir_measures' ERR is gdeval's, which needs a cutoff (ERR@k)",
    "ERR(gmax=3)@10": "ir_measures' ERR is gdeval's, whose labels run 0..4 (gmax=4) only",
    "RBPResid(p=0.8,rel=1)": "cwl_eval's RBP residual is not an ir_measures measure",
}


@cache
def _inputs() -> tuple[Qrels, tuple[Run, ...]]:
    return load_qrels(QRELS), tuple(load_run(RUNS / s / "trec_results_dl19.txt", name=s)
                                    for s in SYSTEMS)


needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")


@needs_perl
def test_beyond_measures_agree_with_ir_measures() -> None:
    qrels, runs = _inputs()
    cc = cross_check(qrels, runs, [*GDEVAL, *EXACT, *NOT_MAPPED], backend="ir-measures")
    assert cc.passed is True
    for r in cc.runs:
        assert set(r.checked) == {*GDEVAL, *EXACT}, r.run
        assert dict(r.unchecked) == NOT_MAPPED
        assert r.zero_filled == () and len(r.qids) == len(qrels.topics)
        for m in EXACT:
            assert float(r.deltas(m).max()) <= 1e-12 and r.mean_delta(m) <= 1e-12, (r.run, m)
        for m in GDEVAL:  # gdeval rounds to 5 decimals: half a unit of the 5th decimal
            assert 0 < float(r.deltas(m).max()) <= 5.01e-6, (r.run, m)
            assert "gdeval" in r.backend_names[m]
        assert r.backend_names["Compat(normalize=0,p=0.8)"] == "Compat(p=0.8,normalize=False)"
        assert r.backend_names["RBP(p=0.5,rel=2)"] == "RBP(p=0.5,rel=2)"
    assert next(r for r in cc.runs if r.run == "REP_LLAMA").tied_pairs > 10_000


@needs_perl
def test_a_disagreement_on_err_fails_the_check(tmp_path: Path) -> None:
    """Other judgments for the backend: ERR and RBP then differ, and the check says so."""
    qrels, runs = _inputs()
    lines = QRELS.read_text().splitlines()
    shifted = tmp_path / "shifted.qrels"
    shifted.write_text("\n".join(
        " ".join([*ln.split()[:3], "3" if ln.split()[3] == "1" else ln.split()[3]])
        for ln in lines) + "\n")
    cc = cross_check(qrels, runs[:1], ["ERR@10", "RBP(p=0.8,rel=2)"], backend="ir-measures",
                     backend_qrels=shifted)
    assert cc.passed is False
    assert set(cc.runs[0].failed) == {"ERR@10", "RBP(p=0.8,rel=2)"}


@needs_perl
def test_measure_cross_check_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    args = ["measure", str(QRELS), str(RUNS / "BM25" / "trec_results_dl19.txt"), "-f", "json",
            "-o", str(out), "--cross-check", "ir-measures", "-m", "ERR@20", "-m", "Compat",
            "-m", "RBP(p=0.8,rel=1)", "-m", "Judged@10", "-m", "RBP(p=0.8)"]
    got = CliRunner().invoke(app, args)
    assert got.exit_code == 0, got.stderr
    doc = json.loads(out.read_text())["cross_check"]
    run = doc["runs"][0]
    assert doc["passed"] is True
    assert set(run["checked"]) == {"ERR@20", "Compat", "RBP(p=0.8,rel=1)", "Judged@10"}
    assert set(run["unchecked"]) == {"RBP(p=0.8)"}
