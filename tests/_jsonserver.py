"""A real JSON-over-HTTP server on 127.0.0.1 for tests: ``with serve(reply) as url: ...``.

``reply(body) -> response object`` turns each POSTed JSON body into the JSON
answer. The server runs in a thread, is stopped on exit, and stays quiet when
a keep-alive client hangs up.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[Any], Any]


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client closing its keep-alive connection is not a test failure


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

    httpd = _Quiet(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}{path}"
    finally:
        httpd.shutdown()
        httpd.server_close()
