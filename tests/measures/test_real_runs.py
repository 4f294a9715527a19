"""Real published runs reproduce trec_eval 9.0.8's numbers to 4 decimals.

Expected values: ../shared/data/rankllm_runs/expected_metrics_trec_eval_9.0.8.tsv
(computed with trec_eval 9.0.8; the exact arguments are in each row).
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

import pytest
from tests.conftest import SHARED_DATA

import rankproof as rp

TSV = SHARED_DATA / "rankllm_runs" / "expected_metrics_trec_eval_9.0.8.tsv"


def _rows() -> list[dict[str, str]]:
    with TSV.open(newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _qrels_path(name: str) -> Path:
    for folder in ("trec_dl", "beir_anserini"):
        path = SHARED_DATA / folder / name
        if path.exists():
            return path
    raise FileNotFoundError(name)


@cache
def _qrels(name: str) -> rp.Qrels:
    return rp.read_trec_qrels(_qrels_path(name))


@cache
def _run(name: str) -> rp.Run:
    return rp.read_trec_run(SHARED_DATA / "rankllm_runs" / name)


def _groups() -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    groups: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for row in _rows():
        key = (row["run_file"], row["qrels_file"], row["trec_eval_args"])
        groups.setdefault(key, []).append((row["measure"], row["value"]))
    return [(*k, v) for k, v in groups.items()]


@pytest.mark.parametrize(("run_file", "qrels_file", "args", "expected"), _groups(),
                         ids=lambda v: v if isinstance(v, str) and "/" in v else None)
def test_expected_metrics(run_file: str, qrels_file: str, args: str,
                          expected: list[tuple[str, str]]) -> None:
    tokens = args.split()
    assert "-c" in tokens  # every row was computed with -c: topics="complete"
    level = int(next((t[2:] for t in tokens if t.startswith("-l")), "1"))
    measures = [rp.parse(name) for name, _ in expected]
    pq = rp.evaluate(_qrels(qrels_file), _run(run_file), measures, rel_level=level)
    got = {m.trec_name: f"{pq.aggregate(m):.4f}" for m in measures}
    assert got == dict(expected)


def test_every_row_is_covered() -> None:
    assert sum(len(g[3]) for g in _groups()) == len(_rows()) == 165


@pytest.mark.parametrize(("split", "by_score", "by_rank"),
                         [("dl19", "0.7384", "0.7439"), ("dl20", "0.7195", "0.7205")])
def test_replama_ties_follow_trec_eval(split: str, by_score: str, by_rank: str) -> None:
    """RepLLaMA scores are rounded to 3 decimals: ties decide nDCG@10."""
    qrels = _qrels(f"qrels.{split}-passage.txt")
    run = _run(f"REP_LLAMA/trec_results_{split}.txt")
    assert f"{rp.evaluate(qrels, run, 'nDCG@10').mean('nDCG@10'):.4f}" == by_score
    ranked = rp.evaluate(qrels, run, "nDCG@10", order="rank")
    assert f"{ranked.mean('nDCG@10'):.4f}" == by_rank
