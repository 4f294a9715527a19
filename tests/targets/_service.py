"""A small search service on 127.0.0.1 for the sharded-run tests, with counters.

Each POST ``{"query", "id"}`` gets ``{"ids": [...]}``, five ids derived from the
case number (so every run of the same cases gets the same answers). The
service counts requests per case id and the most requests it had in flight at
once, and can be told to answer 500 for every case numbered ``fail_from`` or
above (``failing``), which stops a run with a `TargetError` part-way.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests._jsonserver import QuietServer, running

from rankproof.targets import Case


def answer(n: int) -> list[str]:
    return [f"d{(n * 7 + k) % 13}" for k in range(5)]


def cases(count: int) -> list[Case]:
    """``count`` judged cases ``q000`` …; case n's relevant document is ``d{n % 13}``."""
    return [Case(id=f"q{i:03d}", query=f"query {i}", relevant=(f"d{i % 13}",))
            for i in range(count)]


def write_goldens(path: Path, count: int) -> Path:
    path.write_text("".join(json.dumps({"id": c.id, "query": c.query,
                                        "relevant": list(c.relevant)}) + "\n"
                            for c in cases(count)))
    return path


@dataclass
class Service:
    url: str = ""
    delay_s: float = 0.002
    fail_from: int | None = None
    hits: Counter[str] = field(default_factory=Counter)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.hits.clear()
            self.max_in_flight = 0


@contextmanager
def service(delay_s: float = 0.002) -> Iterator[Service]:
    state = Service(delay_s=delay_s)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 5
        disable_nagle_algorithm = True  # no 40 ms delayed-ACK stall between headers and body

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            n = int(body["id"][1:])
            with state.lock:
                state.hits[body["id"]] += 1
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            try:
                time.sleep(state.delay_s)
                failing = state.fail_from is not None and n >= state.fail_from
                status = 500 if failing else 200
                data = json.dumps({"error": "down"} if failing else {"ids": answer(n)}).encode()
            finally:
                with state.lock:
                    state.in_flight -= 1
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with running(QuietServer(("127.0.0.1", 0), Handler)) as base:
        state.url = base + "/search"
        yield state
