"""Shared by the tests of the TREC reader's fast locators (`test_fast_locator`,
`test_bad_row`): a grouped run's lines, and a count of the careful line-by-line parses."""

from __future__ import annotations

import pytest

from rankproof.data import _trec


def trec_lines(topics: int = 30, docs: int = 20) -> list[str]:
    """``topics`` × ``docs`` TREC run lines, grouped by topic, scores descending."""
    return [f"q{q} Q0 d{d} {d + 1} {100 - d} t" for q in range(topics) for d in range(docs)]


def count_careful_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that gets one item per careful parse of a file (`_trec._Lines.rows`)."""
    calls: list[int] = []
    real = _trec._Lines.rows

    def rows(self: _trec._Lines) -> tuple[list[list[str]], list[int]]:
        calls.append(1)
        return real(self)

    monkeypatch.setattr(_trec._Lines, "rows", rows)
    return calls
