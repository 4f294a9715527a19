"""Custom gains for G, ndcg_rel, Rndcg and rbp (trec_eval 10's ``-m G.1=3,2=9``).

Oracles:

* hand-computed values on a four-document list, from trec_eval's definitions
  (``m_G.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c``, ``m_rbp.c``, ``gain_init.c``);
* a literal per-topic port of those loops (written here, a test oracle only)
  against the vectorised kernels, per topic to 1e-12, on trec_eval's own graded
  test judgments (``qrels.rel_level``: labels -1 .. 4) and run, for several gain
  maps: zero, negative and fractional gains, a gain for label 0, a label the
  judgments lack;
* the drop-in: ``rankproof trec_eval -m G.1=3,2=9 ...`` accepts trec_eval's
  flags and echoes the parameters as typed.

trec_eval sorts its gain levels with a comparator that truncates the difference
of two gains to an int, so two gains less than 1 apart keep an arbitrary order;
the kernels (and the port here) order them by their true value.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.data import Qrels, Run, load_qrels, load_run
from rankproof.measures import Measure, evaluate, parse, parse_many

SUITE = Path(__file__).resolve().parents[3] / "shared" / "data" / "trec_eval_tests"
NONPOOL, UNJUDGED = -1, -2


# -- hand-computed values --------------------------------------------------------------

def _tiny() -> tuple[Qrels, Run]:
    # q1: d1:2, d2:1, d3:0, d4:1; ranked d3, d1, d5 (unjudged), d2.  q2: d9:1, ranked d9.
    qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": 1}, "q2": {"d9": 1}})
    run = Run.from_dict({"q1": {"d3": 4.0, "d1": 3.0, "d5": 2.0, "d2": 1.0}, "q2": {"d9": 1.0}})
    return qrels, run


def _q1(spec: str) -> float:
    qrels, run = _tiny()
    pq = evaluate(qrels, run, [spec])
    return float(pq.values[pq.qids.index("q1"), 0])


def test_g_with_gains_by_hand() -> None:
    # gains 2 -> 9, 1 -> 3: ideal 9, 3, 3; costs 9, 12, 15, 16 (the 4th rank costs 1).
    expected = (9 / math.log2(2 + 12 - 9) + 3 / math.log2(2 + 16 - 12)) / 15
    assert _q1("G.1=3,2=9") == pytest.approx(expected, abs=1e-15)
    assert _q1("G(gains={1:3,2:9})") == _q1("G.1=3,2=9")


def test_ndcg_rel_with_gains_by_hand() -> None:
    ideal = [9.0, 9 + 3 / math.log2(3), 9 + 3 / math.log2(3) + 1.5]
    dcg_1 = 9 / math.log2(3)
    dcg_3 = dcg_1 + 3 / math.log2(5)
    # points: d1 at rank 2, d2 at rank 4, and d4 (never retrieved) at the final nDCG
    expected = (dcg_1 / ideal[1] + dcg_3 / ideal[2] + dcg_3 / ideal[2]) / 3
    assert _q1("ndcg_rel.1=3,2=9") == pytest.approx(expected, abs=1e-15)


def test_rndcg_with_gains_by_hand() -> None:
    # the ideal gain drops 9 -> 3 before rank 2 (run DCG 0 so far) and 3 -> 0 before rank 4
    ideal = 9 + 3 / math.log2(3) + 1.5
    expected = (0.0 + (9 / math.log2(3)) / ideal) / 2
    assert _q1("Rndcg.1=3,2=9") == pytest.approx(expected, abs=1e-15)
    # equal gains make no boundary: 1 -> 2 and 2 -> 2 is one level of gain 2, so the one
    # boundary is the drop to 0 before rank 4 (scored before d2 there adds its gain)
    ideal = 2 + 2 / math.log2(3) + 1.0
    expected_same = (2 / math.log2(3)) / ideal
    assert _q1("Rndcg.1=2") == pytest.approx(expected_same, abs=1e-15)


@pytest.mark.parametrize(("spec", "expected"), [
    # table 0, 3, 9: scaled by 9; d1 (2) at rank 2, d2 (1) at rank 4
    ("rbp.p=0.5,1=3,2=9", 0.5 * (1.0 * 0.5 + (3 / 9) * 0.125)),
    # table -1, 1, 2: (g + 1) / 3, so label 0 gains 0, 1 gains 2/3, 2 gains 1
    ("rbp.p=0.5,0=-1", 0.5 * (1.0 * 0.5 + (2 / 3) * 0.125)),
    # a listed label the topic lacks still widens the table: 0, 1, 2, 10 -> / 10
    ("rbp.p=0.5,5=10", 0.5 * (0.2 * 0.5 + 0.1 * 0.125)),
    # gains within [0, 1] are used as they are
    ("rbp.p=0.5,1=0.25,2=0.5", 0.5 * (0.5 * 0.5 + 0.25 * 0.125)),
    # label 0 given a gain: table 1, 1, 2 scaled by 2, so d3 at rank 1 counts 0.5
    ("rbp.p=0.5,0=1", 0.5 * (0.5 * 1.0 + 1.0 * 0.5 + 0.5 * 0.125)),
])
def test_rbp_with_gains_by_hand(spec: str, expected: float) -> None:
    assert _q1(spec) == pytest.approx(expected, abs=1e-15)


def test_label_gains_reproduce_the_defaults() -> None:
    qrels = load_qrels(SUITE / "qrels.rel_level")
    run = load_run(SUITE / "results.test")
    # (not RBP: a listed label widens every topic's gain table, as in trec_eval, so
    # listing 0..4 rescales a topic whose highest label is 2; see the by-hand cases)
    for name in ("G", "NDCGRel", "RnDCG"):
        pq = evaluate(qrels, run, [name, f"{name}(gains={{0:0,1:1,2:2,3:3,4:4}})"])
        np.testing.assert_array_equal(pq.values[:, 0], pq.values[:, 1], err_msg=name)


# -- a literal port of trec_eval's loops (oracle) ---------------------------------------

def _levels(counts: Counter[int], pairs: dict[int, float]) -> list[tuple[float, int]]:
    """gain_init.c's setup_gains: (gain, count) per level, ascending gain."""
    top = max((lab for lab, n in counts.items() if n > 0), default=-1)
    table = {lab: [g, 0] for lab, g in pairs.items()}
    for lab in range(top + 1):
        if lab in table:
            table[lab][1] = counts.get(lab, 0)
        else:
            table[lab] = [float(lab), counts.get(lab, 0)]
    return sorted(((g, n) for g, n in table.values()), key=lambda x: x[0])


