"""trec_eval's wider measure set: set measures, interpolated precision, geometric
means, Rprec_mult, utility, relative_P, custom-gain nDCG.

Two oracles:

* trec_eval 10's own expected outputs (../shared/data/trec_eval_tests; the
  command behind each file is in its PROVENANCE.md): every line trec_eval
  prints for these measures, per topic and ``all``, equals ours;
* pytrec_eval (trec_eval's C code, release 9.0.x) on the DL19 runs, per topic
  to 1e-12. Where trec_eval 10 changed a definition (iprec_at_recall and
  11pt_avg round a recall level to a rank with ``lround``; 9.0.x added 0.9 and
  truncated), only the topics where both rules pick the same rank are
  compared, and the changed ones are counted so the comparison cannot go empty.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.measures.test_vs_pytrec_eval import SETTINGS, qrels_and_run

from rankproof.data import Qrels, Run, load_qrels, load_run
from rankproof.measures import Measure, PerQuery, evaluate, parse, parse_many
from rankproof.report.trec import trec_lines

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES_ADDED = (
    "gm_map", "iprec_at_recall", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "binG", "G", "ndcg_rel", "Rndcg", "rbp", "rbp_resid", "unj",
    "infAP",
)
_PREFIXES = ("iprec_at_recall_", "Rprec_mult_", "relative_P_", "success_", "utility_",
             "11pt_avg_", "unj_")


def _trec_family(name: str) -> str:
    if name.startswith("ndcg_") and "=" in name:
        return "ndcg"
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return prefix[:-1]
    return name


def _expected(path: Path, families: set[str]) -> list[str]:
    return [line for line in path.read_text().splitlines()
            if _trec_family(line.split("\t")[0].strip()) in families]


def _ours(directory: Path, qrels: str, run: str, specs: list[str], *,
          rel_level: int = 1, topics: str = "intersection",
          names: dict[str, str] | None = None) -> list[str]:
    pq = evaluate(load_qrels(directory / qrels),
                  load_run(directory / run, extra_columns="ignore"),
                  [m for s in specs for m in parse_many(s)], rel_level=rel_level,
                  topics=topics)  # type: ignore[arg-type]
    lines = list(trec_lines(pq, per_query=True))
    for ours, theirs in (names or {}).items():  # parameter lists trec_eval echoes as typed
        lines = [line.replace(f"{ours:<22}", f"{theirs:<22}") for line in lines]
    return lines


@pytest.mark.parametrize("family", MEASURES_ADDED)
@pytest.mark.parametrize(("expected", "qrels", "run", "rel_level", "topics"), [
    ("out.test.aq", "qrels.test", "results.test", 1, "intersection"),
    ("out.test.aql", "qrels.rel_level", "results.test", 2, "intersection"),
    ("out.test.aqc", "qrels.test", "results.trunc", 1, "complete"),
])
def test_all_trec_lines_equal_trec_eval_10s(
    trec_eval_tests: Path, family: str, expected: str, qrels: str, run: str, rel_level: int,
    topics: str,
) -> None:
    want = _expected(trec_eval_tests / expected, {family})
    assert want, f"{expected} prints no {family} line"
    ours = _ours(trec_eval_tests, qrels, run, [family], rel_level=rel_level, topics=topics)
    assert ours == want


def test_parameterised_lines_equal_trec_eval_10s(trec_eval_tests: Path) -> None:
    """out.test.meas_params: trec_eval's ``-m name.params`` forms, parsed by our grammar."""
    specs = ["iprec_at_recall..10,.20,.25,.75,.50", "Rprec_mult.5.0,0.2,0.35",
             "utility.2,-1,0,0", "11pt_avg..25,.5,.75", "ndcg.1=3,2=9,4=4.5",
             "success.2,5,20"]
    want = _expected(trec_eval_tests / "out.test.meas_params",
                     {"iprec_at_recall", "Rprec_mult", "utility", "11pt_avg", "ndcg",
                      "success"})
    assert len(want) == 4 * (5 + 3 + 1 + 1 + 1 + 3)
    ours = _ours(trec_eval_tests, "qrels.test", "results.test", specs,
                 names={"11pt_avg_0.25,0.5,0.75": "11pt_avg_.25,.5,.75"})
    assert sorted(ours) == sorted(want)


