"""`run`: targets over golden cases into per-case rows; `RunResult` from reports and JSON."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from rankproof import InputError, RankproofError
from rankproof.data import Qrels, Run
from rankproof.harness import EvalConfig, golden_inputs, run_experiment, run_result_from_report
from rankproof.measures import evaluate, register_metric
from rankproof.measures._registry import _unregister
from rankproof.targets import (
    CallableTarget,
    Case,
    CaseRow,
    RunResult,
    TargetResponse,
    judgments_digest,
    run,
)

CASES = (
    Case("a", "alpha", relevant=("d1",)),
    Case("b", "beta", relevance={"d2": 2, "d3": 1, "d9": 0}),
    Case("c", "gamma", relevant=("d4", "d5")),
    Case("e", "nothing relevant", relevance={}),
)
ANSWERS = {
    "a": ["d1", "d7"],            # relevant first
    "b": ["d9", "d3", "d2"],      # graded, best relevant at rank 3
    "c": ["d8", "d8", "d5"],      # a repeated id; relevant at rank 2 once deduplicated
    "e": ["d1"],
}


def answer(case: Case) -> list[str]:
    return ANSWERS[case.id]


class CountingTarget:
    """A target that counts how often it was invoked."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def invoke(self, case: Case) -> TargetResponse:
        self.calls += 1
        return TargetResponse(ranked_ids=tuple(ANSWERS.get(case.id, ["d1"])), latency_ms=2.0)


def test_rows_are_kept_and_means_derived() -> None:
    r = run("sys", CallableTarget(answer, "sys"), CASES, ["nDCG@10", "RR@10", "R@2",
                                                          "latency_p50", "max_item_share"])
    assert r.case_ids == ("a", "b", "c", "e")
    assert r.metrics == ("nDCG@10", "RR@10", "R@2")
    assert set(r.aggregates) == {"latency_p50", "max_item_share"}
    rr = {row.case_id: row.values["RR@10"] for row in r.rows}
    assert rr == {"a": 1.0, "b": 0.5, "c": 0.5, "e": 0.0}
    assert r.mean("RR@10") == pytest.approx(0.5)
    assert r.mean("mrr@10") == r.mean("RR@10")       # one metric, however spelt
    assert r.scores("R@2") == {"a": 1.0, "b": 0.5, "c": 0.5, "e": 0.0}
    assert r.aggregates["max_item_share"] == 0.5       # d1 in a and e
    assert r.rows[0].response is not None and r.rows[0].response.ranked_ids == ("d1", "d7")
    assert any("repeated id" in n for n in r.notes)
    assert any("no relevant document" in n and "'e'" in n for n in r.notes)
    assert r.provenance.kind == "target" and r.provenance.target == "sys"
    assert r.provenance.measures == ("nDCG@10", "RR@10", "R@2")
    assert r.provenance.judgments_digest == judgments_digest(CASES)


def test_retrieval_values_agree_with_the_measures_engine() -> None:
    measures = ["nDCG@10", "RR@10", "R@2", "P@2", "AP", "Success@1", "NumRelRet"]
    r = run("sys", CallableTarget(answer, "sys"), CASES[:3], measures)
    q, d, g = [], [], []
    for c in CASES[:3]:
        for doc, grade in (c.relevance or {}).items():
            q.append(c.id)
            d.append(doc)
            g.append(grade)
    qrels = Qrels.from_columns(q, d, np.array(g))
    rq, rd, rs = [], [], []
    for cid, ids in ANSWERS.items():
        ids = list(dict.fromkeys(ids))
        for i, doc in enumerate(ids):
            rq.append(cid)
            rd.append(doc)
            rs.append(float(100 - i))
    pq = evaluate(qrels, Run.from_columns(rq, rd, np.array(rs)), measures)
    for m in measures:
        expected = pq.scores(m)
        assert r.scores(m) == pytest.approx(expected), m
    # known answer for b: gains 2 (d2) at rank 3 and 1 (d3) at rank 2; ideal 2, 1
    dcg = 1 / math.log2(3) + 2 / 2
    idcg = 2 + 1 / math.log2(3)
    assert r.scores("nDCG@10")["b"] == pytest.approx(dcg / idcg)


def test_a_case_without_judgments_raises_before_the_target_runs() -> None:
    cases = (*CASES, Case("u1", "unjudged"), Case("u2", "also unjudged"))
    target = CountingTarget()
    with pytest.raises(InputError, match=r"'u1', 'u2' have no judgments.*nDCG@10 needs"):
        run("sys", target, cases, ["nDCG@10", "latency_p50"])
    assert target.calls == 0
    # metrics that need no judgments run on unjudged cases
    r = run("sys", target, cases, ["latency_ms", "latency_p95"])
    assert r.scores("latency_ms")["u1"] == 2.0 and r.aggregates["latency_p95"] == 2.0


