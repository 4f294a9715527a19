"""Exact dense retrieval: cosine similarity in numpy, chunked, with an on-disk embedding cache.

Document vectors come from an `Embedder` (unit length, so cosine = dot
product). Search is exhaustive — every document is scored — in chunks of
documents, so memory stays at one score per document per query in flight
plus one chunk of products, however large the corpus. The top ``k`` are
chosen with ``argpartition`` and ordered by trec_eval's rule (score
descending, docid descending); see `rankproof.retrieval._base.top_k`.

Embeddings are cached as ``.npy`` files named by the model id and the
documents' digest (:func:`docs_digest`), written to a temporary file in the
cache directory and renamed into place, so a crash never leaves a partial
file under the final name. A cache file that cannot be read or has the wrong
shape is recomputed and replaced, and the stage output says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankproof._errors import InputError
from rankproof.data import tie_keys, top_k
from rankproof.retrieval._base import (
    Docs,
    Queries,
    RunBuilder,
    StageOutput,
    check_docs,
    check_queries,
    docs_digest,
    merge_notes,
    timed,
)
from rankproof.retrieval._embed import Embedder, embedder_identity, embedder_notes

# Scores held at once by `exact_search`: query block x documents (float32).
_SCORE_BUDGET = 1 << 24


def exact_search(
    queries: npt.NDArray[np.float32],
    docs: npt.NDArray[np.float32],
    k: int,
    keys: npt.NDArray[np.int64],
    *,
    chunk_size: int = 16384,
) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
    """Exact inner-product top-``k`` of each query row against every document row.

    Returns, per query, ``(doc indices, scores)`` best first; ties are broken
    by ``keys`` ascending (from :func:`tie_keys`: docid descending). Products
    are computed in blocks of at most ``chunk_size`` documents and as many
    queries as keep ``queries x documents`` scores under 2**24 floats.
    """
    if queries.ndim != 2 or docs.ndim != 2 or queries.shape[1] != docs.shape[1]:
        raise InputError(f"shape mismatch: queries {queries.shape}, docs {docs.shape}")
    if chunk_size < 1:
        raise InputError(f"chunk_size must be positive, got {chunk_size}")
    n_docs = docs.shape[0]
    block = max(1, _SCORE_BUDGET // max(n_docs, 1))
    out: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = []
    for q0 in range(0, queries.shape[0], block):
        qb = queries[q0:q0 + block]
        scores = np.empty((qb.shape[0], n_docs), dtype=np.float32)
        for d0 in range(0, n_docs, chunk_size):
            np.matmul(qb, docs[d0:d0 + chunk_size].T, out=scores[:, d0:d0 + chunk_size])
        for row in scores:
            best = top_k(row, k, keys)
            out.append((best, row[best]))
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:60] or "model"


class DenseRetriever:
    """Exact cosine search over embeddings from ``embedder``.

    ``cache_dir`` (optional) keeps document embeddings between runs, keyed by
    model id, dimension and document digest. Queries are embedded one at a
    time inside the timed region, so ``latency_ms`` is what one request
    costs (query embedding + exhaustive scoring + top-k).
    """

    def __init__(
        self,
        embedder: Embedder,
        cache_dir: str | os.PathLike[str] | None = None,
        batch_size: int = 64,
        *,
        name: str = "dense",
        chunk_size: int = 16384,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
            raise InputError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        self.name = name
        self.embedder = embedder
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.batch_size = batch_size
        self.chunk_size = chunk_size
        self.indexed_digest: str | None = None
        self.cache_path: Path | None = None
        self.cache_hit: bool | None = None
        self._cache_notes: tuple[str, ...] = ()
        self._ids: list[str] = []
        self._id_array: pa.Array | None = None
        self._keys = np.zeros(0, dtype=np.int64)
        self._vectors: npt.NDArray[np.float32] | None = None

    @property
    def config(self) -> dict[str, Any]:
        out = {"stage": "dense", "name": self.name, "model": self.embedder.model_id,
               "dim": int(self.embedder.dim), "similarity": "cosine", "search": "exact",
               "corpus": self.indexed_digest}
        identity = embedder_identity(self.embedder)
        if identity is not None:
            out["model_identity"] = {"name": identity.name, "digest": identity.digest}
        return out

    @property
    def vectors(self) -> npt.NDArray[np.float32]:
        """The document embeddings, one row per indexed document (after `index`)."""
        if self._vectors is None:
            raise RuntimeError(f"{self.name}: call index() first")
        return self._vectors

    def cache_key(self, digest: str) -> str:
        """The cache file name for documents with ``digest`` under this embedder.

        An embedder with an ``identity`` is keyed by its name and the digest of its
        files (content-addressed: the same files loaded from another path share the
        entry, changed files never do); any other by its ``model_id``.
        """
        identity = embedder_identity(self.embedder)
        model_key = (self.embedder.model_id if identity is None
                     else f"{identity.name}\0{identity.digest}")
        label = self.embedder.model_id if identity is None else identity.name
        h = hashlib.sha256(f"{model_key}\0{int(self.embedder.dim)}\0{digest}".encode())
        return f"{_slug(label)}-{h.hexdigest()[:32]}.npy"

    def index(self, docs: Docs) -> None:
        """Embed ``docs`` (or load them from the cache); a no-op for the same documents."""
        ids, texts = check_docs(docs)
        digest = docs_digest(docs)
        if digest == self.indexed_digest:
            return
        dim = int(self.embedder.dim)
        vectors: npt.NDArray[np.float32] | None = None
        notes: tuple[str, ...] = ()
        path = None
        if self.cache_dir is not None:
            path = self.cache_dir / self.cache_key(digest)
            vectors, problem = _load_cached(path, len(ids), dim)
            if problem is not None:
                notes = (f"{self.name}: embedding cache {path.name} was unusable ({problem}); "
                         "recomputed",)
        self.cache_hit = vectors is not None if path is not None else None
        if vectors is None:
            vectors = _checked(self.embedder.encode(texts, self.batch_size), len(ids), dim,
                               self.embedder.model_id)
            if path is not None:
                _save_atomic(path, vectors)
        self.cache_path = path
        self._cache_notes = notes
        self._vectors = vectors
        self._ids = ids
        self._id_array = pa.array(ids, type=pa.string())
        self._keys = tie_keys(ids)
        self.indexed_digest = digest

    def search(self, queries: Queries, k: int) -> StageOutput:
        qids, texts = check_queries(queries, k)
        if self._vectors is None:
            raise RuntimeError(f"{self.name}: call index() before search()")
        builder = RunBuilder(self._id_array)
        latency: dict[str, float] = {}
        dim = int(self.embedder.dim)
        for qid, text in zip(qids, texts, strict=True):
            with timed(latency, qid):
                q = _checked(self.embedder.encode([text], 1), 1, dim, self.embedder.model_id)
                [(best, scores)] = exact_search(q, self._vectors, k, self._keys,
                                                chunk_size=self.chunk_size)
            builder.add_hits(qid, best, scores)
        notes = merge_notes(embedder_notes(self.embedder), self._cache_notes,
                            builder.empty_note(self.name, len(qids)))
        return StageOutput(run=builder.build(self.name, notes), latency_ms=latency, notes=notes,
                           config={**self.config, "k": int(k)})


def _checked(vectors: Any, n: int, dim: int, model_id: str) -> npt.NDArray[np.float32]:
    arr = np.asarray(vectors)
    if arr.shape != (n, dim):
        raise InputError(f"embedder {model_id} returned shape {arr.shape}, expected {(n, dim)}")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.isfinite(arr).all():
        raise InputError(f"embedder {model_id} returned non-finite values")
    return arr


def _load_cached(path: Path, n: int, dim: int) -> tuple[npt.NDArray[np.float32] | None, str | None]:
    """``(vectors, None)`` on a hit, ``(None, None)`` when absent, ``(None, why)`` when unusable."""
    if not path.exists():
        return None, None
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        return None, f"unreadable: {exc}"
    if arr.dtype != np.float32 or arr.shape != (n, dim):
        return None, f"holds {arr.dtype} {arr.shape}, expected float32 {(n, dim)}"
    if not np.isfinite(arr).all():
        return None, "holds non-finite values"
    return np.ascontiguousarray(arr), None


def _save_atomic(path: Path, vectors: npt.NDArray[np.float32]) -> None:
    """``np.save`` to a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, vectors, allow_pickle=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
