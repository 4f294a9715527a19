"""Real OpenAI-compatible HTTP servers on 127.0.0.1 for the provider tests.

* `scripted_server` — a **test double**: a small deterministic scripted responder
  for ``/v1/chat/completions`` (and ``/v1/models``, ``/v1/embeddings`` when the
  script answers them). Each request is handed to ``script(path, body)``, which
  returns a `Reply`: status, headers, body bytes, and optionally a slow drip.
  It exists only in tests and is never shipped as a provider.
* `minilm_server` — ``/v1/embeddings`` and ``/v1/models`` served from the bundled
  all-MiniLM-L6-v2 (real embeddings, offline).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests._jsonserver import QuietServer, running


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    drip_seconds: float | None = None  # a pause before each byte (the slow drip)
    declare_length: bool = True


def json_reply(obj: Any, status: int = 200, **headers: str) -> Reply:
    return Reply(status, json.dumps(obj).encode(), dict(headers))


def chat_body(content: str, prompt_tokens: int = 11, completion_tokens: int = 5) -> dict[str, Any]:
    return {"id": "chatcmpl-test", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


Script = Callable[[str, Any], Reply]


@dataclass
class Served:
    """A running server: its base URL (``…/v1``) and every request it received."""

    base_url: str
    requests: list[tuple[str, Any]]


@contextmanager
def scripted_server(script: Script) -> Iterator[Served]:
    """The test double's server while the block runs (see the module docstring)."""
    requests: list[tuple[str, Any]] = []
    stop = threading.Event()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, body: Any) -> None:
            with lock:
                requests.append((self.path, body))
            reply = script(self.path, body)
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            for k, v in reply.headers.items():
                self.send_header(k, v)
            if reply.declare_length:
                self.send_header("Content-Length", str(len(reply.body)))
            else:
                self.send_header("Connection", "close")
            self.end_headers()
            if reply.drip_seconds is None:
                self.wfile.write(reply.body)
                return
            for i in range(len(reply.body)):
                if stop.wait(reply.drip_seconds):
                    return
                self.wfile.write(reply.body[i:i + 1])
                self.wfile.flush()

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self._answer(json.loads(raw) if raw else None)

        def do_GET(self) -> None:
            self._answer(None)

        def log_message(self, *args: object) -> None:
            pass

    with running(QuietServer(("127.0.0.1", 0), Handler), on_stop=stop.set) as base:
        yield Served(base + "/v1", requests)


def refused_url() -> str:
    """A ``http://127.0.0.1:PORT/v1`` where nothing listens (the port was just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


MINILM_NAME = "all-MiniLM-L6-v2"


@contextmanager
def minilm_server(embedder: Any, batch_size: int = 64) -> Iterator[Served]:
    """``/v1/embeddings`` from the real MiniLM ``embedder`` (and ``/v1/models``)."""

    def script(path: str, body: Any) -> Reply:
        if path == "/v1/models":
            return json_reply({"object": "list", "data": [
                {"id": MINILM_NAME, "object": "model", "owned_by": "tests"}]})
        if path != "/v1/embeddings":
            return json_reply({"error": {"message": f"no route {path}"}}, 404)
        if body.get("model") != MINILM_NAME:
            return json_reply({"error": {"message": "unknown model"}}, 404)
        texts = body["input"]
        vectors = embedder.encode(texts, batch_size=batch_size)
        return json_reply({"object": "list", "model": MINILM_NAME, "data": [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
            for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": sum(len(t.split()) for t in texts),
                      "total_tokens": sum(len(t.split()) for t in texts)}})

    with scripted_server(script) as served:
        yield served

