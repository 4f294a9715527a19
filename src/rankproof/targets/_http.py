"""`HttpTarget`: a search service reached over HTTP, through one httpx connection pool.

The retry policy is deliberately narrow — **exactly one** retry, on a 5xx
response or a transport error (connect error, timeout, dropped connection),
never on a 4xx. A 5xx or a dropped connection is often transient (a worker
restarting, a load balancer recycling a connection), and one retry keeps a
long evaluation from failing on a single blip. A 4xx means the request itself
is wrong; sending it again would only hide a bug in ``build_payload``. More
retries would hide a flaky service inside the latency numbers, so there are
none, and the latency reported covers the whole attempt sequence — a user of
the service waits through the retry too.

Every call is bounded, because the service is not ours and CI reads a hang
as a failed gate: ``deadline`` bounds the whole call (connect, every read and
write, and the retry) by the wall clock, not just each read (see
`rankproof.targets._deadline`); the body is streamed and refused once it
passes ``max_body_bytes`` (a declared ``Content-Length`` over the cap is
refused before a byte of the body is read); and a JSON answer nested deeper
than `rankproof._limits.MAX_NESTING_DEPTH` is refused rather than parsed
into a structure that later code would walk recursively.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any

import httpx

import rankproof._limits as _limits
from rankproof._errors import InputError, TargetError
from rankproof.data import parse_document
from rankproof.targets._base import Where, _short, case_label, check_name, ids_from, where_of
from rankproof.targets._case import Case, TargetResponse
from rankproof.targets._deadline import deadline_at, deadline_transport

logger = logging.getLogger("rankproof.targets")

_ATTEMPTS = 2  # the first try and exactly one retry
_ERROR_BODY_BYTES = 4096  # of a 4xx/5xx body, only enough to quote in the message is read


def default_build_payload(case: Case) -> dict[str, Any]:
    """The default request body of `HttpTarget`: ``{"query": case.query, "id": case.id}``.

    The case id is sent so that a service's own logs can be matched with the
    evaluation; judgments are never sent.
    """
    return {"query": case.query, "id": case.id}


def default_extract(body: Mapping[str, Any]) -> Any:
    """The default way `HttpTarget` reads ranked ids from a response: ``body["ids"]``.

    The response must be a JSON object with an ``ids`` list of document ids,
    best first, e.g. ``{"ids": ["d3", "d1"]}``.
    """
    return body["ids"]


def _describe_transport_error(exc: httpx.TransportError, timeout: float) -> str:
    if isinstance(exc, httpx.TimeoutException):
        kind = {
            httpx.ConnectTimeout: "connect timeout",
            httpx.ReadTimeout: "read timeout",
            httpx.WriteTimeout: "write timeout",
            httpx.PoolTimeout: "pool timeout",
        }.get(type(exc), "timeout")
        return f"{kind} (timeout={timeout:g} s)"
    if isinstance(exc, httpx.ConnectError):
        return f"connect error ({exc})"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return f"connection dropped ({type(exc).__name__}: {exc})"
    return f"{type(exc).__name__}: {exc}"


class HttpTarget:
    """A target that POSTs each case as JSON to ``url`` and reads ranked ids back.

    Parameters
    ----------
    url:
        An absolute ``http://`` or ``https://`` URL.
    name:
        The label of the target in reports.
    build_payload:
        ``case -> JSON-serialisable body``; default `default_build_payload`
        (``{"query": case.query, "id": case.id}``).
    extract:
        ``response object -> sequence of document ids``; default
        `default_extract` (``body["ids"]``).
    meta_keys:
        Keys of the response object copied into ``TargetResponse.meta``
        (e.g. ``("model", "cost")``); a listed key missing from a response is
        an error rather than a silently absent value.
    text_key:
        Key of the response object holding generated text (absent or null:
        ``text`` is None); ``None`` to ignore text altogether.
    scores_key:
        Key of the response object holding one score per returned id, best
        first (e.g. ``"scores"``); ``None`` (default) when the service returns
        ids only. A listed key missing from a response, or scores that do not
        match the ids, is an error.
    timeout:
        Seconds, applied by httpx to connecting, each read and each write.
    deadline:
        Seconds for the whole call — connecting, sending, every read of the
        headers and body, and the retry — measured by the wall clock
        (default: twice ``timeout``, what two attempts that each time out
        take). A server that trickles bytes just inside ``timeout`` is cut
        off here. (Through a proxy named by ``HTTP_PROXY`` and friends, httpx
        uses its own proxy transport: there the deadline is checked between
        body chunks, each read still bounded by ``timeout``.)
    max_body_bytes:
        The largest response body read (default
        `rankproof._limits.MAX_HTTP_BODY_BYTES`, 8 MiB); a larger declared
        ``Content-Length`` is refused before the body is read, a larger
        streamed body as soon as it passes the cap. Counted after any
        ``Content-Encoding`` is undone, so a compressed bomb is caught too.
    headers:
        Sent with every request (e.g. an ``Authorization`` header).
    max_concurrency:
        Requests in flight at once in `invoke_many`, and the size of the
        connection pool.

    Failures raise `TargetError` naming the case, the URL and the cause:
    a 4xx status (not retried); a 5xx status or transport error that
    persisted through the one retry; the deadline passing; a body over
    ``max_body_bytes``; a body that is not JSON, not a JSON object, or
    nested deeper than `rankproof._limits.MAX_NESTING_DEPTH`; ``extract``
    raising or returning something other than a sequence of string ids.

    Use it as a context manager (or call `close`) so that the pool's
    connections are released::

        with HttpTarget("http://127.0.0.1:8000/search", "candidate") as target:
            responses = target.invoke_many(cases)
    """

    def __init__(
        self,
        url: str,
        name: str,
        *,
        build_payload: Callable[[Case], Any] = default_build_payload,
        extract: Callable[[Mapping[str, Any]], Any] = default_extract,
        meta_keys: Sequence[str] = (),
        text_key: str | None = "text",
        scores_key: str | None = None,
        timeout: float = 10.0,
        headers: Mapping[str, str] | None = None,
        max_concurrency: int = 4,
        deadline: float | None = None,
        max_body_bytes: int | None = None,
    ) -> None:
        self.name = check_name(name)
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError) as exc:
            raise InputError(f"url is not a valid URL: {url!r} ({exc})", field="url") from None
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise InputError(f"url must be an absolute http:// or https:// URL, got {url!r}",
                             field="url")
        _check_seconds(timeout, "timeout")
        if deadline is None:
            deadline = _ATTEMPTS * float(timeout)
        _check_seconds(deadline, "deadline")
        if max_body_bytes is None:
            max_body_bytes = _limits.MAX_HTTP_BODY_BYTES
        if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) \
                or max_body_bytes < 1:
            raise InputError(f"max_body_bytes must be an integer >= 1, got {max_body_bytes!r}",
                             field="max_body_bytes")
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) \
                or max_concurrency < 1:
            raise InputError(f"max_concurrency must be an integer >= 1, got {max_concurrency!r}",
                             field="max_concurrency")
        if isinstance(meta_keys, str) or not all(isinstance(k, str) for k in meta_keys):
            raise TypeError(f"meta_keys must be a sequence of strings, got {meta_keys!r}")
        if not callable(build_payload) or not callable(extract):
            raise TypeError("build_payload and extract must be callable")
        self.url = str(parsed)
        self.build_payload = build_payload
        self.extract = extract
        self.meta_keys = tuple(meta_keys)
        self.text_key = text_key
        self.scores_key = scores_key
        self.timeout = float(timeout)
        self.deadline = float(deadline)
        self.max_body_bytes = max_body_bytes
        self.max_concurrency = max_concurrency
        self.headers: Mapping[str, str] = dict(headers) if headers else {}
        limits = httpx.Limits(max_connections=max_concurrency,
                              max_keepalive_connections=max_concurrency)
        self._client = httpx.Client(
            timeout=self.timeout,
            headers=dict(headers) if headers else None,
            limits=limits,
            transport=deadline_transport(limits),
            follow_redirects=False,
        )
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"HttpTarget(name={self.name!r}, url={self.url!r})"

    # -- lifetime -------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """True once `close` has run (directly or by leaving a ``with`` block)."""
        return self._closed

    def close(self) -> None:
        """Close the connection pool; later calls to `invoke` raise RuntimeError."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._client.close()

    def __enter__(self) -> HttpTarget:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- invocation -----------------------------------------------------------
    def invoke(self, case: Case) -> TargetResponse:
        """POST one case; retry once on a 5xx or transport error; parse the answer."""
        if self._closed:
            raise RuntimeError(f"HttpTarget {self.name!r} is closed")
        where = f"{case_label(self.name, case)}: POST {self.url}"
        ctx = where_of(case, self.name)
        try:
            payload = self.build_payload(case)
        except Exception as exc:
            raise TargetError(f"{where}: build_payload raised {type(exc).__name__}: {exc}",
                              **ctx) from exc
        try:
            content = json.dumps(payload).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise TargetError(f"{where}: the payload is not JSON-serialisable: {exc}",
                              **ctx) from exc

        start = time.perf_counter()
        status, body = self._send(content, where, ctx)
        latency_ms = (time.perf_counter() - start) * 1000.0
        return self._parse(status, body, where, latency_ms, ctx)

    def invoke_many(self, cases: Sequence[Case], *,
                    max_concurrency: int | None = None) -> list[TargetResponse]:
        """Invoke every case with at most ``max_concurrency`` requests in flight.

        ``max_concurrency`` may lower the target's own bound for this call
        (a sharded run gives each of several concurrent shards a share of
        it), never raise it. Results come back in the order of ``cases``. If
        any case fails, the cases not yet started are cancelled and the
        `TargetError` of the first failing case (in input order) is raised.
        """
        cases = list(cases)
        if not cases:
            return []
        bound = self.max_concurrency if max_concurrency is None \
            else max(1, min(int(max_concurrency), self.max_concurrency))
        if bound == 1 or len(cases) == 1:
            return [self.invoke(c) for c in cases]
        pool = ThreadPoolExecutor(max_workers=min(bound, len(cases)),
                                  thread_name_prefix=f"rankproof-http-{self.name}")
        futures: list[Future[TargetResponse]] = []
        try:
            futures = [pool.submit(self.invoke, c) for c in cases]
            return [f.result() for f in futures]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def settings(self) -> dict[str, Any]:
        """The keyword arguments that build this target again (``HttpTarget(**settings)``).

        An httpx client cannot cross a process boundary, so a sharded run on
        worker processes or Ray tasks sends these instead and builds the
        target there: same URL, headers, timeout, deadline, body cap, payload
        and extraction — so the same retry rule and per-call deadline hold.
        """
        return {"url": self.url, "name": self.name, "build_payload": self.build_payload,
                "extract": self.extract, "meta_keys": self.meta_keys,
                "text_key": self.text_key, "scores_key": self.scores_key,
                "timeout": self.timeout, "headers": dict(self.headers),
                "max_concurrency": self.max_concurrency, "deadline": self.deadline,
                "max_body_bytes": self.max_body_bytes}

    # -- internals ------------------------------------------------------------
    def _send(self, content: bytes, where: str, ctx: Where) -> tuple[int, bytes]:
        """At most two attempts within the deadline; a 2xx status and its body, or `TargetError`."""
        deadline = time.monotonic() + self.deadline
        with deadline_at(deadline):
            for attempt in range(1, _ATTEMPTS + 1):
                last = attempt == _ATTEMPTS
                try:
                    status, reason, body = self._attempt(content, deadline, where, ctx, attempt)
                except httpx.TransportError as exc:
                    reason = _describe_transport_error(exc, self.timeout)
                    if time.monotonic() >= deadline:
                        raise self._late(where, reason, attempt, None, ctx) from exc
                    if last:
                        raise TargetError(f"{where}: {reason}, after {_ATTEMPTS} attempts",
                                          attempts=attempt, **ctx) from exc
                    logger.info("%s: %s; retrying once", where, reason)
                    continue
                except httpx.HTTPError as exc:  # not transient (e.g. a decoding error): no retry
                    raise TargetError(f"{where}: {type(exc).__name__}: {exc}", attempts=attempt,
                                      **ctx) from exc
                if 200 <= status < 300:
                    return status, body
                detail = f"HTTP {status} {reason}".rstrip()
                text = body.decode("utf-8", errors="replace").strip()
                if text:
                    detail += f" ({_short(text)})"
                if status >= 500:
                    if last:
                        raise TargetError(f"{where}: {detail}, after {_ATTEMPTS} attempts",
                                          status=status, attempts=attempt, **ctx)
                    if time.monotonic() >= deadline:
                        raise self._late(where, detail, attempt, status, ctx)
                    logger.info("%s: %s; retrying once", where, detail)
                    continue
                # 4xx (and unfollowed 3xx/1xx): the request is wrong, resending will not help.
                raise TargetError(f"{where}: {detail}; not retried (a client error is not "
                                  "transient)", status=status, attempts=attempt, **ctx)
        raise AssertionError("unreachable")  # pragma: no cover

    def _late(self, where: str, reason: str, attempt: int, status: int | None,
              ctx: Where) -> TargetError:
        return TargetError(f"{where}: {reason}; the call's deadline of {self.deadline:g} s "
                           f"(connect, reads and retry together) has passed, after {attempt} "
                           f"attempt{'s' if attempt > 1 else ''}", status=status,
                           attempts=attempt, **ctx)

    def _attempt(self, content: bytes, deadline: float, where: str, ctx: Where,
                 attempt: int) -> tuple[int, str, bytes]:
        """One POST: status, reason and body, the body read chunk by chunk within the bounds.

        The headers come first; a ``Content-Length`` over the cap is refused
        before the body is read. A 2xx body is read up to ``max_body_bytes``,
        an error body only as far as a message quotes it. The clock is
        checked between chunks as well as inside every read (`deadline_at`).
        """
        left = deadline - time.monotonic()
        timeout = httpx.Timeout(min(self.timeout, max(left, 1e-3)))
        headers = {"Content-Type": "application/json"}
        with self._client.stream("POST", self.url, content=content, headers=headers,
                                 timeout=timeout) as response:
            status = response.status_code
            ok = 200 <= status < 300
            cap = self.max_body_bytes if ok else _ERROR_BODY_BYTES
            declared = response.headers.get("Content-Length", "")
            if ok and declared.isdigit() and len(declared) < 20 and int(declared) > cap:
                raise TargetError(
                    f"{where}: the response declares {int(declared)} bytes (Content-Length), "
                    f"over the cap of {cap} bytes (max_body_bytes); not read",
                    status=status, attempts=attempt, **ctx)
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > cap:
                    if not ok:
                        chunks.append(chunk[: len(chunk) - (size - cap)])
                        break
                    raise TargetError(
                        f"{where}: the response body passed the cap of {cap} bytes "
                        "(max_body_bytes); the rest was not read", status=status,
                        attempts=attempt, **ctx)
                chunks.append(chunk)
                if time.monotonic() >= deadline:
                    raise self._late(where, "the response was still arriving", attempt,
                                     status, ctx)
            return status, response.reason_phrase, b"".join(chunks)

    def _parse(self, status: int, content: bytes, where: str, latency_ms: float,
               ctx: Where) -> TargetResponse:
        try:
            body = parse_document(content, where, what="response")
        except InputError as exc:
            if "nested" in exc.reason:
                raise TargetError(
                    f"{where}: the response JSON nests deeper than {_limits.MAX_NESTING_DEPTH}"
                    " levels (rankproof._limits.MAX_NESTING_DEPTH)", status=status,
                    **ctx) from None
            raise TargetError(
                f"{where}: the response body is not JSON "
                f"({exc.reason.removeprefix('cannot read the response: ')}); body starts "
                f"{_short(content.decode('utf-8', errors='replace'), 80)}",
                status=status, **ctx) from None
        if not isinstance(body, dict):
            raise TargetError(f"{where}: expected a JSON object, got a JSON "
                              f"{_json_kind(body)}: {_short(body, 80)}", status=status, **ctx)
        try:
            raw_ids = self.extract(body)
        except Exception as exc:
            raise TargetError(f"{where}: extract raised {type(exc).__name__}: {exc}",
                              status=status, **ctx) from exc
        ids = ids_from(raw_ids, f"{where}: extract", **ctx)
        text: str | None = None
        if self.text_key is not None:
            value = body.get(self.text_key)
            if value is not None and not isinstance(value, str):
                raise TargetError(f"{where}: {self.text_key!r} must be a string, got "
                                  f"{_json_kind(value)}", status=status, **ctx)
            text = value
        meta: dict[str, Any] = {}
        for key in self.meta_keys:
            if key not in body:
                raise TargetError(f"{where}: meta key {key!r} is missing from the response "
                                  f"(keys: {', '.join(map(repr, body))})", status=status,
                                  **ctx)
            meta[key] = body[key]
        scores = None
        if self.scores_key is not None:
            if self.scores_key not in body:
                raise TargetError(f"{where}: scores key {self.scores_key!r} is missing from the "
                                  "response", status=status, **ctx)
            scores = body[self.scores_key]
        try:
            return TargetResponse(ranked_ids=ids, text=text, latency_ms=latency_ms, meta=meta,
                                  scores=scores)
        except InputError as exc:
            raise TargetError(f"{where}: {exc.reason}", status=status, **ctx) from None


def _check_seconds(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or value <= 0:
        raise InputError(f"{name} must be a positive number of seconds, got {value!r}",
                         field=name)


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if value is None:
        return "null"
    return "object"
