"""Shared fixtures: the real test data lives beside the repository, in ../shared/data."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# ``--hypothesis-profile=long``: ten times Hypothesis' default number of examples.
# The fuzz suite (tests/hostile/_fuzz.py) scales its own budgets by it; no profile
# is loaded here, so the default run of every other folder is unchanged.
settings.register_profile("long", max_examples=1000)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Embeddings and indexes are cached in the session's temporary folder, never in ~/.cache:
    a test must not depend on, or leave behind, what an earlier run wrote (a test that sets
    RANKPROOF_CACHE itself overrides this)."""
    monkeypatch.setenv("RANKPROOF_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (CI lays it beside the clone); missing is an error, not a skip."""
    if not SHARED_DATA.is_dir():
        raise RuntimeError(f"test data not found at {SHARED_DATA}; it must sit beside the repo")
    return SHARED_DATA


@pytest.fixture(scope="session")
def trec_eval_tests(shared_data: Path) -> Path:
    return shared_data / "trec_eval_tests"
