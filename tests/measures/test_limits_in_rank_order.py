"""trec_eval's ``-M`` and ``-J`` under ``order="rank"``: the run's own order is kept.

``-M N`` keeps each topic's first N documents of the ranking the evaluation uses (by the
rank column under ``order="rank"``), and ``-J`` removes unjudged documents with the ranks
closing up. Checked against runs built here by hand, on TREC DL 2019's BM25 run with its
rank column reversed (so that rank order and score order disagree everywhere), and through
``rankproof measure``, which used to refuse ``-J --order rank`` for the gaps ``-J`` left.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.data import load_qrels, load_run, read_trec_run
from rankproof.measures import EvalOptions, evaluate

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
QRELS = DATA / "trec_dl" / "qrels.dl19-passage.txt"
RUN = DATA / "rankllm_runs" / "BM25" / "trec_results_dl19.txt"
pytestmark = pytest.mark.skipif(not RUN.exists(), reason="../shared/data is not present")
MEASURES = ["AP", "nDCG@10", "RR", "NumRet", "P@5"]


def _lines(tmp_path: Path) -> tuple[list[list[str]], Path]:
    """The run's lines with each topic's ranks reversed (rank 1 = lowest score)."""
    lines = [line.split() for line in RUN.read_text().splitlines()]
    count: dict[str, int] = {}
    for f in lines:
        count[f[0]] = count.get(f[0], 0) + 1
    seen: dict[str, int] = {}
    for f in lines:
        seen[f[0]] = seen.get(f[0], 0) + 1
        f[3] = str(count[f[0]] - seen[f[0]] + 1)
    path = tmp_path / "reversed.trec"
    path.write_text("".join(" ".join(f) + "\n" for f in lines))
    return lines, path


def _by_hand(lines: list[list[str]], keep: object, tmp_path: Path) -> Path:
    """The run trec_eval's -M/-J leave under rank order, built line by line: the kept lines
    of each topic in rank order, numbered again from 1."""
    out: list[str] = []
    topics: dict[str, list[list[str]]] = {}
    for f in lines:
        topics.setdefault(f[0], []).append(f)
    for qid, rows in topics.items():
        rows = sorted(rows, key=lambda f: int(f[3]))
        kept = [f for i, f in enumerate(rows) if keep(qid, f, i)]  # type: ignore[operator]
        out += [" ".join([f[0], f[1], f[2], str(r), f[4], f[5]]) for r, f in
                enumerate(kept, 1)]
    path = tmp_path / "by-hand.trec"
    path.write_text("\n".join(out) + "\n")
    return path


def test_m_and_j_keep_the_rank_order(tmp_path: Path) -> None:
    qrels = load_qrels(str(QRELS))
    lines, path = _lines(tmp_path)
    judged = {(q, d) for q, d in zip(qrels.qid_vocab.take(qrels.qid_codes).to_pylist(),
                                    qrels.docids.to_pylist(), strict=True)}
    run = load_run(str(path))
    for options, keep in (
            (EvalOptions(order="rank", max_retrieved=20), lambda q, f, i: i < 20),
            (EvalOptions(order="rank", judged_only=True), lambda q, f, i: (q, f[2]) in judged),
            (EvalOptions(order="rank", max_retrieved=50, judged_only=True),
             lambda q, f, i: i < 50 and (q, f[2]) in judged)):
        kept = options.limited(run, qrels)
        assert kept is not None
        got = evaluate(qrels, kept, MEASURES, **options.keywords())
        want = evaluate(qrels, read_trec_run(_by_hand(lines, keep, tmp_path)), MEASURES,
                        order="rank")
        np.testing.assert_array_equal(got.values, want.values)
    # Under score order the same -M keeps other documents: the orders really differ.
    by_score = EvalOptions(max_retrieved=20).limited(run, qrels)
    assert by_score is not None
    assert not np.array_equal(
        evaluate(qrels, by_score, MEASURES).values,
        evaluate(qrels, EvalOptions(order="rank", max_retrieved=20).limited(run, qrels),  # type: ignore[arg-type]
                 MEASURES, order="rank").values)


def test_measure_accepts_j_with_rank_order(tmp_path: Path) -> None:
    _, path = _lines(tmp_path)
    r = CliRunner().invoke(app, ["measure", str(QRELS), str(path), "-m", "AP", "-J",
                                 "--order", "rank", "-f", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["runs"][0]["means"]["AP"] > 0
