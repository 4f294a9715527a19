"""The public API is pinned: adding or removing a name is a deliberate act."""

from __future__ import annotations

import rankproof
import rankproof.measures


def test_top_level_names_are_pinned() -> None:
    assert rankproof.__all__ == sorted(rankproof.__all__)
    assert set(rankproof.__all__) == {
        "ConfigError", "InputError", "Measure", "PairingError", "PerQuery", "Qrels",
        "RankproofError", "Run", "TargetError", "__version__", "evaluate", "parse",
        "read_trec_qrels", "read_trec_run",
    }
    for name in rankproof.__all__:
        assert hasattr(rankproof, name), name


def test_subpackage_exports_exist() -> None:
    for module in (rankproof.measures,):
        assert module.__all__ == sorted(module.__all__)
        for name in module.__all__:
            assert hasattr(module, name), name


def test_errors_also_subclass_builtins() -> None:
    assert issubclass(rankproof.InputError, ValueError)
    assert issubclass(rankproof.PairingError, ValueError)
    assert issubclass(rankproof.ConfigError, ValueError)
    assert issubclass(rankproof.TargetError, RuntimeError)
    for exc in (rankproof.InputError, rankproof.PairingError, rankproof.ConfigError,
                rankproof.TargetError):
        assert issubclass(exc, rankproof.RankproofError)


def test_import_has_no_side_effects_on_logging() -> None:
    import logging

    assert not logging.getLogger("rankproof").handlers
