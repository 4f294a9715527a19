"""Measures beyond trec_eval, each against an independent implementation.

Oracles (all installed by the ``dev`` extra):

* gdeval.pl as ir_measures ships it (``ir_measures/bin/gdeval.pl``, run with
  perl): ``ERR@k`` and ``nDCG(gain=exp)@k`` (ir_measures' ``nDCG(dcg=exp-log2)@k``).
  gdeval prints 5 decimals, so values agree to 5e-6; it breaks score ties by
  docid descending, as trec_eval, so runs with ties go to it as they are.
* cwl-eval (``RBP(p,rel=r)`` through ir_measures; the residual through cwl's own
  ``residuals`` mode) and ir_measures' compat and judged providers.
* pyndeval (ndeval.c): ``alpha_nDCG@k``, ``ERR_IA@k``, ``NRBP``, ``P_IA@k``,
  ``StRecall@k`` over subtopic qrels.

ir_measures' Python providers and pyndeval break score ties by docid
*ascending*, where trec_eval (and rankproof) break them descending; runs with
ties are handed to those oracles with their scores rewritten to rankproof's
ranking (distinct, positive, falling), so the comparison checks the measure and
not the tie rule. Per-topic agreement is to 1e-9 unless said otherwise.
"""

from __future__ import annotations

import importlib.resources
import math
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import SHARED_DATA

from rankproof import InputError
from rankproof.data import (
    Qrels,
    Run,
    SubtopicQrels,
    read_subtopic_qrels,
    read_trec_qrels,
    read_trec_run,
)
from rankproof.measures import evaluate, parse

irm = pytest.importorskip("ir_measures")
pyndeval = pytest.importorskip("pyndeval")

DL19_QRELS = SHARED_DATA / "trec_dl" / "qrels.dl19-passage.txt"
DL19_RUNS = ("BM25", "REP_LLAMA")
SLOW = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

QrelsRows = list[tuple[str, str, int]]
RunRows = list[tuple[str, str, float]]


# -- generated data -------------------------------------------------------------

@st.composite
def _judged_runs(draw: st.DrawFn, max_label: int = 4, negative: bool = True,
                 numeric: bool = False) -> tuple[QrelsRows, RunRows]:
    """Qrels and a run over a few topics: graded labels, unjudged documents, score ties,
    qrels topics the run lacks and run topics the qrels lack."""
    n_topics = draw(st.integers(1, 4))
    qrels: QrelsRows = []
    run: RunRows = []
    low = -1 if negative else 0
    for t in range(n_topics + 1):  # the last topic may be a run-only topic
        qid = str(100 + t) if numeric else f"q{t}"
        docs = [f"d{i}" for i in range(draw(st.integers(1, 25)))]
        if t < n_topics:
            judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
            qrels.extend((qid, d, draw(st.integers(low, max_label))) for d in judged)
        if draw(st.booleans()) or t == 0:
            shown = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
            scores = draw(st.lists(st.integers(0, 6), min_size=len(shown),
                                   max_size=len(shown)))
            run.extend((qid, d, float(s)) for d, s in zip(shown, scores, strict=True))
    return qrels, run


def _qrels(rows: QrelsRows) -> Qrels:
    return Qrels.from_columns([r[0] for r in rows], [r[1] for r in rows],
                              np.array([r[2] for r in rows], dtype=np.int64))


def _run(rows: RunRows) -> Run:
    return Run.from_columns([r[0] for r in rows], [r[1] for r in rows],
                            [r[2] for r in rows])


def _trec_order(rows: RunRows) -> RunRows:
    """The run with scores rewritten to its trec_eval ranking (score desc, docid desc):
    distinct, positive and falling, for oracles whose tie rule differs."""
    by_topic: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for q, d, s in rows:
        by_topic[q].append((s, d))
    out: RunRows = []
    for q, docs in by_topic.items():
        docs.sort(key=lambda x: (x[0], x[1].encode()), reverse=True)
        out.extend((q, d, float(len(docs) - i)) for i, (_, d) in enumerate(docs))
    return out


