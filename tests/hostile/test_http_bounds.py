"""Class 9: the HTTP target is bounded in time, size and nesting, against a hostile server.

Each test starts a raw socket server on 127.0.0.1 (an ephemeral port) that
misbehaves on purpose — trickles bytes just inside the read timeout, sends
more than the cap, nests JSON absurdly deep — and stops it when the test
ends. Every server loop is bounded in count and in time, and the server
stops at once when the test is done, so no test can hang. Timed assertions
are loose (under twice the deadline) so that a busy machine cannot make
them flaky.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from rankproof import TargetError, _limits
from rankproof.targets import Case, HttpTarget

CASE = Case(id="q-1", query="boil water advisory", relevant=("d1",))
MAX_CONNECTIONS = 10  # a runaway retry loop fails the test instead of spinning
MAX_TRICKLE_BYTES = 200  # a trickling handler gives up after this many bytes (~tens of seconds)

Handler = Callable[["Server", socket.socket, int], object]


@dataclass
class Server:
    """A one-thread-per-connection socket server whose replies a test writes by hand."""

    handler: Handler
    url: str = ""
    connections: int = 0
    sent: list[int] = field(default_factory=list)  # bytes each connection managed to send
    stop: threading.Event = field(default_factory=threading.Event)

    def send(self, conn: socket.socket, data: bytes, index: int) -> bool:
        """Send ``data``; False once the client has gone (then the handler should stop)."""
        try:
            conn.sendall(data)
        except OSError:
            return False
        self.sent[index] += len(data)
        return True

    def trickle(self, conn: socket.socket, data: bytes, index: int, gap_s: float) -> None:
        """Send ``data`` one byte every ``gap_s`` seconds, until the client gives up."""
        for i in range(min(len(data), MAX_TRICKLE_BYTES)):
            if self.stop.wait(gap_s) or not self.send(conn, data[i : i + 1], index):
                return


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        part = conn.recv(4096)
        if not part:
            return
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        part = conn.recv(4096)
        if not part:
            return
        body += part


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx honours *_PROXY variables; requests to 127.0.0.1 must go direct."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                "all_proxy"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def serve() -> Iterator[Callable[[Handler], Server]]:
    started: list[tuple[Server, socket.socket, threading.Thread]] = []

    def start(handler: Handler) -> Server:
        state = Server(handler)
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(0.05)
        state.url = f"http://127.0.0.1:{listener.getsockname()[1]}/search"

        def accept_loop() -> None:
            workers = []
            while not state.stop.is_set() and state.connections < MAX_CONNECTIONS:
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    break
                index = state.connections
                state.connections += 1
                state.sent.append(0)
                worker = threading.Thread(target=serve_one, args=(conn, index), daemon=True)
                worker.start()
                workers.append(worker)
            for worker in workers:
                worker.join(timeout=5)

        def serve_one(conn: socket.socket, index: int) -> None:
            with conn:
                conn.settimeout(5)
                try:
                    _read_request(conn)
                    state.handler(state, conn, index)
                except OSError:
                    pass

        thread = threading.Thread(target=accept_loop, daemon=True)
        thread.start()
        started.append((state, listener, thread))
        return state

    yield start
    for state, listener, thread in started:
        state.stop.set()
        thread.join(timeout=10)
        listener.close()


def _head(length: int | None = None, status: str = "200 OK") -> bytes:
    # The test server closes every connection after one response; saying so keeps httpx
    # from reusing it for the retry, which the server would never answer (a race that
    # made the retry test see one connection instead of two).
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", "Connection: close"]
    lines.append(f"Content-Length: {length}" if length is not None
                 else "Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


BODY = json.dumps({"ids": ["d1", "d2"], "text": "x" * 100}).encode()


# -- the deadline ------------------------------------------------------------------


def _timed_failure(target: HttpTarget) -> tuple[TargetError, float]:
    start = time.monotonic()
    with pytest.raises(TargetError) as err:
        target.invoke(CASE)
    return err.value, time.monotonic() - start


def test_a_body_trickled_inside_the_read_timeout_is_cut_at_the_deadline(
        serve: Callable[[Handler], Server]) -> None:
    # One byte every 0.3 s never trips the 1 s read timeout; only the deadline stops it.
    def handler(s: Server, conn: socket.socket, index: int) -> None:
        if s.send(conn, _head(len(BODY)), index):
            s.trickle(conn, BODY, index, 0.3)

    server = serve(handler)
    with HttpTarget(server.url, "svc", timeout=1.0, deadline=1.5) as target:
        err, elapsed = _timed_failure(target)
    assert elapsed < 3.0  # the deadline plus slack; unbounded, the body would take 40 s
    assert "deadline of 1.5 s" in str(err)
    assert (err.case_id, err.target, err.attempts) == ("q-1", "svc", 1)


def test_headers_trickled_inside_the_read_timeout_are_cut_at_the_deadline(
        serve: Callable[[Handler], Server]) -> None:
    # The trickle starts before the status line: httpx reads it, not our body loop.
    server = serve(lambda s, conn, i: s.trickle(conn, _head(len(BODY)) + BODY, i, 0.3))
    with HttpTarget(server.url, "svc", timeout=1.0, deadline=1.5) as target:
        err, elapsed = _timed_failure(target)
    assert elapsed < 3.0
    assert "deadline of 1.5 s" in str(err) and err.case_id == "q-1"


def test_the_retry_shares_the_deadline(serve: Callable[[Handler], Server]) -> None:
    # A slow 503 spends most of the deadline; the retry then trickles and is cut short.
    def handler(s: Server, conn: socket.socket, index: int) -> None:
        if index == 0:
            s.stop.wait(0.6)
            s.send(conn, _head(2, "503 Service Unavailable") + b"{}", index)
        else:
            s.trickle(conn, _head(len(BODY)) + BODY, index, 0.3)

    # The deadline leaves 1.9 s after the slow 503, so a loaded CI machine still
    # retries; the trickled retry (40 s unbounded) is then cut at 2.5 s.
    server = serve(handler)
    with HttpTarget(server.url, "svc", timeout=1.0, deadline=2.5) as target:
        err, elapsed = _timed_failure(target)
    assert elapsed < 4.5
    assert server.connections == 2 and err.attempts == 2
    assert "deadline of 2.5 s" in str(err)


def test_a_prompt_answer_within_the_deadline_is_unaffected(
        serve: Callable[[Handler], Server]) -> None:
    server = serve(lambda s, conn, i: None if s.stop.wait(0.2) else
                   s.send(conn, _head(len(BODY)) + BODY, i))
    with HttpTarget(server.url, "svc", timeout=1.0, deadline=1.5) as target:
        response = target.invoke(CASE)
    assert response.ranked_ids == ("d1", "d2")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"deadline": 0}, "deadline must be a positive number"),
    ({"deadline": float("inf")}, "deadline must be a positive number"),
    ({"max_body_bytes": 0}, "max_body_bytes must be an integer >= 1"),
    ({"max_body_bytes": 1.5}, "max_body_bytes must be an integer >= 1"),
])
def test_bounds_are_validated(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HttpTarget("http://127.0.0.1:1/search", "svc", **kwargs)  # type: ignore[arg-type]


def test_defaults_come_from_the_limits_module() -> None:
    with HttpTarget("http://127.0.0.1:1/search", "svc", timeout=3) as target:
        assert target.deadline == 6.0  # two attempts' worth of timeout
        assert target.max_body_bytes == _limits.MAX_HTTP_BODY_BYTES == 8 * 1024 * 1024


# -- the size cap ------------------------------------------------------------------

HUGE = 64 * 1024 * 1024  # what the server would send; far more than a socket buffer holds


def _huge_sender(chunked: bool, status: str = "200 OK") -> Handler:
    def handler(s: Server, conn: socket.socket, index: int) -> None:
        if not s.send(conn, _head(None if chunked else HUGE, status), index):
            return
        block = b"[" + b" " * (64 * 1024 - 1)
        frame = (f"{len(block):x}\r\n".encode() + block + b"\r\n") if chunked else block
        for _ in range(HUGE // len(block)):
            if s.stop.is_set() or not s.send(conn, frame, index):
                return

    return handler


def test_a_declared_content_length_over_the_cap_is_refused_unread(
        serve: Callable[[Handler], Server]) -> None:
    server = serve(_huge_sender(chunked=False))
    with HttpTarget(server.url, "svc", max_body_bytes=1024) as target:
        err, elapsed = _timed_failure(target)
    msg = str(err)
    assert "Content-Length" in msg and "1024 bytes" in msg and "not read" in msg
    assert (err.case_id, err.target, err.status, err.attempts) == ("q-1", "svc", 200, 1)
    assert server.connections == 1  # a refused body is not asked for again
    assert elapsed < 5.0
    assert server.sent[0] < HUGE  # the client hung up long before the body was through


def test_a_chunked_body_over_the_cap_is_refused_while_streaming(
        serve: Callable[[Handler], Server]) -> None:
    server = serve(_huge_sender(chunked=True))
    with HttpTarget(server.url, "svc", max_body_bytes=100_000) as target:
        err, elapsed = _timed_failure(target)
    msg = str(err)
    assert "passed the cap of 100000 bytes" in msg and "not read" in msg
    assert (err.case_id, err.status, err.attempts) == ("q-1", 200, 1)
    assert elapsed < 5.0
    assert server.sent[0] < HUGE


def test_a_body_just_under_the_cap_is_read(serve: Callable[[Handler], Server]) -> None:
    server = serve(lambda s, conn, i: s.send(conn, _head(len(BODY)) + BODY, i))
    with HttpTarget(server.url, "svc", max_body_bytes=len(BODY)) as target:
        assert target.invoke(CASE).ranked_ids == ("d1", "d2")


def test_an_error_body_is_read_only_as_far_as_the_message_quotes_it(
        serve: Callable[[Handler], Server]) -> None:
    server = serve(_huge_sender(chunked=True, status="404 Not Found"))
    with HttpTarget(server.url, "svc") as target:
        err, elapsed = _timed_failure(target)
    assert "HTTP 404" in str(err) and err.status == 404 and err.attempts == 1
    assert elapsed < 5.0 and server.sent[0] < HUGE


# -- nesting -----------------------------------------------------------------------


@pytest.mark.parametrize("depth", [_limits.MAX_NESTING_DEPTH + 1, 100_000])
def test_deeply_nested_json_is_refused(serve: Callable[[Handler], Server], depth: int) -> None:
    body = b'{"ids": ["d1"], "meta": ' + b"[" * depth + b"]" * depth + b"}"
    server = serve(lambda s, conn, i: s.send(conn, _head(len(body)) + body, i))
    with HttpTarget(server.url, "svc") as target:
        err, _ = _timed_failure(target)
    assert f"nests deeper than {_limits.MAX_NESTING_DEPTH} levels" in str(err)
    assert (err.case_id, err.target, err.status) == ("q-1", "svc", 200)


def test_nesting_up_to_the_bound_is_accepted(serve: Callable[[Handler], Server]) -> None:
    inner = _limits.MAX_NESTING_DEPTH - 1  # the outer object is one level
    body = b'{"ids": ["d1"], "meta": ' + b"[" * inner + b"]" * inner + b"}"
    server = serve(lambda s, conn, i: s.send(conn, _head(len(body)) + body, i))
    with HttpTarget(server.url, "svc", meta_keys=("meta",)) as target:
        assert target.invoke(CASE).ranked_ids == ("d1",)
