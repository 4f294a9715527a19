"""Eval reports keep what a reader must see: each stage's top results for every query run
(no-answer ones included), the query text and the gold; inline, or in a sidecar when large."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.harness._golden import golden_report
from typer.testing import CliRunner

import rankproof.comparison
from rankproof import ConfigError
from rankproof.cli import app
from rankproof.comparison import Evidence, EvidenceSidecar, load_evidence
from rankproof.harness import EvalConfig, EvalReport, golden_inputs, read_report, run_experiment

runner = CliRunner()


def _report() -> EvalReport:
    return golden_report(300, seed=5)


def _evidence() -> Evidence:
    ev = _report().evidence
    assert isinstance(ev, Evidence)
    return ev


def test_every_query_run_has_its_text_gold_and_each_stages_top_ten() -> None:
    report, ev = _report(), _evidence()
    inputs = golden_inputs("chunk", 800, 100)
    run = [qid for qid, _ in inputs.queries]
    assert ev.k == report.config["evidence_depth"] == 10
    assert ev.queries == dict(inputs.queries) and ev.topics == run
    assert list(ev.top) == [s.name for s in report.stages] == ["bm25", "dense", "fusion"]
    for per_q in ev.top.values():
        assert list(per_q) == run and all(len(ids) == 10 for ids in per_q.values())
    # No-answer queries are run, so they are shown: with their text, no gold, a ranking.
    assert report.inputs.no_answer_queries
    for qid in report.inputs.no_answer_queries:
        assert ev.gold[qid] == {} and ev.queries[qid] and len(ev.top["bm25"][qid]) == 10
    assert ev.gold == {q: {d: r for d, r in grades.items() if r >= 1}
                       for q, grades in inputs.qrels.to_dict().items()} | {
        q: {} for q in report.inputs.no_answer_queries}


def test_the_stored_top_results_are_what_the_measures_scored() -> None:
    """RR@10, Success@1 and Success@10 recomputed from the evidence equal the report's own
    per-query values: the evidence is the ranking the measures saw, in their order."""
    report, ev = _report(), _evidence()
    for stage in report.stages:
        for qid, values in stage.per_query.items():
            top, gold = ev.top[stage.name][qid], ev.gold[qid]
            hits = [rank for rank, d in enumerate(top, 1) if d in gold]
            assert values["RR@10"] == pytest.approx(1 / hits[0] if hits else 0.0), qid
            assert values["Success@1"] == (1.0 if hits[:1] == [1] else 0.0)
            assert values["Success@10"] == (1.0 if hits else 0.0)


def test_document_granularity_stores_document_ids_and_depth_zero_stores_none() -> None:
    inputs = golden_inputs("document", 800, 100)
    report, _ = run_experiment(inputs, EvalConfig(stages=("bm25",), resamples=100,
                                                  evidence_depth=3))
    ev = report.evidence
    assert isinstance(ev, Evidence) and ev.k == 3
    docs = {d.id for d in inputs.corpus.documents}
    assert all(set(ids) <= docs and len(ids) == 3 for ids in ev.top["bm25"].values())
    none, _ = run_experiment(inputs, EvalConfig(stages=("bm25",), resamples=100,
                                                evidence_depth=0))
    assert none.evidence is None


@pytest.mark.parametrize("depth", [-1, True, 10_001, 2.5])
def test_evidence_depth_is_validated(depth: object) -> None:
    with pytest.raises(ConfigError, match="evidence_depth"):
        EvalConfig(stages=("bm25",), evidence_depth=depth).check()  # type: ignore[arg-type]


def test_reports_round_trip_and_reports_without_evidence_still_load() -> None:
    data = _report().model_dump(mode="json")
    assert list(data["evidence"]) == ["k", "queries", "gold", "top"]
    assert EvalReport.model_validate(data) == _report()
    del data["evidence"]
    assert EvalReport.model_validate(data).evidence is None
    assert load_evidence(data, Path(".")) is None
    data["evidence"] = {"k": 0, "gold": {}, "top": {}}
    with pytest.raises(ValueError, match=r"evidence\.k"):
        EvalReport.model_validate(data)


def test_a_large_report_keeps_its_evidence_in_a_sidecar(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(rankproof.comparison, "MAX_INLINE_EVIDENCE_IDS", 100)
    out = tmp_path / "out" / "report.json"
    result = runner.invoke(app, ["eval", "--stages", "bm25", "--resamples", "100", "--quiet",
                                 "--evidence-depth", "5", "-o", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    latest = tmp_path / "evals" / "results" / "latest.json"
    for path in (latest, out):
        doc = json.loads(path.read_text())
        side = path.with_name(path.stem + ".evidence.json")
        assert doc["evidence"]["sidecar"] == side.name and side.is_file()
        ev = load_evidence(doc, path.parent)
        assert isinstance(ev, Evidence) and ev.k == 5 and ev.ids == doc["evidence"]["ids"] > 100
        assert len(ev.topics) == doc["inputs"]["queries"] and set(ev.top) == {"bm25"}
        assert isinstance(read_report(path).evidence, EvidenceSidecar)
    assert "evidence written beside it" in result.stderr
    # Standard output has nothing beside it: what is over the cap is left out, and said so.
    printed = json.loads(result.stdout)
    shown = Evidence.from_dict(printed["evidence"])
    assert shown.ids <= 100 and 0 < len(shown.topics) < printed["inputs"]["queries"]
    assert any(c.startswith("evidence: ") and "left out" in c for c in printed["caveats"])


def test_eval_refuses_a_sidecar_path_that_is_an_input(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The sidecar is guarded like the report, before anything is read or written."""
    monkeypatch.chdir(tmp_path)
    judgments = tmp_path / "report.evidence.json"
    judgments.write_text("{}\n")
    corpus = tmp_path / "docs"
    corpus.mkdir()
    result = runner.invoke(app, ["eval", str(corpus), "--judgments", str(judgments), "-o",
                                 str(tmp_path / "report.json"), "--stages", "bm25"])
    assert result.exit_code == 2 and "would replace the input" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "report.evidence.json"]


def test_compare_stages_carries_the_two_stages_evidence(tmp_path: Path) -> None:
    saved = tmp_path / "latest.json"
    saved.write_text(_report().model_dump_json())
    out = tmp_path / "stages.json"
    result = runner.invoke(app, ["compare", "stages", str(saved), "--baseline", "dense",
                                 "--candidate", "fusion", "-o", str(out)])
    assert result.exit_code == 0, result.output
    ev = load_evidence(json.loads(out.read_text()), tmp_path)
    assert isinstance(ev, Evidence) and list(ev.top) == ["dense", "fusion"]
    assert ev.top["fusion"] == _evidence().top["fusion"] and ev.gold == _evidence().gold
    assert ev.queries == _evidence().queries
