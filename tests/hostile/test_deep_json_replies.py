"""The last raw ``json.loads`` readers go through the bounded reader (issue 22, item 7).

A judge's verdict, a judge cache entry, a judge calibration file, an
OpenAI-compatible server's reply and a provider cache entry used to be parsed
with ``json.loads`` directly: a deeply nested one crashed with
``RecursionError`` (exit 3). Each now reads through
`rankproof.data.parse_document`: a refusal in rankproof's own terms, or, for a
cache, a miss that asks the server again.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from tests.providers._servers import Reply, chat_body, json_reply, scripted_server

from rankproof import InputError, TargetError
from rankproof.data import parse_document

DEEP = "[" * 200_000 + "]" * 200_000
SRC = Path(__file__).resolve().parents[2] / "src" / "rankproof"


def test_parse_document_refuses_nan_when_asked() -> None:
    with pytest.raises(InputError, match="NaN is not valid JSON"):
        parse_document('{"a": NaN}', "x", finite=True)
    assert parse_document('{"a": 1.5}', "x", finite=True) == {"a": 1.5}


def test_a_deep_verdict_is_a_refused_verdict() -> None:
    from rankproof.rag._judge import parse_verdict

    with pytest.raises(ValueError, match=r"not a JSON object: .*nested"):
        parse_verdict('{"score": ' + DEEP + ', "reason": "x"}', (1, 2, 3))


def _judge(tmp_path: Path) -> Any:
    from rankproof.rag import Judge

    calls: list[str] = []

    def call(prompt: str, *, model: str) -> str:
        calls.append(prompt)
        return '{"score": 2, "reason": "fine"}'

    judge = Judge("Is it right?", "m-1", (1, 2, 3), call, cache_dir=tmp_path / "cache")
    return judge, calls


def test_a_deep_judge_cache_entry_is_a_miss(tmp_path: Path) -> None:
    judge, calls = _judge(tmp_path)
    verdict, called = judge.judge_one("q1", "what?", "this")
    assert called and verdict.score == 2 and len(calls) == 1
    key = judge.cache_key("what?", "this", (), 0)
    entry = judge._cache_path(key)
    assert entry.is_file()
    entry.write_text(DEEP)
    verdict, called = judge.judge_one("q1", "what?", "this")
    assert called and verdict.score == 2 and len(calls) == 2


def test_a_deep_judge_calibration_is_refused_naming_it(tmp_path: Path) -> None:
    from rankproof.rag import JudgeCalibration

    path = tmp_path / "cal.json"
    path.write_text(DEEP)
    with pytest.raises(InputError, match=r"not a judge calibration file: .*nested") as got:
        JudgeCalibration.load(path)
    assert got.value.path == str(path)


def test_a_deep_reply_from_an_openai_compatible_server_is_a_target_error() -> None:
    from rankproof.rag import OpenAICompatible

    with scripted_server(lambda path, body: Reply(body=DEEP.encode())) as served, \
            OpenAICompatible(served.base_url, timeout=5) as client, \
            pytest.raises(TargetError, match="not an OpenAI chat completion"):
        client("hello", model="m")


def test_a_nan_reply_from_an_openai_compatible_server_is_a_target_error() -> None:
    from rankproof.rag import OpenAICompatible

    body = b'{"choices": [{"message": {"content": NaN}}]}'
    with scripted_server(lambda path, _: Reply(body=body)) as served, \
            OpenAICompatible(served.base_url, timeout=5) as client, \
            pytest.raises(TargetError, match="not an OpenAI chat completion"):
        client("hello", model="m")


def test_a_deep_provider_cache_entry_is_ignored_and_asked_again(tmp_path: Path) -> None:
    from rankproof.providers import Provider, ProviderConfig

    config = ProviderConfig.model_validate({"name": "test", "base_url": "http://x",
                                            "model": "scripted-1", "kinds": ["chat"]})
    with scripted_server(lambda path, body: json_reply(chat_body("pong"))) as served:
        config = config.model_copy(update={"base_url": served.base_url})
        with Provider(config, cache_dir=tmp_path / "cache") as provider:
            assert provider.chat("ping?").content == "pong"
            entries = list((tmp_path / "cache").rglob("*.json"))
            assert len(entries) == 1
            entries[0].write_text(DEEP)
            again = provider.chat("ping?")
            assert again.content == "pong" and not again.cached
        assert len(served.requests) == 2
    assert json.loads(entries[0].read_text())["body"]["choices"][0]["message"]["content"] == "pong"


def _raw_json_reads(tree: ast.AST) -> list[int]:
    """Lines calling ``json.load``/``json.loads`` on anything but a ``json.dumps`` round trip."""
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "json"
                and node.func.attr in ("load", "loads")):
            arg = node.args[0] if node.args else None
            round_trip = (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute)
                          and arg.func.attr == "dumps")
            if not round_trip:
                out.append(node.lineno)
    return out


def test_no_reader_outside_data_calls_json_loads_itself() -> None:
    # data/ holds the bounded reader itself; _manifest's scope probe reads a
    # rankproof JSON file and treats any failure (RecursionError included) as
    # "no scope recorded", and cannot import data/ (it sits below it).
    allowed = {SRC / "_manifest.py"}
    found = {}
    for path in SRC.rglob("*.py"):
        if path.is_relative_to(SRC / "data") or path in allowed:
            continue
        lines = _raw_json_reads(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[str(path.relative_to(SRC))] = lines
    assert found == {}
