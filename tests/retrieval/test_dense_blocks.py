"""Exact search in blocks: identical to the whole-row search it replaced (ids, scores and
trec_eval's tie order), in memory or read block by block from the shard files."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from rankproof.data import tie_keys, top_k
from rankproof.retrieval import DenseRetriever, HashingEmbedder, block_search, exact_search


def _whole_row_search(queries: np.ndarray, docs: np.ndarray, k: int, keys: np.ndarray,
                      chunk_size: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The exact search as it was before blocks: every score of a query block at once,
    then one top-k over the whole row (kept here as the reference)."""
    n_docs = docs.shape[0]
    block = max(1, (1 << 24) // max(n_docs, 1))
    out = []
    for q0 in range(0, queries.shape[0], block):
        qb = queries[q0:q0 + block]
        scores = np.empty((qb.shape[0], n_docs), dtype=np.float32)
        for d0 in range(0, n_docs, chunk_size):
            np.matmul(qb, docs[d0:d0 + chunk_size].T, out=scores[:, d0:d0 + chunk_size])
        for row in scores:
            best = top_k(row, k, keys)
            out.append((best, row[best]))
    return out


def _data(kind: str, n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "ties":  # few distinct vectors: ties everywhere
        base = (rng.integers(0, 2, size=(6, dim)) * 2 - 1).astype(np.float32) / np.sqrt(dim)
        return base[rng.integers(0, 6, size=n)]
    x = rng.normal(size=(n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize(("kind", "k", "chunk"), [("ties", 1, 7), ("ties", 25, 64),
                                                  ("ties", 900, 100), ("floats", 10, 97),
                                                  ("floats", 50, 1000), ("floats", 3, 1)])
def test_block_search_equals_whole_row_search(kind: str, k: int, chunk: int) -> None:
    docs = _data(kind, 800, 16, seed=1)
    queries = _data(kind, 9, 16, seed=2)
    ids = [f"d{i:04d}" for i in np.random.default_rng(3).permutation(800)]
    keys = tie_keys(ids)
    want = _whole_row_search(queries, docs, k, keys, chunk)
    got = exact_search(queries, docs, k, keys, chunk_size=chunk)
    blocks = ((s, docs[s:s + chunk]) for s in range(0, 800, chunk))
    streamed = block_search(queries, blocks, 800, k, keys)
    for (wi, ws), (gi, gs), (si, ss) in zip(want, got, streamed, strict=True):
        assert wi.tolist() == gi.tolist() == si.tolist()
        assert ws.tobytes() == gs.tobytes() == ss.tobytes()  # the same float32 bits
    if kind == "ties":
        assert len(np.unique(queries[0] @ docs.T)) < 10


def test_block_search_checks_its_blocks() -> None:
    docs = _data("floats", 10, 4, seed=0)
    keys = tie_keys([str(i) for i in range(10)])
    with pytest.raises(ValueError, match="does not continue row 0"):
        block_search(docs[:1], [(5, docs[5:])], 10, 3, keys)
    with pytest.raises(ValueError, match="covered 5 documents, expected 10"):
        block_search(docs[:1], [(0, docs[:5])], 10, 3, keys)


WORDS = ("alpha", "beta", "gamma", "delta", "river", "stone", "cloud", "honey", "lava", "train",
         "oak", "pine")
DOCS = [(f"doc{i:03d}", " ".join(WORDS[(i * j) % 12] for j in range(1, 5)) + f" w{i % 17}")
        for i in range(300)]
QUERIES = [(f"q{i}", f"{WORDS[i % 12]} {WORDS[(i * 5) % 12]} w{i}") for i in range(12)]


def test_corpus_searched_from_shard_files_is_identical(tmp_path: Path) -> None:
    memory = DenseRetriever(HashingEmbedder(dim=32), chunk_size=50)
    memory.index(DOCS)
    disk = DenseRetriever(HashingEmbedder(dim=32), cache_dir=tmp_path, chunk_size=50,
                          shard_size=64, max_matrix_mb=0)
    disk.index(DOCS)
    assert disk._corpus is not None and disk._corpus.matrix is None  # read from the shards
    a, b = memory.search(QUERIES, k=20), disk.search(QUERIES, k=20)
    assert list(a.run.iter_rows()) == list(b.run.iter_rows())  # ids, scores, order
    assert a.config == b.config
    assert set(b.latency_ms) == {q for q, _ in QUERIES}
    assert any("searched from its shard files in one pass" in n for n in b.notes)
    assert not any("shard files" in n for n in a.notes)
    # Many ties (the hashing double gives equal vectors to equal bags of words): the
    # tie order is trec_eval's, docid descending.
    rows = [(q, d, s) for q, d, s in b.run.iter_rows()]
    for (q1, d1, s1), (q2, d2, s2) in itertools.pairwise(rows):
        if q1 == q2 and s1 == s2:
            assert d1 > d2
