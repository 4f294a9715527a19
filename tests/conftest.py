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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make ``--dist loadgroup`` group again under pytest 9.

    pytest-xdist 3.8 sends the tests of one ``xdist_group`` to one worker by appending
    ``@group`` to each item's ``_nodeid``; pytest 9 derives ``nodeid`` from ``_id``
    instead, so the suffix is lost and the Ray tests spread over both workers, each
    starting a cluster of its own. The same suffix is put where pytest 9 reads it (only
    when xdist's own did not land, so a fixed xdist is left alone).
    """
    if not getattr(config.option, "loadgroup", False):  # set in xdist workers only
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # pytest < 9: xdist's own suffix works
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        if names and "@" not in item.nodeid and hasattr(item, "_id"):
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")


@pytest.fixture(scope="session")
def ray_cluster() -> object:
    """A real local Ray cluster for the whole session: 2 CPUs, no dashboard, a small
    object store; shut down after the last test. Tests that use it are marked
    ``@pytest.mark.xdist_group("ray")`` so that they all run in one worker (pytest runs
    with ``--dist loadgroup``) and share this one cluster. Yields Ray's context; a CLI run
    in a subprocess reaches the cluster with ``--address ctx.address_info['address']``
    (``gcs_address``), one run in-process finds Ray already initialised and uses it."""
    import os

    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ctx = ray.init(num_cpus=2, include_dashboard=False, object_store_memory=128 * 1024 * 1024,
                   log_to_driver=False, configure_logging=False)
    try:
        yield ctx
    finally:
        ray.shutdown()
