"""BEIR qrels TSV (``query-id<TAB>corpus-id<TAB>score``): round trips and validation."""

from __future__ import annotations

import gzip

import pytest

from rankproof import InputError
from rankproof.data import (
    Qrels,
    Run,
    read_beir_qrels,
    read_beir_run,
    read_trec_qrels,
    write_beir_qrels,
    write_beir_run,
)
from rankproof.data._beir import is_beir_header

HEADER = "query-id\tcorpus-id\tscore\n"
QRELS = HEADER + "q1\tdoc1\t1\nq1\tdoc2\t0\nq2\tdoc1\t2\n"


def test_read_beir_qrels(write) -> None:
    qrels = read_beir_qrels(write("test.tsv", QRELS))
    assert qrels.to_dict() == {"q1": {"doc1": 1, "doc2": 0}, "q2": {"doc1": 2}}


def test_round_trip(write, tmp_path) -> None:
    qrels = read_beir_qrels(write("test.tsv", QRELS))
    write_beir_qrels(qrels, tmp_path / "out.tsv")
    assert (tmp_path / "out.tsv").read_text().startswith(HEADER)
    assert read_beir_qrels(tmp_path / "out.tsv").digest == qrels.digest


def test_gz_round_trip_and_gzip_by_content(write, tmp_path) -> None:
    qrels = read_beir_qrels(write("test.tsv", QRELS))
    write_beir_qrels(qrels, tmp_path / "out.tsv.gz")
    assert read_beir_qrels(tmp_path / "out.tsv.gz").digest == qrels.digest
    hidden = write("plain-looking.tsv", gzip.compress(QRELS.encode()))
    assert read_beir_qrels(hidden).digest == qrels.digest


def test_ids_keep_spaces_and_hashes(write) -> None:
    # Only the tab separates: BEIR ids may hold spaces; '#' is not a comment.
    path = write("t.tsv", HEADER + "what is x?\tdoc #1\t1\n#q\td 2\t1\n")
    assert read_beir_qrels(path).to_dict() == {"what is x?": {"doc #1": 1}, "#q": {"d 2": 1}}


def test_crlf_bom_and_blank_lines(write) -> None:
    messy = "\ufeff" + QRELS.replace("\n", "\r\n") + "\r\n\r\n"
    assert read_beir_qrels(write("t.tsv", messy)).to_dict() == read_beir_qrels(
        write("clean.tsv", QRELS)).to_dict()


def test_real_beir_qrels_round_trip(shared_data, tmp_path) -> None:
    # The staged BEIR qrels are in TREC layout; converting them is what
    # `adapt beir` does in reverse.
    trec = read_trec_qrels(shared_data / "beir_anserini" / "qrels.beir-v1.0.0-scifact.test.txt")
    write_beir_qrels(trec, tmp_path / "test.tsv")
    back = read_beir_qrels(tmp_path / "test.tsv")
    assert back.digest == trec.digest
    assert len(back) == len(trec) == 339


def test_run_round_trip(tmp_path) -> None:
    run = Run.from_dict({"q1": {"a": 0.1 + 0.2, "b": -1.0}, "q2": {"a": 1e-12}}, name="bm25")
    write_beir_run(run, tmp_path / "run.tsv")
    back = read_beir_run(tmp_path / "run.tsv")
    assert back.to_dict() == run.to_dict()
    assert back.name == "run"


def test_header_helper() -> None:
    assert is_beir_header(b"\xef\xbb\xbfquery-id\tcorpus-id\tscore\r\n")
    assert is_beir_header("query-id\tcorpus-id\tscore")
    assert not is_beir_header("q1\tdoc1\t1")
    assert not is_beir_header("query-id corpus-id score")


# -- validation rules -------------------------------------------------------------


def test_missing_header(write, located) -> None:
    path = write("t.tsv", "q1\tdoc1\t1\n")
    with pytest.raises(InputError, match="expected the header") as err:
        read_beir_qrels(path)
    located(err.value, path, 1, "header")


def test_wrong_header(write, located) -> None:
    path = write("t.tsv", "query-id\tdoc-id\tscore\nq1\tdoc1\t1\n")
    with pytest.raises(InputError, match="expected the header") as err:
        read_beir_qrels(path)
    located(err.value, path, 1, "header")


