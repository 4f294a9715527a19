"""A wall-clock deadline for every socket operation of one `HttpTarget` call.

httpx's ``timeout`` bounds each connect, read and write on its own, so a
server that trickles one byte just inside the read timeout keeps a call
alive indefinitely, in the body or already in the headers. Checking the
clock between body chunks is not enough (the headers are read inside
httpx), so the bound sits one level lower: a `httpcore` network backend
whose streams clamp every operation's timeout to the time left before the
calling thread's deadline, and refuse to start once it has passed. The
deadline is thread-local because `HttpTarget.invoke_many` runs calls on
several threads, and a pooled connection is only ever used by the thread
that holds it for the current request.

A clamped operation raises httpcore's usual timeout, which httpx maps to its
own (`httpx.ReadTimeout`, ...), so the caller sees one kind of failure
whether the server was slow once or slow overall; `HttpTarget` then tells
the two apart by looking at the clock.
"""

from __future__ import annotations

import contextlib
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx


class _Deadline(threading.local):
    at: float | None = None


_DEADLINE = _Deadline()


@contextlib.contextmanager
def deadline_at(at: float) -> Iterator[None]:
    """Bound every socket operation in this thread by ``time.monotonic() <= at``."""
    previous = _DEADLINE.at
    _DEADLINE.at = at
    try:
        yield
    finally:
        _DEADLINE.at = previous


def _clamp(timeout: float | None, error: type[Exception]) -> float | None:
    at = _DEADLINE.at
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("the call's overall deadline has passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname,
                                      _clamp(timeout, httpcore.ConnectTimeout))
        return _Stream(inner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _clamp(timeout, httpcore.ConnectTimeout),
                                               local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(
            path, _clamp(timeout, httpcore.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def deadline_transport(limits: httpx.Limits) -> httpx.HTTPTransport:
    """An `httpx.HTTPTransport` whose connections honour `deadline_at`.

    httpx builds its connection pool without a way to pass a network
    backend, so the pool is rebuilt here with the same settings httpx uses
    (HTTP/1.1, verified TLS) and the deadline backend. The HTTP target's
    tests against a trickling server pin this behaviour, so an httpx release
    that renamed the pool would fail them rather than silently drop the bound.
    """
    transport = httpx.HTTPTransport(limits=limits)
    if not hasattr(transport, "_pool"):  # pragma: no cover - an httpx we have not seen
        raise RuntimeError("this httpx version keeps its connection pool elsewhere; "
                           "the HTTP target cannot bound its calls")
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_Backend(),
    )
    return transport
