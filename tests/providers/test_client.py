"""The provider layer against real HTTP servers on 127.0.0.1: calls, cache, usage, and every
failure reason injected on its own (the chat server is the scripted test double)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict
from tests.providers._servers import Reply, chat_body, json_reply, refused_url, scripted_server

from rankproof import ConfigError, TargetError
from rankproof.providers import (
    Provider,
    ProviderConfig,
    ProviderError,
    load_provider_config,
    provider_from_spec,
)


class Pong(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    answer: str


def _config(base_url: str, **extra: Any) -> ProviderConfig:
    return ProviderConfig.model_validate({"name": "test", "base_url": base_url,
                                          "model": "scripted-1", "backoff": 0.25,
                                          "kinds": ["chat", "embeddings"], **extra})


class Sleeps(list[float]):
    """Records the waits a provider asks for instead of sleeping (no timed assertions)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _provider(base_url: str, tmp_path: Path, **extra: Any) -> tuple[Provider, Sleeps]:
    sleeps = Sleeps()
    return Provider(_config(base_url, **extra), cache_dir=tmp_path / "cache",
                    sleep=sleeps), sleeps


def _pong(path: str, body: Any) -> Reply:
    return json_reply(chat_body('{"answer": "pong"}'))


def test_a_structured_chat_call_is_validated_counted_and_cached(tmp_path: Path) -> None:
    with scripted_server(_pong) as served:
        provider, _ = _provider(served.base_url, tmp_path, prices={
            "input_per_1k_tokens": 1.0, "output_per_1k_tokens": 2.0})
        with provider:
            reply = provider.chat("ping?", schema=Pong)
            assert reply.value == Pong(answer="pong") and not reply.cached
            assert reply.usage == {"prompt_tokens": 11, "completion_tokens": 5,
                                   "total_tokens": 16}
            again = provider.chat("ping?", schema=Pong)
            assert again.cached and again.value == reply.value
            other = provider.chat("ping, again?", schema=Pong)  # another request: a miss
            assert not other.cached
        path, body = served.requests[0]
        assert path == "/v1/chat/completions"
        assert body["model"] == "scripted-1" and body["temperature"] == 0
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"]["required"] == ["answer"]
        assert len(served.requests) == 2  # the cached call made none
    stats = provider.stats.to_dict()
    assert stats["calls"] == 2 and stats["cache_hits"] == 1 and stats["failed"] == 0
    assert stats["prompt_tokens"] == 22 and stats["completion_tokens"] == 10
    assert stats["cost"] == pytest.approx((22 * 1.0 + 10 * 2.0) / 1000)


def test_429_with_retry_after_waits_as_told_then_succeeds(tmp_path: Path) -> None:
    replies = [json_reply({"error": "slow down"}, 429, **{"Retry-After": "3"}),
               json_reply(chat_body('{"answer": "pong"}'))]
    with scripted_server(lambda p, b: replies.pop(0)) as served:
        provider, sleeps = _provider(served.base_url, tmp_path, deadline=30)
        assert provider.chat("x", schema=Pong).value == Pong(answer="pong")
    assert sleeps == [3.0]  # Retry-After (3 s) beats the backoff (0.25 s)
    assert provider.stats.retries == 1 and provider.stats.calls == 2
    assert not provider.stats.failures


def test_a_retry_after_past_the_deadline_is_not_waited_for(tmp_path: Path) -> None:
    reply = json_reply({"error": "slow down"}, 429, **{"Retry-After": "120"})
    with scripted_server(lambda p, b: reply) as served:
        provider, sleeps = _provider(served.base_url, tmp_path, deadline=10)
        with pytest.raises(ProviderError, match="would pass the 10 s deadline") as info:
            provider.chat("x")
    assert info.value.reason == "HTTP 429" and info.value.status == 429 and sleeps == []


def test_500_then_200_is_retried_with_backoff(tmp_path: Path) -> None:
    replies = [json_reply({"error": "boom"}, 500), json_reply({"error": "boom"}, 503),
               json_reply(chat_body("fine"))]
    with scripted_server(lambda p, b: replies.pop(0)) as served:
        provider, sleeps = _provider(served.base_url, tmp_path)
        assert provider.chat("x").content == "fine"
    assert sleeps == [0.25, 0.5]  # backoff doubles
    assert provider.stats.retries == 2


