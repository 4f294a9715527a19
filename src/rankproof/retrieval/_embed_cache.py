"""A resumable, content-addressed embedding cache: shard files of chunk vectors per model.

**Layout.** One folder per model under the cache directory,
``<model label>-<hash>.shards/``, the hash over the model's identity (its name
and file digest for a real model, else its ``model_id``) and the dimension.
Inside, each **shard** is two ``.npy`` files, ``shard-<name>.vecs.npy``
(``float32``, one row per chunk) and ``shard-<name>.keys.npy`` (``S16``, the
chunks' keys, same order). A chunk's key is the first 16 bytes of
sha256(model key, dimension, text): the vector of a text is looked up by its
content, so reordering a corpus, adding documents to it or sharing chunks
between corpora embeds only texts never seen before, and a document id plays
no part. ``<name>`` is sha256 over the keys' and the vectors' bytes: it is the
shard's checksum.

**Atomic, resumable.** Each file is written to a temporary file in the folder
and renamed into place, the vectors first and the keys last (a shard exists
once its keys file does). Texts still missing are embedded in shards of
``shard_size`` chunks, and each finished shard is written at once, so an
embedding interrupted after ``n`` shards resumes with only the rest.

**Never trusted.** Before a shard's vectors are used, its files must load,
have the expected dtype and shape (a truncated file fails here), hold finite
values and match their checksum. A shard that fails is removed and its chunks
are embedded again, and the stage output says so (`EmbedStats.rejected`).

**Across workers.** Shards may be embedded through an `Executor`
(``kind="cpu"``): each task carries a picklable *spec* of the embedder
(`embedder_spec`: the hashing double's parameters, a sentence-transformers
model's directory), from which the worker builds the embedder once per
process. Guarantee: the same shard (same texts, same ``batch_size``) gives
the same vectors whichever engine embeds it — bit for bit for
`HashingEmbedder` (each text's vector is computed alone); for a torch model
equal to float32 rounding (a worker may run torch with another thread count,
which can change the last bits of a sum). Which shard a text falls in can
change its batch neighbours, and so the last bits of a torch model's vector;
never more.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import pickle
import re
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rankproof._errors import ConfigError, InputError
from rankproof.engine import Executor
from rankproof.retrieval._embed import (
    Embedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    embedder_identity,
)
from rankproof.retrieval._embed_model import MINILM_ID
from rankproof.retrieval._shards import KEY_DTYPE, CorpusVectors, ShardStore

logger = logging.getLogger(__name__)

DEFAULT_SHARD_SIZE = 4096
"""Chunks per shard: a unit of work for a worker and of loss when a run is interrupted."""



def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:60] or "model"


def model_key(embedder: Embedder) -> tuple[str, str]:
    """``(key, label)``: what identifies the embedder's vectors, and a readable name.

    An embedder with an ``identity`` is keyed by its name and the digest of its
    files (the same files under another path share a cache); any other by its
    ``model_id``. The dimension is always part of the key.
    """
    identity = embedder_identity(embedder)
    key = embedder.model_id if identity is None else f"{identity.name}\0{identity.digest}"
    label = embedder.model_id if identity is None else identity.name
    return f"{key}\0{int(embedder.dim)}", label


def chunk_keys(texts: Sequence[str], key: str) -> npt.NDArray[np.bytes_]:
    """The content keys of ``texts`` under model ``key``: sha256(key, NUL, text)[:16]."""
    base = hashlib.sha256(b"rankproof-chunk-v1\0" + key.encode("utf-8") + b"\0")
    out = np.empty(len(texts), dtype=KEY_DTYPE)
    for i, text in enumerate(texts):
        h = base.copy()
        h.update(text.encode("utf-8"))
        out[i] = h.digest()[:16]
    return out


# ---- picklable embedder specs ------------------------------------------------------------------

@dataclass(frozen=True)
class HashingSpec:
    """Rebuilds `HashingEmbedder(dim, seed)` in a worker."""

    dim: int
    seed: int

    def build(self) -> Embedder:
        return HashingEmbedder(dim=self.dim, seed=self.seed)


@dataclass(frozen=True)
class SentenceTransformerSpec:
    """Rebuilds a `SentenceTransformerEmbedder` from its model directory in a worker
    (``model_path=None``: the bundled all-MiniLM-L6-v2)."""

    model_path: str | None
    name: str | None
    device: str = "cpu"

    def build(self) -> Embedder:
        return SentenceTransformerEmbedder(self.model_path, device=self.device, name=self.name)


def embedder_spec(embedder: Embedder) -> Any:
    """What a worker needs to rebuild ``embedder``: never its torch model.

    An embedder's own ``spec()`` (any picklable object with a ``build()``
    method) wins; `HashingEmbedder` and `SentenceTransformerEmbedder` have
    specs here; any other embedder is sent as it is, and must then pickle.
    """
    own = getattr(embedder, "spec", None)
    if callable(own):
        return own()
    if isinstance(embedder, HashingEmbedder):
        return HashingSpec(embedder.dim, embedder.seed)
    if isinstance(embedder, SentenceTransformerEmbedder):
        default = embedder.model_id == MINILM_ID
        return SentenceTransformerSpec(None if default else str(embedder.model_path),
                                       embedder.identity.name, embedder.device)
    return embedder


_BUILT: dict[Hashable, Embedder] = {}


def _embedder_from(spec: Any) -> Embedder:
    build = getattr(spec, "build", None)
    if not callable(build):
        return spec  # type: ignore[no-any-return]  # the embedder itself, sent as is
    try:
        found = _BUILT.get(spec)
    except TypeError:  # an unhashable spec: build it each time
        return build()  # type: ignore[no-any-return]
    if found is None:
        found = build()
        _BUILT.clear()  # one model per worker process at a time
        _BUILT[spec] = found
    return found


@dataclass
class ShardJob:
    """One shard's work: embed ``texts`` with the embedder ``spec`` builds."""

    index: int
    spec: Any
    texts: list[str]
    batch_size: int


