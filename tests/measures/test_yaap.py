"""``yaap`` (trec_eval 10's m_yaap.c) against a line-by-line reading of its definition.

Per topic: walk the ranking (score descending, ties by docid descending), add
``relevant so far / rank`` at each relevant document (label >= the relevance level),
and take log((1 + sum) / (1 + relevant documents - sum)). Checked per topic and in
the mean, at relevance levels 1 and 2, on trec_eval's own test files.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rankproof.data import load_qrels, load_run
from rankproof.measures import evaluate, parse


def _by_hand(qrels_path: Path, run_path: Path, level: int) -> dict[str, float]:
    labels: dict[str, dict[str, int]] = {}
    for line in qrels_path.read_text().splitlines():
        q, _, d, r = line.split()[:4]
        labels.setdefault(q, {})[d] = int(r)
    ranked: dict[str, list[tuple[float, str]]] = {}
    for line in run_path.read_text().splitlines():
        q, _, d, _, s = line.split()[:5]
        ranked.setdefault(q, []).append((float(s), d))
    out = {}
    for q, judged in labels.items():
        num_rel = sum(1 for r in judged.values() if r >= level)
        docs = sorted(ranked.get(q, []), key=lambda x: (x[0], x[1].encode()), reverse=True)
        so_far, total = 0, 0.0
        for i, (_, d) in enumerate(docs):
            if judged.get(d, -1) >= level:
                so_far += 1
                total += so_far / (i + 1)
        # A topic the run does not retrieve for is zero-filled, as trec_eval -c prints it.
        out[q] = math.log((1 + total) / (1 + num_rel - total)) if q in ranked else 0.0
    return out


@pytest.mark.parametrize("qrels_name, level", [("qrels.test", 1), ("qrels.rel_level", 1),
                                               ("qrels.rel_level", 2)])
def test_yaap_is_trec_eval_s(trec_eval_tests: Path, qrels_name: str, level: int) -> None:
    qrels_path, run_path = trec_eval_tests / qrels_name, trec_eval_tests / "results.test"
    expected = _by_hand(qrels_path, run_path, level)
    pq = evaluate(load_qrels(qrels_path), load_run(run_path), ["yaap"], rel_level=level)
    got = pq.scores(parse("yaap"))
    assert got.keys() == expected.keys()
    for q, value in expected.items():
        assert got[q] == pytest.approx(value, abs=1e-12), q
    assert pq.mean()["YAAP"] == pytest.approx(sum(expected.values()) / len(expected),
                                              abs=1e-12)
    assert any(v < 0 for v in got.values())  # not bounded below by 0, unlike AP