def _close(mine: dict[str, float], ref: dict[str, float], tol: float = 1e-9) -> None:
    """Per topic within ``tol``; a qrels topic the oracle does not print (the run lacks
    it, or gdeval finds nothing relevant in it) scores 0 in rankproof."""
    for qid, value in ref.items():
        assert mine[qid] == pytest.approx(value, abs=tol), qid
    for qid in set(mine) - set(ref):
        assert mine[qid] == 0.0, qid


# -- gdeval ----------------------------------------------------------------------

def _gdeval(tmp: Path, qrels: QrelsRows, run: RunRows, k: int) -> dict[str, tuple[float, float]]:
    script = importlib.resources.files("ir_measures") / "bin" / "gdeval.pl"
    qpath, rpath = tmp / "qrels", tmp / "run"
    qpath.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels))
    rpath.write_text("".join(f"{q} Q0 {d} {i} {s} tag\n" for i, (q, d, s) in enumerate(run)))
    out = subprocess.run(["perl", str(script), str(qpath), str(rpath), str(k)],
                         check=True, capture_output=True, text=True).stdout
    rows = [line.split(",") for line in out.splitlines()[1:] if line]
    return {r[1]: (float(r[2]), float(r[3])) for r in rows}


needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")


@needs_perl
@SLOW
@given(data=_judged_runs(numeric=True), k=st.integers(1, 25))
def test_err_and_exp_ndcg_match_gdeval(tmp_path_factory: pytest.TempPathFactory,
                                       data: tuple[QrelsRows, RunRows], k: int) -> None:
    qrels, run = data
    ref = _gdeval(tmp_path_factory.mktemp("gdeval"), qrels, run, k)
    pq = evaluate(_qrels(qrels), _run(run), [f"ERR@{k}", f"nDCG(dcg=exp-log2)@{k}"],
                  topics="complete-allow-disjoint")
    err, ndcg = pq.scores(f"ERR@{k}"), pq.scores(f"nDCG(gain=exp)@{k}")
    # gdeval prints %.5f: agreement to half a unit of the fifth decimal
    _close(err, {q: v[1] for q, v in ref.items()}, 5e-6 + 1e-12)
    _close(ndcg, {q: v[0] for q, v in ref.items()}, 5e-6 + 1e-12)
    # gdeval skips a topic with no relevant document or no run: rankproof scores it 0
    for qid in set(err) - set(ref):
        assert err[qid] == 0.0 and ndcg[qid] == 0.0


def test_err_known_answer_and_gmax() -> None:
    qrels = {"q": {"a": 4, "b": 2, "c": 0}}
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}
    r_a, r_b = 15 / 16, 3 / 16
    expected = r_a + (1 - r_a) * r_b / 3
    assert evaluate(qrels, run, "ERR@3").scores("ERR@3")["q"] == pytest.approx(expected)
    assert evaluate(qrels, run, "ERR@2").scores("ERR@2")["q"] == pytest.approx(r_a)
    assert evaluate(qrels, run, "ERR(gmax=5)").scores("ERR(gmax=5)")["q"] == pytest.approx(
        15 / 32 + (1 - 15 / 32) * (3 / 32) / 3)
    with pytest.raises(InputError, match=r"label of 4 exceeds gmax=3.*ERR\(gmax="):
        evaluate(qrels, run, "ERR(gmax=3)@10")


# -- RBP and its residual -----------------------------------------------------------

