"""`check_provider`: one call of each kind a provider file allows, and what the server said.

``rankproof providers check`` prints it: the models the server lists, whether
structured output came back valid, the embedding dimension, and each call's
latency. Calls bypass the cache (the point is to ask the server now).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from rankproof.providers._client import Provider, ProviderError
from rankproof.providers._config import ProviderConfig

CHECK_SCHEMA_VERSION = 1
CHECK_PROMPT = ('Reply with exactly this JSON object and nothing else: {"answer": "pong"}')


class _Pong(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    answer: str


@dataclass(frozen=True)
class CallCheck:
    """One call of a check: ``ok``, latency in ms, what it found, and why it failed."""

    kind: str
    ok: bool
    latency_ms: float
    detail: dict[str, Any]
    reason: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "ok": self.ok, "latency_ms": round(self.latency_ms, 3),
                "detail": self.detail, "reason": self.reason, "error": self.error}


@dataclass(frozen=True)
class ProviderCheck:
    """Every call `check_provider` made; ``ok`` when each call of an allowed kind worked
    (a server without ``/models`` is reported, not failed)."""

    name: str
    base_url: str
    model: str
    calls: tuple[CallCheck, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.calls if c.kind != "models")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "rankproof.providers.check", "schema_version": CHECK_SCHEMA_VERSION,
                "name": self.name, "base_url": self.base_url, "model": self.model,
                "ok": self.ok, "calls": [c.to_dict() for c in self.calls]}


def _timed(kind: str, fn: Any) -> CallCheck:
    start = time.perf_counter()
    try:
        detail = fn()
    except ProviderError as exc:
        return CallCheck(kind, False, (time.perf_counter() - start) * 1000, {}, exc.reason,
                         str(exc))
    return CallCheck(kind, True, (time.perf_counter() - start) * 1000, detail)


def check_provider(config: ProviderConfig) -> ProviderCheck:
    """List the models, then one chat (structured) and one embeddings call, as allowed."""
    with Provider(config, cache=False) as provider:
        def models() -> dict[str, Any]:
            ids = [m["id"] for m in provider.models()]
            return {"models": ids, "listed": config.model in ids}

        calls = [_timed("models", models)]
        if "chat" in config.kinds:
            def chat() -> dict[str, Any]:
                reply = provider.chat(CHECK_PROMPT, schema=_Pong, max_tokens=32)
                return {"structured_output": config.structured_output,
                        "valid": True, "usage": dict(reply.usage)}
            calls.append(_timed("chat", chat))
        if "embeddings" in config.kinds:
            calls.append(_timed("embeddings", lambda: {
                "dimension": int(provider.embed(["rankproof providers check"]).shape[1])}))
    return ProviderCheck(config.name, config.base_url, config.model, tuple(calls))
