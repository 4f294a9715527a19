"""`OpenAICompatible`: a judge ``call`` for any OpenAI-compatible server, with no retry.

Kept for code that builds a `Judge` by hand; a judge config (`load_judge`) goes
through `rankproof.providers.Provider` instead (retries, rate limit, cache,
failure reasons).
"""

from __future__ import annotations

import math
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

import rankproof._limits as _limits
from rankproof._errors import InputError, TargetError
from rankproof.data import parse_document

if TYPE_CHECKING:
    import httpx


class OpenAICompatible:
    """A judge ``call`` for any OpenAI-compatible server: POST ``{base_url}/chat/completions``.

    Sends one user message at ``temperature`` 0 and returns
    ``choices[0].message.content``. There is no retry: a failed call is an
    error row that is not cached, so the next run asks again. ``timeout``
    bounds each connect, read and write; ``deadline`` (default twice
    ``timeout``) the whole call, checked between body chunks; a body over
    ``max_body_bytes`` (default `rankproof._limits.MAX_HTTP_BODY_BYTES`) is
    refused, a declared ``Content-Length`` before a byte is read. Every
    failure is a `TargetError` (``status`` set when the server answered);
    bad arguments are an `InputError`. Close it (or use ``with``).
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = 60.0,
                 deadline: float | None = None, max_body_bytes: int | None = None) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InputError(f"base_url must be an http(s) URL, got {base_url!r}",
                             field="base_url")
        for name, value in (("timeout", timeout), ("deadline", deadline),
                            ("max_body_bytes", max_body_bytes)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                      or not 0 < value < math.inf):
                raise InputError(f"{name} must be a positive number, got {value!r}", field=name)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.timeout = float(timeout)
        self.deadline = float(deadline) if deadline is not None else 2 * self.timeout
        self.max_body_bytes = int(max_body_bytes or _limits.MAX_HTTP_BODY_BYTES)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.__setstate__({})

    def __getstate__(self) -> dict[str, Any]:
        """All but the connection pool: a worker given this call opens its own."""
        return {k: v for k, v in self.__dict__.items() if k != "_client"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        import httpx

        self.__dict__.update(state)
        self._client = httpx.Client(headers=self._headers,
                                    timeout=min(self.timeout, self.deadline))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAICompatible:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _fail(self, message: str, status: int | None = None) -> TargetError:
        return TargetError(f"judge endpoint {self.url}: {message}", target=self.url,
                           status=status, attempts=1)

    def _read(self, response: httpx.Response, end: float) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            raise self._fail(f"response body of {declared} bytes exceeds max_body_bytes="
                             f"{self.max_body_bytes}", response.status_code)
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise self._fail(f"response body exceeds max_body_bytes={self.max_body_bytes}",
                                 response.status_code)
            if time.monotonic() > end:
                raise self._fail(f"deadline of {self.deadline:g} s passed")
            chunks.append(chunk)
        return b"".join(chunks)

    def __call__(self, prompt: str, *, model: str) -> str:
        import httpx

        payload = {"model": model, "messages": [{"role": "user", "content": prompt}],
                   "temperature": 0}
        end = time.monotonic() + self.deadline
        try:
            with self._client.stream("POST", self.url, json=payload) as response:
                body = self._read(response, end)
        except httpx.TransportError as exc:
            raise self._fail(f"{type(exc).__name__}: {exc}") from None
        if response.status_code >= 400:
            text = body[:300].decode("utf-8", "replace")
            raise self._fail(f"HTTP {response.status_code}: {text}", response.status_code)
        try:
            content = parse_document(body, self.url, what="reply", finite=True)["choices"][0][
                "message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise self._fail("the body is not an OpenAI chat completion (expected JSON with"
                             " choices[0].message.content)", response.status_code) from None
        if not isinstance(content, str):
            raise self._fail("choices[0].message.content is not a string", response.status_code)
        return content
