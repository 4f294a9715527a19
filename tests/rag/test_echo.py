"""The citation-echo check's plumbing, against a local server (it says nothing about a model)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rankproof import ConfigError
from rankproof.rag import citation_echo_check, echo_payload
from rankproof.targets import CallableTarget, HttpTarget, TargetResponse


class _Quiet(ThreadingHTTPServer):
    """A test server that does not print a traceback when a client hangs up (keep-alive
    connections are closed when the client is done)."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass


PASSAGES = ["The plant treats river water.", "Storage reservoirs hold two days of supply.",
            "Meters are read every quarter."]


def _server(behaviour: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            contexts = body["contexts"]
            planted = next(i for i, c in enumerate(contexts) if "ECHO-" in c["text"])
            code = re.search(r"ECHO-[0-9A-F]+", contexts[planted]["text"]).group(0)  # type: ignore[union-attr]
            if behaviour == "echo":
                text = f"The certificate code is {code} [{planted + 1}]."
            elif behaviour == "wrong-citation":
                text = f"The certificate code is {code} [{(planted + 1) % 3 + 1}]."
            else:
                text = f"The certificate code is unknown [{planted + 1}]."
            data = json.dumps({"ids": [c["id"] for c in contexts], "text": text}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture(params=["echo", "wrong-citation", "no-echo"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    httpd = _Quiet(("127.0.0.1", 0), _server(request.param))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield request.param, f"http://127.0.0.1:{httpd.server_address[1]}/answer"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_check_passes_only_when_the_cited_passage_is_echoed(
        served: tuple[str, str], tmp_path: Path) -> None:
    behaviour, url = served
    artifact = tmp_path / "echo.json"
    target = HttpTarget(url, "generator", build_payload=echo_payload)
    result = citation_echo_check(target, passages=PASSAGES, question="What is the code?",
                                 planted_index=1, artifact=artifact)
    assert result.passed == (behaviour == "echo")
    assert result.cites_planted == (behaviour != "wrong-citation")
    assert result.echoes_marker == (behaviour != "no-echo")
    saved = json.loads(artifact.read_text())
    assert saved["kind"] == "rankproof.rag.echo" and saved["passed"] == result.passed


def test_there_is_no_offline_double(tmp_path: Path) -> None:
    fake = CallableTarget(lambda case: TargetResponse(ranked_ids=("p1",), text="[1]"),
                          name="fake")
    with pytest.raises(ConfigError, match="real system"):
        citation_echo_check(fake, passages=PASSAGES, question="q",  # type: ignore[arg-type]
                            artifact=tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()