def _cwl_rbp(qrels: QrelsRows, run: RunRows, p: float, rel: int) -> dict[str, tuple[float, float]]:
    """cwl-eval's RBP and its residual (best case minus worst case) per run topic."""
    cwl_rbp = pytest.importorskip("cwl.ruler.measures.cwl_rbp")
    from cwl.ruler.ranking import Ranking

    labels = {(q, d): r for q, d, r in qrels}
    topics = {q for q, _, _ in qrels}
    out: dict[str, tuple[float, float]] = {}
    for qid, docs in _by_topic(_trec_order(run)).items():
        if qid not in topics:
            continue
        gains = [np.nan if (qid, d) not in labels else float(labels[(qid, d)] >= rel)
                 for d in docs]
        metric = cwl_rbp.RBPCWLMetric(p)
        metric.residuals = True
        value = metric.measure(Ranking(qid, gains, [np.nan] * len(gains)))
        out[qid] = (value, metric.residual_expected_utility)
    return out


def _by_topic(run: RunRows) -> dict[str, list[str]]:
    out: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for q, d, s in run:
        out[q].append((s, d))
    return {q: [d for _, d in sorted(v, reverse=True)] for q, v in out.items()}


@SLOW
@given(data=_judged_runs(max_label=3, negative=False), p=st.floats(0.5, 0.95),
       rel=st.integers(1, 3))
def test_binary_rbp_and_residual_match_cwl_eval(data: tuple[QrelsRows, RunRows], p: float,
                                                rel: int) -> None:
    """cwl-eval normalises over its first 1,000 ranks (1 - p^1000), which for p <= 0.95
    differs from Moffat & Zobel's (1 - p) by less than 1e-20."""
    qrels, run = data
    ref = _cwl_rbp(qrels, run, p, rel)
    rbp, resid = f"RBP(p={p!r},rel={rel})", f"RBPResid(p={p!r},rel={rel})"
    pq = evaluate(_qrels(qrels), _run(run), [rbp, resid], topics="complete-allow-disjoint")
    _close(pq.scores(rbp), {q: v[0] for q, v in ref.items()})
    _close(pq.scores(resid), {q: v[1] for q, v in ref.items()})


@SLOW
@given(data=_judged_runs(max_label=3, negative=False), p=st.floats(0.5, 0.95),
       rel=st.integers(1, 3))
def test_binary_rbp_matches_ir_measures(data: tuple[QrelsRows, RunRows], p: float,
                                        rel: int) -> None:
    qrels, run = data
    ref = _ir_measures(irm.RBP(p=p, rel=rel), qrels, _trec_order(run))
    m = f"RBP(p={p!r},rel={rel})"
    pq = evaluate(_qrels(qrels), _run(run), m, topics="complete-allow-disjoint")
    _close(pq.scores(m), ref)


def test_rbp_one_family_two_dialects() -> None:
    """Without rel, RBP is trec_eval's (graded, scaled by the topic's top label); rel=r
    makes it binary; the residual's rel keeps the tail past a fully judged list."""
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    pq = evaluate(qrels, run, ["RBP(p=0.5)", "RBP(p=0.5,rel=1)", "RBP(p=0.5,rel=2)",
                               "RBPResid(p=0.5)", "RBPResid(p=0.5,rel=1)", "rbp_resid.p=0.5"])
    assert pq.scores("RBP(p=0.5)")["q"] == pytest.approx(0.5 * (1 + 0.5 * 0.5))
    assert pq.scores("RBP(p=0.5,rel=1)")["q"] == pytest.approx(0.5 * (1 + 0.5))
    assert pq.scores("RBP(p=0.5,rel=2)")["q"] == pytest.approx(0.5)
    assert pq.scores("RBPResid(p=0.5)")["q"] == 0.0  # trec_eval: every document judged
    assert pq.scores("RBPResid(p=0.5,rel=1)")["q"] == pytest.approx(0.5 ** 3)
    assert str(parse("rbp_resid.p=0.5")) == "RBPResid(p=0.5)"
    assert parse("RBPResid(p=0.5)").trec_name == "rbp_resid_p=0.5"
    assert parse("RBP(p=0.5,rel=1)").trec_name is None


# -- compat and Judged ------------------------------------------------------------

