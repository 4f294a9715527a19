"""Fixtures for the data readers and writers.

``shared_data`` points at the real, read-only test data beside the clone
(``../shared/data``); it mirrors the fixture of the top-level conftest so
that this folder stands on its own. The other fixtures write small files
and watch which TREC parsing path ran.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rankproof._errors import InputError
from rankproof.data import _trec

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``; missing is an error, not a skip (CI lays it beside the repo)."""
    if not SHARED_DATA.is_dir():
        raise RuntimeError(f"test data not found at {SHARED_DATA}; it must sit beside the repo")
    return SHARED_DATA


WriteFile = Callable[[str, "bytes | str"], Path]


@pytest.fixture
def write(tmp_path: Path) -> WriteFile:
    """Write ``content`` (text is encoded as UTF-8, byte for byte) to ``tmp_path/name``."""

    def _write(name: str, content: bytes | str) -> Path:
        path = tmp_path / name
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return path

    return _write


class PathSpy:
    """Counts how often the careful TREC path ran."""

    def __init__(self) -> None:
        self.careful = 0


@pytest.fixture
def trec_paths(monkeypatch: pytest.MonkeyPatch) -> Iterator[PathSpy]:
    """Record whether a TREC read went down the careful (line-by-line) path."""
    spy = PathSpy()
    original = _trec._Lines.rows

    def rows(self: _trec._Lines) -> tuple[list[list[str]], list[int]]:
        spy.careful += 1
        return original(self)

    monkeypatch.setattr(_trec._Lines, "rows", rows)
    yield spy


@pytest.fixture
def careful_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch the TREC fast path off, so every read takes the careful path."""
    monkeypatch.setattr(_trec, "_fast_table", lambda *args, **kwargs: None)


Located = Callable[[InputError, "Path | None", "int | None", "str | None"], None]


def _assert_located(
    exc: InputError, path: Path | None, line: int | None, field: str | None
) -> None:
    text = str(exc)
    if path is not None:
        assert exc.path == str(path)
        assert str(path) in text
    if line is not None:
        assert exc.line == line
        assert f"line {line}" in text
    if field is not None:
        assert exc.field == field
        assert f"field '{field}'" in text


@pytest.fixture
def located() -> Located:
    """``located(exc, path, line, field)``: the error carries, and its message
    shows, the file, the line and the field (None skips a check)."""
    return _assert_located
