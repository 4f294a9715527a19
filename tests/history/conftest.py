"""History tests run on SQLite and on a real PostgreSQL cluster started for the session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.history._planted import Planted, make_planted
from tests.history._postgres import Cluster, postgres_cluster


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    yield from postgres_cluster()


def new_store(kind: str, folder: Path, request: pytest.FixtureRequest) -> str:
    """A fresh, empty store's URL: a SQLite file in ``folder`` or a new PostgreSQL database."""
    if kind == "sqlite":
        return str(folder / "history.db")
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    return cluster.create()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty store's URL on each database."""
    return new_store(request.param, tmp_path, request)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def planted_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[tuple[str, Planted]]:
    """The twenty planted results (`tests.history._planted`) in a store on each database,
    made once per module and database."""
    folder = tmp_path_factory.mktemp(f"planted-{request.param}")
    url = new_store(request.param, folder, request)
    with pytest.MonkeyPatch.context() as mp:
        planted = make_planted(folder, url, mp)
    yield url, planted


@pytest.fixture
def fresh_url(planted_store: tuple[str, Planted], request: pytest.FixtureRequest,
              tmp_path: Path) -> str:
    """A fresh, empty store on the same database as `planted_store`."""
    kind = "postgresql" if planted_store[0].startswith("postgresql") else "sqlite"
    return new_store(kind, tmp_path, request)