def _ir_measures(measure: object, qrels: QrelsRows, run: RunRows) -> dict[str, float]:
    iq = [irm.Qrel(q, d, r) for q, d, r in qrels]
    ir = [irm.ScoredDoc(q, d, s) for q, d, s in run]
    return {m.query_id: float(m.value) for m in irm.iter_calc([measure], iq, ir)}


@SLOW
@given(data=_judged_runs(), p=st.floats(0.3, 0.98), normalize=st.booleans())
def test_compat_matches_ir_measures(data: tuple[QrelsRows, RunRows], p: float,
                                    normalize: bool) -> None:
    qrels, run = data
    ref = _ir_measures(irm.Compat(p=p, normalize=normalize), qrels, _trec_order(run))
    m = f"Compat(normalize={int(normalize)},p={p!r})"
    pq = evaluate(_qrels(qrels), _run(run), m, topics="complete-allow-disjoint")
    _close(pq.scores(m), ref)


@SLOW
@given(data=_judged_runs(), k=st.integers(1, 30))
def test_judged_matches_ir_measures(data: tuple[QrelsRows, RunRows], k: int) -> None:
    qrels, run = data
    ref = _ir_measures(irm.Judged @ k, qrels, _trec_order(run))
    pq = evaluate(_qrels(qrels), _run(run), f"Judged@{k}", topics="complete-allow-disjoint")
    _close(pq.scores(f"Judged@{k}"), ref)


def test_compat_rejects_bad_parameters() -> None:
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    with pytest.raises(InputError, match="normalize must be 1"):
        evaluate(qrels, run, "Compat(normalize=2)")
    with pytest.raises(InputError, match="strictly between 0 and 1"):
        evaluate(qrels, run, "Compat(p=1)")


# -- real runs (TREC DL 2019 passage) ---------------------------------------------

@pytest.mark.parametrize("name", DL19_RUNS)
def test_dl19_runs_match_ir_measures(name: str) -> None:
    """ERR@20 (gdeval), RBP, compat and Judged on published DL19 runs. REP_LLAMA's run
    ties 40,001 scores: the Python providers get it in trec_eval's order."""
    path = SHARED_DATA / "rankllm_runs" / name / "trec_results_dl19.txt"
    qrels_rows = [(q, d, int(r)) for q, _, d, r in
                  (line.split() for line in DL19_QRELS.read_text().splitlines())]
    run_rows = [(q, d, float(s)) for q, _, d, _, s, *_ in
                (line.split() for line in path.read_text().splitlines())]
    pq = evaluate(read_trec_qrels(DL19_QRELS), read_trec_run(path),
                  ["ERR@20", "nDCG(gain=exp)@10", "RBP(p=0.8,rel=1)", "RBP(p=0.8,rel=2)",
                   "Compat", "Compat(p=0.8)", "Judged@10", "Judged@100"])
    assert len(pq.qids) == 43
    # gdeval through ir_measures: the run as it is (same tie rule), 5 printed decimals
    _close(pq.scores("ERR@20"), _ir_measures(irm.ERR @ 20, qrels_rows, run_rows), 5e-6 + 1e-12)
    _close(pq.scores("nDCG(gain=exp)@10"),
           _ir_measures(irm.nDCG(dcg="exp-log2") @ 10, qrels_rows, run_rows), 5e-6 + 1e-12)
    ordered = _trec_order(run_rows)
    for ours, theirs in [("RBP(p=0.8,rel=1)", irm.RBP(p=0.8, rel=1)),
                         ("RBP(p=0.8,rel=2)", irm.RBP(p=0.8, rel=2)),
                         ("Compat", irm.Compat), ("Compat(p=0.8)", irm.Compat(p=0.8)),
                         ("Judged@10", irm.Judged @ 10), ("Judged@100", irm.Judged @ 100)]:
        ref = _ir_measures(theirs, qrels_rows, ordered)
        assert len(ref) == 43
        _close(pq.scores(ours), ref)


