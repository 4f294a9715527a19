"""TREC run and qrels files: round trips, real files, and one test per validation rule.

Every rule is checked for the file, line and field its error names. Rules that
the fast (Arrow) path could meet are written as files the fast path accepts
the shape of, so the test also proves the fast path hands over to the
careful path instead of reporting (or swallowing) the problem itself.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from rankproof import InputError
from rankproof.data import (
    Qrels,
    Run,
    _trec,
    read_trec_qrels,
    read_trec_run,
    write_trec_qrels,
    write_trec_run,
)

RUN = "q1 Q0 d1 1 3.5 tagA\nq1 Q0 d2 2 2.25 tagA\nq2 Q0 d1 1 1 tagA\n"
QRELS = "q1 0 d1 1\nq1 0 d3 0\nq2 0 d1 2\n"


def same_run(a: Run, b: Run) -> None:
    assert a.to_arrow().equals(b.to_arrow())
    assert a.tag == b.tag
    assert a.notes == b.notes


def same_qrels(a: Qrels, b: Qrels) -> None:
    assert a.to_arrow().equals(b.to_arrow())


def read_careful_run(path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> Run:
    with monkeypatch.context() as m:
        m.setattr(_trec, "_fast_table", lambda *a, **k: None)
        return read_trec_run(path, **kwargs)  # type: ignore[arg-type]


def read_careful_qrels(path: Path, monkeypatch: pytest.MonkeyPatch) -> Qrels:
    with monkeypatch.context() as m:
        m.setattr(_trec, "_fast_table", lambda *a, **k: None)
        return read_trec_qrels(path)


# -- round trips ----------------------------------------------------------------


def test_run_round_trip(write, tmp_path) -> None:
    run = read_trec_run(write("a.run", RUN))
    assert run.to_dict() == {"q1": {"d1": 3.5, "d2": 2.25}, "q2": {"d1": 1.0}}
    assert run.tag == "tagA"
    assert run.name == "a"
    assert run.ranks is not None and run.ranks.tolist() == [1, 2, 1]
    out = tmp_path / "out.run"
    write_trec_run(run, out)
    back = read_trec_run(out)
    assert back.to_dict() == run.to_dict()
    assert back.tag == "tagA"


def test_run_round_trip_keeps_scores_bit_for_bit(tmp_path) -> None:
    scores = {"q1": {"a": 0.1 + 0.2, "b": 1e-300, "c": -2.5e17, "d": 1 / 3}}
    run = Run.from_dict(scores)
    write_trec_run(run, tmp_path / "x.run")
    assert read_trec_run(tmp_path / "x.run").to_dict() == scores


def test_write_run_already_in_ranked_order(tmp_path) -> None:
    # Regression: a run stored in trec_eval's order has no permutation to apply.
    run = Run.from_dict({"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 5.0}})
    write_trec_run(run, tmp_path / "x.run", tag="t")
    assert (tmp_path / "x.run").read_text() == (
        "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 c 1 5.0 t\n"
    )


def test_write_run_ranks_by_trec_eval_order(tmp_path) -> None:
    # Ties break by docid descending, byte-wise; the file's ranks follow suit.
    run = Run.from_dict({"q1": {"a": 1.0, "c": 1.0, "b": 2.0}})
    write_trec_run(run, tmp_path / "x.run", tag="t")
    lines = (tmp_path / "x.run").read_text().splitlines()
    assert [line.split()[2] for line in lines] == ["b", "c", "a"]
    assert [line.split()[3] for line in lines] == ["1", "2", "3"]


def test_qrels_round_trip(write, tmp_path) -> None:
    qrels = read_trec_qrels(write("q.txt", QRELS))
    assert qrels.to_dict() == {"q1": {"d1": 1, "d3": 0}, "q2": {"d1": 2}}
    write_trec_qrels(qrels, tmp_path / "out.qrels")
    same_qrels(read_trec_qrels(tmp_path / "out.qrels"), qrels)


def test_gz_round_trip(write, tmp_path) -> None:
    run = read_trec_run(write("a.run", RUN))
    write_trec_run(run, tmp_path / "a.run.gz")
    assert (tmp_path / "a.run.gz").read_bytes()[:2] == b"\x1f\x8b"
    back = read_trec_run(tmp_path / "a.run.gz")
    assert back.to_dict() == run.to_dict()
    assert back.name == "a"
    qrels = read_trec_qrels(write("q.txt", QRELS))
    write_trec_qrels(qrels, tmp_path / "q.txt.gz")
    same_qrels(read_trec_qrels(tmp_path / "q.txt.gz"), qrels)


def test_gzip_detected_by_content_not_suffix(write) -> None:
    run = read_trec_run(write("plain.run", RUN))
    hidden = write("looks_plain.txt", gzip.compress(RUN.encode()))
    same_run(read_trec_run(hidden, name="plain"), run)
    qrels = read_trec_qrels(write("plain.qrels", QRELS))
    same_qrels(read_trec_qrels(write("q.dat", gzip.compress(QRELS.encode()))), qrels)


def test_gzip_with_irregular_whitespace_goes_careful(write, trec_paths) -> None:
    run = read_trec_run(write("a.run.gz", gzip.compress(RUN.replace(" ", "  ").encode())))
    assert trec_paths.careful == 1
    assert run.to_dict() == {"q1": {"d1": 3.5, "d2": 2.25}, "q2": {"d1": 1.0}}


# -- the two paths ------------------------------------------------------------------


def test_single_spaces_take_the_fast_path(write, trec_paths) -> None:
    read_trec_run(write("a.run", RUN))
    read_trec_qrels(write("q.txt", QRELS))
    read_trec_run(write("tabs.run", RUN.replace(" ", "\t")))
    assert trec_paths.careful == 0


IRREGULAR = {
    "double spaces": RUN.replace(" ", "  "),
    "spaces and tabs": "q1\tQ0 d1 \t1 3.5\ttagA\nq1 Q0\td2 2\t2.25 tagA\nq2 Q0 d1 1 1 tagA\n",
    "leading and trailing": (
        "  q1 Q0 d1 1 3.5 tagA  \n\tq1 Q0 d2 2 2.25 tagA\t\nq2 Q0 d1 1 1 tagA \n"
    ),
    "CRLF": RUN.replace("\n", "\r\n"),
    "CRLF and doubles": RUN.replace(" ", "  ").replace("\n", "\r\n"),
    "blank lines": "\n" + RUN.replace("\n", "\n\n") + "   \n",
    "no final newline": RUN.rstrip("\n"),
    "byte-order mark": "\ufeff" + RUN,
    "lone CR": RUN.replace("\n", "\r"),
}


@pytest.mark.parametrize("variant", sorted(IRREGULAR))
def test_irregular_whitespace_reads_like_clean_file(variant, write, monkeypatch) -> None:
    clean = read_trec_run(write("clean.run", RUN), name="r")
    path = write("messy.run", IRREGULAR[variant])
    same_run(read_trec_run(path, name="r"), clean)
    same_run(read_careful_run(path, monkeypatch, name="r"), clean)


@pytest.mark.parametrize("variant", ["double spaces", "spaces and tabs", "leading and trailing",
                                     "CRLF and doubles", "blank lines"])
def test_irregular_whitespace_takes_the_careful_path(variant, write, trec_paths) -> None:
    read_trec_run(write("messy.run", IRREGULAR[variant]))
    assert trec_paths.careful == 1


def test_irregular_qrels(write, monkeypatch) -> None:
    clean = read_trec_qrels(write("clean.qrels", QRELS))
    messy = write("messy.qrels", "  q1 \t0  d1 1\r\n\nq1 0 d3\t0 \r\nq2 0 d1 2")
    same_qrels(read_trec_qrels(messy), clean)
    same_qrels(read_careful_qrels(messy, monkeypatch), clean)


def test_tab_inside_a_space_separated_line_is_split_like_the_careful_path(write) -> None:
    # Arrow would keep "d1\tx" as one docid; the careful path sees 7 columns.
    path = write("a.run", "q1 Q0 d1\tx 1 3.5 t\n")
    with pytest.raises(InputError) as err:
        read_trec_run(path)
    assert err.value.line == 1
    assert err.value.field == "columns"


def test_space_inside_a_tab_separated_qrels_line(write, monkeypatch) -> None:
    path = write("q.txt", "q1\t0\td1\t1\nq1\t0\td 2\t1\n")
    with pytest.raises(InputError) as err:
        read_trec_qrels(path)
    assert (err.value.line, err.value.field) == (2, "columns")


# -- validation rules, one test each ------------------------------------------------


def test_wrong_column_count_run(write, located) -> None:
    path = write("a.run", "q1 Q0 d1 1 3.5 t\nq1 Q0 d2 2 2.0\n")
    with pytest.raises(InputError, match="expected 6 columns") as err:
        read_trec_run(path)
    located(err.value, path, 2, "columns")


def test_wrong_column_count_qrels(write, located) -> None:
    path = write("q.txt", "q1 0 d1 1\nq1 0 d2\n")
    with pytest.raises(InputError, match="expected 4 columns") as err:
        read_trec_qrels(path)
    located(err.value, path, 2, "columns")


@pytest.mark.parametrize("score", ["abc", "1,5", "1_000", "0x10", "--1", "١"])
def test_non_numeric_score(score, write, located) -> None:
    path = write("a.run", f"q1 Q0 d1 1 3.5 t\nq1 Q0 d2 2 {score} t\n")
    with pytest.raises(InputError, match="score must be a number") as err:
        read_trec_run(path)
    located(err.value, path, 2, "score")


@pytest.mark.parametrize("score", ["nan", "NaN", "inf", "-inf", "Infinity", "1e400"])
def test_non_finite_score(score, write, located) -> None:
    path = write("a.run", f"q1 Q0 d1 1 3.5 t\nq1 Q0 d2 2 {score} t\n")
    with pytest.raises(InputError, match="finite") as err:
        read_trec_run(path)
    located(err.value, path, 2, "score")


@pytest.mark.parametrize("rel", ["1.5", "1.0", "x", "1e3", "99999999999999999999"])
def test_non_integer_relevance(rel, write, located) -> None:
    path = write("q.txt", f"q1 0 d1 1\nq1 0 d2 {rel}\n")
    with pytest.raises(InputError, match="relevance must be an integer") as err:
        read_trec_qrels(path)
    located(err.value, path, 2, "rel")


def test_negative_relevance_is_kept(write) -> None:
    # trec_eval: a negative label is judged-unjudgeable, not an error.
    assert read_trec_qrels(write("q.txt", "q1 0 d1 -1\n")).rels.tolist() == [-1]


def test_duplicate_pair_in_run(write, located) -> None:
    path = write("a.run", "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d1 3 1.0 t\n")
    with pytest.raises(InputError, match=r"duplicate \(qid, docid\) pair \(q1, d1\)") as err:
        read_trec_run(path)
    located(err.value, path, 3, "docid")


def test_duplicate_pair_in_qrels(write, located) -> None:
    path = write("q.txt", "q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n")
    with pytest.raises(InputError, match="duplicate") as err:
        read_trec_qrels(path)
    located(err.value, path, 3, "docid")


DUP_RUN = "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 5.0 t\nq1 Q0 d1 3 9.0 t\nq2 Q0 d1 1 4.0 t\n"


@pytest.mark.parametrize(("how", "kept"), [("first", 1.0), ("max", 9.0)])
def test_dedupe_run(how, kept, write, monkeypatch) -> None:
    path = write("a.run", DUP_RUN)
    for run in (read_trec_run(path, dedupe=how),
                read_careful_run(path, monkeypatch, dedupe=how)):
        assert run.to_dict() == {"q1": {"d1": kept, "d2": 5.0}, "q2": {"d1": 4.0}}
        assert run.dedupe == how
        assert run.n_dropped_duplicates == 1
        assert len(run) == 3


@pytest.mark.parametrize(("how", "kept"), [("first", 1), ("max", 3)])
def test_dedupe_qrels(how, kept, write) -> None:
    qrels = read_trec_qrels(write("q.txt", "q1 0 d1 1\nq1 0 d1 3\nq1 0 d2 0\n"), dedupe=how)
    assert qrels.to_dict() == {"q1": {"d1": kept, "d2": 0}}
    assert qrels.dedupe == how
    assert qrels.n_dropped_duplicates == 1


def test_without_duplicates_dedupe_drops_nothing(write) -> None:
    run = read_trec_run(write("a.run", RUN), dedupe="max")
    assert run.n_dropped_duplicates == 0


@pytest.mark.parametrize("content", ["", "\n\n", "  \t\r\n"])
def test_empty_file(content, write, located) -> None:
    path = write("a.run", content)
    with pytest.raises(InputError, match="empty") as err:
        read_trec_run(path)
    located(err.value, path, None, None)
    with pytest.raises(InputError, match="empty"):
        read_trec_qrels(path)


def test_comment_only_file(write, located) -> None:
    path = write("a.run", "# produced by a tool\n#another comment\n\n")
    with pytest.raises(InputError, match="no data lines") as err:
        read_trec_run(path)
    located(err.value, path, None, None)
    with pytest.raises(InputError, match="no data lines"):
        read_trec_qrels(path)


def test_invalid_utf8_run(write, located) -> None:
    path = write("a.run", b"q1 Q0 d1 1 1.0 t\nq1 Q0 d\xff2 2 0.5 t\n")
    with pytest.raises(InputError, match="invalid UTF-8") as err:
        read_trec_run(path)
    located(err.value, path, 2, "docid")


def test_invalid_utf8_in_tag_column(write, located) -> None:
    path = write("a.run", b"q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\xc3\n")
    with pytest.raises(InputError, match="invalid UTF-8") as err:
        read_trec_run(path)
    located(err.value, path, 2, "tag")


def test_invalid_utf8_qrels(write, located) -> None:
    path = write("q.txt", b"q1 0 d1 1\n\xfeq2 0 d1 1\n")
    with pytest.raises(InputError, match="invalid UTF-8") as err:
        read_trec_qrels(path)
    located(err.value, path, 2, "qid")


def test_nul_byte_in_docid(write, located) -> None:
    path = write("a.run", b"q1 Q0 d1 1 1.0 t\nq1 Q0 d\x002 2 0.5 t\n")
    with pytest.raises(InputError, match="NUL") as err:
        read_trec_run(path)
    located(err.value, path, 2, "docid")


def test_comment_lines_are_skipped(write) -> None:
    path = write("a.run", "# header\n" + RUN.replace("\nq2", "\n  # between\nq2"))
    run = read_trec_run(path, name="a")
    same_run(run, read_trec_run(write("b.run", RUN), name="a"))
    assert run.tag == "tagA"  # from the first data line, not the comment


def test_hash_inside_a_docid_is_kept(write) -> None:
    run = read_trec_run(write("a.run", "q1 Q0 doc#1 1 2.0 t\nq1 Q0 #doc2 2 1.0 t\n"))
    assert run.docids.to_pylist() == ["doc#1", "#doc2"]
    qrels = read_trec_qrels(write("q.txt", "# c\nq1 0 doc#1 1\n"))
    assert qrels.docids.to_pylist() == ["doc#1"]


def test_trailing_columns_rejected_by_default(write, located) -> None:
    path = write("a.run", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t junk\n")
    with pytest.raises(InputError, match="expected 6 columns") as err:
        read_trec_run(path)
    located(err.value, path, 2, "columns")
    run = read_trec_run(path, extra_columns="ignore")
    assert run.to_dict() == {"q1": {"d1": 1.0, "d2": 0.5}}


def test_rank_that_is_not_an_integer_is_noted(write) -> None:
    run = read_trec_run(write("a.run", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 x 0.5 t\n"))
    assert run.ranks is None
    assert "line 2" in run.notes[0]


def test_score_syntax_accepted_by_both_paths(write, monkeypatch) -> None:
    path = write("a.run", "q1 Q0 a 1 +2 t\nq1 Q0 b 2 .5 t\nq1 Q0 c 3 5. t\nq1 Q0 d 4 -1E2 t\n")
    expected = {"q1": {"a": 2.0, "b": 0.5, "c": 5.0, "d": -100.0}}
    assert read_trec_run(path).to_dict() == expected
    assert read_careful_run(path, monkeypatch).to_dict() == expected


# -- writers refuse what they cannot write -----------------------------------------


@pytest.mark.parametrize(("qid", "docid", "field"), [
    ("q 1", "d1", "qid"), ("q1", "d\t1", "docid"), ("#q1", "d1", "qid"),
])
def test_writer_refuses_ids_that_would_not_read_back(qid, docid, field, tmp_path) -> None:
    run = Run.from_dict({qid: {docid: 1.0}})
    with pytest.raises(InputError) as err:
        write_trec_run(run, tmp_path / "x.run", tag="t")
    assert err.value.field == field
    qrels = Qrels.from_dict({qid: {docid: 1}})
    with pytest.raises(InputError):
        write_trec_qrels(qrels, tmp_path / "x.qrels")
    assert list(tmp_path.iterdir()) == []


# -- real files ---------------------------------------------------------------------


def test_trec_eval_results_file(shared_data, monkeypatch) -> None:
    path = shared_data / "trec_eval_tests" / "results.test"
    run = read_trec_run(path)
    assert (len(run), run.topics, run.tag) == (1500, ["301", "302", "303"], "STANDARD")
    same_run(read_careful_run(path, monkeypatch), run)


def test_qrels_with_comment_lines_equal_plain_qrels(shared_data) -> None:
    base = shared_data / "trec_eval_tests"
    plain = read_trec_qrels(base / "qrels.test")
    commented = read_trec_qrels(base / "qrels.test.with-comments")
    assert len(plain) == len(commented) == 3681
    # The file also renames one docid to hold a '#' mid-token, which must survive.
    a, b = plain.to_dict(), commented.to_dict()
    assert b["301"].pop("CR#93E-1860") == a["301"].pop("CR93E-1860") == 0
    assert a == b


def test_docids_with_hash_from_trec_rag(shared_data, monkeypatch) -> None:
    base = shared_data / "trec_eval_tests"
    qrels = read_trec_qrels(base / "qrels.comment.test")
    assert len(qrels) == 5890
    assert "msmarco_v2.1_doc_00_880019750#4_1633802806" in qrels.docids.to_pylist()
    same_qrels(read_careful_qrels(base / "qrels.comment.test", monkeypatch), qrels)
    run = read_trec_run(base / "results.comment.test")
    assert (len(run), len(run.topics)) == (30100, 301)
    assert run.docids[0].as_py() == "msmarco_v2.1_doc_50_2286987788#13_3087841662"


def test_results_trunc_extra_columns(shared_data, located) -> None:
    path = shared_data / "trec_eval_tests" / "results.trunc"
    with pytest.raises(InputError) as err:
        read_trec_run(path)
    located(err.value, path, 1, "columns")
    run = read_trec_run(path, extra_columns="ignore")
    assert (len(run), run.topics, run.tag) == (584, ["301", "303"], "STANDARD")
    assert run.scores[0] == pytest.approx(2.138276)


@pytest.mark.parametrize("name", ["results.test", "results.comment.test"])
def test_real_runs_both_paths_agree(name, shared_data, monkeypatch) -> None:
    path = shared_data / "trec_eval_tests" / name
    same_run(read_careful_run(path, monkeypatch), read_trec_run(path))


def test_rankllm_runs_fast_and_careful_agree(shared_data, monkeypatch, trec_paths) -> None:
    paths = sorted((shared_data / "rankllm_runs").glob("*/trec_results_dl19.txt"))
    assert paths
    for path in paths:
        fast = read_trec_run(path)
        assert trec_paths.careful == 0
        same_run(read_careful_run(path, monkeypatch), fast)
        np.testing.assert_array_equal(fast.scores, read_careful_run(path, monkeypatch).scores)
        trec_paths.careful = 0
