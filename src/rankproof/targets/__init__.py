"""Targets — the systems under test — and the golden sets they are evaluated on.

A `Target` turns a `Case` into a `TargetResponse` (ranked ids, optional text,
latency, meta). Three come built in:

* `CallableTarget` — a Python function;
* `RetrieverTarget` — one of rankproof's own retrieval stages;
* `HttpTarget` — a search service over HTTP (httpx; one retry on a 5xx or a
  transport error, never on a 4xx).

A target that fails raises `rankproof.TargetError` naming the case, rather
than returning an empty list that would be scored as a bad ranking.
`load_goldens` reads cases from JSONL, YAML or CSV; `register_loader` adds a
format.
"""

from rankproof.targets._base import CallableTarget, Target
from rankproof.targets._case import Case, TargetResponse
from rankproof.targets._goldens import load_goldens, register_loader
from rankproof.targets._http import HttpTarget, default_build_payload, default_extract
from rankproof.targets._retriever import RetrieverTarget

__all__ = [
    "CallableTarget",
    "Case",
    "HttpTarget",
    "RetrieverTarget",
    "Target",
    "TargetResponse",
    "default_build_payload",
    "default_extract",
    "load_goldens",
    "register_loader",
]