def test_dl19_bm25_judged_matches_ir_measures_as_is() -> None:
    """BM25's scores do not tie at the cutoffs: ir_measures' Judged agrees on the raw run."""
    path = SHARED_DATA / "rankllm_runs" / "BM25" / "trec_results_dl19.txt"
    ref = {m.query_id: m.value for m in irm.iter_calc(
        [irm.Judged @ 10], irm.read_trec_qrels(str(DL19_QRELS)), irm.read_trec_run(str(path)))}
    pq = evaluate(read_trec_qrels(DL19_QRELS), read_trec_run(path), "Judged@10")
    _close(pq.scores("Judged@10"), ref)


# -- ndeval's diversity measures ------------------------------------------------------

SubRows = list[tuple[str, str, str, int]]


@st.composite
def _subtopic_runs(draw: st.DrawFn) -> tuple[SubRows, RunRows]:
    """Subtopic qrels (several subtopics per topic, ids shared across topics, graded
    labels, non-relevant judgments) and a run with ties and missing topics."""
    n_topics = draw(st.integers(1, 4))
    qrels: SubRows = []
    run: RunRows = []
    for t in range(n_topics + 1):
        qid = f"t{t}"
        docs = [f"d{i}" for i in range(draw(st.integers(1, 30)))]
        if t < n_topics:
            for s in range(draw(st.integers(1, 5))):
                sub = draw(st.sampled_from([str(s), f"{qid}.{s}"]))
                for d in draw(st.lists(st.sampled_from(docs), unique=True, max_size=12)):
                    qrels.append((qid, sub, d, draw(st.integers(0, 2))))
            if not any(r[0] == qid for r in qrels):
                qrels.append((qid, "0", docs[0], 0))
        if draw(st.booleans()) or t == 0:
            shown = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
            scores = draw(st.lists(st.integers(0, 5), min_size=len(shown),
                                   max_size=len(shown)))
            run.extend((qid, d, float(s)) for d, s in zip(shown, scores, strict=True))
    return qrels, run


def _sub_qrels(rows: SubRows) -> SubtopicQrels:
    return SubtopicQrels.from_subtopic_columns(*(list(c) for c in zip(*rows, strict=True)))


def _n_subtopics(rows: SubRows, level: int) -> dict[str, int]:
    subs: dict[str, set[str]] = defaultdict(set)
    for q, s, _, r in rows:
        if r >= level:
            subs[q].add(s)
    return {q: len(v) for q, v in subs.items()}


@SLOW
@given(data=_subtopic_runs(), k=st.integers(1, 20), rel=st.integers(1, 2),
       alpha=st.sampled_from([0.25, 0.5, 0.75]), beta=st.sampled_from([0.5, 0.8, 0.3]))
def test_diversity_measures_match_ndeval(data: tuple[SubRows, RunRows], k: int, rel: int,
                                         alpha: float, beta: float) -> None:
    """alpha in {0.25, 0.5, 0.75}: novelty gains are then exact binary fractions, so the
    greedy ideal's ties compare equal in both programs (ndeval compares sums of doubles
    exactly; rankproof adds in ndeval's subtopic order, so other alphas agree too, but a
    sum one ulp apart could break a tie the other way)."""
    qrels, run = data
    names = {f"alpha_nDCG(alpha={alpha},rel={rel})@{k}": f"alpha-nDCG@{k}",
             f"ERR_IA(alpha={alpha},rel={rel})@{k}": f"ERR-IA@{k}",
             f"NRBP(alpha={alpha},beta={beta},rel={rel})": "NRBP",
             f"P_IA(rel={rel})@{k}": f"P-IA@{k}",
             f"StRecall(rel={rel})@{k}": f"strec@{k}"}
    evaluator = pyndeval.RelevanceEvaluator(
        [pyndeval.SubtopicQrel(*r) for r in qrels], list(names.values()),
        relevance_level=rel, alpha=alpha, beta=beta)
    ref = evaluator.evaluate([pyndeval.ScoredDoc(*r) for r in _trec_order(run)])
    deep = f"alpha_nDCG(alpha={alpha},rel={rel})@20"  # first: the @k ideal reuses its prefix
    pq = evaluate(_sub_qrels(qrels), _run(run), [deep, *names], topics="complete-allow-disjoint")
    n_sub = _n_subtopics(qrels, rel)
    for ours, theirs in names.items():
        mine = pq.scores(ours)
        expected = {q: v[theirs] for q, v in ref.items()}
        if theirs == "ERR-IA@1":  # ndeval leaves rank 1 unnormalised (see docs/trec_eval.md)
            expected = {q: v / n_sub[q] if n_sub.get(q) else 0.0 for q, v in expected.items()}
        _close(mine, expected)
        for qid in set(mine) - set(ref):  # topics the run lacks score 0
            assert mine[qid] == 0.0


