"""Approximate dense search with FAISS: labelled approximate, recall against exact search
computed on the same queries (never assumed), the CLI option, and the missing extra."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankproof import ConfigError, MissingExtraError
from rankproof.cli import app
from rankproof.retrieval import DenseRetriever, HashingEmbedder

pytest.importorskip("faiss", reason="the faiss extra is not installed")

DOCS = [(f"doc{i:04d}", f"t{i} t{i % 7} t{i % 11} t{i % 13} t{i % 29} t{(i * 7) % 31}")
        for i in range(1500)]
QUERIES = [(f"q{i:02d}", f"t{i} t{i % 13} t{(i * 3) % 29}") for i in range(40)]


class RandomEmbedder:
    """Gaussian unit vectors seeded by each text's hash: no two scores tie."""

    notes = ("random embedder (test)",)

    def __init__(self, dim: int = 48) -> None:
        self.dim = dim
        self.model_id = f"random-test({dim})"

    def encode(self, texts, batch_size=64):  # type: ignore[no-untyped-def]
        import hashlib

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).normal(size=self.dim)
            out[i] = v / np.linalg.norm(v)
        return out


def _rows(out):  # type: ignore[no-untyped-def]
    per: dict[str, list[str]] = {}
    for q, d, _ in out.run.iter_rows():
        per.setdefault(q, []).append(d)
    return per


@pytest.fixture(scope="module")
def exact():  # type: ignore[no-untyped-def]
    stage = DenseRetriever(HashingEmbedder(dim=64, seed=1))
    stage.index(DOCS)
    return stage.search(QUERIES, k=10)


def test_faiss_flat_gives_the_exact_top_k() -> None:
    plain = DenseRetriever(RandomEmbedder())
    plain.index(DOCS)
    exact = plain.search(QUERIES, k=10)
    stage = DenseRetriever(RandomEmbedder(), index="faiss-flat")
    stage.index(DOCS)
    out = stage.search(QUERIES, k=10)
    assert _rows(out) == _rows(exact)
    got = {(q, d): s for q, d, s in out.run.iter_rows()}
    for q, d, s in exact.run.iter_rows():
        assert got[(q, d)] == pytest.approx(s, abs=1e-6)  # FAISS's own float32 kernel
    assert out.config["search"] == "approximate"
    assert out.config["recall_vs_exact"] == {"k": 10, "recall": 1.0, "queries": 40, "of": 40,
                                             "sample_seed": None}
    assert any("approximate search (faiss-flat); recall@10 against exact search 1.0000, "
               "measured on all 40 queries" in n for n in out.notes)
    assert exact.config["search"] == "exact" and "recall_vs_exact" not in exact.config


@pytest.mark.parametrize(("index", "params"), [("faiss-hnsw", {"m": 4, "ef_search": 10}),
                                               ("faiss-ivf", {"nlist": 32, "nprobe": 2})])
def test_approximate_recall_is_computed_against_exact(exact, index: str,  # type: ignore[no-untyped-def]
                                                      params: dict[str, int]) -> None:
    stage = DenseRetriever(HashingEmbedder(dim=64, seed=1), index=index, index_params=params)
    stage.index(DOCS)
    out = stage.search(QUERIES, k=10)
    want, got = _rows(exact), _rows(out)
    by_hand = np.mean([len(set(got.get(q, [])) & set(want[q])) / len(want[q]) for q in want])
    recall = out.config["recall_vs_exact"]["recall"]
    assert recall == pytest.approx(by_hand, abs=1e-6)
    assert 0.0 < recall <= 1.0
    assert out.config["index"]["index"] == index
    again = DenseRetriever(HashingEmbedder(dim=64, seed=1), index=index, index_params=params)
    again.index(DOCS)
    assert list(again.search(QUERIES, k=10).run.iter_rows()) == list(out.run.iter_rows())


def test_recall_on_a_stated_sample() -> None:
    stage = DenseRetriever(HashingEmbedder(dim=64, seed=1), index="faiss-hnsw",
                           recall_sample=7)
    stage.index(DOCS)
    out = stage.search(QUERIES, k=5)
    r = out.config["recall_vs_exact"]
    assert (r["queries"], r["of"], r["sample_seed"]) == (7, 40, 0)
    assert any("measured on a sample of 7 of 40 queries (seed 0)" in n for n in out.notes)


def test_index_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="unknown dense index 'annoy'"):
        DenseRetriever(HashingEmbedder(), index="annoy")
    with pytest.raises(ConfigError, match="takes no parameter\\(s\\) \\['nprobe'\\]"):
        DenseRetriever(HashingEmbedder(), index="faiss-hnsw", index_params={"nprobe": 3})
    with pytest.raises(ConfigError, match="'m' must be an integer >= 1"):
        DenseRetriever(HashingEmbedder(), index="faiss-hnsw", index_params={"m": 0})
    import rankproof.retrieval._faiss as faiss_module

    monkeypatch.setattr(faiss_module, "find_spec", lambda name: None)  # FAISS not installed
    with pytest.raises(MissingExtraError, match=r"rankproof\[faiss\]"):
        DenseRetriever(HashingEmbedder(), index="faiss-flat")
    DenseRetriever(HashingEmbedder(), index="exact")  # exact needs nothing


def test_eval_dense_index_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, [
        "eval", "--stages", "bm25,dense", "--embedder", "hashing", "--dense-index",
        "faiss-hnsw", "--resamples", "200", "--evidence-depth", "0", "--quiet", "-o", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    dense = next(s for s in report["stages"] if s["name"] == "dense")
    assert dense["config"]["search"] == "approximate"
    recall = dense["config"]["recall_vs_exact"]
    assert recall["of"] == recall["queries"] and 0.0 < recall["recall"] <= 1.0
    assert any("approximate search (faiss-hnsw)" in c for c in report["caveats"])
    assert report["config"]["dense_index"] == "faiss-hnsw"
    bad = CliRunner().invoke(app, ["eval", "--dense-index", "annoy", "--dry-run"])
    assert bad.exit_code == 2
