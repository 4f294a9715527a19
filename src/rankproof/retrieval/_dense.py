"""Dense retrieval: cosine similarity over cached, sharded embeddings; exact or FAISS search.

Document vectors come from an `Embedder` (unit length, so cosine = dot
product) through the sharded, content-addressed embedding cache
(`rankproof.retrieval._embed_cache`): only texts never embedded by this
model are embedded, in shards that can run on an `Executor`'s workers and
are stored as each finishes, so an interrupted indexing resumes.

**Exact search** (the default) scores every document in blocks of
``chunk_size`` rows with a running top-k per query (`block_search`); the top
``k`` are ordered by trec_eval's rule (score descending, docid descending).
A corpus whose matrix fits in ``max_matrix_mb`` is held in memory and each
query is searched alone, inside its own timed region; a larger one is read
block by block from the memory-mapped shard files in one pass for the whole
batch (bounded memory), and each query's latency is then its own embedding
plus an equal share of the pass (the output says so). Both give the same
documents and the same scores.

**Approximate search** (``index="faiss-flat" | "faiss-hnsw" | "faiss-ivf"``,
the ``faiss`` extra) answers each query from a FAISS index, then measures the
stage's recall@k against the exact search on the same queries (all of them,
or ``recall_sample`` drawn with a fixed seed): the figure goes into the
output's config (``recall_vs_exact``) and its notes, which label the stage
approximate. It is computed, never assumed.

Caches written by older versions (one ``.npy`` per corpus) are moved into
shards the first time the same corpus is indexed.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankproof._errors import ConfigError, InputError, MissingExtraError
from rankproof.data import tie_keys
from rankproof.engine import Executor
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
from rankproof.retrieval._embed_cache import (
    DEFAULT_SHARD_SIZE,
    EmbedStats,
    checked_vectors,
    embed_corpus,
    model_folder,
    model_key,
    slug,
)
from rankproof.retrieval._faiss import INDEXES, FaissIndex, check_index, faiss_problem
from rankproof.retrieval._search import Hits, block_search, matrix_blocks, recall_against
from rankproof.retrieval._shards import CorpusVectors

DEFAULT_MAX_MATRIX_MB = 2048
"""The largest corpus matrix a dense stage holds in memory (MiB); larger ones are searched
from the shard files."""
DEFAULT_RECALL_SAMPLE = 1000
"""The most queries an approximate stage searches exactly to measure its recall."""
RECALL_SEED = 0


def exact_search(
    queries: npt.NDArray[np.float32],
    docs: npt.NDArray[np.float32],
    k: int,
    keys: npt.NDArray[np.int64],
    *,
    chunk_size: int = 16384,
) -> list[Hits]:
    """Exact inner-product top-``k`` of each query row against every document row.

    Returns, per query, ``(doc indices, scores)`` best first; ties are broken
    by ``keys`` ascending (from :func:`tie_keys`: docid descending). Products
    are computed in blocks of at most ``chunk_size`` documents and as many
    queries as keep ``queries x documents`` under 2**24 floats, with a
    running top-k per query (`block_search` over the in-memory matrix).
    """
    if queries.ndim != 2 or docs.ndim != 2 or queries.shape[1] != docs.shape[1]:
        raise InputError(f"shape mismatch: queries {queries.shape}, docs {docs.shape}")
    if chunk_size < 1:
        raise InputError(f"chunk_size must be positive, got {chunk_size}")
    return block_search(queries, matrix_blocks(docs, chunk_size), docs.shape[0], k, keys)


def _positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}")


class DenseRetriever:
    """Cosine search over embeddings from ``embedder``: exact in blocks, or a FAISS index.

    ``cache_dir`` (optional) keeps document embeddings between runs, in
    shards keyed by the model's identity and each text's content.
    ``executor`` embeds the missing shards on its workers (None: in this
    process, as before). ``index``: ``"exact"`` or a FAISS index
    (`rankproof.retrieval.DENSE_INDEXES`), with ``index_params``. Queries are
    embedded one at a time inside the timed region, so ``latency_ms`` is what
    one request costs (query embedding + search + top-k).
    """

    def __init__(
        self,
        embedder: Embedder,
        cache_dir: str | os.PathLike[str] | None = None,
        batch_size: int = 64,
        *,
        name: str = "dense",
        chunk_size: int = 16384,
        executor: Executor | None = None,
        index: str = "exact",
        index_params: Mapping[str, Any] | None = None,
        shard_size: int = DEFAULT_SHARD_SIZE,
        max_matrix_mb: int = DEFAULT_MAX_MATRIX_MB,
        recall_sample: int = DEFAULT_RECALL_SAMPLE,
    ) -> None:
        for pname, value in (("batch_size", batch_size), ("chunk_size", chunk_size),
                             ("shard_size", shard_size), ("recall_sample", recall_sample)):
            _positive(pname, value)
        if isinstance(max_matrix_mb, bool) or not isinstance(max_matrix_mb, int) \
                or max_matrix_mb < 0:
            raise InputError(f"max_matrix_mb must be an integer >= 0, got {max_matrix_mb!r}")
        self.index_params = check_index(index, index_params)
        problem = faiss_problem(index)
        if problem is not None:
            raise MissingExtraError(problem)
        self.name = name
        self.embedder = embedder
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.batch_size = batch_size
        self.chunk_size = chunk_size
        self.executor = executor
        self.index_kind = index
        self.shard_size = shard_size
        self.max_matrix_mb = max_matrix_mb
        self.recall_sample = recall_sample
        self.indexed_digest: str | None = None
        self.cache_path: Path | None = None
        """The model's shard folder (after `index`, with a ``cache_dir``)."""
        self.cache_hit: bool | None = None
        """True when every chunk came from the cache (None without a ``cache_dir``)."""
        self.embed_stats: EmbedStats | None = None
        self._cache_notes: tuple[str, ...] = ()
        self._ids: list[str] = []
        self._id_array: pa.Array | None = None
        self._keys = np.zeros(0, dtype=np.int64)
        self._corpus: CorpusVectors | None = None
        self._faiss: FaissIndex | None = None

    @property
    def approximate(self) -> bool:
        return self.index_kind != "exact"

    @property
    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "stage": "dense", "name": self.name, "model": self.embedder.model_id,
            "dim": int(self.embedder.dim), "similarity": "cosine",
            "search": "approximate" if self.approximate else "exact",
            "corpus": self.indexed_digest}
        if self.approximate:
            out["index"] = {"index": self.index_kind, **self.index_params}
        identity = embedder_identity(self.embedder)
        if identity is not None:
            out["model_identity"] = {"name": identity.name, "digest": identity.digest}
        return out

    @property
    def vectors(self) -> npt.NDArray[np.float32]:
        """The document embeddings, one row per indexed document (after `index`; a corpus
        searched from its shard files is read into memory for this)."""
        if self._corpus is None:
            raise RuntimeError(f"{self.name}: call index() first")
        return self._corpus.load()

    def cache_key(self, digest: str) -> str:
        """The whole-corpus cache file name older versions used for documents with
        ``digest`` (such a file is moved into shards when found)."""
        key, label = model_key(self.embedder)
        model, dim = key.rsplit("\0", 1)
        h = hashlib.sha256(f"{model}\0{dim}\0{digest}".encode())
        return f"{slug(label)}-{h.hexdigest()[:32]}.npy"

    def index(self, docs: Docs) -> None:
        """Embed ``docs`` (only what the cache lacks); a no-op for the same documents."""
        ids, texts = check_docs(docs)
        digest = docs_digest(docs)
        if digest == self.indexed_digest:
            return
        legacy = self.cache_dir / self.cache_key(digest) if self.cache_dir else None
        corpus, stats = embed_corpus(texts, self.embedder, cache_dir=self.cache_dir,
                                     batch_size=self.batch_size, shard_size=self.shard_size,
                                     executor=self.executor, legacy=legacy)
        if corpus.matrix is None and corpus.nbytes <= self.max_matrix_mb * (1 << 20):
            corpus = CorpusVectors(corpus.n, corpus.dim, matrix=corpus.load())
        self.embed_stats = stats
        self.cache_hit = stats.embedded == 0 if self.cache_dir is not None else None
        self.cache_path = (model_folder(self.cache_dir, self.embedder)
                           if self.cache_dir is not None else None)
        self._cache_notes = tuple(
            f"{self.name}: embedding cache {line} was unusable; recomputed its chunks"
            for line in stats.rejected)
        self._corpus = corpus
        self._ids = ids
        self._id_array = pa.array(ids, type=pa.string())
        self._keys = tie_keys(ids)
        self._faiss = None
        if self.approximate:
            index = FaissIndex(self.index_kind, corpus.dim, corpus.n, self.index_params)
            index.build(corpus.blocks(self.chunk_size), sample=corpus.take)
            self._faiss = index
        self.indexed_digest = digest

    def _embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return checked_vectors(self.embedder.encode([text], 1), 1, int(self.embedder.dim),
                               self.embedder.model_id)

    def search(self, queries: Queries, k: int) -> StageOutput:
        qids, texts = check_queries(queries, k)
        if self._corpus is None:
            raise RuntimeError(f"{self.name}: call index() before search()")
        corpus = self._corpus
        builder = RunBuilder(self._id_array)
        latency: dict[str, float] = {}
        config = {**self.config, "k": int(k)}
        extra: tuple[str, ...] = ()
        if self._faiss is not None:
            extra = self._search_faiss(qids, texts, k, builder, latency, config)
        elif corpus.matrix is not None:
            for qid, text in zip(qids, texts, strict=True):
                with timed(latency, qid):
                    [(best, scores)] = exact_search(self._embed_query(text), corpus.matrix, k,
                                                    self._keys, chunk_size=self.chunk_size)
                builder.add_hits(qid, best, scores)
        else:
            extra = self._search_shards(qids, texts, k, builder, latency)
        notes = merge_notes(embedder_notes(self.embedder), self._cache_notes, extra,
                            builder.empty_note(self.name, len(qids)))
        return StageOutput(run=builder.build(self.name, notes), latency_ms=latency, notes=notes,
                           config=config)

    def _search_shards(self, qids: list[str], texts: list[str], k: int, builder: RunBuilder,
                       latency: dict[str, float]) -> tuple[str, ...]:
        """One pass over the shard files for the whole batch (bounded memory)."""
        corpus = self._corpus
        assert corpus is not None
        qvecs = np.empty((len(qids), corpus.dim), dtype=np.float32)
        for i, (qid, text) in enumerate(zip(qids, texts, strict=True)):
            with timed(latency, qid):
                qvecs[i] = self._embed_query(text)[0]
        start = time.perf_counter()
        # One query per product: the same bits as a corpus held in memory gives.
        hits = block_search(qvecs, corpus.blocks(self.chunk_size), corpus.n, k, self._keys,
                            queries_per_product=1)
        share = (time.perf_counter() - start) * 1000.0 / len(qids)
        for qid, (best, scores) in zip(qids, hits, strict=True):
            latency[qid] += share
            builder.add_hits(qid, best, scores)
        return (f"{self.name}: the corpus ({corpus.n:,} vectors, "
                f"{corpus.nbytes / (1 << 20):,.0f} MiB) exceeds max_matrix_mb "
                f"({self.max_matrix_mb:,}), so it was searched from its shard files in one "
                "pass for the whole batch; each query's latency is its embedding plus an equal "
                "share of that pass",)

    def _search_faiss(self, qids: list[str], texts: list[str], k: int, builder: RunBuilder,
                      latency: dict[str, float], config: dict[str, Any]) -> tuple[str, ...]:
        """FAISS per query (timed), then recall@k against exact search (untimed)."""
        index, corpus = self._faiss, self._corpus
        assert index is not None and corpus is not None
        qvecs = np.empty((len(qids), corpus.dim), dtype=np.float32)
        found: list[npt.NDArray[np.int64]] = []
        for i, (qid, text) in enumerate(zip(qids, texts, strict=True)):
            with timed(latency, qid):
                q = self._embed_query(text)
                ids, scores = index.search(q, k)
                keep = ids[0] >= 0
                best, sc = ids[0][keep], scores[0][keep]
                order = np.lexsort((self._keys[best], -sc))  # trec_eval's tie order
                best, sc = best[order], sc[order]
            qvecs[i] = q[0]
            found.append(best)
            builder.add_hits(qid, best, sc)
        n = len(qids)
        if n <= self.recall_sample:
            sample = np.arange(n)
        else:
            rng = np.random.default_rng(RECALL_SEED)
            sample = np.sort(rng.choice(n, size=self.recall_sample, replace=False))
        exact = block_search(qvecs[sample], corpus.blocks(self.chunk_size), corpus.n, k,
                             self._keys)
        recall = recall_against([found[i] for i in sample.tolist()], [e for e, _ in exact])
        config["index"] = index.describe(k)
        config["recall_vs_exact"] = {"k": int(k), "recall": round(recall, 6),
                                     "queries": len(sample), "of": n,
                                     "sample_seed": RECALL_SEED if len(sample) < n else None}
        measured = (f"all {n} queries" if len(sample) == n
                    else f"a sample of {len(sample)} of {n} queries (seed {RECALL_SEED})")
        return (f"{self.name}: approximate search ({self.index_kind}); recall@{k} against "
                f"exact search {recall:.4f}, measured on {measured}",)


DENSE_INDEXES = INDEXES


def check_dense_index(index: str) -> None:
    """`ConfigError` for an unknown index; `MissingExtraError` when FAISS is missing."""
    problem = faiss_problem(index)
    if problem is None:
        return
    if index not in INDEXES:
        raise ConfigError(problem)
    raise MissingExtraError(problem)
