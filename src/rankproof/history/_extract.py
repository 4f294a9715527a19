"""What the store keeps of a rankproof JSON document: its kind, manifest columns and
per-query values per system × measure.

The per-query values are read through the gate's one reader of result documents
(`rankproof.gate.result_from_document`), once per system the document holds (an eval
report's stages, a comparison's systems, a measure file's runs), so the store never parses
a result format a second time. Documents that keep no per-query values (a gate verdict, a
discovery report) are stored with their columns and no arrays.
"""

from __future__ import annotations

import hashlib
import json
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankproof._errors import InputError
from rankproof.data import parse_document

__all__ = ["KINDS", "Extracted", "Series", "decode_qids", "decode_values", "encode_qids",
           "encode_values", "extract", "kind_of", "result_id"]

KINDS: dict[str, str] = {
    "rankproof.eval": "eval report",
    "rankproof.measure": "measure results",
    "rankproof.comparison": "comparison",
    "rankproof.gate": "gate verdict",
    "rankproof.rag": "RAG report",
    "rankproof.discovery": "discovery report",
    "rankproof.run": "run result",
    "rankproof.baseline": "baseline",
}
"""Every kind the store keeps -> what it is called."""

_PER_QUERY_KINDS = ("rankproof.eval", "rankproof.measure", "rankproof.comparison",
                    "rankproof.rag", "rankproof.run", "rankproof.baseline")


@dataclass(frozen=True)
class Series:
    """One system's values of one measure: qids (sorted) and float64 values, in order."""

    system: str
    measure: str
    qids: tuple[str, ...]
    values: np.ndarray[Any, np.dtype[np.float64]]

    @property
    def mean(self) -> float:
        return float(self.values.mean()) if len(self.values) else float("nan")


@dataclass(frozen=True)
class Extracted:
    """A document ready to store: id, kind, manifest columns, canonical bytes, series."""

    id: str
    kind: str
    schema_version: int
    columns: Mapping[str, Any]
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    canonical: bytes
    series: tuple[Series, ...]


def canonical_bytes(document: Any) -> bytes:
    """The document as canonical JSON (sorted keys, no whitespace, UTF-8)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=True).encode("utf-8")


def result_id(document: Any) -> str:
    """``sha256:…`` of the canonical JSON: the same result added twice has one id."""
    return "sha256:" + hashlib.sha256(canonical_bytes(document)).hexdigest()


def encode_values(values: np.ndarray[Any, np.dtype[np.float64]]) -> bytes:
    """zlib of the little-endian float64 bytes (exact; metric values compress well)."""
    return zlib.compress(np.ascontiguousarray(values, dtype="<f8").tobytes(), 6)


def decode_values(blob: bytes) -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.frombuffer(zlib.decompress(blob), dtype="<f8")


def encode_qids(qids: Sequence[str]) -> tuple[str, bytes]:
    """(digest, zlib of the JSON list) of a qid list, kept once however many results use it."""
    raw = json.dumps(list(qids), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return "sha256:" + hashlib.sha256(raw).hexdigest(), zlib.compress(raw, 6)


def decode_qids(blob: bytes) -> tuple[str, ...]:
    return tuple(parse_document(zlib.decompress(blob), "the results store", what="query ids"))


def kind_of(document: Any, label: str) -> str:
    """The document's kind (``measure`` output is known by its ``tool`` block)."""
    if not isinstance(document, Mapping):
        raise InputError(f"not a rankproof JSON document (found a JSON "
                         f"{type(document).__name__})", path=label)
    kind = document.get("kind")
    tool = document.get("tool")
    if kind is None and isinstance(tool, Mapping) and tool.get("name") == "rankproof" \
            and "runs" in document:
        kind = "rankproof.measure"
    if kind not in KINDS:
        found = f"kind {kind!r:.80}" if kind is not None else "no 'kind' field"
        raise InputError(f"not a result the history keeps ({found}); it keeps "
                         + ", ".join(KINDS.values()), path=label, field="kind")
    return str(kind)


def _systems(kind: str, document: Mapping[str, Any]) -> list[str | None]:
    if kind == "rankproof.eval":
        return [s.get("name") for s in document.get("stages") or () if isinstance(s, Mapping)]
    if kind == "rankproof.comparison":
        return [str(s) for s in document.get("systems") or ()]
    if kind == "rankproof.measure":
        return [r.get("run") for r in document.get("runs") or () if isinstance(r, Mapping)]
    return [None]


def _series(kind: str, document: Mapping[str, Any], label: str) -> list[Series]:
    if kind not in _PER_QUERY_KINDS:
        return []
    from rankproof.gate import result_from_document

    out: list[Series] = []
    for stage in _systems(kind, document):
        result = result_from_document(document, label, stage, role="run")
        name = result.name
        for measure in result.metrics:
            pairs = sorted((row.case_id, float(row.values[measure])) for row in result.rows
                           if measure in row.values and math.isfinite(row.values[measure]))
            if not pairs:
                continue
            out.append(Series(system=name, measure=measure,
                              qids=tuple(q for q, _ in pairs),
                              values=np.array([v for _, v in pairs], dtype=np.float64)))
    return out


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _qrels_digest(document: Mapping[str, Any], prov: Mapping[str, Any]) -> str | None:
    for run in document.get("runs") or ():
        if isinstance(run, Mapping) and isinstance(run.get("qrels_digest"), str):
            return str(run["qrels_digest"])
    inputs = prov.get("inputs")
    qrels = inputs.get("qrels") if isinstance(inputs, Mapping) else None
    return _text(qrels.get("sha256")) if isinstance(qrels, Mapping) else None


def extract(document: Any, label: str, *, branch: str | None = None,
            added_at: str) -> Extracted:
    """Everything the store keeps of ``document`` (``label`` names it in messages)."""
    kind = kind_of(document, label)
    version = document.get("schema_version")
    if type(version) is not int:
        raise InputError(f"the {KINDS[kind]} has no integer schema_version (got "
                         f"{version!r:.40})", path=label, field="schema_version")
    prov = document.get("provenance")
    prov = prov if isinstance(prov, Mapping) else {}
    series = _series(kind, document, label)
    seed = prov.get("seed")
    dirty = prov.get("git_dirty")
    columns = {
        "created_at": _text(prov.get("created_at")) or added_at,
        "git_commit": _text(prov.get("git_commit")),
        "git_branch": branch if branch is not None else _text(prov.get("git_branch")),
        "git_dirty": dirty if isinstance(dirty, bool) else None,
        "tool_version": _text(prov.get("tool_version")),
        "corpus_digest": _text(prov.get("corpus_digest")),
        "judgments_digest": _text(prov.get("judgments_digest")),
        "config_digest": _text(prov.get("config_digest")),
        "qrels_digest": _qrels_digest(document, prov),
        "seed": seed if type(seed) is int and abs(seed) < 2 ** 63 else None,
    }
    runs = tuple(dict.fromkeys(s.system for s in series)) or tuple(
        str(s) for s in _systems(kind, document) if s is not None)
    measures = tuple(dict.fromkeys(s.measure for s in series))
    canonical = canonical_bytes(document)
    return Extracted(id="sha256:" + hashlib.sha256(canonical).hexdigest(), kind=kind,
                     schema_version=version, columns=columns, runs=runs, measures=measures,
                     canonical=canonical, series=tuple(series))
