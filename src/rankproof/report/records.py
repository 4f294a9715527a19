"""Flat records (JSON, JSONL, CSV) of per-query results."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from typing import Any

from rankproof._version import __version__
from rankproof.measures import PerQuery

SCHEMA_VERSION = 1
FORMATS: tuple[str, ...] = ("json", "jsonl", "csv")
"""The formats `render` writes."""


def records(results: Sequence[PerQuery], *, per_query: bool) -> Iterator[dict[str, Any]]:
    """One record per (run, topic, measure), or per (run, measure) with ``topic="all"``."""
    for pq in results:
        if per_query:
            for row, qid in enumerate(pq.qids):
                for col, m in enumerate(pq.measures):
                    yield {"run": pq.run_name, "topic": qid, "measure": str(m),
                           "value": float(pq.values[row, col])}
        for m in pq.measures:
            yield {"run": pq.run_name, "topic": "all", "measure": str(m),
                   "value": pq.aggregate(m)}


def to_json(results: Sequence[PerQuery], *, provenance: dict[str, Any] | None = None,
            cross_check: dict[str, Any] | None = None) -> str:
    """A versioned JSON document holding every run's per-query values and means, and the
    provenance block (`rankproof._manifest.provenance`) when one is given."""
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "rankproof", "version": __version__},
        "runs": [pq.to_dict() for pq in results],
    }
    if provenance is not None:
        doc["provenance"] = provenance
    if cross_check is not None:  # `rankproof.measures.CrossCheck.to_dict`
        doc["cross_check"] = cross_check
    return json.dumps(doc, indent=2)


def to_jsonl(results: Sequence[PerQuery], *, per_query: bool) -> str:
    return "".join(json.dumps(r) + "\n" for r in records(results, per_query=per_query))


def to_csv(results: Sequence[PerQuery], *, per_query: bool) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=["run", "topic", "measure", "value"],
                            lineterminator="\n")
    writer.writeheader()
    for r in records(results, per_query=per_query):
        writer.writerow({**r, "value": repr(r["value"])})
    return buf.getvalue()


def render(results: Sequence[PerQuery], fmt: str, *, per_query: bool,
           provenance: dict[str, Any] | None = None,
           cross_check: dict[str, Any] | None = None) -> str:
    """``results`` in one of `FORMATS` (``json`` always holds the per-query values, and
    ``provenance`` when given)."""
    if fmt == "json":
        return to_json(results, provenance=provenance, cross_check=cross_check) + "\n"
    if fmt == "jsonl":
        return to_jsonl(results, per_query=per_query)
    if fmt == "csv":
        return to_csv(results, per_query=per_query)
    raise ValueError(f"unknown records format {fmt!r}; expected one of {', '.join(FORMATS)}")
