"""The experiment harness and ``rankproof eval`` on the bundled golden corpus."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

import pytest
from tests.harness._v1 import as_version_1
from typer.testing import CliRunner

from rankproof import Run
from rankproof.cli import app
from rankproof.harness import (
    EvalConfig,
    EvalReport,
    collapse_to_documents,
    golden_inputs,
    run_experiment,
)
from rankproof.retrieval import HASHING_NOTE, PLUMBING_NOTE, make_plumbing_cross_encoder
from rankproof.stats import nearest_rank

runner = CliRunner()
FAST = EvalConfig(stages=("bm25", "dense", "fusion"), embedder="hashing", resamples=500)


@cache
def _fast_report() -> EvalReport:
    report, _ = run_experiment(golden_inputs("chunk", 800, 100), FAST)
    return report


def test_report_shape_and_baseline_first() -> None:
    report = _fast_report()
    assert [s.name for s in report.stages] == ["bm25", "dense", "fusion"]
    assert report.baseline == "bm25" and report.schema_version == 2
    assert report.measures == ["R@1", "Success@1", "R@5", "Success@5", "R@10", "Success@10",
                               "RR@10", "nDCG@10"]
    assert report.inputs.documents >= 40 and report.inputs.queries >= 60
    assert {c.candidate for c in report.comparisons} == {"dense", "fusion"}
    assert len(report.comparisons) == 2 * 8
    for stage in report.stages:
        assert set(stage.per_query) == set(report.stage("bm25").per_query)
        mean = sum(v["nDCG@10"] for v in stage.per_query.values()) / len(stage.per_query)
        assert stage.means["nDCG@10"] == pytest.approx(mean)
        assert stage.latency.n == report.inputs.queries
        assert stage.latency.p50 <= stage.latency.p95 <= stage.latency.p99 <= stage.latency.max
    assert report.provenance.corpus_digest.startswith("sha256:")
    assert report.provenance.seed == 0


def test_hashing_embedder_is_stamped() -> None:
    report = _fast_report()
    assert HASHING_NOTE in report.caveats
    assert HASHING_NOTE in report.stage("dense").notes


def test_rerun_is_identical_apart_from_timings() -> None:
    again, _ = run_experiment(golden_inputs("chunk", 800, 100), FAST)
    assert again.without_timings() == _fast_report().without_timings()


def test_quote_judgments_do_not_raise_the_unjudged_caveat() -> None:
    assert not any(c.notes for c in _fast_report().comparisons)


def test_report_round_trips_through_json() -> None:
    report = _fast_report()
    again = EvalReport.model_validate_json(report.model_dump_json())
    assert again == report


def test_report_rejects_duplicate_stage_names() -> None:
    data = _fast_report().model_dump(mode="json")
    data["stages"][2]["name"] = "dense"
    with pytest.raises(ValueError, match="unique"):
        EvalReport.model_validate(data)


def test_nearest_rank_p95_of_twenty_is_not_the_maximum() -> None:
    values = [float(i) for i in range(1, 21)]
    assert nearest_rank(values, 95) == 19.0
    assert nearest_rank(values, 50) == 10.0
    assert nearest_rank(values, 99) == 20.0


def test_document_granularity_collapses_to_first_seen_documents() -> None:
    run = Run.from_dict({"q": {"a#0": 0.9, "b#0": 0.8, "a#1": 0.7, "c#2": 0.7}})
    docs = collapse_to_documents(run, {"a#0": "a", "a#1": "a", "b#0": "b", "c#2": "c"})
    # a#1 and c#2 tie: trec_eval order puts c#2 (docid descending) first.
    assert [d for _, d, _ in docs.iter_rows()] == ["a", "b", "c"]
    report, _ = run_experiment(golden_inputs("document", 800, 100),
                               EvalConfig(stages=("bm25",), resamples=200))
    assert report.inputs.granularity == "document"
    assert len(report.stages) == 1


def test_config_errors() -> None:
    with pytest.raises(ValueError, match="first stage must be bm25"):
        EvalConfig(stages=("dense", "bm25")).check()
    with pytest.raises(ValueError, match="unknown stage"):
        EvalConfig(stages=("bm25", "splade")).check()
    with pytest.raises(ValueError, match="rerank stage is unavailable"):
        EvalConfig(stages=("bm25", "rerank")).check()
    with pytest.raises(ValueError, match="fusion"):
        EvalConfig(stages=("bm25", "fusion")).check()


def test_cli_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["eval", "--dry-run", "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    assert "plan" in result.stdout and "bm25, dense, fusion" in result.stdout
    assert "86" in result.stdout  # queries
    assert list(tmp_path.iterdir()) == []


def test_cli_eval_writes_report_and_prints_caveat(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    extra = tmp_path / "out" / "report.json"
    result = runner.invoke(app, ["eval", "--embedder", "hashing", "--resamples", "300",
                                 "--quiet", "-o", str(extra)])
    assert result.exit_code == 0, result.output
    latest = tmp_path / "evals" / "results" / "latest.json"
    assert json.loads(latest.read_text())["kind"] == "rankproof.eval"
    assert extra.read_text() == latest.read_text()
    assert "test-double embedder" in result.stderr
    assert "vs bm25" in result.stdout and "nDCG@10" in result.stdout
    leftovers = [p for p in (tmp_path / "evals" / "results").iterdir() if p.name != "latest.json"]
    assert leftovers == []


def test_cli_rejects_bad_stage_and_missing_rerank_model(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    bad = runner.invoke(app, ["eval", "--stages", "bm25,colbert", "--dry-run"])
    assert bad.exit_code == 2 and "unknown stage" in bad.stderr
    rr = runner.invoke(app, ["eval", "--stages", "bm25,dense,fusion,rerank", "--dry-run"])
    assert (rr.exit_code == 2 and "rerank" in rr.stderr and "--rerank-model" in rr.stderr) \
        or "model" in rr.stderr
    assert not (tmp_path / "evals").exists()


def test_rerank_stage_with_a_plumbing_cross_encoder(tmp_path: Path) -> None:
    model = make_plumbing_cross_encoder(tmp_path / "tiny-ce")
    config = EvalConfig(stages=("bm25", "dense", "fusion", "rerank"), embedder="hashing",
                        rerank_model=str(model), rerank_depth=10, resamples=200)
    report, _ = run_experiment(golden_inputs("chunk", 800, 100), config)
    assert [s.name for s in report.stages][-1] == "rerank"
    assert PLUMBING_NOTE in report.caveats


@pytest.mark.skipif(os.environ.get("RANKPROOF_SKIP_MODEL") == "1", reason="model disabled")
def test_real_embedder_run_is_not_a_test_double(tmp_path: Path) -> None:
    report, _ = run_experiment(golden_inputs("chunk", 800, 100),
                               EvalConfig(stages=("bm25", "dense", "fusion"), resamples=500))
    assert HASHING_NOTE not in report.caveats
    assert report.stage("dense").config["model"].endswith("all-MiniLM-L6-v2")
    # A real sentence embedder finds the answer chunk in its top 10 for most queries.
    assert report.stage("dense").means["R@10"] > 0.8


def test_progress_reports_every_step_and_is_silent_when_quiet() -> None:
    from rankproof.cli._progress import stages

    seen: list[str] = []
    counted: list[tuple[int, int]] = []
    config = EvalConfig(stages=("bm25", "dense"), embedder="hashing", resamples=100)
    report, _ = run_experiment(golden_inputs("chunk", 800, 100), config,
                               progress=seen.append,
                               resampling=lambda d, p: counted.append((d, p)))
    assert len(seen) == 2 * 2 + 1
    assert seen[0].startswith("indexing bm25") and seen[-1] == "measuring and comparing"
    # The comparison's resamples are counted up to what was planned, and change nothing.
    assert counted and counted[-1][0] == counted[-1][1] > 0
    plain, _ = run_experiment(golden_inputs("chunk", 800, 100), config)
    assert plain.comparisons == report.comparisons
    with stages(quiet=True) as bar, bar.steps() as say:
        say("nothing is drawn")  # a no-op: --quiet (and a pipe) show no progress
        say.counter("nor this", "resamples")(1, 2)
        assert not bar.enabled


def _as_version_1(report: EvalReport) -> dict[str, object]:
    """The report as the version-1 code wrote it: flat ``StageComparison`` rows, no values."""
    return as_version_1(report.model_dump(mode="json"))


def test_each_stage_is_evaluated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import rankproof.harness._experiment as experiment

    calls: list[str] = []
    real = experiment.evaluate

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args[1].name)  # type: ignore[attr-defined]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(experiment, "evaluate", counting)
    report, comparison = run_experiment(golden_inputs("chunk", 800, 100), FAST)
    assert len(calls) == len(report.stages) == 3
    assert comparison is not None and tuple(report.comparisons) == comparison.rows


def test_report_rows_are_the_shared_rows_with_their_values() -> None:
    report = _fast_report()
    row = report.comparisons[0]
    stage, base = report.stage(row.candidate), report.stage(row.baseline)
    assert row.qids == tuple(sorted(base.per_query))
    assert row.deltas() == pytest.approx(
        {q: stage.per_query[q][row.measure] - base.per_query[q][row.measure] for q in row.qids})
    assert row.correction == "holm" and row.alpha == 0.05
    data = json.loads(report.model_dump_json())
    assert data["schema_version"] == 2 and "qids" in data["comparisons"][0]


def test_a_version_1_report_still_loads(tmp_path: Path) -> None:
    report = _fast_report()
    old = EvalReport.model_validate(_as_version_1(report))
    assert old.schema_version == 2 and old.stages == report.stages
    assert any("version-1 report" in c for c in old.caveats)
    for new, was in zip(old.comparisons, report.comparisons, strict=True):
        assert (new.candidate, new.measure, new.verdict, new.p_corrected) == (
            was.candidate, was.measure, was.verdict, was.p_corrected)
        assert new.qids == was.qids and new.candidate_values == was.candidate_values
        assert new.result.power == pytest.approx(was.result.power)
        assert new.result.statistic == was.result.statistic
    from rankproof.gate import load_report

    path = tmp_path / "v1.json"
    path.write_text(json.dumps(_as_version_1(report)))
    assert load_report(path).stage("dense").per_query == report.stage("dense").per_query


@pytest.mark.parametrize("version", [1, 2])
def test_power_pilot_from_an_eval_report(tmp_path: Path, version: int) -> None:
    report = _fast_report()
    path = tmp_path / "report.json"
    doc = report.model_dump(mode="json") if version == 2 else _as_version_1(report)
    path.write_text(json.dumps(doc))
    pw = runner.invoke(app, ["power", "--pilot", str(path), "--candidate", "fusion", "-m",
                             "nDCG@10", "--json"])
    assert pw.exit_code == 0, pw.output
    row = next(r for r in report.comparisons
               if r.candidate == "fusion" and r.measure == "nDCG@10")
    import numpy as np

    assert json.loads(pw.stdout)["sd"] == pytest.approx(float(np.std(row.differences, ddof=1)))
    shown = runner.invoke(app, ["power", "--pilot", str(path), "-m", "nDCG@10"])
    assert shown.exit_code == 0 and "dense − bm25 on nDCG@10" in shown.stdout


def test_config_errors_are_config_errors() -> None:
    from rankproof import ConfigError

    with pytest.raises(ConfigError, match="first stage must be bm25"):
        EvalConfig(stages=("dense", "bm25")).check()
    with pytest.raises(ConfigError, match="granularity"):
        EvalConfig(granularity="page").check()  # type: ignore[arg-type]
