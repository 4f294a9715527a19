"""Honest latency: stages warm up before timing, torch's threads are set, the load is stamped.

Real stages on the bundled golden corpus (the hashing embedder, so no model
is loaded); never a timed assertion — only which queries were timed, what
was recorded, and that results do not depend on the warm-up.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rankproof._errors import ConfigError, InputError
from rankproof.cli import app
from rankproof.harness import EvalConfig, EvalInputs, EvalReport, golden_inputs, run_experiment
from rankproof.harness._report import LatencySummary
from rankproof.report.markdown import render_markdown
from rankproof.report.views import build
from rankproof.retrieval import (
    DEFAULT_THREADS,
    DEFAULT_WARMUP,
    BM25Retriever,
    DenseRetriever,
    FusionRetriever,
    HashingEmbedder,
    StageOutput,
    timed_search,
    torch_threads,
)

runner = CliRunner()
FAST = EvalConfig(stages=("bm25", "dense", "fusion"), embedder="hashing", resamples=200)


@cache
def _inputs() -> EvalInputs:
    return golden_inputs("chunk", 800, 100)


@cache
def _report(warmup: int) -> EvalReport:
    return run_experiment(_inputs(), FAST, warmup=warmup)[0]


class Recording:
    """A real stage that keeps every batch it was asked and every output it gave."""

    def __init__(self, stage: Any) -> None:
        self.stage = stage
        self.name = stage.name
        self.batches: list[list[str]] = []
        self.outputs: list[StageOutput] = []
        self.threads: list[int | None] = []

    def index(self, docs: Any) -> None:
        self.stage.index(docs)

    def search(self, queries: Any, k: int) -> StageOutput:
        torch = sys.modules.get("torch")
        self.threads.append(None if torch is None else int(torch.get_num_threads()))
        self.batches.append([q for q, _ in queries])
        out: StageOutput = self.stage.search(queries, k)
        self.outputs.append(out)
        return out


def _docs() -> list[tuple[str, str]]:
    return [(c.id, c.text) for c in _inputs().corpus.chunks]


def test_every_query_is_timed_once_and_the_warmup_is_recorded_apart() -> None:
    report = _report(DEFAULT_WARMUP)
    qids = {q for q, _ in _inputs().queries}
    for stage in report.stages:
        lat = stage.latency
        assert set(stage.latency_ms) == qids and lat.n == len(qids) == 86
        assert lat.warmup_queries == DEFAULT_WARMUP == 8
        assert lat.warmup_ms is not None and lat.warmup_ms > 0
        assert lat.cpus is not None and lat.cpus >= 1
        assert lat.load_before is not None and lat.load_after is not None
        assert lat.threads == (DEFAULT_THREADS if "torch" in sys.modules else None)
        assert lat.threads_set == ("torch" in sys.modules)
        assert lat.conditions() is not None and "warm-up 8 queries" in lat.describe()


def test_results_are_identical_with_and_without_the_warmup() -> None:
    warm, cold = _report(DEFAULT_WARMUP), _report(0)
    assert warm.without_timings() == cold.without_timings()
    for stage in cold.stages:
        assert stage.latency.warmup_queries == 0 and stage.latency.warmup_ms == 0.0
        assert "no warm-up" in stage.latency.describe()
    # The timings are what without_timings leaves out, and they are all recorded.
    assert warm.stage("dense").latency != cold.stage("dense").latency


def test_the_warmup_searches_the_first_queries_and_its_output_is_discarded() -> None:
    queries = list(_inputs().queries)
    bm25 = Recording(BM25Retriever())
    bm25.index(_docs())
    timed = timed_search(bm25, queries, 10, warmup=5)
    qids = [q for q, _ in queries]
    assert bm25.batches == [qids[:5], qids]
    assert timed.output is bm25.outputs[1]
    assert timed.stamp.warmup_queries == 5
    # A warm-up set larger than the batch is the whole batch, once.
    small = Recording(bm25.stage)
    assert timed_search(small, queries[:3], 10, warmup=8).stamp.warmup_queries == 3
    assert small.batches == [qids[:3], qids[:3]]
    # No warm-up: one search.
    none = Recording(bm25.stage)
    assert timed_search(none, queries, 10, warmup=0).stamp.warmup_queries == 0
    assert len(none.batches) == 1


def test_fusion_latency_adds_only_the_timed_pass_of_its_inputs() -> None:
    """Fusion searches its inputs inside its own search: a query's latency is the inputs'
    latencies from that same call plus one equal share of the fusion, never the warm-up's."""
    bm25 = Recording(BM25Retriever())
    dense = Recording(DenseRetriever(HashingEmbedder()))
    fusion = FusionRetriever([bm25, dense], "rrf", depth=20)
    fusion.index(_docs())
    queries = list(_inputs().queries)
    timed = timed_search(fusion, queries, 10, warmup=4)
    assert [len(b) for b in bm25.batches] == [len(b) for b in dense.batches] == [4, 86]
    b_out, d_out = bm25.outputs[1], dense.outputs[1]
    shares = {q: timed.output.latency_ms[q] - b_out.latency_ms[q] - d_out.latency_ms[q]
              for q, _ in queries}
    first = next(iter(shares.values()))
    assert first >= 0 and all(v == pytest.approx(first, abs=1e-9) for v in shares.values())


