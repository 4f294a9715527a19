"""A row the fast path refuses is located without a second, line-by-line parse (issue 23 item 5).

Before, a duplicate row anywhere in a 10-million-line run sent the whole file
through the careful Python parser twice (once to name the line, once to raise
again): about 7x the time and 6x the memory of reading the clean run. Now the
fast path's own error is raised, its line found by one streaming newline scan.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from tests.data._careful import count_careful_parses, trec_lines

from rankproof import InputError
from rankproof.data import _trec, read_trec_run


@pytest.mark.parametrize("gz", [False, True])
def test_a_duplicate_is_named_by_its_line_with_no_careful_parse(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gz: bool) -> None:
    lines = trec_lines()
    text_lines = [*lines[:100], "", "", *lines[100:], lines[250]]  # blank lines are skipped
    data = ("\n".join(text_lines) + "\n").encode()
    path = tmp_path / ("dup.run.gz" if gz else "dup.run")
    path.write_bytes(gzip.compress(data) if gz else data)
    calls = count_careful_parses(monkeypatch)
    with pytest.raises(InputError) as got:
        read_trec_run(path)
    assert got.value.line == len(text_lines)  # the repeated row is the file's last line
    assert "--dedupe" in got.value.on_command_line() or "dedupe" in str(got.value)
    assert calls == []


def test_the_scan_and_the_careful_split_agree_on_every_row(tmp_path: Path) -> None:
    lines = trec_lines(topics=5, docs=7)
    text = "\n\n".join(lines[:10]) + "\n" + "\n".join(lines[10:])  # no final newline
    path = tmp_path / "r.run"
    path.write_text(text)
    src = _trec.Input.open(path)
    careful = _trec._Lines(src, _trec._RUN_COLUMNS, "ignore").rows()[1]
    assert [_trec._nonempty_line(src, r) for r in range(len(careful))] == careful
    assert _trec._nonempty_line(src, len(careful)) is None


def test_carriage_returns_fall_back_to_the_careful_split(tmp_path: Path) -> None:
    lines = trec_lines(topics=3, docs=5)
    path = tmp_path / "crlf.run"
    path.write_bytes(("\r\n".join([*lines, lines[4]]) + "\r\n").encode())
    assert _trec._nonempty_line(_trec.Input.open(path), 3) is None
    with pytest.raises(InputError) as got:
        read_trec_run(path)
    assert got.value.line == len(lines) + 1


def test_an_msmarco_duplicate_is_named_by_its_line_with_no_careful_parse(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankproof.data import read_msmarco_run

    lines = [f"q{q}\td{d}\t{d + 1}" for q in range(30) for d in range(20)]
    text_lines = [*lines[:50], "", *lines[50:], lines[7]]
    path = tmp_path / "dup.tsv"
    path.write_text("\n".join(text_lines) + "\n")
    calls = count_careful_parses(monkeypatch)
    with pytest.raises(InputError) as got:
        read_msmarco_run(path)
    assert got.value.line == len(text_lines)
    assert calls == []


@pytest.mark.parametrize("text", ["nan", "NaN", "-inf", "1e400"])
def test_a_non_finite_score_is_shown_as_the_file_spells_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "r.run"
    path.write_text(f"1 Q0 d1 1 2.5 t\n1 Q0 d2 2 {text} t\n")
    with pytest.raises(InputError) as got:
        read_trec_run(path)
    assert f"found '{text}'" in str(got.value) and got.value.line == 2
