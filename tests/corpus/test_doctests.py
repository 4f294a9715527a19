"""The examples in the corpus-layer docstrings run (STYLE.md: docstring examples are doctests)."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from rankproof.corpus import _beir_adapt, _collections, _corpus, _judgments


@pytest.mark.parametrize("module", [_corpus, _judgments, _collections, _beir_adapt],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