def _gain(rel: int, pairs: dict[int, float]) -> float:
    if rel < 0:
        return 0.0
    return pairs.get(rel, float(rel))


class _IdealWalk:
    """The ideal list, level by level from the highest gain down (cur_level/num_at_level)."""

    def __init__(self, levels: list[tuple[float, int]]) -> None:
        self.levels, self.cur, self.n = levels, len(levels) - 1, 0
        self.gain = levels[self.cur][0] if self.cur >= 0 else 0.0

    def step(self) -> float:
        self.n += 1
        while self.cur >= 0 and self.n > self.levels[self.cur][1]:
            self.n = 1
            self.cur -= 1
            self.gain = self.levels[self.cur][0] if self.cur >= 0 else 0.0
        return self.gain


def ref_g(rels: list[int], counts: Counter[int], pairs: dict[int, float]) -> float:
    walk = _IdealWalk(_levels(counts, pairs))
    results_g = sum_results = sum_ideal = sum_cost = 0.0
    i = 0
    while i < len(rels) and walk.gain > 0:
        g = _gain(rels[i], pairs)
        sum_results += g
        ideal = walk.step()
        if ideal > 0:
            sum_ideal += ideal
        sum_cost += ideal if ideal >= 1.0 else 1.0
        if g != 0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    while i < len(rels):
        g = _gain(rels[i], pairs)
        sum_results += g
        sum_cost += 1.0
        if g != 0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    while walk.gain > 0:
        ideal = walk.step()
        if ideal > 0:
            sum_ideal += ideal
    return results_g / sum_ideal if sum_ideal > 0 else 0.0


def ref_ndcg_rel(rels: list[int], counts: Counter[int], pairs: dict[int, float]) -> float:
    walk = _IdealWalk(_levels(counts, pairs))
    dcg = ideal_dcg = total = 0.0
    num_rel = num_rel_ret = 0
    i = 0
    while i < len(rels) and walk.gain > 0:
        g = _gain(rels[i], pairs)
        if g != 0:
            dcg += g / math.log2(i + 2)
        ideal = walk.step()
        if ideal > 0:
            num_rel += 1
            ideal_dcg += ideal / math.log2(i + 2)
        if g > 0:
            total += dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while i < len(rels):
        g = _gain(rels[i], pairs)
        if g != 0:
            dcg += g / math.log2(i + 2)
        if g > 0:
            total += dcg / ideal_dcg
            num_rel_ret += 1
        i += 1
    while walk.gain > 0:
        ideal = walk.step()
        if ideal > 0:
            num_rel += 1
            ideal_dcg += ideal / math.log2(i + 2)
        i += 1
    if num_rel > num_rel_ret:
        total += (num_rel - num_rel_ret) * dcg / ideal_dcg
    return total / num_rel if total > 0 else 0.0