def test_diversity_known_answer_pyndeval_readme() -> None:
    """pyndeval's README example. Expected values: pyndeval 0.0.8,
    ``pyndeval.ndeval(qrels, run, measures=[...])`` on the same rows (its README
    shows them cut to 4 decimals: 0.7868 for 0.786895...)."""
    qrels = _sub_qrels([("0", "a", "A", 1), ("0", "b", "B", 1), ("0", "b", "D", 1),
                        ("0", "c", "C", 1)])
    run = _run([("0", "A", 9.3), ("0", "D", 8.4), ("0", "E", 8.1), ("0", "B", 7.6)])
    pq = evaluate(qrels, run, ["ERR_IA@5", "alpha_nDCG@5", "NRBP", "P_IA@5", "StRecall@5",
                               "nDCG@5"])
    assert pq.scores("ERR_IA@5")["0"] == pytest.approx(0.39334341906202724, abs=1e-12)
    assert pq.scores("alpha_nDCG@5")["0"] == pytest.approx(0.786895617614416, abs=1e-12)
    assert pq.scores("NRBP")["0"] == pytest.approx(0.390625, abs=1e-12)
    assert pq.scores("P_IA@5")["0"] == pytest.approx(3 / 15)
    assert pq.scores("StRecall@5")["0"] == pytest.approx(2 / 3)
    assert pq.scores("nDCG@5")["0"] > 0  # ordinary measures read the collapsed labels


def test_diversity_measures_need_subtopic_qrels() -> None:
    with pytest.raises(InputError, match=r"needs subtopic qrels.*read_subtopic_qrels"):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "alpha_nDCG@10")


# -- the subtopic qrels reader ---------------------------------------------------------

def test_read_subtopic_qrels(tmp_path: Path) -> None:
    path = tmp_path / "div.qrels"
    path.write_text("# diversity\n1 1 a 1\n1 2 a 0\n1 2 b 2\n\n2 1 c 0\n")
    sq = read_subtopic_qrels(path)
    assert sq.n_subtopic_judgments == 4
    assert sq.subtopic_vocab == ("1", "2")
    assert sq.to_dict() == {"1": {"a": 1, "b": 2}, "2": {"c": 0}}  # highest label per doc
    assert "SubtopicQrels(2 topics" in repr(sq)
    # the digest covers the subtopic judgments, not only the collapsed labels
    other = tmp_path / "other.qrels"
    other.write_text("2 1 c 0\n1 2 b 2\n1 1 a 1\n1 2 a 0\n")
    assert read_subtopic_qrels(other).digest == sq.digest
    other.write_text("2 1 c 0\n1 2 b 2\n1 1 a 1\n1 3 a 0\n")
    assert read_subtopic_qrels(other).digest != sq.digest


