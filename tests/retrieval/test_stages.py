"""Every stage together: same inputs give identical runs and configs; latency covers every query."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from tests.retrieval._helpers import DOCS, QUERIES

from rankproof.retrieval import (
    BM25Retriever,
    DenseRetriever,
    FusionRetriever,
    HashingEmbedder,
    RerankRetriever,
    Retriever,
    SentenceTransformerCrossEncoder,
    StageOutput,
)


def _stages(ce_dir: Path) -> list[Retriever]:
    bm25 = BM25Retriever()
    dense = DenseRetriever(HashingEmbedder(dim=32))
    return [
        bm25,
        dense,
        FusionRetriever([bm25, dense], "rrf", depth=6),
        FusionRetriever([bm25, dense], "combsum", norm="minmax", depth=6, name="combsum"),
        RerankRetriever(bm25, SentenceTransformerCrossEncoder(ce_dir), depth=5),
    ]


def test_every_stage_is_deterministic_and_times_every_query(tiny_cross_encoder_dir: Path) -> None:
    outputs: list[list[StageOutput]] = []
    for _ in range(2):
        stages = _stages(tiny_cross_encoder_dir)
        for stage in stages:
            stage.index(DOCS)
        outputs.append([stage.search(QUERIES, k=4) for stage in stages])
    qids = {q for q, _ in QUERIES}
    for first, second in zip(*outputs, strict=True):
        assert list(first.run.iter_rows()) == list(second.run.iter_rows())
        assert first.config == second.config
        assert first.notes == second.notes
        assert set(first.latency_ms) == qids
        assert all(v > 0 for v in first.latency_ms.values())
        assert first.run.ranks is not None
    names = [o.run.name for o in outputs[0]]
    assert names == ["bm25", "dense", "fusion", "combsum", "rerank"]


def test_stage_output_is_frozen() -> None:
    stage = BM25Retriever()
    stage.index(DOCS)
    out = stage.search(QUERIES, k=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.notes = ()  # type: ignore[misc]