@pytest.fixture
def custom_metric() -> Iterator[str]:
    @register_metric("t_answer_len", higher_is_better=True)
    def answer_len(response: TargetResponse, case: Case) -> float:
        return float(len(response.ranked_ids))

    @register_metric("t_needs_j", higher_is_better=True, needs_judgments=True)
    def needs(response: TargetResponse, case: Case) -> float:
        return float(len(case.relevant))

    @register_metric("t_broken", higher_is_better=True)
    def broken(response: TargetResponse, case: Case) -> float:
        if case.id == "c":
            raise KeyError("boom")
        return math.nan if case.id == "b" else 1.0

    yield "t_answer_len"
    for n in ("t_answer_len", "t_needs_j", "t_broken"):
        _unregister(n)


def test_custom_per_case_metrics(custom_metric: str) -> None:
    r = run("sys", CallableTarget(answer, "sys"), CASES, [custom_metric, "nDCG@10"])
    assert r.scores(custom_metric) == {"a": 2.0, "b": 3.0, "c": 3.0, "e": 1.0}
    with pytest.raises(InputError, match="'u' have no judgments, which t_needs_j needs"):
        run("sys", CallableTarget(answer, "sys"), (Case("u", "q"),), ["t_needs_j"])


def test_a_bad_metric_value_names_metric_and_case(custom_metric: str) -> None:
    with pytest.raises(InputError, match=r"metric 't_broken', case 'b'.*finite"):
        run("sys", CallableTarget(answer, "sys"), CASES[:2], ["t_broken"])
    with pytest.raises(RankproofError, match="metric 't_broken', case 'c': raised KeyError"):
        run("sys", CallableTarget(answer, "sys"), (CASES[0], CASES[2]), ["t_broken"])


def test_run_validates_its_inputs(tmp_path: Path) -> None:
    t = CallableTarget(answer, "sys")
    with pytest.raises(ValueError, match="non-empty name"):
        run("", t, CASES, ["nDCG@10"])
    with pytest.raises(InputError, match="no cases"):
        run("x", t, [], ["nDCG@10"])
    with pytest.raises(InputError, match="'a' appears twice"):
        run("x", t, [CASES[0], CASES[0]], ["nDCG@10"])
    with pytest.raises(ValueError, match="unknown metric"):
        run("x", t, CASES, ["nDCG@10", "ndgc@5"])
    goldens = tmp_path / "g.jsonl"
    goldens.write_text("\n".join(json.dumps({"id": c.id, "query": c.query,
                                             "relevance": dict(c.relevance or {})})
                                 for c in CASES) + "\n")
    assert run("x", t, goldens, "RR@10").scores("RR@10")["b"] == 0.5


def test_nothing_retrieved_at_all_scores_zero() -> None:
    r = run("x", CallableTarget(lambda c: [], "empty"), CASES[:2], ["nDCG@10", "NumRet",
                                                                     "entropy"])
    assert r.scores("nDCG@10") == {"a": 0.0, "b": 0.0}
    assert r.scores("NumRet") == {"a": 0.0, "b": 0.0}
    assert r.aggregates["entropy"] == 0.0


