"""What every retrieval stage shares: the `Retriever` protocol, `StageOutput`,
input validation, and the one top-k selection rule.

A stage turns ``(id, text)`` documents and ``(qid, text)`` queries into a
`Run`. Every stage ranks the way trec_eval reads a run — score descending,
ties broken by document id **descending, byte-wise** — so that the run it
returns, the file it is written to and the evaluation of either agree on
which document holds which rank, and so that identical inputs give identical
runs.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankproof._errors import InputError
from rankproof.data import Run

Docs = Sequence[tuple[str, str]]
Queries = Sequence[tuple[str, str]]

DENSE_EXTRA_HINT = "pip install 'rankproof[dense]'"


@dataclass(frozen=True)
class StageOutput:
    """What one retrieval stage produced for a batch of queries.

    ``run``: the ranked documents (queries that retrieved nothing are absent,
    and a note says how many). ``latency_ms``: wall-clock milliseconds per
    query id, measured with ``time.perf_counter`` around that query's own
    search (every query of the batch has an entry). ``notes``: caveats that a
    report must carry (a test-double embedder, a plumbing-only cross-encoder,
    empty result lists). ``config``: the stage's parameters, JSON-serialisable
    and identical between reruns with the same inputs.
    """

    run: Run
    latency_ms: Mapping[str, float]
    notes: tuple[str, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Retriever(Protocol):
    """A retrieval stage: index documents once, then answer batches of queries.

    ``index`` may be called again with the same documents; implementations
    make that a no-op (they compare `docs_digest`), so that a pipeline can
    index every stage without re-indexing stages it shares.
    """

    name: str

    def index(self, docs: Docs) -> None:
        """Index ``(doc_id, text)`` pairs, replacing any previous index."""
        ...

    def search(self, queries: Queries, k: int) -> StageOutput:
        """Return at most ``k`` documents per ``(qid, text)`` query."""
        ...


_NOTHING = "retrieved no document for any of the"


def nothing_retrieved(stage: str, queries: int) -> InputError:
    """The error of a stage whose whole batch retrieved nothing (a run cannot be empty)."""
    return InputError(f"stage {stage!r} {_NOTHING} {queries} queries", field="queries")


def retrieved_nothing(exc: InputError) -> bool:
    """True when ``exc`` is `nothing_retrieved`'s: every query of the batch missed.

    Callers for whom that is an ordinary outcome (a fusion whose other input
    found something; a discovery probe against a small catalogue) test for it
    instead of matching the message.
    """
    return exc.field == "queries" and _NOTHING in exc.reason


def default_cache_dir() -> Path:
    """Where embeddings and indexes are cached: ``$RANKPROOF_CACHE``, else
    ``~/.cache/rankproof`` (one rule for the harness and discovery)."""
    root = os.environ.get("RANKPROOF_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "rankproof"


def docs_digest(docs: Docs) -> str:
    """``sha256:<hex>`` over every ``(id, text)`` pair in order.

    Each field is length-prefixed, so no two different document lists share a
    byte stream. Used as the identity of an index and as part of the
    embedding-cache key.
    """
    h = hashlib.sha256()
    h.update(b"rankproof-docs-v1\0")
    for doc_id, text in docs:
        for part in (doc_id, text):
            raw = part.encode("utf-8")
            h.update(len(raw).to_bytes(8, "little"))
            h.update(raw)
    return "sha256:" + h.hexdigest()


def check_docs(docs: Docs) -> tuple[list[str], list[str]]:
    """Validate documents: a non-empty sequence of (non-empty unique str id, str text)."""
    if isinstance(docs, str | bytes) or not isinstance(docs, Sequence):
        raise InputError(f"docs must be a sequence of (id, text) pairs, got {type(docs).__name__}",
                         field="docs")
    if len(docs) == 0:
        raise InputError("docs is empty: there is nothing to index", field="docs")
    ids, texts = _check_pairs(docs, "docs", "doc id")
    return ids, texts


def check_queries(queries: Queries, k: int) -> tuple[list[str], list[str]]:
    """Validate queries (unique non-empty str ids, str texts) and ``k >= 1``."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    if isinstance(queries, str | bytes) or not isinstance(queries, Sequence):
        raise InputError(
            f"queries must be a sequence of (qid, text) pairs, got {type(queries).__name__}",
            field="queries")
    if len(queries) == 0:
        raise InputError("queries is empty: there is nothing to search for", field="queries")
    return _check_pairs(queries, "queries", "qid")


