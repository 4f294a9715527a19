"""Dense stage: exact search equals brute force (ties included), the on-disk cache, determinism."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from tests.retrieval._helpers import DOCS, QUERIES, TableEmbedder

from rankproof import InputError
from rankproof.data import tie_keys
from rankproof.retrieval import DenseRetriever, HashingEmbedder, Retriever, exact_search


def _brute_force(q: np.ndarray, d: np.ndarray, ids: list[str], k: int) -> list[list[str]]:
    """Score everything at once, then sort by (score desc, docid desc) in plain Python."""
    full = q.astype(np.float64) @ d.astype(np.float64).T
    out = []
    for row in full:
        order = sorted(range(len(ids)), key=lambda i: (row[i], ids[i]), reverse=True)
        out.append([ids[i] for i in order[:k]])
    return out


def _sign_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    """Unit vectors with entries +-1/sqrt(dim) (dim a power of 4): every dot product is exact."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 2, size=(n, dim)) * 2 - 1).astype(np.float32) / np.sqrt(dim)


@pytest.mark.parametrize(("dim", "k", "chunk"), [(4, 1, 7), (4, 5, 1), (16, 50, 37),
                                                 (16, 600, 128), (64, 20, 10_000)])
def test_exact_search_equals_brute_force_with_ties(dim: int, k: int, chunk: int) -> None:
    docs = _sign_vectors(500, dim, seed=1)
    queries = _sign_vectors(12, dim, seed=2)
    ids = [f"d{i:03d}" for i in np.random.default_rng(3).permutation(500)]
    results = exact_search(queries, docs, k, tie_keys(ids), chunk_size=chunk)
    expected = _brute_force(queries, docs, ids, k)
    full = queries @ docs.T
    for qi, ((best, scores), want) in enumerate(zip(results, expected, strict=True)):
        assert [ids[i] for i in best] == want
        assert scores.tolist() == full[qi, best].tolist()
    if dim == 4:  # 16 distinct vectors among 500 documents: ties everywhere
        assert len(set(full[0].tolist())) < 10


