"""trec_eval's preference and judgment-group files (``-R prefs``, ``qrels_prefs``, ``qrels_jg``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankproof._errors import InputError
from rankproof.data import read_prefs, read_qrels_jg, read_qrels_prefs


def test_prefs_file_with_comments(shared_data: Path) -> None:
    suite = shared_data / "trec_eval_tests"
    plain = read_prefs(suite / "prefs.test")
    commented = read_prefs(suite / "prefs.comment.test")
    assert len(plain.qids) == len(commented.qids) == 24
    first = plain.topics["1.EC.AB"][0]
    assert (first.jg, first.jsg, first.docid, first.level) == (
        "F:Ret,C:Not", "F:RnkdLst2digits", "FR940303-1-00022", 1.0)
    # '#' starts a comment only at the start of a line: inside a docid it is the docid.
    assert "CR93E-10505#37" in {j.docid for j in commented.topics["2.EC.A"]}
    assert "CR93E-10505#37" not in {j.docid for j in plain.topics["2.EC.A"]}


def test_qrels_read_as_prefs_put_every_line_in_subgroup_0(shared_data: Path) -> None:
    prefs = read_qrels_prefs(shared_data / "trec_eval_tests" / "qrels.test")
    assert prefs.qids == ["301", "302", "303"]
    assert sum(len(v) for v in prefs.topics.values()) == 3681
    assert {(j.jg, j.jsg) for v in prefs.topics.values() for j in v} == {("0", "0")}


def test_qrels_jg_has_one_qrels_per_group(shared_data: Path) -> None:
    groups = read_qrels_jg(shared_data / "trec_eval_tests" / "qrels.comments.123")
    assert list(groups.groups) == ["0", "1", "2"]
    assert groups.qids == ["301", "302", "303"]
    assert [len(q) for q in groups.groups.values()] == [3681, 3681, 3000]
    assert groups.groups["0"].to_dict()["301"]["CR93E-3103#37"] == 1


@pytest.mark.parametrize(("text", "line", "what"), [
    ("q1 g s d1 1\nq1 g s d2\n", 2, "expected 5 fields"),
    ("# header\nq1 g s d1 1\nq1 g s d2 high\n", 3, "preference level must be a finite number"),
    ("q1 g s d1 nan\n", 1, "preference level must be a finite number"),
])
def test_bad_prefs_lines_are_refused_naming_the_line(tmp_path: Path, text: str, line: int,
                                                     what: str) -> None:
    path = tmp_path / "prefs.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=what) as info:
        read_prefs(path)
    assert info.value.line == line
    assert info.value.path == str(path)
    assert f"line {line}" in str(info.value)


def test_bad_qrels_jg_lines_are_refused_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "qrels_jg.txt"
    path.write_text("1 a d1 1\n1 a d2 0.5\n")
    with pytest.raises(InputError, match=r"line 2, field 'rel': relevance must be an integer"):
        read_qrels_jg(path)
    path.write_text("1 a d1 1\n1 b d1 0\n1 a d1 0\n")
    with pytest.raises(InputError, match=r"line 3, field 'docid': .*judged twice.*first on line 1"):
        read_qrels_jg(path)
    path.write_text("1 a d1\n")
    with pytest.raises(InputError, match=r"line 1: expected 4 fields"):
        read_qrels_prefs(path)


def test_a_file_without_judgments_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("# only a comment\n\n")
    with pytest.raises(InputError, match="has no judgments"):
        read_prefs(path)
