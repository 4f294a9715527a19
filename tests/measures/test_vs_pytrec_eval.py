"""Per-query agreement with pytrec_eval (trec_eval's C code) on random inputs.

The generated inputs aim at the places where evaluators disagree: tied scores
(drawn from a small set), docids whose byte order differs from their numeric
order ("9" > "10" > "1"), graded and negative labels, topics on only one side,
topics with no relevant document, and relevance levels 1, 2 (and 3).

How pytrec_eval treats topics (``RelevanceEvaluator_evaluate`` in
pytrec_eval.cpp): it loops over the *run's* topics and skips any the qrels
lack; a qrels topic the run lacks never appears. That is trec_eval without
``-c``, so it is compared with ``topics="intersection"``. The default
``topics="complete"`` must give the same values on those topics, and 0 on the
zero-filled ones for every measure but NumRel (trec_eval ``-c`` still counts
the judgments of a topic nobody retrieved for).

Scores are float32-representable: the trec_eval bundled in
pytrec-eval-terrier 0.5.x keeps a score as a C ``float`` (``TEXT_RESULTS.sim``
in its trec_format.h; current trec_eval uses ``double``), so scores that differ
only beyond float32 precision tie there but not here (and not in current
trec_eval). ``test_pytrec_eval_rounds_scores_to_float32`` pins that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import ir_measures
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ir_measures.providers.base import NOT_PROVIDED
from tests.measures._helpers import evaluate

from rankproof.data._model import Qrels, Run
from rankproof.measures import Measure, parse

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTOFFS = (1, 2, 3, 5, 10)
# Every trec_eval measure rankproof shares, as pytrec_eval is asked for it.
PYTREC_REQUEST = {
    "map", "Rprec", "bpref", "recip_rank", "ndcg", "num_ret", "num_rel", "num_rel_ret",
    *(f"{name}.{','.join(map(str, CUTOFFS))}"
      for name in ("P", "recall", "ndcg_cut", "map_cut", "success")),
}
MEASURES: tuple[Measure, ...] = (
    *(parse(s) for s in ("AP", "Rprec", "Bpref", "RR", "nDCG", "NumRet", "NumRel", "NumRelRet")),
    *(Measure(f, cutoff=k) for f in ("P", "R", "nDCG", "AP", "Success") for k in CUTOFFS),
)

# Docids chosen so byte order, numeric order and length order all disagree.
DOCIDS = ("1", "2", "9", "10", "11", "19", "100", "a", "A", "aa", "ab", "b", "Z", "d-9", "d-10",
          "é", "z",
          # longer than one 8-byte word, sharing long prefixes
          "doc-000000009", "doc-000000010", "doc-0000000100", "aaaaaaaaaaaaaaa",
          "aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaab", "clueweb09-en0000-00-00001", "ü-aaaaaaaaa")
QIDS = ("1", "2", "10", "q", "Q9")
# float32-representable scores, few of them so that ties are common; -0.0 == 0.0.
SCORES = (-2.5, -1.0, -0.0, 0.0, 0.25, 0.5, 1.0, 3.0, 1024.0)
LABELS = (-2, -1, 0, 1, 2, 3)

SETTINGS = settings(derandomize=True, max_examples=250, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def qrels_and_run(
    draw: st.DrawFn,
    labels: tuple[int, ...] = LABELS,
    scores: st.SearchStrategy[float] | None = None,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    score = st.sampled_from(SCORES) if scores is None else scores
    qrel_topics = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True))
    run_topics = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True))
    qrels = {}
    for q in qrel_topics:
        judged = draw(st.dictionaries(st.sampled_from(DOCIDS), st.sampled_from(labels),
                                      min_size=1, max_size=9))
        if max(judged.values()) < 0:
            # trec_eval's behaviour on a topic whose labels are all negative is
            # undefined (pytrec_eval can crash): see test_all_negative_topic_scores_zero.
            judged[next(iter(judged))] = draw(st.sampled_from([r for r in labels if r >= 0]))
        qrels[q] = judged
    run = {
        q: draw(st.dictionaries(st.sampled_from(DOCIDS), score, min_size=1, max_size=12))
        for q in run_topics
    }
    return qrels, run


def pytrec(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
           rel_level: int, request: set[str] = PYTREC_REQUEST) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, request, relevance_level=rel_level)
    return evaluator.evaluate(run)  # type: ignore[no-any-return]


def ours(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
         measures: tuple[Measure, ...] = MEASURES, **kw: object) -> dict[str, dict[str, float]]:
    pq = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), measures, **kw)  # type: ignore[arg-type]
    return {q: {str(m): float(v) for m, v in zip(pq.measures, row, strict=True)}
            for q, row in zip(pq.qids, pq.values.tolist(), strict=True)}


def assert_agree(expected: Mapping[str, Mapping[str, float]],
                 got: Mapping[str, Mapping[str, float]], measures: tuple[Measure, ...],
                 names: Mapping[Measure, str] | None = None) -> None:
    assert set(got) == set(expected)
    for q, values in expected.items():
        for m in measures:
            name = names[m] if names is not None else m.trec_name
            assert name is not None
            want, have = values[name], got[q][str(m)]
            assert math.isclose(have, want, rel_tol=0.0, abs_tol=1e-9), (
                f"topic {q!r}, {m} (trec_eval {name}): pytrec_eval {want!r}, rankproof {have!r}"
            )


@SETTINGS
@given(data=qrels_and_run(), rel_level=st.sampled_from((1, 2, 3)))
def test_every_shared_measure_matches_pytrec_eval(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], rel_level: int,
) -> None:
    qrels, run = data
    expected = pytrec(qrels, run, rel_level)
    # pytrec_eval scores exactly the run topics the qrels judge.
    assert set(expected) == set(qrels) & set(run)
    got = ours(qrels, run, rel_level=rel_level, topics="intersection")
    assert_agree(expected, got, MEASURES)


@settings(SETTINGS, max_examples=150)
@given(data=qrels_and_run(), rel_level=st.sampled_from((1, 2)))
def test_complete_mode_zero_fills_missing_topics(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], rel_level: int,
) -> None:
    qrels, run = data
    both = ours(qrels, run, rel_level=rel_level, topics="intersection")
    complete = ours(qrels, run, rel_level=rel_level, topics="complete")
    assert set(complete) == set(qrels)
    for q, values in complete.items():
        if q in run:
            assert values == both[q]
            continue
        for m in MEASURES:
            if m.family == "NumRel":
                num_rel = sum(1 for r in qrels[q].values() if r >= rel_level)
                assert values[str(m)] == num_rel
            else:
                assert values[str(m)] == 0.0, (q, m)


@settings(SETTINGS, max_examples=80)
@given(data=qrels_and_run())
def test_topic_bookkeeping(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]],
) -> None:
    qrels, run = data
    q, r = Qrels.from_dict(qrels), Run.from_dict(run)
    complete = evaluate(q, r, "P@5")
    inter = evaluate(q, r, "P@5", topics="intersection")
    missing = sorted(set(qrels) - set(run))
    dropped = sorted(set(run) - set(qrels))
    assert sorted(complete.zero_filled) == missing
    assert sorted(complete.dropped) == sorted(inter.dropped) == dropped
    assert sorted(inter.not_evaluated) == missing
    assert inter.zero_filled == () and complete.not_evaluated == ()
    # Topics in byte order, as trec_eval prints them.
    assert list(complete.qids) == sorted(qrels, key=lambda s: s.encode())


EXP_GAINS = {r: 2**r - 1 for r in LABELS if r >= 0}


@settings(SETTINGS, max_examples=150)
@given(data=qrels_and_run(), rel_level=st.sampled_from((1, 2)))
def test_exp_gain_ndcg_matches_ir_measures_gains_via_pytrec_eval(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], rel_level: int,
) -> None:
    """nDCG(gain=exp) is trec_eval's nDCG with each label l given gain 2^l - 1.

    ir_measures runs ``nDCG(gains={l: 2^l - 1})`` through pytrec_eval by
    relabelling the qrels (trec_eval's gain is the label), so ties and
    negative labels are covered here too. rel_level must not matter.
    ir_measures scores a qrels topic the run lacks as 0 (its Evaluator fills
    every missing (measure, topic) with the measure's default), which is
    trec_eval ``-c``: our ``topics="complete"``.
    """
    qrels, run = data
    ir = [ir_measures.nDCG(gains=EXP_GAINS), *(ir_measures.nDCG(gains=EXP_GAINS) @ k
                                                for k in CUTOFFS)]
    expected: dict[str, dict[str, float]] = {}
    for metric in ir_measures.pytrec_eval.iter_calc(ir, qrels, run):
        cutoff = metric.measure["cutoff"]
        name = "nDCG(gain=exp)" + ("" if cutoff is NOT_PROVIDED else f"@{cutoff}")
        expected.setdefault(metric.query_id, {})[name] = metric.value
    measures = (Measure("nDCG", gain="exp"),
                *(Measure("nDCG", cutoff=k, gain="exp") for k in CUTOFFS))
    got = ours(qrels, run, measures, rel_level=rel_level, topics="complete")
    assert_agree(expected, got, measures, {m: str(m) for m in measures})


@st.composite
def tie_free_qrels_and_run(
    draw: st.DrawFn, labels: tuple[int, ...] = LABELS,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Distinct scores within each topic, so every tie-breaking rule gives one ranking."""
    qrels, run = draw(qrels_and_run(labels=labels, scores=st.just(0.0)))
    for q, docs in run.items():
        ticks = draw(st.lists(st.integers(-40, 40), min_size=len(docs), max_size=len(docs),
                              unique=True))
        run[q] = {d: t / 4 for d, t in zip(docs, ticks, strict=True)}  # float32-exact
    return qrels, run


@pytest.mark.slow  # numba compiles ranx's kernels on first use: tens of seconds
@settings(SETTINGS, max_examples=40)
@given(data=tie_free_qrels_and_run(labels=(0, 1, 2, 3)))
def test_exp_gain_ndcg_matches_ranx_exp_log2(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]],
) -> None:
    """Against an independent implementation: ranx ``ndcg_burges`` (2^l - 1 over log2(rank+1)).

    This is what ir_measures' ``nDCG(dcg='exp-log2')`` dispatches to, but its
    ranx provider builds the ranx Qrels with ``Qrels.from_df``, whose check for
    an ``object`` qid column fails on pandas 3 string columns, so ranx is
    called directly. ranx's order among tied scores
    is its own, so runs here are tie-free; labels are non-negative (ranx would
    give a negative label a negative gain).
    """
    ranx = pytest.importorskip("ranx")
    qrels, run = data
    shared = sorted(set(qrels) & set(run))
    if not shared:
        return
    metrics = ["ndcg_burges", *(f"ndcg_burges@{k}" for k in CUTOFFS)]
    scores = ranx.evaluate(ranx.Qrels({q: qrels[q] for q in shared}),
                           ranx.Run({q: run[q] for q in shared}), metrics, return_mean=False,
                           make_comparable=True)
    measures = (Measure("nDCG", gain="exp"),
                *(Measure("nDCG", cutoff=k, gain="exp") for k in CUTOFFS))
    names = dict(zip(measures, metrics, strict=True))
    expected = {q: {name: float(scores[name][i]) for name in metrics}
                for i, q in enumerate(shared)}
    got = ours(qrels, run, measures, topics="intersection")
    assert_agree(expected, got, measures, names)


