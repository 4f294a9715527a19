"""The examples in rankproof.stats docstrings run (STYLE: docstring examples are doctests)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import rankproof.stats

MODULES = [
    f"rankproof.stats.{m.name}" for m in pkgutil.iter_modules(rankproof.stats.__path__)
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