def test_exact_search_random_floats_matches_argsort() -> None:
    rng = np.random.default_rng(0)
    docs = rng.normal(size=(1000, 24)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = docs[rng.integers(0, 1000, size=5)] + 0.1 * rng.normal(size=(5, 24)).astype(
        np.float32)
    ids = [f"doc-{i}" for i in range(1000)]
    results = exact_search(queries, docs, 10, tie_keys(ids), chunk_size=97)
    for qi, (best, scores) in enumerate(results):
        want = np.argsort(-(docs @ queries[qi]), kind="stable")[:10]
        assert best.tolist() == want.tolist()
        assert np.all(np.diff(scores) <= 0)


def test_exact_search_refuses_shape_mismatch() -> None:
    with pytest.raises(ValueError, match="shape mismatch"):
        exact_search(np.zeros((1, 3), np.float32), np.zeros((2, 4), np.float32), 1,
                     tie_keys(["a", "b"]))


def _table_stage(tmp_path: Path | None = None) -> tuple[DenseRetriever, TableEmbedder]:
    vecs = _sign_vectors(len(DOCS) + len(QUERIES), 16, seed=5)
    table = {t: vecs[i] for i, (_, t) in enumerate(DOCS)}
    table.update({t: vecs[len(DOCS) + i] for i, (_, t) in enumerate(QUERIES)})
    emb = TableEmbedder(table, 16)
    return DenseRetriever(emb, cache_dir=tmp_path), emb


def test_dense_stage_ranks_by_cosine_and_times_every_query() -> None:
    stage, emb = _table_stage()
    assert isinstance(stage, Retriever)
    stage.index(DOCS)
    out = stage.search(QUERIES, k=3)
    doc_ids = [d for d, _ in DOCS]
    for qid, text in QUERIES:
        q = emb.table[text][None, :]
        want = _brute_force(q, stage.vectors, doc_ids, 3)[0]
        assert [d for qq, d, _ in out.run.iter_rows() if qq == qid] == want
    assert set(out.latency_ms) == {q for q, _ in QUERIES}
    assert all(v > 0 for v in out.latency_ms.values())
    assert out.notes == ("table embedder (test)",)
    assert out.config["model"] == "table" and out.config["similarity"] == "cosine"


def _shard_files(folder: Path) -> tuple[list[Path], list[Path]]:
    return sorted(folder.glob("shard-*.keys.npy")), sorted(folder.glob("shard-*.vecs.npy"))


def test_cache_hit_on_second_index(tmp_path: Path) -> None:
    first, _ = _table_stage(tmp_path)
    first.index(DOCS)
    assert first.cache_hit is False and first.cache_path is not None
    assert first.cache_path.is_dir()
    assert [p.name for p in tmp_path.iterdir()] == [first.cache_path.name]  # one model folder
    keys, vecs = _shard_files(first.cache_path)
    assert len(keys) == len(vecs) == 1
    assert not [p for p in first.cache_path.iterdir() if p.name.startswith(".")]  # no temp file
    second, emb2 = _table_stage(tmp_path)
    second.index(DOCS)
    assert second.cache_hit is True
    assert second.cache_path == first.cache_path
    assert emb2.calls == 0  # documents came from the cache
    assert np.array_equal(second.vectors, first.vectors)
    assert np.array_equal(np.load(vecs[0]), first.vectors)  # one shard, in corpus order
    out1, out2 = first.search(QUERIES, k=4), second.search(QUERIES, k=4)
    assert list(out1.run.iter_rows()) == list(out2.run.iter_rows())
    assert out1.config == out2.config  # cache state is not part of the recorded config


def test_cache_is_keyed_by_content_and_model(tmp_path: Path) -> None:
    stage, emb = _table_stage(tmp_path)
    stage.index(DOCS)
    folder = stage.cache_path
    stage.index(DOCS[:-1])  # a subset: every text is cached already
    assert stage.cache_path == folder and stage.cache_hit is True and emb.calls == 1
    changed = [*DOCS[:-1], (DOCS[-1][0], DOCS[0][1])]  # same ids, one text changed: a
    stage.index(changed)  # text seen before, so still nothing to embed
    assert stage.cache_hit is True and emb.calls == 1
    assert np.array_equal(stage.vectors[-1], stage.vectors[0])
    a = DenseRetriever(HashingEmbedder(dim=8, seed=0), cache_dir=tmp_path)
    b = DenseRetriever(HashingEmbedder(dim=8, seed=1), cache_dir=tmp_path)
    a.index(DOCS)
    b.index(DOCS)
    assert a.cache_path != b.cache_path
    assert len(list(tmp_path.iterdir())) == 3  # one folder per model


@pytest.mark.parametrize("damage", ["garbage", "wrong_shape"])
def test_unusable_cache_is_recomputed_and_noted(tmp_path: Path, damage: str) -> None:
    stage, _ = _table_stage(tmp_path)
    stage.index(DOCS)
    assert stage.cache_path is not None
    [path] = _shard_files(stage.cache_path)[1]
    good = np.load(path)
    if damage == "garbage":
        path.write_bytes(b"not a numpy file")
    else:
        np.save(path, good[:3])
    again, emb = _table_stage(tmp_path)
    again.index(DOCS)
    assert again.cache_hit is False and emb.calls == 1
    [path] = _shard_files(stage.cache_path)[1]
    assert np.array_equal(np.load(path), good)
    out = again.search(QUERIES[:1], k=1)
    assert any("embedding cache" in n and "recomputed" in n for n in out.notes)


def test_embedder_returning_bad_shape_is_an_error() -> None:
    class Broken(TableEmbedder):
        def encode(self, texts, batch_size=64):  # type: ignore[no-untyped-def]
            return np.zeros((len(texts), 3), dtype=np.float32)

    stage = DenseRetriever(Broken({}, 4, "broken"))
    with pytest.raises(ValueError, match="returned shape \\(8, 3\\), expected \\(8, 4\\)"):
        stage.index(DOCS)


def test_dense_validation() -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        DenseRetriever(HashingEmbedder(), batch_size=0)
    with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
        DenseRetriever(HashingEmbedder(), chunk_size=0)
    with pytest.raises(RuntimeError, match="call index\\(\\) before search\\(\\)"):
        DenseRetriever(HashingEmbedder()).search(QUERIES, k=1)
    with pytest.raises(InputError, match="duplicate doc id"):
        DenseRetriever(HashingEmbedder()).index([("a", "x"), ("a", "y")])


def test_hashing_dense_stage_is_deterministic_and_labelled() -> None:
    outs = []
    for _ in range(2):
        stage = DenseRetriever(HashingEmbedder(dim=64, seed=3))
        stage.index(DOCS)
        outs.append(stage.search(QUERIES, k=5))
    assert list(outs[0].run.iter_rows()) == list(outs[1].run.iter_rows())
    assert "test-double embedder: scores are not semantic" in outs[0].notes
    assert outs[0].run.notes == outs[0].notes
    # Shared words pull the right document up even for the test double; dense search
    # scores every document, so every query (even stop words only) gets a list.
    first: dict[str, str] = {}
    for q, d, _ in outs[0].run.iter_rows():
        first.setdefault(q, d)
    assert first["q-honey"] == "bees"
    assert set(outs[0].run.topics) == {q for q, _ in QUERIES}


def test_chunk_size_does_not_change_results() -> None:
    results = []
    for chunk in (1, 3, 10_000):
        stage = DenseRetriever(HashingEmbedder(dim=32), chunk_size=chunk)
        stage.index(DOCS)
        results.append(list(stage.search(QUERIES, k=4).run.iter_rows()))
    for a, b in itertools.pairwise(results):
        assert [(q, d) for q, d, _ in a] == [(q, d) for q, d, _ in b]
