"""Shared helpers of the pipeline tests: write an experiment file, run ``rankproof run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import Result
from typer.testing import CliRunner

from rankproof.cli import app

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
DL = SHARED / "trec_dl"
RUNS = SHARED / "rankllm_runs"

runner = CliRunner()


def invoke(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "220"})


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def stage_json(output: Path, stage: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((output / stage / "stage.json").read_text())
    return data


def statuses(output: Path) -> dict[str, str]:
    doc = json.loads((output / "run.json").read_text())
    return {s["id"]: s["status"] for s in doc["stages"]}


def runs_experiment(folder: Path, *, extra: str = "", k1: str = "") -> Path:
    """Three TREC DL 2019 passage runs (copied beside the file, so a test may edit one),
    fused, measured, compared, gated and reported, over the official qrels."""
    for name in ("BM25", "BM25_RM3", "D_BERT_KD_TASB"):
        target = folder / "runs" / f"{name}.txt"
        if not target.exists():
            write(target, (RUNS / name / "trec_results_dl19.txt").read_text())
    write(folder / "checks.yaml", "checks:\n  - id: floor\n    metric: nDCG@10\n"
                                  "    op: '>='\n    threshold: 0.3\n")
    return write(folder / "exp.yaml", f"""\
name: dl19
output: out
seed: 0
scope: {{pool: sampled}}
inputs:
  qrels: {DL / 'qrels.dl19-passage.txt'}
  topics: {DL / 'topics.dl19-passage.txt'}
stages:
  - id: bm25
    kind: run_file
    path: runs/BM25.txt
  - id: rm3
    kind: run_file
    path: runs/BM25_RM3.txt
  - id: tasb
    kind: run_file
    path: runs/D_BERT_KD_TASB.txt
  - id: hybrid
    kind: fuse
    runs: [bm25, tasb]
    method: rrf{k1}
  - id: scores
    kind: measure
    runs: [bm25, rm3, tasb, hybrid]
    measures: [nDCG@10, AP, R@100]
    rel_level: 2
  - id: compare
    kind: compare
    baseline: bm25
    candidates: [rm3, tasb, hybrid]
    measures: [nDCG@10, AP]
    rel_level: 2
    resamples: 500
  - id: gate
    kind: gate
    checks: checks.yaml
    input: scores
    system: hybrid
  - id: report
    kind: report
    input: compare
    formats: [md]
{extra}""")
