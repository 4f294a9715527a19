"""``eval --embed-model openai:MODEL@BASE_URL``: the dense stage through a real server on
127.0.0.1 that serves the bundled MiniLM gives the local MiniLM's numbers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.providers._servers import MINILM_NAME, Served, minilm_server, refused_url
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.retrieval import SentenceTransformerEmbedder, ServedEmbedder

runner = CliRunner()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with minilm_server(SentenceTransformerEmbedder()) as server:
        yield server


def _eval(out: Path, *extra: str) -> tuple[int, str, dict[str, Any] | None]:
    result = runner.invoke(app, ["eval", "--stages", "bm25,dense", "--resamples", "200",
                                 "--chunk-size", "4000", "--overlap", "0",
                                 "--evidence-depth", "0", "--quiet", "-o", str(out), *extra])
    report = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
    return result.exit_code, result.output, report


def _dense(report: dict[str, Any]) -> dict[str, Any]:
    return dict(next(s for s in report["stages"] if s["name"] == "dense"))


@pytest.fixture(scope="module")
def reports(served: Served, tmp_path_factory: pytest.TempPathFactory
            ) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("served-eval")
    spec = f"openai:{MINILM_NAME}@{served.base_url}"
    out: dict[str, dict[str, Any]] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        for key, extra in (("local", ()), ("served", ("--embed-model", spec))):
            code, output, report = _eval(root / f"{key}.json", *extra)
            assert code == 0 and report is not None, output
            out[key] = report
        before = len(served.requests)
        code, output, report = _eval(root / "again.json", "--embed-model", spec)
        assert code == 0 and report is not None, output
        out["again"] = report
        out["again_requests"] = {"paths": [p for p, _ in served.requests[before:]]}
    return out


def test_served_minilm_gives_the_local_numbers(reports: dict[str, dict[str, Any]]) -> None:
    local, served = _dense(reports["local"]), _dense(reports["served"])
    assert served["means"]["nDCG@10"] == pytest.approx(local["means"]["nDCG@10"], abs=1e-6)
    for measure, value in local["means"].items():
        assert served["means"][measure] == pytest.approx(value, abs=1e-6), measure


def test_the_served_model_is_recorded_like_a_local_one(
        served: Served, reports: dict[str, dict[str, Any]]) -> None:
    report = reports["served"]
    identity = _dense(report)["config"]["model_identity"]
    assert identity["name"] == f"openai:{MINILM_NAME}"
    assert identity["digest"].startswith("sha256:")
    assert report["provenance"]["embed_model"]["path"] == served.base_url
    assert report["config"]["embed_model"] == f"openai:{MINILM_NAME}@{served.base_url}"
    assert (report["provenance"]["config_digest"]
            != reports["local"]["provenance"]["config_digest"])


def test_a_rerun_reads_the_embedding_cache(reports: dict[str, dict[str, Any]]) -> None:
    # The rerun asks the server what it serves (part of the cache key), and embeds nothing.
    assert reports["again_requests"]["paths"] == ["/v1/models"]
    assert _dense(reports["again"])["means"] == _dense(reports["served"])["means"]


def test_a_served_embedder_encodes_like_the_local_model(served: Served) -> None:
    from rankproof.providers import ProviderConfig

    texts = ["a cat sat on the mat", "retrieval evaluation with paired tests"]
    embedder = ServedEmbedder(ProviderConfig(base_url=served.base_url, model=MINILM_NAME,
                                             kinds=("embeddings",)))
    assert embedder.dim == 384 and embedder.notes == ()
    local = SentenceTransformerEmbedder().encode(texts)
    assert abs(embedder.encode(texts) - local).max() < 1e-6


def test_an_unreachable_embedding_server_exits_2_naming_it(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.chdir(tmp_path)
    url = refused_url()
    code, output, report = _eval(tmp_path / "x.json", "--embed-model", f"openai:m@{url}")
    assert code == 2 and report is None
    assert "connection refused" in output and url in output


def test_a_malformed_spec_is_refused_before_anything_runs(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.chdir(tmp_path)
    code, output, report = _eval(tmp_path / "x.json", "--embed-model", "openai:no-url")
    assert code == 2 and report is None
    assert "openai:MODEL@BASE_URL" in output


def test_an_experiment_files_dense_stage_takes_a_provider_file(
        served: Served, tmp_path: Path) -> None:
    from tests.pipeline._helpers import invoke, stage_json, write

    write(tmp_path / "models" / "served.yaml",
          f"base_url: {served.base_url}\nmodel: {MINILM_NAME}\nkinds: [embeddings]\n")
    exp = write(tmp_path / "exp.yaml", """\
output: out
inputs: {chunk_size: 4000, overlap: 0}
stages:
  - {id: local, kind: retrieve, method: dense}
  - {id: served, kind: retrieve, method: dense, embed_model: "provider:models/served.yaml"}
  - {id: scores, kind: measure, runs: [local, served], measures: [nDCG@10, AP]}
""")
    result = invoke("run", exp)
    assert result.exit_code == 0, result.output
    measured = json.loads((tmp_path / "out" / "scores" / "measure.json").read_text())
    got = {run["run"]: run["means"] for run in measured["runs"]}
    for m in ("nDCG@10", "AP"):
        assert got["served"][m] == pytest.approx(got["local"][m], abs=1e-6), m
    assert stage_json(tmp_path / "out", "served")["key"] != stage_json(
        tmp_path / "out", "local")["key"]