def test_results_are_frozen_and_round_trip_through_json() -> None:
    r = run("sys", CallableTarget(answer, "sys"), CASES, ["nDCG@10", "latency_ms",
                                                          "max_item_share@1"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        r.rows[0].values["nDCG@10"] = 0.0  # type: ignore[index]
    back = RunResult.from_dict(json.loads(r.to_json()))
    assert back.to_dict() == r.to_dict()
    assert back.aggregate("max_item_share@1", ["a", "e"]) == 1.0
    assert back.aggregate("max_item_share@1") == r.aggregates["max_item_share@1"]
    with pytest.raises(InputError, match="kind must be"):
        RunResult.from_dict({"kind": "other"})
    bad = r.to_dict()
    bad["rows"][1]["values"]["nDCG@10"] = "high"
    with pytest.raises(InputError, match="row 2"):
        RunResult.from_dict(bad)


def test_rows_refuse_duplicates_and_non_finite_values() -> None:
    with pytest.raises(InputError, match="finite"):
        CaseRow(case_id="a", values={"m": math.inf})
    row = CaseRow(case_id="a", values={})
    with pytest.raises(InputError, match="two rows"):
        RunResult(name="r", rows=(row, row), metrics=())


def test_select_and_scope_errors_name_the_missing_case() -> None:
    r = run("sys", CallableTarget(answer, "sys"), CASES, ["RR@10", "latency_p50"])
    assert r.mean("RR@10", ["a", "b"]) == 0.75
    with pytest.raises(InputError, match=r"no row for case.*'zz'"):
        r.mean("RR@10", ["a", "zz"])
    with pytest.raises(InputError, match="was not computed"):
        r.mean("nDCG@10")
    with pytest.raises(InputError, match="aggregate"):
        r.mean("latency_p50")
    assert r.value("latency_p50") == r.aggregate("latency_p50")


def test_from_report_rows() -> None:
    report, _ = run_experiment(golden_inputs("chunk", 800, 100),
                               EvalConfig(stages=("bm25",), resamples=200))
    r = run_result_from_report(report)                 # one stage: no choice to make
    stage = report.stage("bm25")
    assert r.name == "bm25" and len(r.rows) == len(stage.latency_ms)
    assert r.scores("nDCG@10") == {q: v["nDCG@10"] for q, v in stage.per_query.items()}
    assert r.mean("nDCG@10") == pytest.approx(stage.means["nDCG@10"])
    assert r.aggregates["latency_p95"] == pytest.approx(stage.latency.p95)
    unscored = set(stage.latency_ms) - set(stage.per_query)
    assert unscored and any("no retrieval values" in n for n in r.notes)
    assert r.provenance.judgments_digest == report.provenance.judgments_digest
    assert r.provenance.granularity == "chunk" and r.provenance.stage == "bm25"
    assert r.provenance.measures == tuple(report.measures)
    with pytest.raises(InputError, match="no stage 'dense'"):
        run_result_from_report(report, "dense")
    two = report.model_copy(update={"stages": [stage, stage.model_copy(update={"name": "x"})]})
    with pytest.raises(InputError, match=r"2 stages \(bm25, x\); choose one"):
        run_result_from_report(two)
    assert run_result_from_report(two, "x").name == "x"


def test_case_order_changes_nothing_but_row_order() -> None:
    metrics = ["nDCG@10", "RR@10", "AP", "max_item_share@2", "entropy"]
    forward = run("sys", CallableTarget(answer, "sys"), CASES, metrics)
    backward = run("sys", CallableTarget(answer, "sys"), CASES[::-1], metrics)
    assert backward.case_ids == forward.case_ids[::-1]
    for m in ("nDCG@10", "RR@10", "AP"):
        assert backward.scores(m) == forward.scores(m)
    assert dict(backward.aggregates) == dict(forward.aggregates)


def test_batch_targets_are_invoked_once() -> None:
    class Batch:
        name = "batch"

        def __init__(self) -> None:
            self.calls: list[int] = []

        def invoke(self, case: Case) -> TargetResponse:
            raise AssertionError("invoke_many should be used")

        def invoke_many(self, cases: list[Case]) -> list[TargetResponse]:
            self.calls.append(len(cases))
            return [TargetResponse(ranked_ids=tuple(ANSWERS[c.id])) for c in cases]

    target = Batch()
    run("b", target, CASES, ["RR@10"])
    assert target.calls == [len(CASES)]


def test_run_result_repr_and_to_pandas() -> None:
    result = run("cand", CallableTarget(answer, "svc"), CASES, ["RR", "nDCG@10", "latency_p95"])
    assert repr(result) == ("RunResult('cand', 4 cases, metrics RR, nDCG@10, "
                            "aggregates latency_p95)")
    assert repr(result.rows[0]).startswith("CaseRow('a', RR=1, nDCG@10=1, ")
    assert repr(result.rows[0]).endswith(" ms)")
    pd = pytest.importorskip("pandas")
    df = result.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert df.index.name == "case_id" and list(df.index) == ["a", "b", "c", "e"]
    assert list(df.columns) == ["RR", "nDCG@10", "latency_ms"]
    for r in result.rows:
        assert df.loc[r.case_id, "RR"] == r.values["RR"]
        assert df.loc[r.case_id, "latency_ms"] == r.latency_ms
    assert df["nDCG@10"].mean() == pytest.approx(result.mean("nDCG@10"))


def test_run_result_to_pandas_leaves_missing_values_nan() -> None:
    rows = (CaseRow("a", {"RR": 1.0}, latency_ms=3.0), CaseRow("b", {}))
    result = RunResult(name="r", rows=rows, metrics=("RR",))
    assert repr(rows[1]) == "CaseRow('b')"
    pytest.importorskip("pandas")
    df = result.to_pandas()
    assert df.loc["a", "RR"] == 1.0 and math.isnan(df.loc["b", "RR"])
    assert math.isnan(df.loc["b", "latency_ms"])
