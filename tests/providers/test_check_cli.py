"""``rankproof providers check`` against the scripted chat server (a test double) and a
server that refuses connections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.providers._servers import Reply, chat_body, json_reply, refused_url, scripted_server
from typer.testing import CliRunner

from rankproof.cli import app

runner = CliRunner()


def _script(path: str, body: Any) -> Reply:
    if path == "/v1/models":
        return json_reply({"object": "list", "data": [{"id": "scripted-1"}, {"id": "other"}]})
    if path == "/v1/chat/completions":
        return json_reply(chat_body('{"answer": "pong"}'))
    if path == "/v1/embeddings":
        return json_reply({"data": [{"index": 0, "embedding": [0.6, 0.8, 0.0]}]})
    return json_reply({"error": "no route"}, 404)


def _file(tmp_path: Path, base_url: str, **extra: str) -> Path:
    path = tmp_path / "provider.yaml"
    lines = [f"base_url: {base_url}", "model: scripted-1", "kinds: [chat, embeddings]",
             "max_retries: 0", *(f"{k}: {v}" for k, v in extra.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_check_prints_models_structured_output_and_dimension(tmp_path: Path) -> None:
    with scripted_server(_script) as served:
        result = runner.invoke(app, ["providers", "check", str(_file(tmp_path, served.base_url)),
                                     "-o", str(tmp_path / "check.json")])
        paths = [p for p, _ in served.requests]
    assert result.exit_code == 0, result.output
    assert "2 model(s): scripted-1, other (the model is listed)" in result.output
    assert "structured output (json_schema) valid" in result.output
    assert "dimension 3" in result.output
    assert paths == ["/v1/models", "/v1/chat/completions", "/v1/embeddings"]
    doc = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    assert doc["kind"] == "rankproof.providers.check" and doc["ok"] is True
    assert [c["kind"] for c in doc["calls"]] == ["models", "chat", "embeddings"]
    assert doc["calls"][2]["detail"] == {"dimension": 3}
    assert "provenance" in doc  # the one manifest block every JSON output carries
    assert all(c["latency_ms"] >= 0 for c in doc["calls"])


def test_check_bypasses_the_cache(tmp_path: Path) -> None:
    with scripted_server(_script) as served:
        for _ in range(2):
            result = runner.invoke(app, ["providers", "check",
                                         str(_file(tmp_path, served.base_url)), "-f", "json"])
            assert result.exit_code == 0, result.output
        chats = [p for p, _ in served.requests if p == "/v1/chat/completions"]
    assert len(chats) == 2


def test_a_server_that_breaks_structured_output_fails_the_check(tmp_path: Path) -> None:
    def prose(path: str, body: Any) -> Reply:
        if path == "/v1/chat/completions":
            return json_reply(chat_body("pong!"))
        return _script(path, body)

    with scripted_server(prose) as served:
        result = runner.invoke(app, ["providers", "check", str(_file(tmp_path, served.base_url)),
                                     "-f", "json"])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    chat = doc["calls"][1]
    assert chat["ok"] is False and chat["reason"] == "invalid JSON"
    assert "chat: invalid JSON" in result.stderr


def test_an_unreachable_provider_exits_2_naming_the_endpoint_and_reason(tmp_path: Path) -> None:
    url = refused_url()
    result = runner.invoke(app, ["providers", "check", str(_file(tmp_path, url))])
    assert result.exit_code == 2
    assert f"the provider at {url} failed 2 check call(s)" in result.stderr
    assert "chat: connection refused; embeddings: connection refused" in result.stderr


def test_a_bad_provider_file_exits_2_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("base_url: http://127.0.0.1:9/v1\nmodel: m\nmax_concurrency: 0\n",
                    encoding="utf-8")
    result = runner.invoke(app, ["providers", "check", str(path)])
    assert result.exit_code == 2
    assert "max_concurrency" in result.output and "p.yaml" in result.output
