"""The examples in the retrieval docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["rankproof.retrieval._bm25", "rankproof.retrieval._fusion",
                                    "rankproof.retrieval._fusion_methods",
                                    "rankproof.retrieval._fusion_optimize"])
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
