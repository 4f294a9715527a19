"""Seeds 000/002 (groundkit): ``paired_bootstrap``, ``compare_report_stages`` and the BEIR
adapter's examples, run through the compat layer.

The bootstrap's random stream is rankproof's, not groundkit's, so the tests
pin by hand the cases whose answer does not depend on the draw (constant
deltas, all deltas of one sign, identical systems) and check every other
number against rankproof's own API for the same inputs.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from tests.harness._golden import golden_report

from rankproof import InputError, PairingError
from rankproof.compat.groundkit import (
    BeirAdaptationReport,
    BootstrapResult,
    EvalError,
    EvalReport,
    adapt_beir_dataset,
    compare_report_stages,
    measure_name,
    paired_bootstrap,
)
from rankproof.corpus import read_corpus, read_judgments
from rankproof.stats import paired_test

B = 10_000
SEED_FIELDS = {"baseline", "candidate", "metric", "query_count", "resamples", "seed",
               "confidence_level", "effect", "confidence_interval_low",
               "confidence_interval_high", "p_value_two_sided", "significant"}
REPORT_FIELDS = {"source_dir", "output_dir", "split", "document_count", "query_count",
                 "relevance_pair_count", "total_characters", "corpus_dir", "judgments_path"}


def _compare(baseline: dict[str, float], candidate: dict[str, float],
             **kwargs: Any) -> BootstrapResult:
    return paired_bootstrap(baseline, candidate, baseline_name="bm25", candidate_name="fusion",
                            metric="ndcg_at_10", **kwargs)


# -- paired_bootstrap ----------------------------------------------------------------------


def test_the_result_has_the_seeds_fields_and_defaults() -> None:
    r = _compare({"q1": 0.2, "q2": 0.5, "q3": 0.1}, {"q1": 0.4, "q2": 0.9, "q3": 0.15})
    assert set(r.model_dump()) == SEED_FIELDS
    assert (r.baseline, r.candidate, r.metric, r.query_count) == ("bm25", "fusion",
                                                                  "ndcg_at_10", 3)
    assert (r.resamples, r.seed, r.confidence_level) == (B, 7, 0.95)
    assert r.effect == pytest.approx((0.2 + 0.4 + 0.05) / 3)
    assert r.significant == (r.confidence_interval_low > 0 or r.confidence_interval_high < 0)


def test_it_is_rankproofs_bootstrap_with_the_asl_p_value() -> None:
    baseline = {f"q{i}": (i * 7 % 10) / 10 for i in range(30)}
    candidate = {f"q{i}": (i * 3 % 10) / 10 for i in range(30)}
    r = _compare(baseline, candidate, resamples=4000, seed=11, confidence_level=0.9)
    core = paired_test(candidate, baseline, "bootstrap", ci_method="percentile",
                       bootstrap_p="asl", resamples=4000, seed=11, confidence_level=0.9)
    assert (r.effect, r.confidence_interval_low, r.confidence_interval_high,
            r.p_value_two_sided) == (core.difference, core.ci_low, core.ci_high, core.p_value)


def test_constant_deltas_give_the_point_interval_and_the_floor_p() -> None:
    """Every delta is c = 0.25: every resampled mean is c, so the interval is [c, c] and no
    resample is on or below 0: p = 2(0 + 1)/(B + 1)."""
    baseline = {"q1": 0.25, "q2": 0.5, "q3": 0.0, "q4": 0.75}
    candidate = {q: v + 0.25 for q, v in baseline.items()}
    r = _compare(baseline, candidate)
    assert (r.effect, r.confidence_interval_low, r.confidence_interval_high) == (0.25, 0.25,
                                                                                 0.25)
    assert r.p_value_two_sided == 2 / (B + 1)
    assert r.significant


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_deltas_all_of_one_sign_give_asl_two_over_b_plus_one(sign: float) -> None:
    baseline = {f"q{i}": 0.5 for i in range(8)}
    candidate = {f"q{i}": 0.5 + sign * (0.05 + i / 100) for i in range(8)}
    r = _compare(baseline, candidate)
    assert r.p_value_two_sided == 2 / (B + 1)
    assert r.significant
    if sign > 0:
        assert r.confidence_interval_low > 0
    else:
        assert r.confidence_interval_high < 0


def test_identical_systems_give_p_one_and_no_significance() -> None:
    scores = {"q1": 0.3, "q2": 0.9, "q3": 0.0}
    r = _compare(scores, dict(scores))
    assert (r.effect, r.confidence_interval_low, r.confidence_interval_high) == (0.0, 0.0, 0.0)
    assert r.p_value_two_sided == 1.0
    assert not r.significant


def test_an_interval_that_reaches_zero_is_not_significant() -> None:
    """One query of ten differs: a third of the resamples miss it, so the interval's lower end
    is exactly 0, which the closed interval contains: not significant."""
    baseline = {f"q{i}": 0.0 for i in range(10)}
    candidate = {**baseline, "q0": 1.0}
    r = _compare(baseline, candidate)
    assert r.confidence_interval_low == 0.0 and not r.significant
    assert r.p_value_two_sided > 0.05


def test_the_result_does_not_depend_on_query_order_or_on_earlier_calls() -> None:
    baseline = {f"q{i}": (i * 7 % 10) / 10 for i in range(20)}
    candidate = {f"q{i}": (i * 3 % 10) / 10 for i in range(20)}
    first = _compare(baseline, candidate)
    _compare(candidate, baseline, seed=99)
    reordered = _compare(dict(reversed(baseline.items())), dict(reversed(candidate.items())))
    assert first == reordered == _compare(baseline, candidate)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"resamples": 0}, "resamples"),
    ({"confidence_level": 1.0}, "confidence_level"),
    ({"confidence_level": 0.0}, "confidence_level"),
])
def test_bad_settings_are_eval_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(EvalError, match=message):
        _compare({"q1": 0.1}, {"q1": 0.2}, **kwargs)


def test_bad_scores_are_eval_errors() -> None:
    assert EvalError is InputError and issubclass(EvalError, ValueError)
    with pytest.raises(EvalError, match="no queries"):
        _compare({}, {})
    with pytest.raises(PairingError, match=re.escape(
            "paired bootstrap query ids differ (missing from candidate: 'q2'; missing from "
            "baseline: 'q3')")) as info:
        _compare({"q1": 0.1, "q2": 0.2}, {"q1": 0.1, "q3": 0.2})
    assert isinstance(info.value, EvalError)
    assert (info.value.only_left, info.value.only_right) == (("q2",), ("q3",))
    with pytest.raises(EvalError, match="finite"):
        _compare({"q1": 0.1}, {"q1": float("nan")})
    with pytest.raises(EvalError, match="baseline_name must be a non-empty string"):
        paired_bootstrap({"q1": 0.1}, {"q1": 0.2}, baseline_name="", candidate_name="b",
                         metric="ndcg_at_10")


# -- metric names --------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "measure"), [
    ("ndcg_at_10", "nDCG@10"), ("recall_at_1", "Success@1"), ("recall_at_5", "Success@5"),
    ("recall_at_10", "Success@10"), ("mrr_at_10", "RR@10"), ("mrr", "RR"),
    ("nDCG@10", "nDCG@10"), ("R@10", "R@10"),
])
def test_groundkit_names_translate_to_rankproofs(name: str, measure: str) -> None:
    assert measure_name(name) == measure


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(EvalError, match="unknown metric 'ndgc_at_10'"):
        measure_name("ndgc_at_10")


# -- compare_report_stages -----------------------------------------------------------------


def _report() -> EvalReport:
    return golden_report(300, seed=5)


def _stage_scores(report: EvalReport, stage: str, measure: str) -> dict[str, float]:
    return {q: v[measure] for q, v in report.stage(stage).per_query.items()}


def test_the_seeds_stage_comparison_runs_on_a_report() -> None:
    report = _report()
    result = compare_report_stages(report, baseline="bm25", candidate="fusion",
                                   metric="ndcg_at_10")
    assert isinstance(result, BootstrapResult)
    assert (result.baseline, result.candidate, result.metric, result.seed) == (
        "bm25", "fusion", "ndcg_at_10", 7)
    # Exactly paired_bootstrap of the two stages' stored per-query values.
    by_hand = paired_bootstrap(_stage_scores(report, "bm25", "nDCG@10"),
                               _stage_scores(report, "fusion", "nDCG@10"),
                               baseline_name="bm25", candidate_name="fusion",
                               metric="ndcg_at_10")
    assert result == by_hand
    assert result.query_count == len(report.stage("bm25").per_query)


def test_recall_in_a_stage_comparison_is_the_hit_rate(tmp_path: Path) -> None:
    report = _report()
    path = tmp_path / "latest.json"
    path.write_text(report.model_dump_json())
    result = compare_report_stages(path, baseline="dense", candidate="fusion",
                                   metric="recall_at_10", resamples=500, seed=1)
    dense = _stage_scores(report, "dense", "Success@10")
    fusion = _stage_scores(report, "fusion", "Success@10")
    assert result.effect == pytest.approx(
        sum(fusion[q] - dense[q] for q in dense) / len(dense), abs=1e-12)


def test_stage_comparisons_refuse_what_cannot_be_compared(tmp_path: Path) -> None:
    report = _report()
    with pytest.raises(EvalError, match="no stage 'rerank'"):
        compare_report_stages(report, baseline="bm25", candidate="rerank", metric="ndcg_at_10")
    with pytest.raises(EvalError, match="not stored in the report"):
        compare_report_stages(report, baseline="bm25", candidate="dense", metric="mrr_at_5")
    doc = json.loads(report.model_dump_json())
    doc["stages"].append(doc["stages"][-1])
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(EvalError, match="more than one stage named"):
        compare_report_stages(path, baseline="bm25", candidate="fusion", metric="ndcg_at_10")


# -- adapt_beir_dataset --------------------------------------------------------------------


def _beir(root: Path, queries: list[dict[str, str]] | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "qrels").mkdir()
    corpus = [{"_id": "d1", "title": "Pumps", "text": "Pumps are greased every 2000 hours."},
              {"_id": "d2", "title": "", "text": "Valves are exercised every year."},
              {"_id": "d3", "title": "Unjudged", "text": "A distractor."}]
    queries = queries or [{"_id": "pumps", "text": "How often are pumps greased?"},
                          {"_id": "valves-yearly", "text": "Valves?"}]
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    (root / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries))
    qids = [q["_id"] for q in queries]
    (root / "qrels" / "test.tsv").write_text(
        f"query-id\tcorpus-id\tscore\n{qids[0]}\td1\t1\n{qids[0]}\td2\t0\n{qids[1]}\td2\t1\n"
        f"{qids[1]}\td1\t1\n")
    return root


def test_the_seeds_adapter_example_writes_groundkits_layout(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    _beir(tmp_path / "scifact")
    monkeypatch.chdir(tmp_path)
    report = adapt_beir_dataset(Path("./scifact"), Path("./scifact-gk"))
    assert isinstance(report, BeirAdaptationReport)
    assert set(report.model_dump()) == REPORT_FIELDS
    out = (tmp_path / "scifact-gk").resolve()
    assert report.source_dir == str((tmp_path / "scifact").resolve())
    assert report.output_dir == str(out)
    assert report.corpus_dir == str(out / "corpus")
    assert report.judgments_path == str(out / "judgments.jsonl")
    assert sorted(p.name for p in out.iterdir()) == ["corpus", "judgments.jsonl"]
    # By hand: 3 documents; 2 judged queries; 3 positive pairs (the score-0 row is not one).
    assert (report.split, report.document_count, report.query_count,
            report.relevance_pair_count) == ("test", 3, 2, 3)
    written = [p.read_text(encoding="utf-8") for p in sorted((out / "corpus").iterdir())]
    assert report.total_characters == sum(len(t) for t in written)
    corpus = read_corpus(out / "corpus")
    judgments = read_judgments(out / "judgments.jsonl", corpus)
    assert sorted(q.query_id for q in judgments.queries) == ["pumps", "valves-yearly"]


def test_the_adapter_refuses_query_ids_that_are_not_kebab_case_writing_nothing(
        tmp_path: Path) -> None:
    src = _beir(tmp_path / "beir", queries=[{"_id": "MED-10", "text": "Pumps?"},
                                            {"_id": "q_1", "text": "Valves?"}])
    with pytest.raises(EvalError, match="not kebab-case") as info:
        adapt_beir_dataset(src, tmp_path / "out")
    assert "'MED-10'" in str(info.value) and "'q_1'" in str(info.value)
    assert not (tmp_path / "out").exists()


def test_the_adapter_refuses_an_output_folder_that_holds_files(tmp_path: Path) -> None:
    src = _beir(tmp_path / "beir")
    out = tmp_path / "out"
    (out / "corpus").mkdir(parents=True)
    (out / "corpus" / "other.txt").write_text("another dataset")
    with pytest.raises(EvalError, match="not empty"):
        adapt_beir_dataset(src, out)
    assert os.listdir(out / "corpus") == ["other.txt"]
    with pytest.raises(EvalError):
        adapt_beir_dataset(src, tmp_path / "elsewhere", split="../dev")
