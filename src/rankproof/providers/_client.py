"""`Provider`: every model call rankproof makes, over the OpenAI-compatible HTTP API.

One object holds a provider's configuration, its HTTP connection pool, its
rate limiter and concurrency bound, its on-disk cache and its usage counts.

**A call** (``chat``, ``embed``, ``models``) has one overall deadline,
retries and waits included. A 429 or a 5xx reply, a timeout or another
transport error is retried up to ``max_retries`` times with exponential
backoff (``backoff · 2^attempt`` seconds); a ``Retry-After`` header (seconds
or an HTTP date) replaces the backoff when longer, and a wait that would pass
the deadline is not started. Other 4xx replies and a refused connection
(nothing listens there) are never retried. A reply is
read in chunks: a declared or actual length over ``max_reply_bytes`` stops
the read, and so does the deadline. The body goes through the project's one
bounded JSON reader (`rankproof.data.read_document`: depth, integer and
duplicate-key bounds), then the OpenAI envelope and, for structured output,
the caller's pydantic model are validated before anything is used.

**Failures** are `ProviderError` (a `TargetError`) with ``reason`` one of
`REASONS` (an HTTP status reads ``HTTP 500``), counted per reason in
`Provider.stats`, so every command can say why calls failed.

**The cache** is content-addressed: the key is sha256 over the endpoint, the
model and the full request body (parameters included), so any change is a
miss. Only valid replies are stored (atomically); a failure is asked again
next time. ``cache=False`` (as ``providers check`` uses) always calls.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

import rankproof._limits as _limits
from rankproof._errors import InputError, TargetError
from rankproof._io import PathLike, atomic_write
from rankproof.data import Input, parse_document, read_document
from rankproof.providers._config import ProviderConfig

if TYPE_CHECKING:
    import httpx
    from pydantic import BaseModel

logger = logging.getLogger("rankproof.providers")

CACHE_VERSION = 1
CONNECTION_REFUSED, TIMEOUT, TRANSPORT = "connection refused", "timeout", "transport error"
INVALID_JSON, SCHEMA, TOO_LARGE = "invalid JSON", "schema violation", "reply too large"
REASONS = (CONNECTION_REFUSED, TIMEOUT, "HTTP <status>", INVALID_JSON, SCHEMA, TOO_LARGE,
           TRANSPORT)
"""Why a call failed; every failure is counted under exactly one of these."""


class ProviderError(TargetError):
    """A provider call failed after its retries; ``reason`` is one of `REASONS`."""

    def __init__(self, message: str, *, reason: str, endpoint: str,
                 status: int | None = None, attempts: int | None = None) -> None:
        super().__init__(message, target=endpoint, status=status, attempts=attempts)
        self.reason = reason
        self.endpoint = endpoint


@dataclass
class ProviderStats:
    """What a provider did: calls made (cache hits apart), failures by reason, tokens, cost."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "cache_hits": self.cache_hits, "retries": self.retries,
                "failed": sum(self.failures.values()),
                "failures": dict(sorted(self.failures.items())),
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cost": self.cost}


@dataclass(frozen=True)
class ChatReply:
    """One chat completion: the text, the validated object (structured output), usage."""

    content: str
    value: Any
    usage: Mapping[str, int]
    cached: bool


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


