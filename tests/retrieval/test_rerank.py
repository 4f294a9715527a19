"""Rerank stage through the real sentence-transformers path, with a tiny random cross-encoder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from tests.retrieval._helpers import DOCS, QUERIES

from rankproof import ConfigError
from rankproof._errors import MissingExtraError
from rankproof.retrieval import (
    PLUMBING_NOTE,
    BM25Retriever,
    CrossEncoder,
    RerankRetriever,
    Retriever,
    SentenceTransformerCrossEncoder,
    make_plumbing_cross_encoder,
    rerank_unavailable_reason,
)


@pytest.fixture(scope="module")
def cross_encoder(tiny_cross_encoder_dir: Path) -> SentenceTransformerCrossEncoder:
    return SentenceTransformerCrossEncoder(tiny_cross_encoder_dir)


def test_tiny_model_is_marked_plumbing_only(tiny_cross_encoder_dir: Path,
                                            cross_encoder: SentenceTransformerCrossEncoder) -> None:
    config = json.loads((tiny_cross_encoder_dir / "config.json").read_text())
    assert config["rankproof_plumbing_only"] is True
    assert config["num_hidden_layers"] == 2 and config["hidden_size"] == 32
    assert isinstance(cross_encoder, CrossEncoder)
    assert cross_encoder.plumbing_only is True
    assert cross_encoder.notes == (PLUMBING_NOTE,)


def test_caller_can_mark_any_model_plumbing_only(tmp_path: Path,
                                                 tiny_cross_encoder_dir: Path) -> None:
    unmarked = tmp_path / "unmarked"
    unmarked.mkdir()
    for f in tiny_cross_encoder_dir.iterdir():
        data = f.read_bytes()
        if f.name == "config.json":
            config = json.loads(data)
            del config["rankproof_plumbing_only"]
            data = json.dumps(config).encode()
        (unmarked / f.name).write_bytes(data)
    assert SentenceTransformerCrossEncoder(unmarked).notes == ()
    assert SentenceTransformerCrossEncoder(unmarked, plumbing_only=True).notes == (PLUMBING_NOTE,)


def test_scores_are_finite_deterministic_and_distinct(
        cross_encoder: SentenceTransformerCrossEncoder, tmp_path: Path) -> None:
    pairs = [(q, d) for (_, q) in QUERIES[:2] for (_, d) in DOCS]
    s1 = cross_encoder.score(pairs)
    assert s1.shape == (len(pairs),) and s1.dtype == np.float64
    assert np.isfinite(s1).all()
    assert len(set(s1.tolist())) > len(pairs) // 2
    assert np.array_equal(s1, cross_encoder.score(pairs))
    assert cross_encoder.score([]).shape == (0,)
    # Same seed, same weights, same scores: the model is rebuilt identically.
    rebuilt = SentenceTransformerCrossEncoder(make_plumbing_cross_encoder(tmp_path / "again"))
    assert np.array_equal(rebuilt.score(pairs), s1)


def test_rerank_reorders_first_stage_candidates(
        cross_encoder: SentenceTransformerCrossEncoder) -> None:
    first = BM25Retriever()
    stage = RerankRetriever(first, cross_encoder, depth=4)
    assert isinstance(stage, Retriever)
    stage.index(DOCS)
    out = stage.search(QUERIES, k=3)
    base = first.search(QUERIES, k=4)
    texts = dict(DOCS)
    for qid, qtext in QUERIES:
        cands = [d for q, d, _ in base.run.iter_rows() if q == qid]
        got = [(d, s) for q, d, s in out.run.iter_rows() if q == qid]
        if not cands:
            assert got == []
            continue
        scores = cross_encoder.score([(qtext, texts[d]) for d in cands])
        want = sorted(zip(cands, scores.tolist(), strict=True), key=lambda p: (p[1], p[0]),
                      reverse=True)[:3]
        assert got == want
    assert set(out.latency_ms) == {q for q, _ in QUERIES}
    assert all(v > 0 for v in out.latency_ms.values())
    assert PLUMBING_NOTE in out.notes
    assert any("retrieved nothing" in n for n in out.notes)
    assert out.config["plumbing_only"] is True and out.config["depth"] == 4
    assert out.config["first_stage"] == "bm25"
    assert out.run.name == "rerank"


def test_rerank_is_deterministic(cross_encoder: SentenceTransformerCrossEncoder) -> None:
    runs = []
    for _ in range(2):
        stage = RerankRetriever(BM25Retriever(), cross_encoder, depth=5)
        stage.index(DOCS)
        runs.append(list(stage.search(QUERIES, k=5).run.iter_rows()))
    assert runs[0] == runs[1]


def test_rerank_unavailable_reasons(tmp_path: Path, tiny_cross_encoder_dir: Path) -> None:
    assert rerank_unavailable_reason(tiny_cross_encoder_dir) is None
    none = rerank_unavailable_reason(None)
    assert none is not None and "--rerank-model PATH" in none and "never faked" in none
    missing = rerank_unavailable_reason(tmp_path / "nope")
    assert missing is not None and "does not exist" in missing
    a_file = tmp_path / "file"
    a_file.write_text("x")
    not_dir = rerank_unavailable_reason(a_file)
    assert not_dir is not None and "is not a directory" in not_dir
    no_config = rerank_unavailable_reason(tmp_path)
    assert no_config is not None and "has no config.json" in no_config


def test_unusable_path_raises_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        SentenceTransformerCrossEncoder(tmp_path / "nope")
    with pytest.raises(ConfigError, match="no cross-encoder given"):
        SentenceTransformerCrossEncoder("")


def test_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch,
                                tiny_cross_encoder_dir: Path) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'rankproof\[dense\]'"):
        SentenceTransformerCrossEncoder(tiny_cross_encoder_dir)


def test_rerank_validation(cross_encoder: SentenceTransformerCrossEncoder) -> None:
    with pytest.raises(ValueError, match="depth must be a positive integer"):
        RerankRetriever(BM25Retriever(), cross_encoder, depth=0)
    with pytest.raises(RuntimeError, match="call index\\(\\) before search\\(\\)"):
        RerankRetriever(BM25Retriever(), cross_encoder).search(QUERIES, k=1)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        SentenceTransformerCrossEncoder(cross_encoder.path, batch_size=0)


def test_bad_cross_encoder_output_is_an_error() -> None:
    class Wrong:
        model_id = "wrong"

        def score(self, pairs):  # type: ignore[no-untyped-def]
            return np.zeros(len(pairs) + 1)

    stage = RerankRetriever(BM25Retriever(), Wrong())
    stage.index(DOCS)
    with pytest.raises(ValueError, match="cross-encoder wrong returned"):
        stage.search(QUERIES[:1], k=2)
