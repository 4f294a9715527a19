"""The providers floor makes model calls only: no judging, metrics or prompts of a feature."""

from __future__ import annotations

from tests.test_architecture import HELPERS, _edges


def test_providers_imports_only_data_and_the_helpers() -> None:
    bad = [f"{file}:{line}: {module}" for src, dst, file, line, module in _edges()
           if src == "providers" and dst not in HELPERS | {"data"}]
    assert not bad, "\n".join(bad)


def test_the_seed_features_reach_the_providers_from_above() -> None:
    users = {src for src, dst, *_ in _edges() if dst == "providers"}
    assert {"retrieval", "rag", "compat", "cli"} <= users