class Provider:
    """Calls one provider (rules: the module docstring). ``sleep`` is how waits happen
    (tests pass a recorder); close it, or use ``with``."""

    def __init__(self, config: ProviderConfig, *, cache: bool = True,
                 cache_dir: PathLike | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.cache = cache
        root = cache_dir if cache_dir is not None else config.cache_dir
        self.cache_dir = Path(root) if root is not None else _default_cache_dir()
        self.sleep = sleep
        self.stats = ProviderStats()
        self._key = config.api_key()
        self.__setstate__({})

    # -- lifecycle -------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_client", "_lock", "_slots", "stats")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        import httpx

        self.__dict__.update(state)
        self.stats = getattr(self, "stats", ProviderStats())
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        self._client = httpx.Client(headers=headers, timeout=self.config.timeout)
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self.config.max_concurrency)
        self._next_start = 0.0

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Provider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def endpoint(self) -> str:
        return self.config.base_url

    # -- the three kinds of call -----------------------------------------------------------

    def chat(self, messages: str | Sequence[Mapping[str, str]], *,
             schema: type[BaseModel] | None = None, max_tokens: int | None = None,
             validate: bool = True) -> ChatReply:
        """One chat completion; with ``schema``, structured output validated as that model
        (``validate=False``: asked for, but the caller validates the text itself, as the
        judge does, which keeps even an invalid verdict as an error row)."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        payload: dict[str, Any] = {"model": self.config.model, "messages": list(messages),
                                   "temperature": self.config.temperature}
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if schema is not None and self.config.structured_output == "json_schema":
            payload["response_format"] = {"type": "json_schema", "json_schema": {
                "name": schema.__name__, "schema": schema.model_json_schema(), "strict": True}}
        elif schema is not None and self.config.structured_output == "json_object":
            payload["response_format"] = {"type": "json_object"}
        url = self.endpoint + "/chat/completions"

        def parse(body: Any) -> tuple[str, Any]:
            try:
                content = body["choices"][0]["message"]["content"]
            except (KeyError, IndexError, TypeError):
                raise self._fail(url, SCHEMA, "the reply is not a chat completion (expected "
                                 "choices[0].message.content)") from None
            if not isinstance(content, str):
                raise self._fail(url, SCHEMA, "choices[0].message.content is not a string")
            if schema is None or not validate:
                return content, None
            return content, self._structured(url, content, schema)

        body, cached = self._cached_post(url, payload, parse)
        content, value = parse(body)
        return ChatReply(content, value, _usage(body), cached)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """``(len(texts), dim)`` float32 vectors, in batches of ``embedding_batch_size``."""
        url = self.endpoint + "/embeddings"
        rows: list[npt.NDArray[np.float32]] = []
        size = self.config.embedding_batch_size
        for start in range(0, len(texts), size):
            batch = list(texts[start:start + size])
            payload = {"model": self.config.model, "input": batch}

            def parse(body: Any, n: int = len(batch)) -> npt.NDArray[np.float32]:
                return self._vectors(url, body, n)

            body, _ = self._cached_post(url, payload, parse)
            rows.append(parse(body))
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        dims = {r.shape[1] for r in rows}
        if len(dims) != 1:
            raise self._fail(url, SCHEMA, f"embedding dimensions differ between batches: "
                             f"{sorted(dims)}")
        return np.concatenate(rows)

    def models(self) -> list[dict[str, Any]]:
        """The entries ``GET /models`` lists (never cached: it is what the server says now)."""
        url = self.endpoint + "/models"
        body = self._request("GET", url, None)
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or not all(isinstance(m, dict) and isinstance(
                m.get("id"), str) for m in data):
            raise self._fail(url, SCHEMA, "the reply is not a model list (expected data: "
                             "[{id: ...}])")
        return data

    # -- validation ------------------------------------------------------------------------

    def _structured(self, url: str, content: str, schema: type[BaseModel]) -> Any:
        from pydantic import ValidationError

        try:
            obj = read_document(Input.from_bytes(content.encode(), url), what="structured reply")
        except InputError as exc:
            raise self._fail(url, INVALID_JSON, str(exc)) from None
        try:
            return schema.model_validate(obj)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(map(str, first["loc"])) or "(top level)"
            raise self._fail(url, SCHEMA, f"the structured reply does not match "
                             f"{schema.__name__} ({exc.error_count()} problem(s); first: "
                             f"{loc}: {first['msg']})") from None

    def _vectors(self, url: str, body: Any, n: int) -> npt.NDArray[np.float32]:
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or len(data) != n:
            raise self._fail(url, SCHEMA, f"expected data with {n} embedding(s), got "
                             f"{len(data) if isinstance(data, list) else type(data).__name__}")
        ordered: list[Any] = [None] * n
        for pos, item in enumerate(data):
            index = item.get("index", pos) if isinstance(item, dict) else None
            vec = item.get("embedding") if isinstance(item, dict) else None
            if (not isinstance(index, int) or not 0 <= index < n or ordered[index] is not None
                    or not isinstance(vec, list) or not vec
                    or not all(isinstance(x, int | float) and not isinstance(x, bool)
                               for x in vec)):
                raise self._fail(url, SCHEMA, f"data[{pos}] is not {{index, embedding: "
                                 "[numbers]}} (or repeats an index)")
            ordered[index] = vec
        if len({len(v) for v in ordered}) != 1:
            raise self._fail(url, SCHEMA, "the embeddings have different lengths")
        out = np.asarray(ordered, dtype=np.float32)
        if not np.isfinite(out).all():
            raise self._fail(url, SCHEMA, "an embedding holds a non-finite value")
        return out

    # -- cache -----------------------------------------------------------------------------

    def cache_key(self, url: str, payload: Mapping[str, Any]) -> str:
        """sha256 over the endpoint's path, the model and the full request body."""
        path = url.removeprefix(self.endpoint)
        text = json.dumps({"v": CACHE_VERSION, "path": path, "model": self.config.model,
                           "request": payload}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def _cached_post(self, url: str, payload: Mapping[str, Any],
                     parse: Callable[[Any], Any]) -> tuple[Any, bool]:
        key = self.cache_key(url, payload)
        path = self.cache_dir / key[:2] / f"{key}.json"
        if self.cache:
            try:
                entry = parse_document(path.read_bytes(), str(path), what="provider cache entry")
                if entry.get("key") == key:
                    parse(entry["body"])
                    with self._lock:
                        self.stats.cache_hits += 1
                    return entry["body"], True
            except FileNotFoundError:
                pass
            except (OSError, ValueError, KeyError, TypeError, AttributeError, TargetError):
                logger.warning("ignoring provider cache entry %s: unreadable or invalid", path)
        body = self._request("POST", url, payload)
        try:
            parse(body)
        except ProviderError as exc:
            self._count(exc.reason)
            raise
        self._record_usage(body)
        if self.cache:
            with atomic_write(path) as fh:
                json.dump({"key": key, "model": self.config.model, "body": body}, fh,
                          ensure_ascii=False)
        return body, False

    # -- HTTP ------------------------------------------------------------------------------

    def _fail(self, url: str, reason: str, detail: str, status: int | None = None,
              attempts: int | None = None) -> ProviderError:
        return ProviderError(f"{self.config.name} at {url}: {reason}: {detail}",
                             reason=reason, endpoint=url, status=status, attempts=attempts)

    def _count(self, reason: str) -> None:
        with self._lock:
            self.stats.failures[reason] += 1

    def _request(self, method: str, url: str, payload: Any) -> Any:
        """The parsed JSON body of one call, after retries; failures counted and raised."""
        try:
            return self._attempts(method, url, payload)
        except ProviderError as exc:
            self._count(exc.reason)
            raise

    def _attempts(self, method: str, url: str, payload: Any) -> Any:
        import httpx

        cfg = self.config
        end = time.monotonic() + cfg.call_deadline
        attempt = 0
        while True:
            attempt += 1
            self._wait_for_slot(url, end, attempt)
            retry_after: float | None = None
            try:
                with self._slots:
                    with self._lock:
                        self.stats.calls += 1
                    status, headers, body = self._once(method, url, payload, end, attempt)
            except httpx.ConnectError as exc:
                error = self._fail(url, CONNECTION_REFUSED if "refused" in str(exc).lower()
                                   or isinstance(exc.__cause__, ConnectionRefusedError)
                                   else TRANSPORT, f"{type(exc).__name__}: {exc}",
                                   attempts=attempt)
            except httpx.TimeoutException as exc:
                error = self._fail(url, TIMEOUT, f"no reply within {cfg.timeout:g} s "
                                   f"({type(exc).__name__})", attempts=attempt)
            except httpx.TransportError as exc:
                error = self._fail(url, TRANSPORT, f"{type(exc).__name__}: {exc}",
                                   attempts=attempt)
            else:
                if status < 400:
                    return self._parse(url, body, status)
                text = _limits.shown(body[:300].decode("utf-8", "replace"))
                error = self._fail(url, f"HTTP {status}", text, status, attempt)
                if status != 429 and status < 500:
                    raise error
                retry_after = _retry_after(headers.get("retry-after"))
            if attempt > cfg.max_retries or error.reason == CONNECTION_REFUSED:
                raise error  # nothing listens: a retry would only add the waits
            wait = max(cfg.backoff * 2 ** (attempt - 1), retry_after or 0.0)
            if time.monotonic() + wait > end:
                raise self._fail(url, error.reason, f"{error} (the next try, in {wait:g} s, "
                                 f"would pass the {cfg.call_deadline:g} s deadline)",
                                 error.status, attempt)
            with self._lock:
                self.stats.retries += 1
            if wait > 0:
                self.sleep(wait)

    def _wait_for_slot(self, url: str, end: float, attempt: int) -> None:
        rpm = self.config.requests_per_minute
        if rpm is None:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next_start)
            self._next_start = start + 60.0 / rpm
        if start > end:
            raise self._fail(url, TIMEOUT, f"requests_per_minute={rpm:g} leaves no slot "
                             f"before the {self.config.call_deadline:g} s deadline",
                             attempts=attempt)
        if start > now:
            self.sleep(start - now)

    def _once(self, method: str, url: str, payload: Any, end: float, attempt: int
              ) -> tuple[int, httpx.Headers, bytes]:
        import httpx

        cap = self.config.max_reply_bytes
        left = end - time.monotonic()
        if left <= 0:
            raise self._fail(url, TIMEOUT, f"deadline of {self.config.call_deadline:g} s "
                             "passed", attempts=attempt)
        timeout = httpx.Timeout(min(self.config.timeout, left))
        with self._client.stream(method, url, json=payload, timeout=timeout) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > cap:
                raise self._fail(url, TOO_LARGE, f"the reply declares {int(declared):,} bytes;"
                                 f" max_reply_bytes is {cap:,}", response.status_code, attempt)
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > cap:
                    raise self._fail(url, TOO_LARGE, f"the reply passed max_reply_bytes="
                                     f"{cap:,}", response.status_code, attempt)
                if time.monotonic() > end:
                    raise self._fail(url, TIMEOUT, f"the reply was still arriving at the "
                                     f"{self.config.call_deadline:g} s deadline",
                                     response.status_code, attempt)
                chunks.append(chunk)
            return response.status_code, response.headers, b"".join(chunks)

    def _parse(self, url: str, body: bytes, status: int) -> Any:
        try:
            value = read_document(Input.from_bytes(body, url), what="reply")
        except InputError as exc:
            raise self._fail(url, INVALID_JSON, str(exc), status) from None
        if not isinstance(value, dict):
            raise self._fail(url, SCHEMA, f"the reply is {type(value).__name__}, expected a "
                             "JSON object", status)
        return value

    def _record_usage(self, body: Any) -> None:
        usage = _usage(body)
        prices = self.config.prices
        with self._lock:
            self.stats.prompt_tokens += usage.get("prompt_tokens", 0)
            self.stats.completion_tokens += usage.get("completion_tokens", 0)
            if prices is not None:
                self.stats.cost = (self.stats.prompt_tokens * prices.input_per_1k_tokens
                                   + self.stats.completion_tokens
                                   * prices.output_per_1k_tokens) / 1000


def _usage(body: Any) -> dict[str, int]:
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return {}
    return {k: v for k in ("prompt_tokens", "completion_tokens", "total_tokens")
            if isinstance(v := usage.get(k), int) and not isinstance(v, bool) and v >= 0}


def _default_cache_dir() -> Path:
    import os

    root = os.environ.get("RANKPROOF_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "rankproof") / "providers"