def ref_rndcg(rels: list[int], counts: Counter[int], pairs: dict[int, float],
              num_rel: int) -> float:
    if num_rel == 0:
        return 0.0
    walk = _IdealWalk(_levels(counts, pairs))
    old = walk.gain
    dcg = ideal_dcg = total = 0.0
    changes = 0
    i = 0
    while i < len(rels) and walk.gain > 0:
        g = _gain(rels[i], pairs)
        ideal = walk.step()
        if old != ideal:
            if ideal_dcg > 0:
                total += dcg / ideal_dcg
                changes += 1
            old = ideal
        if g != 0:
            dcg += g / math.log2(i + 2)
        if ideal > 0:
            ideal_dcg += ideal / math.log2(i + 2)
        i += 1
    if i < len(rels):
        while i < len(rels):
            g = _gain(rels[i], pairs)
            if g != 0:
                dcg += g / math.log2(i + 2)
            i += 1
        if ideal_dcg > 0:
            total += dcg / ideal_dcg
            changes += 1
    while walk.gain > 0:
        ideal = walk.step()
        if old != ideal:
            if ideal_dcg > 0:
                total += dcg / ideal_dcg
                changes += 1
            old = ideal
        if ideal > 0:
            ideal_dcg += ideal / math.log2(i + 2)
        i += 1
    # No boundary at all (every relevant label given a gain <= 0): trec_eval divides 0 by 0
    # and prints nan; rankproof gives 0, as it does for every 0/0.
    return total / changes if changes else 0.0


def ref_rbp(rels: list[int], counts: Counter[int], pairs: dict[int, float], p: float) -> float:
    levels = _levels(counts, pairs)
    lo = min([0.0, *(g for g, _ in levels)])  # trec_eval's min/max start at 0
    hi = max([0.0, *(g for g, _ in levels)])
    table = {lab: g for lab, g in pairs.items()}
    top = max((lab for lab, n in counts.items() if n > 0), default=-1)
    for lab in range(top + 1):
        table.setdefault(lab, float(lab))
    if lo < 0 or hi > 1:
        table = {lab: (g - lo) / (hi - lo) for lab, g in table.items()}
    total, weight = 0.0, 1.0
    for rel in rels:
        g = table.get(rel, 0.0) if rel >= 0 else 0.0
        if g != 0:
            total += g * weight
        weight *= p
    return (1.0 - p) * total