def _check_pairs(pairs: Sequence[tuple[str, str]], where: str,
                 what: str) -> tuple[list[str], list[str]]:
    ids: list[str] = []
    texts: list[str] = []
    seen: set[str] = set()
    for i, pair in enumerate(pairs):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise InputError(f"{where}[{i}] must be an (id, text) pair, got {pair!r:.80}",
                             field=where)
        ident, text = pair
        if not isinstance(ident, str) or not ident:
            raise InputError(f"{where}[{i}]: {what} must be a non-empty string, got {ident!r:.80}",
                             field=what)
        if "\x00" in ident:
            raise InputError(f"{where}[{i}]: {what} {ident!r:.80} contains a NUL character",
                             field=what)
        if not isinstance(text, str):
            raise InputError(
                f"{where}[{i}] ({what} {ident!r:.80}): text must be a string, "
                f"got {type(text).__name__}", field="text")
        if ident in seen:
            raise InputError(f"{where}[{i}]: duplicate {what} {ident!r:.80}", field=what)
        seen.add(ident)
        ids.append(ident)
        texts.append(text)
    return ids, texts


class RunBuilder:
    """Collect per-query results, then build one `Run` (rank column = 1..n per query).

    With ``ids`` (the indexed documents' ids as an Arrow array), results are
    added as indices into it (:meth:`add_hits`), so no per-row Python string
    is built; otherwise as docid lists (:meth:`add`).
    """

    def __init__(self, ids: pa.Array | None = None) -> None:
        self._ids = ids
        self._topics: list[str] = []
        self._counts: list[int] = []
        self._docids: list[str] = []
        self._hits: list[npt.NDArray[np.int64]] = []
        self._scores: list[npt.NDArray[np.float64]] = []
        self.empty: list[str] = []

    def _add_topic(self, qid: str, n: int, scores: npt.NDArray[np.floating[Any]]) -> bool:
        if n == 0:
            self.empty.append(qid)
            return False
        self._topics.append(qid)
        self._counts.append(n)
        self._scores.append(np.asarray(scores, dtype=np.float64))
        return True

    def add(self, qid: str, docids: Sequence[str], scores: npt.NDArray[np.floating[Any]]) -> None:
        if self._ids is not None:
            raise TypeError("this builder takes indices: use add_hits")
        if self._add_topic(qid, len(docids), scores):
            self._docids.extend(docids)

    def add_hits(self, qid: str, hits: npt.NDArray[np.int64],
                 scores: npt.NDArray[np.floating[Any]]) -> None:
        if self._ids is None:
            raise TypeError("this builder takes docids: use add")
        if self._add_topic(qid, len(hits), scores):
            self._hits.append(hits)

    def build(self, name: str, notes: tuple[str, ...]) -> Run:
        if not self._topics:
            raise nothing_retrieved(name, len(self.empty))
        counts = np.asarray(self._counts, dtype=np.int64)
        codes = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
        qids = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(self._topics,
                                                                         type=pa.string()))
        if self._ids is not None:
            docids = self._ids.take(pa.array(np.concatenate(self._hits)))
        else:
            docids = pa.array(self._docids, type=pa.string())
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        ranks = np.arange(len(codes), dtype=np.int64) - starts + 1
        return Run.from_columns(qids, docids, np.concatenate(self._scores), ranks, name=name,
                                notes=notes)

    def empty_note(self, name: str, n_queries: int) -> tuple[str, ...]:
        """The caveat naming the queries that retrieved nothing (empty when none)."""
        if not self.empty:
            return ()
        shown = ", ".join(self.empty[:5]) + (", ..." if len(self.empty) > 5 else "")
        return (f"{name}: {len(self.empty)} of {n_queries} queries retrieved nothing "
                f"({shown}); they are absent from the run and score 0",)

@contextmanager
def timed(into: dict[str, float], key: str) -> Iterator[None]:
    """Add the wall-clock milliseconds of the ``with`` body to ``into[key]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        into[key] = into.get(key, 0.0) + (time.perf_counter() - start) * 1000.0


def merge_notes(*groups: Sequence[str]) -> tuple[str, ...]:
    """Concatenate note tuples, dropping repeats, keeping first-seen order."""
    return tuple(dict.fromkeys(n for g in groups for n in g))