@settings(SETTINGS, max_examples=150)
@given(data=tie_free_qrels_and_run())
def test_judged_matches_ir_measures(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]],
) -> None:
    """Judged@k = judged documents in the top k / min(k, retrieved); any label counts.

    ir_measures breaks score ties by docid ascending (trec_eval: descending), so
    only tie-free runs are compared. Like every ir_measures evaluator it scores
    qrels topics the run lacks as 0: our ``topics="complete"``.
    """
    qrels, run = data
    ks = (*CUTOFFS, 20)
    expected: dict[str, dict[str, float]] = {}
    for metric in ir_measures.judged.iter_calc([ir_measures.Judged @ k for k in ks], qrels, run):
        expected.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    measures = tuple(Measure("Judged", cutoff=k) for k in ks)
    got = ours(qrels, run, measures, topics="complete")
    assert_agree(expected, got, measures, {m: str(m) for m in measures})


def test_pytrec_eval_rounds_scores_to_float32() -> None:
    """Why the generated scores are float32-representable (see the module docstring).

    1 + 1e-9 and 1 are distinct doubles but the same float32. rankproof, like
    current trec_eval, ranks the higher double first; pytrec_eval sees a tie
    and puts the greater docid ("b") first.
    """
    qrels = {"q": {"a": 0, "b": 1}}
    run = {"q": {"a": 1.0 + 1e-9, "b": 1.0}}
    assert np.float32(run["q"]["a"]) == np.float32(run["q"]["b"])
    assert pytrec(qrels, run, 1, {"recip_rank"})["q"]["recip_rank"] == 1.0
    assert ours(qrels, run, (parse("RR"),))["q"]["RR"] == 0.5
    # Distinct as float32 too: both agree.
    run = {"q": {"a": 1.0 + 2**-20, "b": 1.0}}
    assert pytrec(qrels, run, 1, {"recip_rank"})["q"]["recip_rank"] == 0.5
    assert ours(qrels, run, (parse("RR"),))["q"]["RR"] == 0.5


