"""Real HTTP servers on 127.0.0.1 for tests, started and stopped by the test itself.

``with serve(reply) as url: ...`` runs a JSON server: ``reply(body) -> response
object`` turns each POSTed JSON body into the JSON answer. ``with running(httpd)
as base: ...`` runs any server (a scripted one) in a thread and stops it on exit.
Both stay quiet when a keep-alive client hangs up (`QuietServer`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[Any], Any]


class QuietServer(ThreadingHTTPServer):
    """A threading server that prints no traceback when a client hangs up (a keep-alive
    connection closed, a refused oversize body, a timeout: all part of the tests)."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass


@contextmanager
def running(httpd: ThreadingHTTPServer, on_stop: Callable[[], None] | None = None
            ) -> Iterator[str]:
    """``http://HOST:PORT`` while ``httpd`` serves in a thread; stopped (after ``on_stop``,
    which should release handlers that wait) and joined on exit."""
    host, port = httpd.server_address[:2]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://{host!s}:{port}"
    finally:
        if on_stop is not None:
            on_stop()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@contextmanager
def serve(reply: Reply, path: str = "") -> Iterator[str]:
    """The server's base URL (``http://127.0.0.1:PORT`` + ``path``) while the block runs."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = json.dumps(reply(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    with running(QuietServer(("127.0.0.1", 0), Handler)) as base:
        yield base + path