def test_a_server_that_always_fails_is_counted_by_status(tmp_path: Path) -> None:
    with scripted_server(lambda p, b: json_reply({"error": "boom"}, 500)) as served:
        provider, _ = _provider(served.base_url, tmp_path, max_retries=2)
        with pytest.raises(ProviderError, match=r"HTTP 500: .*boom") as info:
            provider.chat("x")
        assert len(served.requests) == 3
    assert info.value.attempts == 3 and isinstance(info.value, TargetError)
    assert provider.stats.failures == {"HTTP 500": 1}


def test_other_4xx_are_never_retried(tmp_path: Path) -> None:
    with scripted_server(lambda p, b: json_reply({"error": "bad key"}, 401)) as served:
        provider, sleeps = _provider(served.base_url, tmp_path)
        with pytest.raises(ProviderError) as info:
            provider.chat("x")
        assert len(served.requests) == 1 and sleeps == []
    assert info.value.reason == "HTTP 401"


def test_connection_refused_is_named(tmp_path: Path) -> None:
    url = refused_url()
    provider, sleeps = _provider(url, tmp_path, max_retries=1)
    with pytest.raises(ProviderError, match="connection refused") as info:
        provider.chat("x")
    assert info.value.reason == "connection refused" and info.value.endpoint.startswith(url)
    assert sleeps == []  # nothing listens: not retried
    assert provider.stats.failures == {"connection refused": 1}


def test_a_slow_drip_past_the_deadline_is_a_timeout(tmp_path: Path) -> None:
    body = json.dumps(chat_body("x" * 400)).encode()
    with scripted_server(lambda p, b: Reply(body=body, drip_seconds=0.02)) as served:
        provider, _ = _provider(served.base_url, tmp_path, timeout=5, deadline=0.5,
                                max_retries=0)
        with pytest.raises(ProviderError, match=r"still arriving at the 0.5 s deadline") as info:
            provider.chat("x")
    assert info.value.reason == "timeout"


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "streamed"])
def test_a_20_mb_reply_is_refused_unread(tmp_path: Path, declared: bool) -> None:
    big = json.dumps(chat_body("x" * (20 << 20))).encode()
    with scripted_server(lambda p, b: Reply(body=big, declare_length=declared)) as served:
        provider, _ = _provider(served.base_url, tmp_path, max_retries=0)
        with pytest.raises(ProviderError, match="max_reply_bytes") as info:
            provider.chat("x")
    assert info.value.reason == "reply too large"
    assert provider.stats.failures == {"reply too large": 1}


def test_invalid_json_is_named(tmp_path: Path) -> None:
    with scripted_server(lambda p, b: Reply(body=b'{"choices": [')) as served:
        provider, _ = _provider(served.base_url, tmp_path)
        with pytest.raises(ProviderError, match="invalid JSON") as info:
            provider.chat("x")
    assert info.value.reason == "invalid JSON"


def test_deep_nesting_is_refused_by_the_bounded_reader(tmp_path: Path) -> None:
    deep = b'{"choices": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    with scripted_server(lambda p, b: Reply(body=deep)) as served:
        provider, _ = _provider(served.base_url, tmp_path)
        with pytest.raises(ProviderError, match="nested") as info:
            provider.chat("x")
    assert info.value.reason == "invalid JSON"


def test_a_reply_that_is_not_a_chat_completion_violates_the_schema(tmp_path: Path) -> None:
    with scripted_server(lambda p, b: json_reply({"choices": []})) as served:
        provider, _ = _provider(served.base_url, tmp_path)
        with pytest.raises(ProviderError, match=r"choices\[0\].message.content") as info:
            provider.chat("x")
    assert info.value.reason == "schema violation"


def test_structured_output_off_the_schema_is_refused_and_not_cached(tmp_path: Path) -> None:
    with scripted_server(lambda p, b: json_reply(chat_body('{"answer": 5}'))) as served:
        provider, _ = _provider(served.base_url, tmp_path)
        for _ in range(2):
            with pytest.raises(ProviderError, match=r"does not match Pong.*answer") as info:
                provider.chat("x", schema=Pong)
            assert info.value.reason == "schema violation"
        assert len(served.requests) == 2  # not cached: asked again
    assert provider.stats.failures == {"schema violation": 2}