@pytest.mark.parametrize("rel_level", [1, 2])
def test_known_tie_and_byte_order_case(rel_level: int) -> None:
    """A hand-checked case: every score ties, so rank order is docid byte order, descending.

    Ranking: "9", "2", "10", "1" (byte-wise descending; numerically it would be
    10, 9, 2, 1). Labels: 9 -> 2, 2 -> 0, 10 -> 1, 1 -> unjudged.
    """
    qrels = {"t": {"9": 2, "2": 0, "10": 1, "x": 3}}
    run = {"t": {"1": 5.0, "10": 5.0, "2": 5.0, "9": 5.0}}
    got = ours(qrels, run, rel_level=rel_level)["t"]
    expected = pytrec(qrels, run, rel_level)["t"]
    assert_agree({"t": expected}, {"t": got}, MEASURES)
    if rel_level == 1:  # relevant: 9 (rank 1), 10 (rank 3), x (not retrieved)
        assert got["RR"] == 1.0
        assert got["AP"] == pytest.approx((1 / 1 + 2 / 3) / 3)
        assert got["P@3"] == pytest.approx(2 / 3)
    else:  # relevant: 9 (rank 1), x
        assert got["AP"] == pytest.approx(1 / 2)
        assert got["P@3"] == pytest.approx(1 / 3)


def test_all_negative_topic_scores_zero() -> None:
    """A topic whose judgments are all negative (pooled, unjudgeable) has nothing relevant.

    trec_eval cannot be asked: te_form_res_rels sizes its per-level counts by
    the largest label L. te_chk_and_malloc hands back the old (possibly freed)
    buffer for the size L + 1 <= 0, and the memset of (L + 1) * sizeof(long)
    bytes is a huge size_t for L = -2: pytrec_eval segfaults as soon as an
    earlier topic allocated that buffer. For L = -1 nothing is cleared and the
    level counts of an earlier topic are read. rankproof scores such a topic 0
    on every measure, still counting what was retrieved.
    """
    qrels = {"neg": {"a": -1, "b": -2}, "pos": {"a": 1}}
    run = {"neg": {"a": 2.0, "b": 1.0, "c": 0.0}, "pos": {"a": 1.0}}
    measures = (*MEASURES, parse("nDCG(gain=exp)"), parse("Judged@2"))
    got = ours(qrels, run, measures)
    for m in measures:
        want = {"NumRet": 3.0, "Judged": 1.0}.get(m.family, 0.0)
        assert got["neg"][str(m)] == want, m
    assert got["pos"]["AP"] == 1.0
