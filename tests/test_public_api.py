"""The public API is pinned: adding or removing a name is a deliberate act."""

from __future__ import annotations

import importlib

import pytest

import rankproof
import rankproof.measures

SUBPACKAGES = ("data", "corpus", "measures", "stats", "compare", "retrieval", "targets",
               "harness", "gate", "report")


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then everything else."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def test_top_level_names_are_pinned() -> None:
    assert rankproof.__all__ == sorted(rankproof.__all__, key=_isort_key)
    assert set(rankproof.__all__) == {
        "Comparison", "ConfigError", "InputError", "Measure", "MissingExtraError",
        "PairedResult", "PairingError",
        "PerQuery", "Qrels", "RankproofError", "Run", "TargetError", "__version__", "compare",
        "correct", "evaluate", "load_qrels", "load_run", "paired_test", "parse",
        "read_trec_qrels", "read_trec_run",
    }
    for name in rankproof.__all__:
        assert hasattr(rankproof, name), name


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_subpackage_exports_exist_and_are_sorted(name: str) -> None:
    module = importlib.import_module(f"rankproof.{name}")
    assert list(module.__all__) == sorted(module.__all__, key=_isort_key), name
    assert len(set(module.__all__)) == len(module.__all__)
    for attr in module.__all__:
        assert hasattr(module, attr), f"rankproof.{name}.{attr}"


def test_importing_rankproof_does_not_load_heavy_dependencies() -> None:
    import subprocess
    import sys

    code = ("import sys, rankproof, rankproof.retrieval, rankproof.harness; "
            "print(sorted(m for m in ('torch', 'pandas', 'sentence_transformers') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


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


def test_import_rankproof_is_cheap() -> None:
    """pytest imports rankproof in every session (the plugin): keep numpy and pyarrow out."""
    import subprocess
    import sys

    code = "import sys, rankproof; print('numpy' in sys.modules, 'pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False False"
