"""Every command that takes ``--engine`` gives the local engine's output on a real local Ray
cluster (the session's ``ray_cluster``) and on a local pool (``--workers 2``).

Outputs are compared whole, after dropping what legitimately differs between two runs of
the same command: the provenance block (moment, command line, engine) and timings.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests._jsonserver import serve
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.harness import EvalReport

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
QRELS = DATA / "trec_dl" / "qrels.dl19-passage.txt"
RUNS = [DATA / "rankllm_runs" / d / "trec_results_dl19.txt"
        for d in ("BM25", "BM25_RM3", "SPLADE_P_P_ENSEMBLE_DISTIL")]
RAG = REPO / "src" / "rankproof" / "rag" / "example"
runner = CliRunner()


def _invoke(*args: str) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _json(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document without its provenance, and the provenance."""
    doc = json.loads(text)
    return doc, doc.pop("provenance")


def _subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run([sys.executable, "-m", "rankproof", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.xdist_group("ray")
def test_measure_over_three_runs(ray_cluster: Any) -> None:
    """Three real TREC DL 2019 runs: the JSON (minus provenance) and the per-query CSV are
    the same in this process, on a pool of two processes, and on Ray reached by --address
    from another process."""
    base = ["measure", QRELS, *RUNS, "-q", "-m", "official"]
    local_doc, local_prov = _json(_invoke(*base, "-f", "json"))
    local_csv = _invoke(*base, "-f", "csv")
    assert local_prov["engine"] == {"engine": "local", "workers": 1}
    assert [r["run"] for r in local_doc["runs"]] == [
        "BM25/trec_results_dl19", "BM25_RM3/trec_results_dl19",
        "SPLADE_P_P_ENSEMBLE_DISTIL/trec_results_dl19"]  # tags collide: named by path
    pooled_doc, pooled_prov = _json(_invoke(*base, "-f", "json", "--workers", "2"))
    assert pooled_doc == local_doc and pooled_prov["engine"]["workers"] == 2
    assert _invoke(*base, "-f", "csv", "--workers", "2") == local_csv

    address = ray_cluster.address_info["address"]
    ray_json = _subprocess(*base, "-f", "json", "--engine", "ray", "--address", address)
    ray_doc, ray_prov = _json(ray_json.stdout)
    assert ray_doc == local_doc
    assert ray_prov["engine"]["engine"] == "ray" and ray_prov["engine"]["address"] == address
    assert ray_json.stderr.startswith(f"rankproof: running on the Ray cluster at {address}")
    ray_csv = _subprocess(*base, "-f", "csv", "--engine", "ray", "--address", address)
    assert ray_csv.stdout == local_csv


@pytest.mark.xdist_group("ray")
def test_streamed_runs_on_ray_give_the_in_memory_output(ray_cluster: Any) -> None:
    """A run over --memory-cap is streamed by topic inside the Ray task that evaluates it:
    the per-query output equals the in-memory one in this process."""
    big = DATA / "rankllm_runs" / "REP_LLAMA" / "trec_results_dl19.txt"  # 1.4 MB, grouped
    base = ["measure", QRELS, big, RUNS[0], "-q", "-m", "official", "-f", "csv"]
    in_memory = _invoke(*base)
    address = ray_cluster.address_info["address"]
    # Two runs read at once share the cap: 2 MiB leaves each a partition above one topic.
    streamed = _subprocess(*base, "--memory-cap", "2MiB", "--engine", "ray",
                           "--address", address)
    assert streamed.stdout == in_memory
    assert "stream" in streamed.stderr  # it says it streamed, on standard error


@pytest.mark.xdist_group("ray")
def test_compare_on_ray(ray_cluster: Any) -> None:
    base = ["compare", QRELS, *RUNS, "-f", "json", "--resamples", "500", "--seed", "3"]
    local_doc, _ = _json(_invoke(*base))
    ray_doc, ray_prov = _json(_invoke(*base, "--engine", "ray"))
    assert ray_doc == local_doc
    assert ray_prov["engine"]["engine"] == "ray" and ray_prov["seed"] == 3
    assert len(local_doc["rows"]) == 2 * 5 and local_doc["evidence"]["top"]


def _eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
          *engine: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``rankproof eval`` on the golden corpus (hashing embedder) with a fresh embedding
    cache, so that each engine embeds the chunks itself."""
    folder = tmp_path / name
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("RANKPROOF_CACHE", str(folder / "cache"))
    text = _invoke("eval", "--embedder", "hashing", "--resamples", "200", "-f", "json",
                   "--quiet", *engine)
    report = EvalReport.model_validate_json(text)
    data = report.without_timings()
    return data, data.pop("provenance")


@pytest.mark.xdist_group("ray")
def test_eval_on_ray(ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray_report, ray_prov = _eval(tmp_path, monkeypatch, "ray", "--engine", "ray")
    local_report, local_prov = _eval(tmp_path, monkeypatch, "local")
    assert ray_report == local_report
    assert [s["name"] for s in local_report["stages"]] == ["bm25", "dense", "fusion"]
    assert ray_prov["engine"]["engine"] == "ray"
    assert local_prov["engine"] == {"engine": "local", "workers": 1}


def _discovery(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    doc, prov = _json(text)
    curve = doc["curve"]
    curve.pop("seconds")
    for point in curve["points"]:
        point.pop("seconds_per_trial")
    return doc, prov


@pytest.mark.xdist_group("ray")
def test_discover_sweep_and_curve(ray_cluster: Any) -> None:
    base = ["discover", "--embedder", "hashing", "--sweep", "--curve", "--trials", "3",
            "--seed", "5", "-f", "json"]
    local_doc, _ = _discovery(_invoke(*base))
    pooled_doc, pooled_prov = _discovery(_invoke(*base, "--workers", "2"))
    ray_doc, ray_prov = _discovery(_invoke(*base, "--engine", "ray"))
    assert pooled_doc == local_doc and ray_doc == local_doc
    assert len(local_doc["sweep"]["points"]) > 1 and len(local_doc["curve"]["points"]) > 1
    assert pooled_prov["engine"] == {"engine": "local", "workers": 2}
    assert ray_prov["engine"]["engine"] == "ray" and ray_prov["seed"] == 5


@pytest.fixture
def judge_url() -> Iterator[tuple[str, list[int]]]:
    """A real OpenAI-compatible judge on a local port: cited answers score 5, others 2."""
    calls: list[int] = []

    def reply(body: dict[str, list[dict[str, str]]]) -> dict[str, object]:
        answer = body["messages"][-1]["content"].split("Answer to grade:\n", 1)[1]
        calls.append(1)
        content = json.dumps({"score": 5 if re.search(r"\[\d\]", answer) else 2,
                              "reason": "checked"})
        return {"choices": [{"message": {"content": content}}]}

    with serve(reply, "/v1") as url:  # type: ignore[arg-type]
        yield url, calls


def _judged(tmp_path: Path, url: str, name: str, *engine: str) -> tuple[dict[str, Any],
                                                                         dict[str, Any]]:
    """``rag score --judge`` with its own (empty) judge cache."""
    folder = tmp_path / name
    folder.mkdir()
    config = folder / "judge.yaml"
    config.write_text(f"name: faithfulness\nmodel: tiny-judge\nrubric: Are the claims cited?\n"
                      f"scale: [1, 2, 3, 4, 5]\nendpoint: {{base_url: '{url}'}}\n"
                      f"cache_dir: cache\n")
    return _json(_invoke("rag", "score", RAG / "answers_faithful.jsonl", "--references",
                         RAG / "references.jsonl", "--judge", config, "--repeat", "2",
                         "-f", "json", *engine))


@pytest.mark.xdist_group("ray")
def test_rag_judging(ray_cluster: Any, tmp_path: Path,
                     judge_url: tuple[str, list[int]]) -> None:
    url, calls = judge_url
    local_doc, local_prov = _judged(tmp_path, url, "local")
    assert len(calls) == 88 and local_doc["judge"]["calls"] == 88  # 44 answers, twice
    threads_doc, threads_prov = _judged(tmp_path, url, "threads", "--workers", "4")
    ray_doc, ray_prov = _judged(tmp_path, url, "ray", "--engine", "ray")
    assert threads_doc == local_doc and ray_doc == local_doc
    assert len(calls) == 3 * 88  # each engine called the judge for every case itself
    assert local_prov["engine"] == {"engine": "local", "workers": 1}
    assert threads_prov["engine"] == {"engine": "local", "workers": 4}
    assert ray_prov["engine"]["engine"] == "ray"