def test_geometric_means_are_trec_eval_s_not_arithmetic(trec_eval_tests: Path) -> None:
    pq = evaluate(load_qrels(trec_eval_tests / "qrels.test"),
                  load_run(trec_eval_tests / "results.test"), ["gm_map", "map"],
                  topics="intersection")
    ap = pq.column("AP")
    assert pq.column("GMAP").tolist() == ap.tolist()  # per topic: AP itself
    assert pq.aggregate("GMAP") == pytest.approx(
        math.exp(np.mean(np.log(np.maximum(ap, 0.00001)))), abs=0)
    assert pq.aggregate("GMAP") < pq.aggregate("AP")
    # trec_eval prints no per-topic gm_map line
    assert not [line for line in trec_lines(pq, per_query=True)
                if line.startswith("gm_map") and "\tall\t" not in line]


# -- pytrec_eval on DL19 --------------------------------------------------------------

_PYTREC = {
    "set_P": "SetP", "set_recall": "SetR", "set_relative_P": "SetRelP", "set_map": "SetAP",
    "set_F": "SetF", "num_nonrel_judged_ret": "NumNonRelJudgedRet", "utility": "Utility",
    "infAP": "InfAP", "binG": "BinG", "G": "G", "ndcg_rel": "NDCGRel", "Rndcg": "RnDCG",
    **{f"Rprec_mult_{x:.2f}": f"Rprec(mult={x:g})"
       for x in (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)},
    **{f"relative_P_{k}": f"RelP@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"success_{k}": f"Success@{k}" for k in (1, 5, 10)},
}
_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _dl19(shared_data: Path) -> tuple[dict[str, dict[str, int]], list[Path]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in (shared_data / "trec_dl" / "qrels.dl19-passage.txt").read_text().splitlines():
        qid, _, doc, label = line.split()
        qrels.setdefault(qid, {})[doc] = int(label)
    runs = sorted((shared_data / "rankllm_runs").glob("*/trec_results_dl19.txt"))
    assert len(runs) >= 6
    return qrels, runs


def _run_dict(path: Path) -> dict[str, dict[str, float]]:
    # float32-representable scores: pytrec_eval's bundled trec_eval keeps a C float
    # (see test_vs_pytrec_eval), so finer differences would tie there only.
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, _, score, *_ = line.split()
        run.setdefault(qid, {})[doc] = float(np.float32(score))
    return run


@pytest.mark.parametrize("rel_level", [1, 2])
def test_per_topic_values_equal_pytrec_eval_on_dl19(shared_data: Path, rel_level: int) -> None:
    qrels, runs = _dl19(shared_data)
    wanted = {"set_P", "set_recall", "set_relative_P", "set_map", "set_F",
              "num_nonrel_judged_ret", "utility", "Rprec_mult", "relative_P", "success",
              "gm_map", "gm_bpref", "iprec_at_recall", "11pt_avg", "infAP", "binG", "G",
              "ndcg_rel", "Rndcg"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, wanted, relevance_level=rel_level)
    n_rule_changed = n_compared = 0
    for path in runs:
        run = _run_dict(path)
        theirs = evaluator.evaluate(run)
        ours = evaluate(Qrels.from_dict(qrels), Run.from_dict(run),
                        [*(_PYTREC.values()), "GMAP", "GMBpref", "iprec_at_recall",
                         "11pt_avg", "AP", "Bpref", "NumRel"],
                        rel_level=rel_level, topics="intersection")
        assert set(ours.qids) == set(theirs)
        for name, measure in _PYTREC.items():
            got, want = ours.scores(measure), {q: theirs[q][name] for q in theirs}
            for qid in want:
                assert got[qid] == pytest.approx(want[qid], abs=1e-12), (path, name, qid)
        for name, measure in (("gm_map", "AP"), ("gm_bpref", "Bpref")):
            got = ours.scores(measure)  # pytrec_eval reports log(max(x, 0.00001))
            for qid in theirs:
                assert math.log(max(got[qid], 0.00001)) == pytest.approx(
                    theirs[qid][name], abs=1e-12), (path, name, qid)
        num_rel = ours.scores("NumRel")
        for qid in theirs:
            r = num_rel[qid]
            if any(math.floor(x * r + 0.5) != math.floor(x * r + 0.9) for x in _LEVELS):
                n_rule_changed += 1
                continue
            n_compared += 1
            for x in _LEVELS:
                assert ours.scores(Measure("IPrec", cutoff=x))[qid] == pytest.approx(
                    theirs[qid][f"iprec_at_recall_{x:.2f}"], abs=1e-12), (path, x, qid)
            assert ours.scores("IPrecAvg")[qid] == pytest.approx(
                theirs[qid]["11pt_avg"], abs=1e-12), (path, qid)
    assert n_compared >= 20 and n_rule_changed >= 1, (n_compared, n_rule_changed)


def test_complete_topics_score_as_nothing_retrieved_where_the_run_is_silent(
        trec_eval_tests: Path) -> None:
    pq = evaluate(load_qrels(trec_eval_tests / "qrels.test"),
                  load_run(trec_eval_tests / "results.trunc", extra_columns="ignore"),
                  ["set_F", "iprec_at_recall", "Rprec_mult", "utility", "relative_P",
                   "utility.1,-1,-1,0", "11pt_avg", "num_nonrel_judged_ret"],
                  topics="complete")
    row = pq.qids.index("302")  # in the qrels (77 relevant), not in the run
    values = dict(zip(map(str, pq.measures), pq.values[row].tolist(), strict=True))
    assert len(values) == 1 + 11 + 10 + 1 + 9 + 3
    # Utility keeps its definition with nothing retrieved: c x 77 relevant missed
    # (trec_eval -c zeroes only its bare `utility` line: `rankproof trec_eval` does that).
    assert values.pop("Utility(a=1,b=-1,c=-1,d=0)") == -77.0
    assert set(values.values()) == {0.0}


# -- grammar --------------------------------------------------------------------------

@pytest.mark.parametrize(("spelling", "trec_name"), [
    ("IPrec@0.1", "iprec_at_recall_0.10"),
    ("IPrec@0", "iprec_at_recall_0.00"),
    ("Rprec(mult=0.2)", "Rprec_mult_0.20"),
    ("Rprec(mult=1)", "Rprec_mult_1.00"),
    ("Rprec", "Rprec"),
    ("Utility", "utility"),
    ("Utility(a=2,b=-1,c=0,d=0)", "utility_2,-1,0,0"),
    ("Utility(a=2)", "utility_2,-1,0,0"),
    ("IPrecAvg", "11pt_avg"),
    ("nDCG(gains={1:3,2:9,4:4.5})", "ndcg_1=3,2=9,4=4.5"),
    ("nDCG(gains={1:3})@10", None),
    ("SetF(beta=0.5)", "set_F_0.5"),
    ("RelP@5", "relative_P_5"),
    ("GMAP", "gm_map"),
    ("GMAP(rel=2)", None),
    ("rbp.p=0.8", "rbp_p=0.8"),
    ("RBP", "rbp"),
    ("RBPResid", "rbp_resid"),
    ("Unjudged@10", "unj_10"),
    ("unj.5", "unj_5"),
    ("infAP", "infAP"),
    ("Rndcg", "Rndcg"),
    ("ndcg_rel", "ndcg_rel"),
    ("binG", "binG"),
])
def test_trec_names(spelling: str, trec_name: str | None) -> None:
    assert parse(spelling).trec_name == trec_name


def test_explicit_parameters_stay_distinct_from_defaults() -> None:
    # trec_eval prints Rprec and Rprec_mult_1.00 both; the canonical strings differ too.
    assert parse("Rprec(mult=1)") != parse("Rprec")
    assert parse("Rprec(mult=1)").param("mult") == parse("Rprec").param("mult") == 1.0
    assert Measure("Utility", params={"b": -2}) == parse("Utility(b=-2)")
    assert Measure("nDCG", cutoff=10, params={"gains": {2: 3, 1: 1}}) == parse(
        "nDCG(gains={1:1,2:3})@10")
    assert hash(Measure("IPrec", cutoff=0.1)) == hash(parse("iprec_at_recall_0.10"))
    assert sorted([parse("IPrec@0.5"), parse("IPrec@0.1")])[0] == parse("IPrec@0.1")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"family": "IPrec", "cutoff": 1.5}, "cutoff must be a recall level in [0, 1]"),
    ({"family": "IPrec", "cutoff": True}, "cutoff must be a number"),
    ({"family": "Utility", "params": {"a": "x"}}, "a must be a number"),
    ({"family": "Utility", "params": {"e": 1}}, "Utility takes no e= parameter"),
    ({"family": "Utility", "params": {"rel": 1}}, "rel= is a field of its own"),
    ({"family": "IPrecAvg", "params": {"levels": []}}, "levels needs at least one value"),
    ({"family": "IPrecAvg", "params": {"levels": 0.5}}, "levels must be a list of numbers"),
    ({"family": "nDCG", "params": {"gains": {1.5: 2}}}, "label 1.5 is not an integer"),
    ({"family": "nDCG", "params": {"gains": 3}}, "gains must map labels to gains"),
    ({"family": "nDCG", "gain": "exp", "params": {"gains": {1: 2}}}, "not both"),
    ({"family": "Rprec", "params": {"mult": math.nan}}, "mult must be finite"),
])
def test_measure_validates_its_parameters(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as info:
        Measure(**kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_a_perquery_keeps_parameterised_measures_through_json(trec_eval_tests: Path) -> None:
    pq = evaluate(load_qrels(trec_eval_tests / "qrels.test"),
                  load_run(trec_eval_tests / "results.test"),
                  ["IPrec@0.1", "Utility(a=2,b=-1,c=0,d=0)", "nDCG(gains={1:3,2:9})"],
                  topics="intersection")
    doc = pq.to_dict()
    assert doc["measures"] == ["IPrec@0.1", "Utility(a=2,b=-1,c=0,d=0)",
                               "nDCG(gains={1:3,2:9})"]
    assert [parse(m) for m in doc["measures"]] == list(pq.measures)
    assert isinstance(pq, PerQuery)


# -- generated inputs (ties, negative and graded labels, topics on one side) ----------

_GENERATED = {
    "set_P": "SetP", "set_recall": "SetR", "set_relative_P": "SetRelP", "set_map": "SetAP",
    "set_F": "SetF", "num_nonrel_judged_ret": "NumNonRelJudgedRet", "utility": "Utility",
    "infAP": "InfAP", "binG": "BinG", "G": "G", "ndcg_rel": "NDCGRel", "Rndcg": "RnDCG",
    **{f"Rprec_mult_{x:.2f}": f"Rprec(mult={x:g})" for x in (0.2, 0.6, 1.0, 1.4, 2.0)},
    **{f"relative_P_{k}": f"RelP@{k}" for k in (1, 2, 3, 5, 10)},
    "gm_map": "GMAP", "gm_bpref": "GMBpref",
}
_GENERATED_REQUEST = {
    "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
    "utility", "infAP", "binG", "G", "ndcg_rel", "Rndcg", "Rprec_mult.0.2,0.6,1.0,1.4,2.0",
    "relative_P.1,2,3,5,10", "gm_map", "gm_bpref",
}


@SETTINGS
@given(data=qrels_and_run(), rel_level=st.sampled_from((1, 2, 3)))
def test_generated_inputs_match_pytrec_eval(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], rel_level: int,
) -> None:
    qrels, run = data
    theirs = pytrec_eval.RelevanceEvaluator(qrels, _GENERATED_REQUEST,
                                            relevance_level=rel_level).evaluate(run)
    pq = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), list(_GENERATED.values()),
                  rel_level=rel_level, topics="intersection")
    assert set(pq.qids) == set(theirs)
    for name, measure in _GENERATED.items():
        got = pq.scores(measure)
        for qid, row in theirs.items():
            have = got[qid]
            if name.startswith("gm_"):
                have = math.log(max(have, 0.00001))  # pytrec_eval reports the log
            want = row[name]
            if math.isnan(want):  # trec_eval's 0/0 (set_F with nothing relevant retrieved)
                assert have == 0.0, (name, qid)
                continue
            assert have == pytest.approx(want, abs=1e-9), (name, qid, qrels[qid], run[qid])


def test_rbp_known_answer() -> None:
    """Labels 1, 0, 2 then an unjudged document: gains scaled by the topic's top label (2)."""
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0, "c": 2}})
    run = Run.from_dict({"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}})
    pq = evaluate(qrels, run, ["RBP(p=0.8)", "rbp", "rbp_resid", "unj.5", "Unjudged@2"])
    assert pq.scores("RBP(p=0.8)")["q"] == pytest.approx(0.2 * (0.5 + 1.0 * 0.8 * 0.8))
    assert pq.scores("RBP")["q"] == pytest.approx(0.1 * (0.5 + 0.81))
    assert pq.scores("RBPResid")["q"] == pytest.approx(0.9 ** 4 + 0.1 * 0.9 ** 3)
    assert pq.scores("Unjudged@5")["q"] == pytest.approx(1 / 5)  # 4 retrieved, 1 unjudged
    assert pq.scores("Unjudged@2")["q"] == 0.0