def _suite() -> tuple[dict[str, list[int]], dict[str, Counter[int]], dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    for line in (SUITE / "qrels.rel_level").read_text().splitlines():
        q, _, doc, rel = line.split()
        judged.setdefault(q, {})[doc] = int(rel)
    rows: dict[str, list[tuple[float, str]]] = {}
    for line in (SUITE / "results.test").read_text().splitlines():
        q, _, doc, _, sim, _ = line.split()
        rows.setdefault(q, []).append((float(sim), doc))
    ranked: dict[str, list[int]] = {}
    for q, docs in rows.items():
        docs.sort(key=lambda r: r[1].encode(), reverse=True)
        docs.sort(key=lambda r: -r[0])  # stable: ties keep docno descending
        labels = judged.get(q, {})
        ranked[q] = [NONPOOL if d not in labels else UNJUDGED if labels[d] < 0 else labels[d]
                     for _, d in docs]
    counts = {q: Counter(r for r in labels.values() if r >= 0) for q, labels in judged.items()}
    num_rel = {q: sum(1 for r in labels.values() if r >= 1) for q, labels in judged.items()}
    return ranked, counts, num_rel


GAIN_MAPS = [
    {},
    {1: 3.0, 2: 9.0},
    {1: 3.5, 2: 9.0, 4: 7.0},  # trec_eval's own example (level 3 keeps gain 3)
    {0: 1.0},
    {0: -1.0, 3: 0.0},
    {1: 0.5, 2: 0.5, 3: 10.0},
    {7: 20.0},
    {4: -2.0, 1: 2.0},
]


def _text(pairs: dict[int, float]) -> str:
    return ",".join(f"{k}={v}" for k, v in pairs.items())


@pytest.mark.parametrize("pairs", GAIN_MAPS, ids=[_text(g) or "labels" for g in GAIN_MAPS])
def test_kernels_match_the_port_of_trec_eval(pairs: dict[int, float]) -> None:
    ranked, counts, num_rel = _suite()
    suffix = f".{_text(pairs)}" if pairs else ""
    rbp = f"rbp.p=0.8,{_text(pairs)}" if pairs else "rbp.p=0.8"
    specs = [f"G{suffix}", f"ndcg_rel{suffix}", f"Rndcg{suffix}", rbp]
    pq = evaluate(load_qrels(SUITE / "qrels.rel_level"), load_run(SUITE / "results.test"),
                  [parse(s) for s in specs])
    for row, q in enumerate(pq.qids):
        expected = [ref_g(ranked[q], counts[q], pairs), ref_ndcg_rel(ranked[q], counts[q], pairs),
                    ref_rndcg(ranked[q], counts[q], pairs, num_rel[q]),
                    ref_rbp(ranked[q], counts[q], pairs, 0.8)]
        for col, spec in enumerate(specs):
            assert pq.values[row, col] == pytest.approx(expected[col], abs=1e-12), (spec, q)


# -- grammar and the drop-in ------------------------------------------------------------

@pytest.mark.parametrize(("spelling", "canonical", "trec_name"), [
    ("G.1=3,2=9", "G(gains={1:3,2:9})", "G_1=3,2=9"),
    ("G_1=3.5,2=9.0,4=7.0", "G(gains={1:3.5,2:9,4:7})", "G_1=3.5,2=9,4=7"),
    ("ndcg_rel.0=1", "NDCGRel(gains={0:1})", "ndcg_rel_0=1"),
    ("Rndcg.2=-1", "RnDCG(gains={2:-1})", "Rndcg_2=-1"),
    ("rbp.p=0.8,1=3,2=9", "RBP(gains={1:3,2:9},p=0.8)", "rbp_p=0.8,1=3,2=9"),
    ("rbp.2=4", "RBP(gains={2:4})", "rbp_2=4"),
    ("RBP(gains={2:4},p=0.5)", "RBP(gains={2:4},p=0.5)", "rbp_p=0.5,2=4"),
])
def test_spellings(spelling: str, canonical: str, trec_name: str) -> None:
    m = parse(spelling)
    assert str(m) == canonical
    assert m.trec_name == trec_name
    assert parse(str(m)) == m
    assert parse_many(spelling) == (m,)


@pytest.mark.parametrize(("spelling", "message"), [
    ("G.-1=3", "label -1 is negative"),
    ("RBP(rel=1,gains={1:2})", "give rel= (binary gains) or gains=, not both"),
    ("rbp.q=3", "'q=3' is not one of p= or label=gain (1=3)"),
    ("G.1=x", "cannot parse measure 'G.1=x'"),
    ("G(gains={1:2,1:3})", "label 1 given twice"),
    ("G.1=2,1=3", "label 1 given twice"),
])
def test_refusals(spelling: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse(spelling)


def test_measure_value_accepts_gains_in_code() -> None:
    assert str(Measure("G", params={"gains": {2: 9, 1: 3}})) == "G(gains={1:3,2:9})"


def test_dropin_accepts_trec_eval_gain_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SUITE)
    args = ["trec_eval", "-q", "-m", "G.1=3.5,2=9.0,4=7.0", "-m", "ndcg_rel.1=3,2=9",
            "-m", "Rndcg.0=1", "-m", "rbp.p=0.8,1=3", "qrels.rel_level", "results.test"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    names = list(dict.fromkeys(name.strip() for name, _, _ in lines))
    # printed in trec_eval's order (G, ndcg_rel, Rndcg, rbp), parameters as typed
    assert names == ["G_1=3.5,2=9.0,4=7.0", "ndcg_rel_1=3,2=9", "Rndcg_0=1", "rbp_p=0.8,1=3"]
    ranked, counts, num_rel = _suite()
    refs = {
        "G_1=3.5,2=9.0,4=7.0": lambda q: ref_g(ranked[q], counts[q], {1: 3.5, 2: 9.0, 4: 7.0}),
        "ndcg_rel_1=3,2=9": lambda q: ref_ndcg_rel(ranked[q], counts[q], {1: 3.0, 2: 9.0}),
        "Rndcg_0=1": lambda q: ref_rndcg(ranked[q], counts[q], {0: 1.0}, num_rel[q]),
        "rbp_p=0.8,1=3": lambda q: ref_rbp(ranked[q], counts[q], {1: 3.0}, 0.8),
    }
    for name, qid, value in lines:
        name = name.strip()
        if qid == "all":
            expected = sum(refs[name](q) for q in ranked) / len(ranked)
        else:
            expected = refs[name](qid)
        assert value == f"{expected:6.4f}", (name, qid)


def test_measure_command_prints_the_trec_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SUITE)
    result = CliRunner().invoke(app, ["measure", "qrels.rel_level", "results.test", "-m",
                                      "G.1=3,2=9", "-m", "RBP(gains={1:3},p=0.8)",
                                      "--format", "trec"])
    assert result.exit_code == 0, result.output
    names = [line.split("\t")[0].strip() for line in result.stdout.splitlines()]
    assert names == ["G_1=3,2=9", "rbp_p=0.8,1=3"]