def test_prose_where_structured_output_was_asked_is_invalid_json(tmp_path: Path) -> None:
    with scripted_server(lambda p, b: json_reply(chat_body("Sure! pong"))) as served:
        provider, _ = _provider(served.base_url, tmp_path)
        with pytest.raises(ProviderError) as info:
            provider.chat("x", schema=Pong)
    assert info.value.reason == "invalid JSON"


def test_requests_per_minute_spaces_the_starts(tmp_path: Path) -> None:
    with scripted_server(_pong) as served:
        provider, sleeps = _provider(served.base_url, tmp_path, requests_per_minute=6)
        provider.chat("a")
        provider.chat("b")
    assert len(sleeps) == 1 and 5.0 < sleeps[0] <= 10.0  # a 10 s slot, less the time spent


def test_max_concurrency_bounds_the_calls_in_flight(tmp_path: Path) -> None:
    state = {"now": 0, "max": 0}
    lock = threading.Lock()

    def slow(path: str, body: Any) -> Reply:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.1)
        with lock:
            state["now"] -= 1
        return json_reply(chat_body("ok"))

    with scripted_server(slow) as served:
        provider, _ = _provider(served.base_url, tmp_path, max_concurrency=2)
        threads = [threading.Thread(target=provider.chat, args=(f"q{i}",)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(served.requests) == 6
    assert 1 <= state["max"] <= 2


def test_embeddings_are_ordered_by_index_and_batched(tmp_path: Path) -> None:
    def embed(path: str, body: Any) -> Reply:
        data = [{"index": i, "embedding": [float(len(t)), 1.0]}
                for i, t in enumerate(body["input"])]
        return json_reply({"data": list(reversed(data))})

    with scripted_server(embed) as served:
        provider, _ = _provider(served.base_url, tmp_path, embedding_batch_size=2)
        out = provider.embed(["a", "bb", "ccc"])
        assert [b["input"] for _, b in served.requests] == [["a", "bb"], ["ccc"]]
    assert out.tolist() == [[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]]


def test_models_lists_the_server(tmp_path: Path) -> None:
    models = {"object": "list", "data": [{"id": "scripted-1", "object": "model"}]}
    with scripted_server(lambda p, b: json_reply(models)) as served:
        provider, _ = _provider(served.base_url, tmp_path)
        assert [m["id"] for m in provider.models()] == ["scripted-1"]
        assert served.requests == [("/v1/models", None)]


def test_a_provider_file_is_validated_and_its_cache_dir_is_relative_to_it(
        tmp_path: Path) -> None:
    good = tmp_path / "p.yaml"
    good.write_text("base_url: http://127.0.0.1:9/v1\nmodel: m\ntimeout: 5\n"
                    "kinds: [chat, embeddings]\ncache_dir: c\n", encoding="utf-8")
    config = load_provider_config(good)
    assert config.kinds == ("chat", "embeddings") and config.call_deadline == 10
    assert config.cache_dir == str(tmp_path / "c")
    bad = tmp_path / "bad.yaml"
    bad.write_text("base_url: http://x/v1\nmodel: m\nretries: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.yaml.*retries"):
        load_provider_config(bad)
    ftp = tmp_path / "ftp.yaml"
    ftp.write_text("base_url: ftp://x\nmodel: m\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"base_url.*http"):
        load_provider_config(ftp)


def test_a_missing_api_key_variable_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANKPROOF_TEST_KEY", raising=False)
    config = ProviderConfig(base_url="http://127.0.0.1:9/v1", model="m",
                            api_key_env="RANKPROOF_TEST_KEY")
    with pytest.raises(ConfigError, match=r"RANKPROOF_TEST_KEY.*not set"):
        Provider(config)


def test_specs_name_a_served_model(tmp_path: Path) -> None:
    config = provider_from_spec("openai:nomic-embed-text@http://127.0.0.1:11434/v1")
    assert (config.model, config.base_url, config.kinds) == (
        "nomic-embed-text", "http://127.0.0.1:11434/v1", ("embeddings",))
    with pytest.raises(ConfigError, match="openai:MODEL@BASE_URL"):
        provider_from_spec("openai:no-url")
    chat_only = tmp_path / "chat.yaml"
    chat_only.write_text("base_url: http://127.0.0.1:9/v1\nmodel: m\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="does not allow embeddings"):
        provider_from_spec(f"provider:{chat_only}")
    assert provider_from_spec(f"provider:{chat_only}", kind="chat").model == "m"
