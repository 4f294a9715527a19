"""A small search service standing in for "your team's search API".

BM25 over the 20 help pages in ``docs.jsonl``, served as JSON over HTTP on
127.0.0.1. Three configurations are served side by side, one per path:

* ``POST /baseline/search`` — words as written, page text only;
* ``POST /candidate/search`` — a light suffix-stripping stemmer, and page
  titles indexed with the text (the change under review);
* ``POST /titles_only/search`` — the candidate's analysis over page titles
  only (a plausible "smaller, faster index" change that is a real
  regression).

Request ``{"query": "...", "id": "..."}``; response ``{"ids": [...]}``, best
first, at most ``k`` (default 10). Nothing here is rankproof: the service is
what rankproof evaluates from outside, through `rankproof.targets.HttpTarget`.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ies", "ing", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """Strip one common English suffix (a deliberately crude stemmer)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@dataclass(frozen=True)
class Config:
    stemming: bool
    titles: bool
    max_words: int | None = None


CONFIGS = {
    "baseline": Config(stemming=False, titles=False),
    "candidate": Config(stemming=True, titles=True),
    "titles_only": Config(stemming=True, titles=True, max_words=0),
}


class BM25:
    """Okapi BM25 (k1 = 1.2, b = 0.75) over a handful of documents."""

    def __init__(self, docs: list[dict[str, str]], config: Config) -> None:
        self.config = config
        self.ids = [d["id"] for d in docs]
        texts = []
        for d in docs:
            words = d["text"].split()
            if config.max_words is not None:
                words = words[: config.max_words]
            text = " ".join(words)
            texts.append(f"{d['title']} {text}" if config.titles else text)
        self.tfs = [Counter(self.analyse(t)) for t in texts]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lengths) / len(self.lengths)
        df = Counter(term for tf in self.tfs for term in tf)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def analyse(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        return [stem(w) for w in words] if self.config.stemming else words

    def search(self, query: str, k: int = 10) -> list[str]:
        terms = self.analyse(query)
        scores = []
        for doc_id, tf, length in zip(self.ids, self.tfs, self.lengths, strict=True):
            s = 0.0
            for t in terms:
                f = tf.get(t, 0)
                if f:
                    s += self.idf[t] * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / self.avg))
            if s > 0:
                scores.append((s, doc_id))
        scores.sort(key=lambda x: (-x[0], x[1]))
        return [d for _, d in scores[:k]]


def load_docs() -> list[dict[str, str]]:
    with open(HERE / "docs.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _handler(indexes: dict[str, BM25]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 10

        def do_POST(self) -> None:
            parts = self.path.strip("/").split("/")
            if len(parts) != 2 or parts[1] != "search" or parts[0] not in indexes:
                self._reply(404, {"error": f"no such endpoint {self.path}"})
                return
            try:
                length = int(self.headers.get("Content-Length", "0"))
                body: Any = json.loads(self.rfile.read(length))
                query = body["query"]
                k = int(body.get("k", 10))
            except (ValueError, KeyError, TypeError) as exc:
                self._reply(400, {"error": f"bad request: {exc}"})
                return
            self._reply(200, {"ids": indexes[parts[0]].search(query, k)})

        def _reply(self, status: int, obj: dict[str, Any]) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the example's output readable

    return Handler


@contextmanager
def serve(max_seconds: float = 300.0) -> Iterator[str]:
    """Serve every configuration on 127.0.0.1 (a free port); yield the base URL.

    The server stops when the block ends, and in any case after
    ``max_seconds``, so a crashed caller cannot leave it running.
    """
    docs = load_docs()
    indexes = {name: BM25(docs, cfg) for name, cfg in CONFIGS.items()}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(indexes))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="example-search",
                              daemon=True)
    thread.start()
    watchdog = threading.Timer(max_seconds, server.shutdown)
    watchdog.daemon = True
    watchdog.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}"
    finally:
        watchdog.cancel()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
