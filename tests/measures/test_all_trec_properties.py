"""Every ``all_trec`` measure pytrec_eval computes, per topic, against pytrec_eval.

pytrec_eval is trec_eval's C code (release 9.0.x, bundled in
pytrec-eval-terrier); it is asked for ``pytrec_eval.supported_measures``, its
whole set, and every number it returns for a measure of ``all_trec`` is
compared with ``rankproof.measures.evaluate(..., "all_trec")`` to 1e-9.
Not compared: ``runid`` and ``num_q`` (bookkeeping, not per-topic values),
``relstring`` (a string); ``rbp``, ``rbp_resid`` and ``unj`` are trec_eval
10 measures pytrec_eval does not have (test_trec_more checks them against
trec_eval 10's own outputs).

Generated inputs: tied scores (few distinct values), docids whose byte,
numeric and length orders disagree, graded labels with negatives and zeros,
qrels topics the run lacks, run topics the qrels lack, topics with one
document, and topics with nothing relevant, at relevance levels 1 to 3
(pytrec_eval refuses 0).

Topics. pytrec_eval loops over the run's topics and skips those the qrels
lack, so a qrels topic the run lacks never appears (trec_eval 9 without
``-c``): rankproof's ``topics="intersection"``. Every generated run topic
retrieves at least one document: pytrec_eval segfaults on an empty ranking
(``{"q": {}}``) when no earlier topic has sized its buffers
(`test_pytrec_eval_cannot_be_asked_about_an_empty_ranking`), so what it
returns for one is not trustworthy; a run file cannot say "retrieved nothing"
anyway. The small topics are there instead: one judged or one retrieved
document, topics with nothing relevant (labels 0 and below only, or all below
the relevance level).

Where pytrec_eval reports something other than the per-topic value:
``gm_map`` and ``gm_bpref`` are reported as ``log(max(x, 0.00001))``
(trec_eval averages the logs, then exponentiates), and ``set_F`` with nothing
relevant retrieved is NaN (0/0; trec_eval 10 and rankproof print 0).

Where trec_eval 10 changed a definition: ``iprec_at_recall`` and
``11pt_avg`` turn a recall level x into a number of relevant documents.
9.0.x computes ``(long)(x * R + 0.9)`` (m_iprec_at_recall.c: "addition of 0.9
means the default 11 percentages should have same cutoffs as historical MAP
implementations"); 10 uses ``lround(x * R)``. Both take the interpolated
precision at the rank where that many relevant documents have been seen, and
a count of 0 or 1 gives the same value (the maximum precision over the whole
list). So a level is compared on a topic exactly when both rules give the
same count after raising 0 to 1, and ``11pt_avg`` where that holds for all
its levels; the skipped pairs are counted, so the comparison cannot go empty
unnoticed (`test_the_rounding_rule_is_the_only_difference` shows the rule
bites where it should).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.measures.test_vs_pytrec_eval import DOCIDS, LABELS, QIDS, SCORES

from rankproof.data import Qrels, Run
from rankproof.measures import Measure, evaluate, parse_many

pytrec_eval = pytest.importorskip("pytrec_eval")

Qrel = dict[str, dict[str, int]]
RunDict = dict[str, dict[str, float]]

ALL_TREC: tuple[Measure, ...] = tuple(parse_many("all_trec"))
NOT_IN_PYTREC_EVAL = frozenset({"RBP", "RBPResid", "Unjudged"})
"""Families of all_trec that trec_eval 9.0.x (pytrec_eval) does not have."""
ROUNDING_CHANGED = frozenset({"IPrec", "IPrecAvg"})
GEOMETRIC = frozenset({"GMAP", "GMBpref"})
LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

FAST = settings(derandomize=True, max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
HEAVY = settings(derandomize=True, max_examples=1500, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _compared() -> tuple[Measure, ...]:
    supported = set(pytrec_eval.supported_measures)
    out = []
    for m in ALL_TREC:
        if m.family in NOT_IN_PYTREC_EVAL:
            continue
        name = m.trec_name
        assert name is not None, m
        base = name if name in supported else name.rsplit("_", 1)[0]
        assert base in supported, (m, name)
        out.append(m)
    return tuple(out)


COMPARED = _compared()


@st.composite
def inputs(draw: st.DrawFn, max_topics: int = 4, max_docs: int = 12) -> tuple[Qrel, RunDict]:
    """Qrels and a run over a few shared and one-sided topics (see the module docstring)."""
    qrel_topics = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=max_topics,
                                unique=True))
    run_topics = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=max_topics,
                               unique=True))
    qrels: Qrel = {}
    for q in qrel_topics:
        judged = draw(st.dictionaries(st.sampled_from(DOCIDS), st.sampled_from(LABELS),
                                      min_size=1, max_size=max_docs))
        if max(judged.values()) < 0:
            # All-negative topics crash pytrec_eval (test_vs_pytrec_eval's
            # test_all_negative_topic_scores_zero): give one a judgment.
            judged[next(iter(judged))] = draw(st.sampled_from([r for r in LABELS if r >= 0]))
        qrels[q] = judged
    run: RunDict = {q: draw(st.dictionaries(st.sampled_from(DOCIDS), st.sampled_from(SCORES),
                                            min_size=1, max_size=max_docs))
                    for q in run_topics}
    return qrels, run


def _iprec_count_agrees(num_rel: float, level: float) -> bool:
    """Whether trec_eval 9.0.x and 10 turn recall ``level`` into the same rank."""
    old = math.floor(level * num_rel + 0.9)  # (long)(x * R + 0.9), non-negative
    new = math.floor(level * num_rel + 0.5)  # lround(x * R), non-negative
    return max(old, 1) == max(new, 1)


def compare(qrels: Qrel, run: RunDict, rel_level: int) -> dict[str, int]:
    """Assert agreement on every compared (measure, topic); return what was compared/skipped."""
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, pytrec_eval.supported_measures, relevance_level=rel_level).evaluate(run)
    assert set(theirs) == set(qrels) & set(run)
    pq = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), ALL_TREC, rel_level=rel_level,
                  topics="intersection")
    assert set(pq.qids) == set(theirs)
    ours = {q: dict(zip(pq.measures, row, strict=True))
            for q, row in zip(pq.qids, pq.values.tolist(), strict=True)}
    counts = {"compared": 0, "skipped_rounding": 0}
    for qid, row in theirs.items():
        got = ours[qid]
        num_rel = row["num_rel"]
        for m in COMPARED:
            if m.family in ROUNDING_CHANGED:
                levels = (float(m.cutoff),) if m.family == "IPrec" else LEVELS  # type: ignore[arg-type]
                if not all(_iprec_count_agrees(num_rel, x) for x in levels):
                    counts["skipped_rounding"] += 1
                    continue
            have, want = got[m], row[m.trec_name]  # type: ignore[index]
            if m.family in GEOMETRIC:
                have = math.log(max(have, 0.00001))
            if m.family == "SetF" and math.isnan(want):
                assert have == 0.0, (m, qid)
                continue
            counts["compared"] += 1
            assert math.isclose(have, want, rel_tol=0.0, abs_tol=1e-9), (
                f"{m} ({m.trec_name}), topic {qid!r}, rel_level {rel_level}: pytrec_eval "
                f"{want!r}, rankproof {have!r}; qrels {qrels[qid]!r}, run {run[qid]!r}")
    return counts


def test_every_pytrec_eval_measure_of_all_trec_is_compared() -> None:
    """The compared list is all_trec minus exactly the trec_eval 10 additions."""
    families = {m.family for m in ALL_TREC} - {m.family for m in COMPARED}
    assert families == NOT_IN_PYTREC_EVAL
    assert len(COMPARED) == len(ALL_TREC) - 5  # rbp, rbp_resid, unj_5/10/20
    names = {m.trec_name.rsplit("_", 1)[0] if m.trec_name not in pytrec_eval.supported_measures
             else m.trec_name for m in COMPARED}  # type: ignore[union-attr]
    assert set(pytrec_eval.supported_measures) - names == {"runid", "num_q", "relstring"}


@FAST
@given(data=inputs(), rel_level=st.sampled_from((1, 2, 3)))
def test_all_trec_matches_pytrec_eval_per_topic(data: tuple[Qrel, RunDict],
                                                rel_level: int) -> None:
    compare(*data, rel_level)


@pytest.mark.slow
@HEAVY
@given(data=inputs(max_topics=5, max_docs=25), rel_level=st.sampled_from((1, 2, 3)))
def test_all_trec_matches_pytrec_eval_per_topic_heavy(data: tuple[Qrel, RunDict],
                                                      rel_level: int) -> None:
    compare(*data, rel_level)


def test_one_sided_and_tiny_topics() -> None:
    """A run topic the qrels lack and a qrels topic the run lacks are not evaluated;
    a one-document topic and a topic with nothing relevant are."""
    qrels = {"1": {"a": 1, "b": 0, "c": -1}, "2": {"a": 2, "b": 1, "e": 1}, "q": {"z": 1},
             "10": {"a": 0, "b": -1}}
    run: RunDict = {"1": {"a": 1.0, "c": 1.0, "d": 0.5}, "2": {"b": 2.0}, "10": {"a": 1.0},
                    "Q9": {"a": 3.0}}
    counts = compare(qrels, run, 1)
    # Every (measure, topic) but two levels of "2" (R = 3: 0.4 and 0.8 round to
    # different counts) and its 11pt_avg.
    assert counts == {"compared": 3 * len(COMPARED) - 3, "skipped_rounding": 3}


def test_pytrec_eval_cannot_be_asked_about_an_empty_ranking() -> None:
    """Why every generated run topic retrieves something: a run whose first topic has
    an empty ranking crashes pytrec_eval 0.5.x (a segfault, so in a child process)."""
    import subprocess
    import sys

    code = ("import pytrec_eval; pytrec_eval.RelevanceEvaluator({'1': {'a': 1}}, "
            "pytrec_eval.supported_measures).evaluate({'1': {}})")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    assert proc.returncode != 0


def test_the_rounding_rule_is_the_only_difference() -> None:
    """Seven relevant documents, three retrieved (ranks 1, 2, 5), recall level 0.3:
    trec_eval 9.0.x takes (long)(2.1 + 0.9) = 3 relevant documents (precision 3/5 at
    rank 5), trec_eval 10 lround(2.1) = 2 (precision 1 at rank 2)."""
    qrels = {"t": dict.fromkeys("abcdefg", 1)}
    run = {"t": {"a": 9.0, "b": 8.0, "x": 7.0, "y": 6.0, "c": 5.0}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate(run)["t"]
    ours = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), "IPrec@0.3").scores(
        "IPrec@0.3")["t"]
    assert not _iprec_count_agrees(7, 0.3)
    assert _iprec_count_agrees(7, 0.4)  # (long)(2.8 + 0.9) = 3 = lround(2.8)
    assert theirs["iprec_at_recall_0.30"] == pytest.approx(3 / 5)
    assert ours == pytest.approx(1.0)


def test_rndcg_of_a_topic_does_not_read_the_next_topics_rows() -> None:
    """Found by the heavy property test: Rndcg looked up the run's DCG at rank
    min(boundary, retrieved) with keys topic x (deepest relevant rank + 2), so a
    boundary deeper than every relevant document landed in the next topic's keys
    and scored 0. Topic "a": three relevant, only the first retrieved one is
    relevant (rank 1 of 3), the ideal list ends at rank 3: Rndcg = nDCG = 1 / (1 +
    1/log2(3) + 1/2). Topic "b" supplies the rows the old key reached."""
    qrels = {"a": {"r1": 1, "r2": 1, "r3": 1}, "b": {"s": 1}}
    run = {"a": {"r1": 3.0, "x": 2.0, "y": 1.0}, "b": {"s": 1.0}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"Rndcg"}).evaluate(run)
    pq = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), "Rndcg")
    want = 1.0 / (1.0 + 1.0 / math.log2(3.0) + 0.5)
    assert theirs["a"]["Rndcg"] == pytest.approx(want, abs=1e-12)
    assert pq.scores("Rndcg") == pytest.approx({"a": want, "b": 1.0}, abs=1e-12)
    assert compare(qrels, run, 1)["skipped_rounding"] == 3  # "a": R = 3 (see above)