@pytest.mark.parametrize(("text", "line", "message"), [
    ("1 1 a 1\n1 1 a\n", 2, "expected 4 fields"),
    ("1 1 a x\n", 1, "relevance must be an integer, found 'x'"),
    ("1 1 a 1\n\n1 1 a 0\n", 3, "judged twice for subtopic '1' of topic '1' "
                                r"\(first on line 1\)"),
])
def test_read_subtopic_qrels_refusals(tmp_path: Path, text: str, line: int,
                                      message: str) -> None:
    path = tmp_path / "bad.qrels"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_subtopic_qrels(path)
    assert info.value.line == line


def test_read_subtopic_qrels_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.qrels"
    path.write_text("# nothing\n")
    with pytest.raises(InputError, match="no judgments"):
        read_subtopic_qrels(path)


# -- grammar ---------------------------------------------------------------------

@pytest.mark.parametrize(("spelled", "canonical"), [
    ("ERR@20", "ERR@20"), ("err@10", "ERR@10"), ("ERR(gmax=5)@10", "ERR(gmax=5)@10"),
    ("nDCG(dcg=exp-log2)@10", "nDCG(gain=exp)@10"),
    ("RBP(p=0.8)", "RBP(p=0.8)"), ("RBP(rel=1,p=0.8)", "RBP(p=0.8,rel=1)"),
    ("RBPResid(p=0.8,rel=1)", "RBPResid(p=0.8,rel=1)"), ("rbp_resid.p=0.95", "RBPResid(p=0.95)"),
    ("compat", "Compat"), ("Compat(p=0.9)", "Compat(p=0.9)"),
    ("alpha_nDCG@20", "alpha_nDCG@20"), ("alpha_nDCG(alpha=0.3)@5", "alpha_nDCG(alpha=0.3)@5"),
    ("ERR_IA@20", "ERR_IA@20"), ("NRBP", "NRBP"), ("NRBP(beta=0.8)", "NRBP(beta=0.8)"),
    ("P_IA@20", "P_IA@20"), ("StRecall@20", "StRecall@20"), ("strec@10", "StRecall@10"),
    ("P_IA(rel=2)@5", "P_IA(rel=2)@5"),
])
def test_spellings_parse_to_one_canonical_form(spelled: str, canonical: str) -> None:
    m = parse(spelled)
    assert str(m) == canonical
    assert parse(str(m)) == m


@pytest.mark.parametrize(("spelled", "message"), [
    ("alpha_nDCG", "needs a cutoff"), ("P_IA", "needs a cutoff"), ("NRBP@10", "takes no cutoff"),
    ("Compat(rel=2)", "takes no rel= parameter"), ("ERR(rel=2)@10", "takes no rel="),
])
def test_refused_spellings(spelled: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse(spelled)


def test_measures_stay_in_range_on_real_runs() -> None:
    path = SHARED_DATA / "rankllm_runs" / "BM25" / "trec_results_dl19.txt"
    pq = evaluate(read_trec_qrels(DL19_QRELS), read_trec_run(path),
                  ["ERR@20", "ERR", "Compat", "Compat(normalize=0)", "RBPResid(p=0.8,rel=1)"])
    for m in pq.measures:
        values = list(pq.scores(str(m)).values())
        assert all(0.0 <= v <= 1.0 + 1e-12 for v in values), m
        assert not any(math.isnan(v) for v in values)


def test_readme_rows_parse() -> None:
    """Every name in the measure-table rows for these families (docs/commands/measure.md,
    once the README's) parses."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "commands" / "measure.md").read_text()
    rows = [line for line in readme.splitlines()
            if line.startswith("| ") and ("beyond trec_eval" in line or "ndeval" in line
                                          or line.startswith("| incomplete judgments"))]
    assert len(rows) == 4
    names = [n for row in rows for cell in row.split("|")[2:4]
             for n in re.findall(r"`([^`]+)`", cell)]
    assert len(names) >= 15
    for name in names:
        assert parse(str(parse(name))) == parse(name)
