"""A malformed line is named at the speed of a read (issue 23 item 5).

Arrow's parse stops at a row with the wrong number of fields; before, the reader then
split every line of the file in Python to name the first bad one. `_bad_row.refused_row`
names it in one streaming pass when it can prove the careful path would name the same
line in the same words; every case here is checked against the careful path itself (the
locator switched off), and the passes of the careful parser are counted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.data._careful import count_careful_parses, trec_lines

from rankproof import InputError
from rankproof.data import _bad_row, _trec, read_trec_qrels, read_trec_run


def _error(path: Path, **kwargs: object) -> InputError:
    with pytest.raises(InputError) as info:
        read_trec_run(path, **kwargs)  # type: ignore[arg-type]
    return info.value


def _careful_error(path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> InputError:
    with monkeypatch.context() as m:
        m.setattr(_trec, "refused_row", lambda *a, **k: None)
        return _error(path, **kwargs)


@pytest.mark.parametrize("bad", ["q9 Q0 broken", "q9 Q0 d1 1 2 t extra", "q9", "q9 Q0 d1 1 2"])
@pytest.mark.parametrize("where", [0, 1, 500, 999])
def test_the_fast_locator_names_the_careful_paths_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str, where: int) -> None:
    lines = trec_lines(40, 25)
    lines.insert(where, bad)
    path = tmp_path / "run.trec"
    path.write_text("\n".join([*lines[:300], "", *lines[300:]]) + "\n")
    expected = _careful_error(path, monkeypatch)
    calls = count_careful_parses(monkeypatch)
    got = _error(path)
    assert calls == []  # named without the line-by-line parse
    assert str(got) == str(expected)
    assert (got.line, got.field) == (expected.line, "columns")


def test_the_last_line_without_a_newline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "run.trec"
    path.write_text("\n".join([*trec_lines(40, 25), "q9 Q0 broken"]))
    expected = _careful_error(path, monkeypatch)
    calls = count_careful_parses(monkeypatch)
    assert str(_error(path)) == str(expected) and calls == []
    assert expected.line == 1001


def test_extra_columns_ignored_are_still_accepted(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    lines = trec_lines(40, 25)
    lines[10] += " more"
    path.write_text("\n".join(lines) + "\n")
    assert len(read_trec_run(path, extra_columns="ignore")) == len(lines)
    lines[20] = "q0 Q0 short"
    path.write_text("\n".join(lines) + "\n")
    err = _error(path, extra_columns="ignore")
    assert err.line == 21 and "found 3" in str(err)


@pytest.mark.parametrize("earlier", [
    "q0  Q0 dX 1 2 t",          # a doubled delimiter: the careful split accepts it
    " q0 Q0 dX 1 2 t",           # a leading delimiter
    "# a comment",               # skipped by the careful path, a row to Arrow
    "q0 Q0 d\u00e9 1 2 t",       # not ASCII
    "q0\tQ0 dX 1 2 t",           # a tab in a space-delimited file
])
def test_what_it_cannot_prove_goes_to_the_careful_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier: str) -> None:
    lines = trec_lines(40, 25)
    lines.insert(100, earlier)
    lines.insert(600, "q9 Q0 broken")
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = _careful_error(path, monkeypatch)
    calls = count_careful_parses(monkeypatch)
    got = _error(path)
    assert str(got) == str(expected)
    assert calls  # the careful path decided


def test_a_carriage_return_file_goes_to_the_careful_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = trec_lines(40, 25)
    lines.insert(500, "q9 Q0 broken")
    path = tmp_path / "run.trec"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    expected = _careful_error(path, monkeypatch)
    assert str(_error(path)) == str(expected) and expected.line == 501


def test_qrels_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "qrels.txt"
    lines = [f"q{q} 0 d{d} 1" for q in range(50) for d in range(10)]
    lines.insert(250, "q9 0 d1")
    path.write_text("\n".join(lines) + "\n")
    calls = count_careful_parses(monkeypatch)
    with pytest.raises(InputError) as info:
        read_trec_qrels(path)
    assert calls == [] and info.value.line == 251
    assert "expected 4 columns 'qid iter docno rel', found 3" in str(info.value)


def test_a_message_it_does_not_know_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 d1 1 2 t\n")
    assert _bad_row.refused_row(str(path), "CSV conversion error", " ", 6, False) is None
    assert _bad_row.refused_row(str(path), "CSV parse error: Expected 6 columns, got 3: "
                                "not in the file", " ", 6, False) is None