@dataclass
class ShardResult:
    """A shard's vectors; emptied (``vectors=None``) once the caller has stored them."""

    index: int
    vectors: npt.NDArray[np.float32] | None


def embed_shard(job: ShardJob) -> ShardResult:
    """Embed one shard (a module-level function: executors pickle it)."""
    embedder = _embedder_from(job.spec)
    return ShardResult(job.index, np.asarray(embedder.encode(job.texts, job.batch_size)))


def checked_vectors(vectors: Any, n: int, dim: int, model_id: str) -> npt.NDArray[np.float32]:
    """``vectors`` as a C-contiguous float32 ``(n, dim)`` array, or `InputError`."""
    arr = np.asarray(vectors)
    if arr.shape != (n, dim):
        raise InputError(f"embedder {model_id} returned shape {arr.shape}, expected {(n, dim)}")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.isfinite(arr).all():
        raise InputError(f"embedder {model_id} returned non-finite values")
    return arr


# ---- the store ---------------------------------------------------------------------------------

@dataclass
class EmbedStats:
    """What indexing a corpus cost: chunks, distinct texts, cache hits, shards written."""

    chunks: int
    unique: int
    cached: int = 0
    embedded: int = 0
    shards_written: int = 0
    rejected: list[str] = field(default_factory=list)
    """One line per shard found unusable (removed; its chunks embedded again)."""
    migrated: str | None = None
    """The whole-corpus cache file of an older rankproof that was moved into shards."""
    engine: dict[str, Any] | None = None
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"chunks": self.chunks, "unique": self.unique, "cached": self.cached,
                "embedded": self.embedded, "shards_written": self.shards_written,
                "rejected": list(self.rejected), "migrated": self.migrated,
                "engine": self.engine, "seconds": round(self.seconds, 6)}


def model_folder(cache_dir: Path, embedder: Embedder) -> Path:
    """The shard folder of ``embedder``'s vectors under ``cache_dir``."""
    key, label = model_key(embedder)
    return cache_dir / f"{slug(label)}-{hashlib.sha256(key.encode()).hexdigest()[:32]}.shards"