@pytest.mark.parametrize("line", ["q1\tdoc1", "q1\tdoc1\t1\textra", "q1 doc1 1"])
def test_wrong_column_count(line, write, located) -> None:
    path = write("t.tsv", HEADER + "q1\tdoc0\t1\n" + line + "\n")
    with pytest.raises(InputError, match="expected 3 tab-separated columns") as err:
        read_beir_qrels(path)
    located(err.value, path, 3, "columns")


def test_extra_columns_ignored_on_request(write) -> None:
    path = write("run.tsv", "query-id\tcorpus-id\tscore\tnote\nq1\tdoc1\t0.5\tx\n")
    assert read_beir_run(path, extra_columns="ignore").to_dict() == {"q1": {"doc1": 0.5}}
    with pytest.raises(InputError):
        read_beir_run(path)


@pytest.mark.parametrize("score", ["1.5", "1.0", "x", "", "1_0", "99999999999999999999"])
def test_non_integer_score(score, write, located) -> None:
    path = write("t.tsv", HEADER + "q1\tdoc1\t1\nq1\tdoc2\t" + score + "\n")
    with pytest.raises(InputError, match="must be an integer") as err:
        read_beir_qrels(path)
    located(err.value, path, 3, "score")


@pytest.mark.parametrize(("score", "match"), [("x", "a number"), ("nan", "finite"),
                                              ("-inf", "finite")])
def test_run_score_rules(score, match, write, located) -> None:
    path = write("run.tsv", HEADER + "q1\tdoc1\t1\nq1\tdoc2\t" + score + "\n")
    with pytest.raises(InputError, match=match) as err:
        read_beir_run(path)
    located(err.value, path, 3, "score")


@pytest.mark.parametrize(("line", "field"), [("\tdoc1\t1", "query-id"),
                                             ("q1\t\t1", "corpus-id")])
def test_empty_id(line, field, write, located) -> None:
    path = write("t.tsv", HEADER + line + "\n")
    with pytest.raises(InputError, match="empty") as err:
        read_beir_qrels(path)
    located(err.value, path, 2, field)


def test_duplicate_pair(write, located) -> None:
    path = write("t.tsv", HEADER + "q1\tdoc1\t1\nq1\tdoc2\t0\nq1\tdoc1\t2\n")
    with pytest.raises(InputError, match="duplicate") as err:
        read_beir_qrels(path)
    located(err.value, path, 4, "docid")


@pytest.mark.parametrize(("how", "kept"), [("first", 1), ("max", 2)])
def test_dedupe(how, kept, write) -> None:
    path = write("t.tsv", HEADER + "q1\tdoc1\t1\nq1\tdoc2\t0\nq1\tdoc1\t2\n")
    qrels = read_beir_qrels(path, dedupe=how)
    assert qrels.to_dict() == {"q1": {"doc1": kept, "doc2": 0}}
    assert (qrels.dedupe, qrels.n_dropped_duplicates) == (how, 1)


def test_empty_file(write, located) -> None:
    path = write("t.tsv", "")
    with pytest.raises(InputError, match="empty") as err:
        read_beir_qrels(path)
    located(err.value, path, None, None)


def test_header_only(write, located) -> None:
    path = write("t.tsv", HEADER)
    with pytest.raises(InputError, match="no data lines") as err:
        read_beir_qrels(path)
    located(err.value, path, None, None)


@pytest.mark.parametrize(("raw", "field"), [(b"q\xff1\tdoc1\t1", "query-id"),
                                            (b"q1\tdoc\xc3\t1", "corpus-id"),
                                            (b"q1\tdoc1\t\xff", "score")])
def test_invalid_utf8(raw, field, write, located) -> None:
    path = write("t.tsv", HEADER.encode() + b"q0\tdoc0\t1\n" + raw + b"\n")
    with pytest.raises(InputError, match="invalid UTF-8") as err:
        read_beir_qrels(path)
    located(err.value, path, 3, field)


# -- writer -------------------------------------------------------------------------


@pytest.mark.parametrize(("qid", "docid", "field"), [
    ("q\t1", "d1", "query-id"), ("q1", "d\n1", "corpus-id"), ("q1", '"d1"', "corpus-id"),
])
def test_writer_refuses_ids_beir_cannot_hold(qid, docid, field, tmp_path) -> None:
    qrels = Qrels.from_dict({"q0": {"d0": 1}, qid: {docid: 1}})
    with pytest.raises(InputError) as err:
        write_beir_qrels(qrels, tmp_path / "t.tsv")
    assert err.value.field == field
    assert list(tmp_path.iterdir()) == []
