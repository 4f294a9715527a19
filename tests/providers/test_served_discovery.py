"""``discover --mode dense --embed-model openai:MODEL@BASE_URL``: discovery's dense mode
through a real server on 127.0.0.1 serving the bundled MiniLM gives the local MiniLM's
numbers, and the served model is what the report names (issue 24 item 2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.providers._servers import MINILM_NAME, Served, minilm_server
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.retrieval import SentenceTransformerEmbedder

runner = CliRunner()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with minilm_server(SentenceTransformerEmbedder()) as server:
        yield server


def _discover(root: Path, *extra: str) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.setenv("RANKPROOF_CACHE", str(root / "cache"))
        r = runner.invoke(app, ["discover", "--mode", "dense", "-f", "json", *extra])
    assert r.exit_code == 0, r.output
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def test_served_minilm_gives_discoverys_local_numbers(served: Served, tmp_path: Path) -> None:
    spec = f"openai:{MINILM_NAME}@{served.base_url}"
    local = _discover(tmp_path)
    before = len(served.requests)
    remote = _discover(tmp_path, "--embed-model", spec)
    assert any(p == "/v1/embeddings" for p, _ in served.requests[before:])
    assert remote["discovery"]["failure_classes"] == local["discovery"]["failure_classes"]
    metrics = local["discovery"]["retrieval"]["metrics"]
    assert "nDCG@10" in metrics and len(metrics) > 10
    for name, value in metrics.items():
        assert remote["discovery"]["retrieval"]["metrics"][name] == pytest.approx(
            value, abs=1e-6), name
    assert remote["discovery"]["primary"] == pytest.approx(local["discovery"]["primary"],
                                                           abs=1e-6)
    assert MINILM_NAME in str(remote["discovery"]["identity"]["embedder"])
    assert remote["discovery"]["identity"]["embedder"] != local["discovery"]["identity"][
        "embedder"]


def test_a_test_double_and_a_served_model_are_not_combined(served: Served) -> None:
    r = runner.invoke(app, ["discover", "--mode", "dense", "--embedder", "hashing",
                            "--embed-model", f"openai:{MINILM_NAME}@{served.base_url}"])
    assert r.exit_code == 2 and "--embedder hashing" in r.output
