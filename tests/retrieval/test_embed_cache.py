"""The sharded embedding cache: resume after an interruption, corrupt shards, content
addressing, legacy migration, and embedding through an executor (local pool, Ray)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from rankproof import ConfigError, InputError
from rankproof.engine import LocalExecutor, RayExecutor
from rankproof.retrieval import DenseRetriever, HashingEmbedder, embedder_spec

WORDS = ("alpha", "beta", "gamma", "delta", "river", "stone", "cloud", "honey", "lava", "train")
DOCS = [(f"d{i:02d}", f"{WORDS[i % 10]} {WORDS[(i * 3) % 10]} {WORDS[(i * 7) % 10]} n{i}")
        for i in range(20)]
QUERIES = [("q1", "river stone"), ("q2", "honey lava cloud"), ("q3", "n7 train")]


class Interrupted(RuntimeError):
    pass


class CountingEmbedder(HashingEmbedder):
    """The hashing double, counting encode calls and texts; raises after ``fail_after``."""

    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__(dim=16, seed=0)
        self.calls = 0
        self.texts: list[str] = []
        self.fail_after = fail_after

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise Interrupted(f"killed after {self.calls} shards")
        self.calls += 1
        self.texts.extend(texts)
        return super().encode(texts, batch_size)


def _shards(folder: Path | None) -> list[Path]:
    assert folder is not None
    return sorted(folder.glob("shard-*.vecs.npy"))


def _reference() -> np.ndarray:
    stage = DenseRetriever(HashingEmbedder(dim=16, seed=0))
    stage.index(DOCS)
    return stage.vectors


def test_interrupted_embedding_resumes_with_the_missing_shards_only(tmp_path: Path) -> None:
    failing = CountingEmbedder(fail_after=3)
    with pytest.raises(Interrupted):
        DenseRetriever(failing, cache_dir=tmp_path, shard_size=3).index(DOCS)
    stage = DenseRetriever(CountingEmbedder(), cache_dir=tmp_path, shard_size=3)
    assert len(_shards(stage.cache_path or tmp_path / "none")) == 0  # not indexed yet
    emb = CountingEmbedder()
    stage = DenseRetriever(emb, cache_dir=tmp_path, shard_size=3)
    stage.index(DOCS)
    # 20 texts in shards of 3: 3 shards (9 texts) survived; the other 11 take 4 shards.
    assert emb.calls == 4 and len(emb.texts) == 11
    assert emb.texts == [t for _, t in DOCS[9:]]
    assert stage.embed_stats is not None
    assert (stage.embed_stats.cached, stage.embed_stats.embedded) == (9, 11)
    assert stage.embed_stats.shards_written == 4 and len(_shards(stage.cache_path)) == 7
    assert stage.cache_hit is False
    assert np.array_equal(stage.vectors, _reference())  # as if never interrupted
    again = CountingEmbedder()
    warm = DenseRetriever(again, cache_dir=tmp_path, shard_size=3)
    warm.index(DOCS)
    assert again.calls == 0 and warm.cache_hit is True


@pytest.mark.parametrize("damage", ["flipped", "truncated", "keys"])
def test_corrupt_shard_is_detected_and_re_embedded(tmp_path: Path, damage: str) -> None:
    DenseRetriever(CountingEmbedder(), cache_dir=tmp_path, shard_size=8).index(DOCS)
    emb = CountingEmbedder()
    stage = DenseRetriever(emb, cache_dir=tmp_path, shard_size=8)
    folder = tmp_path / next(p.name for p in tmp_path.iterdir())
    victim = _shards(folder)[1]
    size = len(np.load(str(victim).replace(".vecs.npy", ".keys.npy")))
    raw = bytearray(victim.read_bytes())
    if damage == "flipped":  # same size, same shape: only the checksum can tell
        raw[-5] ^= 0x10
        victim.write_bytes(bytes(raw))
    elif damage == "truncated":
        victim.write_bytes(bytes(raw[:-40]))
    else:
        Path(str(victim).replace(".vecs.npy", ".keys.npy")).write_bytes(b"garbage")
    stage.index(DOCS)
    assert emb.calls == 1 and len(emb.texts) == size  # that shard's chunks only
    assert np.array_equal(stage.vectors, _reference())
    out = stage.search(QUERIES, k=3)
    [note] = [n for n in out.notes if "embedding cache" in n]
    assert "was unusable" in note and "recomputed" in note
    if damage == "flipped":
        assert "checksum mismatch" in note
    assert stage.embed_stats is not None and len(stage.embed_stats.rejected) == 1
    assert len(_shards(folder)) == 3  # the bad one removed, a new one written


def test_content_addressing_reorder_and_add(tmp_path: Path) -> None:
    DenseRetriever(CountingEmbedder(), cache_dir=tmp_path).index(DOCS)
    emb = CountingEmbedder()
    stage = DenseRetriever(emb, cache_dir=tmp_path)
    stage.index(list(reversed(DOCS)))
    assert emb.calls == 0 and stage.cache_hit is True
    assert np.array_equal(stage.vectors, _reference()[::-1])
    stage.index([*DOCS, ("new", "a brand new document about volcanoes")])
    assert emb.texts == ["a brand new document about volcanoes"]
    # The same text under two ids (and twice in one corpus) is embedded once.
    emb2 = CountingEmbedder()
    DenseRetriever(emb2).index([("a", "same words"), ("b", "same words"), ("c", "other")])
    assert emb2.texts == ["same words", "other"]


def test_old_whole_corpus_cache_is_migrated(tmp_path: Path) -> None:
    ref = _reference()
    legacy = DenseRetriever(CountingEmbedder(), cache_dir=tmp_path)
    from rankproof.retrieval import docs_digest

    old = tmp_path / legacy.cache_key(docs_digest(DOCS))
    np.save(old, ref)
    emb = CountingEmbedder()
    stage = DenseRetriever(emb, cache_dir=tmp_path)
    stage.index(DOCS)
    assert emb.calls == 0 and stage.cache_hit is True and not old.exists()
    assert stage.embed_stats is not None and "moved into" in (stage.embed_stats.migrated or "")
    assert np.array_equal(stage.vectors, ref) and len(_shards(stage.cache_path)) == 1


def test_executor_path_is_identical_bit_for_bit(tmp_path: Path) -> None:
    ref_stage = DenseRetriever(HashingEmbedder(dim=16, seed=0), shard_size=4)
    ref_stage.index(DOCS)
    with_pool = DenseRetriever(HashingEmbedder(dim=16, seed=0), cache_dir=tmp_path,
                               shard_size=4, executor=LocalExecutor(workers=2))
    with_pool.index(DOCS)
    assert np.array_equal(with_pool.vectors, ref_stage.vectors)
    assert with_pool.embed_stats is not None
    assert with_pool.embed_stats.shards_written == 5
    assert with_pool.embed_stats.engine == {"engine": "local", "workers": 2}
    a, b = ref_stage.search(QUERIES, k=5), with_pool.search(QUERIES, k=5)
    assert list(a.run.iter_rows()) == list(b.run.iter_rows())
    inline = DenseRetriever(HashingEmbedder(dim=16, seed=0), shard_size=4,
                            executor=LocalExecutor(workers=1))
    inline.index(DOCS)
    assert np.array_equal(inline.vectors, ref_stage.vectors)


def test_embedder_specs_rebuild_the_model() -> None:
    spec = embedder_spec(HashingEmbedder(dim=8, seed=3))
    rebuilt = spec.build()
    assert (rebuilt.dim, rebuilt.model_id) == (8, HashingEmbedder(dim=8, seed=3).model_id)


def test_worker_failure_keeps_its_type(tmp_path: Path) -> None:
    class Broken(HashingEmbedder):
        def encode(self, texts: Sequence[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
            return np.zeros((len(texts), 3), dtype=np.float32)

    with pytest.raises(InputError, match="returned shape"):
        DenseRetriever(Broken(dim=4), cache_dir=tmp_path,
                       executor=LocalExecutor(workers=1)).index(DOCS)
    class Local(HashingEmbedder):  # a class defined in a function does not pickle
        def spec(self) -> object:
            return self

    with pytest.raises(ConfigError, match="cannot be sent to the executor's workers"):
        DenseRetriever(Local(dim=4), executor=LocalExecutor(workers=2)).index(DOCS)
    with pytest.raises(ValueError, match="shard_size must be a positive integer"):
        DenseRetriever(HashingEmbedder(), shard_size=0)


@pytest.mark.xdist_group("ray")
def test_ray_executor_embeds_identically(ray_cluster: object, tmp_path: Path) -> None:
    ref = DenseRetriever(HashingEmbedder(dim=16, seed=0))
    ref.index(DOCS)
    executor = RayExecutor()
    try:
        stage = DenseRetriever(HashingEmbedder(dim=16, seed=0), cache_dir=tmp_path,
                               shard_size=6, executor=executor)
        stage.index(DOCS)
    finally:
        executor.close()
    assert np.array_equal(stage.vectors, ref.vectors)
    assert stage.embed_stats is not None and stage.embed_stats.shards_written == 4
    assert stage.embed_stats.engine is not None
    assert stage.embed_stats.engine["engine"] == "ray"
    assert list(stage.search(QUERIES, k=4).run.iter_rows()) == \
        list(ref.search(QUERIES, k=4).run.iter_rows())


@pytest.mark.slow  # two spawned processes each import torch and load MiniLM (~40 s here)
def test_minilm_through_worker_processes(minilm: object, tmp_path: Path) -> None:
    """The spec carries the model's directory, never the torch model; the workers' vectors
    equal the in-process ones to float32 rounding (a worker's torch may sum with another
    thread count), and the cache is keyed by the same identity."""
    from rankproof.retrieval import SentenceTransformerEmbedder

    assert isinstance(minilm, SentenceTransformerEmbedder)
    spec = embedder_spec(minilm)
    assert spec.model_path is None and spec.name == minilm.identity.name
    docs = DOCS[:8]
    here = DenseRetriever(minilm, shard_size=4)
    here.index(docs)
    pooled = DenseRetriever(minilm, cache_dir=tmp_path, shard_size=4,
                            executor=LocalExecutor(workers=2))
    pooled.index(docs)
    assert pooled.embed_stats is not None and pooled.embed_stats.shards_written == 2
    assert np.abs(pooled.vectors - here.vectors).max() <= 1e-6
    warm = DenseRetriever(minilm, cache_dir=tmp_path, shard_size=4)
    warm.index(docs)
    assert warm.cache_hit is True and np.array_equal(warm.vectors, pooled.vectors)