def test_torch_threads_are_set_for_the_timed_pass_and_restored() -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    other = 2 if before == 1 else 1
    bm25 = Recording(BM25Retriever())
    bm25.index(_docs())
    timed = timed_search(bm25, list(_inputs().queries), 10, warmup=2, threads=other)
    assert bm25.threads == [other, other]
    assert timed.stamp.threads == other and timed.stamp.threads_set
    assert torch.get_num_threads() == before
    # None leaves torch's own setting, and records it.
    mine = Recording(bm25.stage)
    left = timed_search(mine, list(_inputs().queries), 10, warmup=0, threads=None)
    assert mine.threads == [before] and left.stamp.threads == before
    assert not left.stamp.threads_set
    summary = LatencySummary(n=1, p50=1, p95=1, p99=1, mean=1, max=1, warmup_queries=0,
                             warmup_ms=0.0, threads=before, threads_set=False)
    assert f"threads={before} (torch's own)" in summary.describe()
    with torch_threads(other):
        assert torch.get_num_threads() == other
    assert torch.get_num_threads() == before


def test_bad_warmup_and_threads_are_refused_before_anything_runs() -> None:
    bm25 = Recording(BM25Retriever())
    for kwargs, field in (({"warmup": -1}, "warmup"), ({"warmup": True}, "warmup"),
                          ({"threads": 0}, "threads"), ({"threads": 1.5}, "threads")):
        with pytest.raises(InputError, match=f"{field} must be") as exc:
            timed_search(bm25, [("q", "x")], 1, **kwargs)
        assert exc.value.field == field
        with pytest.raises(ConfigError, match=f"field '{field}'"):
            run_experiment(_inputs(), FAST, **kwargs)
    assert bm25.batches == []


def test_a_report_without_the_conditions_still_loads_and_renders_as_before() -> None:
    data = _report(DEFAULT_WARMUP).model_dump(mode="json")
    for stage in data["stages"]:
        stage["latency"] = {k: stage["latency"][k]
                            for k in ("n", "p50", "p95", "p99", "mean", "max")}
    old = EvalReport.model_validate(data)
    lat = old.stage("dense").latency
    assert lat.warmup_queries is None and lat.conditions() is None
    assert lat.describe() == f"p50 {lat.p50:.1f} ms, p95 {lat.p95:.1f} ms"


def test_markdown_and_terminal_state_the_conditions(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["eval", "--embedder", "hashing", "--resamples", "200",
                                 "--quiet", "--warmup", "3", "--threads", "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    stages = json.loads(out.read_text())["stages"]
    assert [s["latency"]["warmup_queries"] for s in stages] == [3, 3, 3]
    for name in ("bm25", "dense", "fusion"):
        assert f"latency {name}: p50 " in result.stdout
    assert "warm-up 3 queries" in result.stdout and "CPUs" in result.stdout
    from rankproof.report.document import read

    md = render_markdown(build(read(out)))
    assert "- latency dense: p50 " in md and "warm-up 3 queries" in md
    refused = runner.invoke(app, ["eval", "--embedder", "hashing", "--warmup", "-1"])
    assert refused.exit_code == 2 and "--warmup" in refused.stderr
