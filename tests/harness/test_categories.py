"""Per-category means and the hit rate (``Success@k``, spelled so in tables too) in eval reports."""

from __future__ import annotations

import numpy as np
import pytest
from tests.harness._golden import golden_report

from rankproof.harness import (
    DEFAULT_EVAL_MEASURES,
    EvalReport,
)
from rankproof.harness._breakdown import category_results
from rankproof.report.eval import category_table, eval_tables, label, stage_table
from rankproof.report.table import render_text


def _report() -> EvalReport:
    return golden_report(300, seed=0)


def test_hit_rate_sits_beside_trec_recall_in_the_defaults() -> None:
    assert DEFAULT_EVAL_MEASURES == ("R@1", "Success@1", "R@5", "Success@5", "R@10",
                                     "Success@10", "RR@10", "nDCG@10")


def test_hit_rate_is_any_relevant_in_the_top_k_and_bounds_recall() -> None:
    """Success@k is 1 exactly when the stage found something relevant in its top k; one hit
    of several relevant chunks gives R@k < 1 but Success@k = 1."""
    report = _report()
    for stage in report.stages:
        for values in stage.per_query.values():
            for k in (1, 5, 10):
                hit, recall = values[f"Success@{k}"], values[f"R@{k}"]
                assert hit in (0.0, 1.0)
                assert hit == (1.0 if recall > 0 else 0.0)
                assert recall <= hit
    bm25 = report.stage("bm25").means
    # The golden corpus figures the issue quotes: trec recall 0.699, hit rate 0.859.
    assert round(bm25["R@1"], 3) == 0.699 and round(bm25["Success@1"], 3) == 0.859
    assert any(c.measure == "Success@1" for c in report.comparisons)


def test_the_table_and_the_json_spell_the_hit_rate_the_same_way() -> None:
    assert [label(m) for m in DEFAULT_EVAL_MEASURES] == [
        "R@1", "Success@1", "R@5", "Success@5", "R@10", "Success@10", "RR@10", "nDCG@10"]
    assert label("Success(rel=2)@3") == "Success(rel=2)@3" and label("Successes") == "Successes"
    report = _report()
    header = render_text([stage_table(report)]).splitlines()[1].split()
    assert header == ["stage", "R@1", "Success@1", "R@5", "Success@5", "R@10", "Success@10",
                      "RR@10", "nDCG@10", "p50", "ms", "p95", "ms", "p99", "ms"]
    data = report.model_dump(mode="json")
    assert "Success@1" in data["stages"][0]["means"] and "hit@1" not in data["stages"][0]["means"]


def test_category_means_are_the_means_of_their_queries() -> None:
    report = _report()
    cats = report.inputs.query_categories
    assert len(cats) == report.inputs.queries == 86
    for stage in report.stages:
        assert list(stage.categories) == ["normal", "ambiguous", "adversarial"]
        for category, result in stage.categories.items():
            qids = [q for q in stage.per_query if cats[q] == category]
            assert result.n == len(qids) == report.inputs.categories[category]
            for m in report.measures:
                expected = np.mean([stage.per_query[q][m] for q in qids])
                assert result.means[m] == pytest.approx(expected)
        # Weighted by their counts, the categories give back the stage mean.
        total = sum(r.n for r in stage.categories.values())
        for m in report.measures:
            pooled = sum(r.n * r.means[m] for r in stage.categories.values()) / total
            assert pooled == pytest.approx(stage.means[m])
    assert report.inputs.categories["no_answer"] == 8
    assert all("no_answer" not in s.categories for s in report.stages)


def test_category_table_rows_and_the_unscored_note() -> None:
    report = _report()
    made = category_table(report)
    assert made is not None
    table, notes = made
    text = render_text([table])
    lines = text.splitlines()
    normal = next(line for line in lines if line.startswith("normal"))
    bm25 = report.stage("bm25").categories["normal"]
    assert normal.split()[:4] == ["normal", "60", "bm25", f"{bm25.means['R@1']:.4f}"]
    assert any(line.startswith("ambiguous") and " 9 " in line for line in lines)
    assert notes == ["no_answer: 8 queries run but not scored by retrieval measures"]


def test_a_single_category_gets_no_table_and_no_categories_gives_none() -> None:
    assert category_results({"a": {"m": 1.0}}, {}, ["m"]) == {}
    one = category_results({"a": {"m": 1.0}, "b": {"m": 0.0}}, {"a": "normal", "b": "normal"},
                           ["m"])
    assert {c: (r.n, r.means) for c, r in one.items()} == {"normal": (2, {"m": 0.5})}
    data = _report().model_dump(mode="json")
    for stage in data["stages"]:
        stage["categories"] = {"normal": stage["categories"]["normal"]}
    assert category_table(EvalReport.model_validate(data)) is None


def test_a_version_2_report_written_before_the_new_fields_still_loads() -> None:
    data = _report().model_dump(mode="json")
    del data["inputs"]["query_categories"]
    for stage in data["stages"]:
        for key in ("categories", "top_scores", "abstention"):
            del stage[key]
        stage["latency"] = {k: stage["latency"][k]  # before the timing conditions too
                            for k in ("n", "p50", "p95", "p99", "mean", "max")}
    old = EvalReport.model_validate(data)
    assert old.schema_version == 2
    assert all(s.categories == {} and s.abstention is None for s in old.stages)
    tables = eval_tables(old)
    assert len(tables) == 1 and tables[0][1] == []  # the stage table only, no notes
