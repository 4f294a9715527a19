"""A scripted HTTP server on 127.0.0.1 for the `HttpTarget` tests.

Each test gets a fresh `ThreadingHTTPServer` on an ephemeral port. The test
scripts it with a list of steps, one per request in arrival order (a reply
with a status, body and delay, or a dropped connection); requests beyond the
script get a 599 so that an unexpected extra attempt fails the test loudly.
The server counts requests, records their bodies and the most requests it
saw in flight at once, and stops when the test ends: sleeping handlers wake
at once, so no test waits for a slow step to finish.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests._jsonserver import running
from tests.targets._service import Service, service

MAX_REQUESTS = 200  # a bound on any one test: a runaway retry loop fails instead of spinning


@dataclass
class Step:
    """What the server does for one request."""

    status: int = 200
    body: bytes = b"{}"
    delay_s: float = 0.0
    drop: bool = False
    content_type: str = "application/json"


def reply(status: int = 200, obj: Any = None, *, delay_s: float = 0.0, raw: bytes | None = None,
          content_type: str = "application/json") -> Step:
    body = raw if raw is not None else json.dumps({} if obj is None else obj).encode()
    return Step(status=status, body=body, delay_s=delay_s, content_type=content_type)


def drop() -> Step:
    """Close the connection after reading the request, without sending a response."""
    return Step(drop=True)


@dataclass
class ScriptedServer:
    url: str
    steps: list[Step | Callable[[dict[str, Any]], Step]] = field(default_factory=list)
    requests: int = 0
    bodies: list[Any] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    reply = staticmethod(reply)
    drop = staticmethod(drop)

    def script(self, *steps: Step | Callable[[dict[str, Any]], Step]) -> ScriptedServer:
        self.steps = list(steps)
        return self

    def next_step(self, body: Any) -> Step:
        with self.lock:
            self.requests += 1
            self.bodies.append(body)
            if self.requests > MAX_REQUESTS or not self.steps:
                return reply(599, {"error": "unscripted request"})
            step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        return step(body) if callable(step) else step


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 5  # socket timeout: a stuck client cannot hold a handler thread
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # no 40 ms delayed-ACK stall between headers and body

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw
            with server.lock:
                server.headers.append(dict(self.headers.items()))
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                step = server.next_step(body)
                if step.delay_s:
                    server.stop.wait(step.delay_s)
                if server.stop.is_set():
                    self.close_connection = True
                    return
                if step.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(step.status)
                self.send_header("Content-Type", step.content_type)
                self.send_header("Content-Length", str(len(step.body)))
                self.end_headers()
                self.wfile.write(step.body)
            except OSError:  # the client gave up (e.g. its read timed out)
                self.close_connection = True
            finally:
                with server.lock:
                    server.in_flight -= 1

    return Handler


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx honours *_PROXY variables; requests to 127.0.0.1 must go direct."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                "all_proxy"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    state = ScriptedServer(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    with running(httpd, on_stop=state.stop.set) as base:
        state.url = base + "/search"
        yield state


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache folder of the test's own, so default target checkpoints never meet across
    tests (the sharded-run tests use it)."""
    monkeypatch.setenv("RANKPROOF_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def svc() -> Iterator[Service]:
    """A real scoring service on 127.0.0.1 (`tests.targets._service`), stopped afterwards."""
    with service() as s:
        yield s