def embed_corpus(
    texts: Sequence[str],
    embedder: Embedder,
    *,
    cache_dir: Path | None,
    batch_size: int = 64,
    shard_size: int = DEFAULT_SHARD_SIZE,
    executor: Executor | None = None,
    legacy: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[CorpusVectors, EmbedStats]:
    """The vectors of ``texts`` (corpus order), embedding only texts not in the cache.

    Distinct missing texts, in order of first appearance, are cut into shards
    of ``shard_size``, embedded in this process (``executor=None``) or through
    ``executor`` (``kind="cpu"``), and each shard is stored as soon as it
    arrives. Without ``cache_dir`` nothing is stored and the matrix is kept in
    memory. ``legacy``: the whole-corpus ``.npy`` an older rankproof cached
    these texts in; when it is usable its vectors are moved into shards (and
    the file removed) instead of being embedded again. ``progress(done,
    total)`` is called after each shard.
    """
    if isinstance(shard_size, bool) or not isinstance(shard_size, int) or shard_size < 1:
        raise InputError(f"shard_size must be a positive integer, got {shard_size!r}")
    started = time.perf_counter()
    dim = int(embedder.dim)
    key, _ = model_key(embedder)
    keys = chunk_keys(texts, key)
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    stats = EmbedStats(chunks=len(texts), unique=len(uniq),
                       engine=executor.describe() if executor is not None else None)
    store = ShardStore(model_folder(cache_dir, embedder), dim) if cache_dir is not None else None
    # Distinct texts in first-seen order; `found` holds their (shard, row) when cached.
    seen_order = np.argsort(first, kind="stable")
    u_keys = uniq[seen_order]
    u_first = first[seen_order]
    found = _cached(store, u_keys)
    if store is not None and legacy is not None and legacy.exists() and (found[:, 0] < 0).any():
        stats.migrated = _migrate(store, legacy, u_keys, u_first, len(texts), shard_size)
        found = _cached(store, u_keys)
    missing = np.flatnonzero(found[:, 0] < 0)
    stats.cached = len(u_keys) - len(missing)
    fresh: list[npt.NDArray[np.float32]] = []
    jobs_rows = [missing[i:i + shard_size] for i in range(0, len(missing), shard_size)]

    def store_result(i: int, r: ShardResult) -> None:
        rows = jobs_rows[i]
        vecs = checked_vectors(r.vectors, len(rows), dim, embedder.model_id)
        r.vectors = None  # the executor keeps every result: keep them small
        if store is not None:
            store.add(u_keys[rows], vecs)
            stats.shards_written += 1
        else:
            fresh.append(vecs)
        stats.embedded += len(rows)
        if progress is not None:
            progress(stats.embedded, len(missing))

    if jobs_rows:
        spec = embedder_spec(embedder) if executor is not None else None
        if executor is not None and (executor.name != "local" or executor.workers > 1):
            _check_picklable(spec, embedder)
        jobs = [ShardJob(i, spec, [texts[int(u_first[j])] for j in rows], batch_size)
                for i, rows in enumerate(jobs_rows)]
        if executor is None:
            for i, job in enumerate(jobs):
                store_result(i, ShardResult(i, embedder.encode(job.texts, batch_size)))
        else:
            _prime(spec, embedder)  # an inline executor reuses the model already loaded
            try:
                executor.map(embed_shard, jobs, kind="cpu", on_result=store_result)
            finally:
                _prime(spec, None)
    if store is not None:
        if jobs_rows:
            store.rescan()  # the new shards join the table
            found = _cached(store, u_keys)
        if (found[:, 0] < 0).any():  # pragma: no cover - a shard vanished while we ran
            raise InputError(f"embedding cache {store.folder}: shards disappeared while "
                             "indexing; run again")
        stats.rejected = list(store.rejected)
        by_unique = np.empty_like(found)
        by_unique[seen_order] = found
        corpus = CorpusVectors(len(texts), dim, store=store, where=by_unique[inverse])
    else:
        matrix_u = np.concatenate(fresh) if fresh else np.zeros((0, dim), dtype=np.float32)
        pos = np.empty(len(u_keys), dtype=np.int64)
        pos[missing] = np.arange(len(missing))
        at = np.empty(len(u_keys), dtype=np.int64)
        at[seen_order] = pos
        corpus = CorpusVectors(len(texts), dim, matrix=matrix_u[at[inverse]])
    stats.seconds = time.perf_counter() - started
    return corpus, stats


def _check_picklable(spec: Any, embedder: Embedder) -> None:
    """`ConfigError` when the spec cannot travel to a worker (before any work starts)."""
    try:
        pickle.dumps(spec)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"embedder {embedder.model_id!r} cannot be sent to the executor's workers "
            f"({type(exc).__name__}: {exc}); give it a spec() method returning a picklable "
            "object whose build() makes the embedder, or embed in this process "
            "(no executor)") from None


def _prime(spec: Any, embedder: Embedder | None) -> None:
    try:
        if embedder is None:
            _BUILT.pop(spec, None)
        else:
            _BUILT[spec] = embedder
    except TypeError:  # an unhashable spec is never remembered
        pass


def _cached(store: ShardStore | None, keys: npt.NDArray[np.bytes_]) -> npt.NDArray[np.int64]:
    """(shard, row) per key, after verifying every shard used (rejected ones looked up again)."""
    if store is None:
        return np.full((len(keys), 2), -1, dtype=np.int64)
    while True:
        found = store.rows_of(keys)
        used = np.unique(found[found[:, 0] >= 0, 0]).tolist()
        if store.verify(used):
            return found


def _migrate(store: ShardStore, legacy: Path, u_keys: npt.NDArray[np.bytes_],
             u_first: npt.NDArray[np.int64], n: int, shard_size: int) -> str:
    """Move an older whole-corpus cache file's vectors into shards; what happened, in words."""
    try:
        arr = np.load(legacy, allow_pickle=False)
        usable = arr.dtype == np.float32 and arr.shape == (n, store.dim) \
            and bool(np.isfinite(arr).all())
        why = "" if usable else f"holds {arr.dtype} {arr.shape}, expected float32 {(n, store.dim)}"
    except (OSError, ValueError) as exc:
        usable, why = False, f"unreadable: {exc}"
    if usable:
        vecs = np.ascontiguousarray(arr[u_first])
        for i in range(0, len(u_keys), shard_size):
            store.add(u_keys[i:i + shard_size], vecs[i:i + shard_size])
        store.rescan()
        what = f"{legacy.name}: moved into {store.folder.name}"
    else:
        what = f"{legacy.name}: unusable ({why}); removed, its texts embedded again"
        store.rejected.append(what)
    with contextlib.suppress(FileNotFoundError):
        legacy.unlink()
    logger.info("embedding cache %s", what)
    return what
