"""Classic collections: counts against each folder's PROVENANCE.md, spot checks, quirks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from rankproof import InputError
from rankproof.corpus._collections import (
    CRANFIELD_GRADES,
    Collection,
    load_collection,
    read_glasgow,
    read_vaswani,
)


@pytest.fixture(scope="module")
def cranfield(shared_data: Path) -> Collection:
    return load_collection("cranfield", shared_data)


@pytest.fixture(scope="module")
def cisi(shared_data: Path) -> Collection:
    return load_collection("cisi", shared_data)


@pytest.fixture(scope="module")
def vaswani(shared_data: Path) -> Collection:
    return load_collection("vaswani", shared_data)


def test_cranfield_counts(cranfield: Collection) -> None:
    # PROVENANCE.md: 1400 docs, 225 queries, 1837 qrels rows over 225 qids and 924 docs;
    # codes 3:734, 2:387, 4:363, -1:225, 1:128 (mapped to gains 5 - code).
    assert len(cranfield.documents) == 1400
    assert len({d.id for d in cranfield.documents}) == 1400
    assert len(cranfield.queries) == 225
    assert len(cranfield.qrels) == 1837
    assert len(cranfield.qrels.topics) == 225
    assert len(set(cranfield.qrels.docids.to_pylist())) == 924
    raw = {3: 734, 2: 387, 4: 363, -1: 225, 1: 128}
    assert Counter(cranfield.qrels.rels.tolist()) == {CRANFIELD_GRADES[c]: n
                                                      for c, n in raw.items()}


def test_cranfield_queries_are_numbered_by_position(cranfield: Collection) -> None:
    ids = [q for q, _ in cranfield.queries]
    assert ids == [str(i) for i in range(1, 226)]
    # .I numbers skip: 001, 002, 004, 008, ... 365
    assert "1" not in cranfield.query_source_ids
    assert cranfield.query_source_ids["3"] == "004"
    assert cranfield.query_source_ids["4"] == "008"
    assert cranfield.query_source_ids["225"] == "365"
    assert dict(cranfield.queries)["3"].startswith("what problems of heat conduction in "
                                                   "composite slabs")


def test_cranfield_records(cranfield: Collection) -> None:
    docs = {d.id: d.text for d in cranfield.documents}
    # the title is repeated at the start of .W, so it appears once
    assert docs["1"].startswith("experimental investigation of the aerodynamics of a\nwing in a "
                                "slipstream .\n  an experimental study")
    assert docs["1"].count("experimental investigation of the aerodynamics") == 1
    assert "\r" not in docs["1"]
    assert docs["471"] == "" and docs["995"] == ""  # known empty records
    assert "brenckman" not in docs["1"]  # authors are not text
    rel = cranfield.qrels.to_dict()
    assert rel["1"]["184"] == CRANFIELD_GRADES[2]
    assert rel["225"]["1188"] == -1
    assert len(cranfield.notes) == 2
    assert "stray '.A' line inside record 240" in cranfield.notes[0]
    assert "application to turbulent separations" in docs["240"]


def test_cranfield_grade_mapping_keeps_binary_relevance() -> None:
    assert CRANFIELD_GRADES == {1: 4, 2: 3, 3: 2, 4: 1, -1: -1}
    assert {c for c, g in CRANFIELD_GRADES.items() if g >= 1} == {1, 2, 3, 4}


def test_cisi_counts(cisi: Collection) -> None:
    # PROVENANCE.md: 1460 docs, 112 queries, 3114 qrels rows covering 76 queries; binary
    assert len(cisi.documents) == 1460
    assert len(cisi.queries) == 112
    assert len(cisi.qrels) == 3114
    assert len(cisi.qrels.topics) == 76
    assert set(cisi.qrels.rels.tolist()) == {1}
    assert cisi.query_source_ids == {}  # .I runs 1..112: positions and ids agree
    assert cisi.notes == ()


def test_cisi_records(cisi: Collection) -> None:
    docs = {d.id: d.text for d in cisi.documents}
    assert docs["1"].startswith("18 Editions of the Dewey Decimal Classifications\n\nThe present "
                                "study is a history of the DEWEY Decimal")
    assert "Comaromi" not in docs["1"]
    queries = dict(cisi.queries)
    assert queries["3"] == "What is information science?  Give definitions where possible."
    assert cisi.qrels.to_dict()["1"]["28"] == 1


def test_vaswani_counts_and_records(vaswani: Collection) -> None:
    # PROVENANCE.md: 11429 docs, 93 queries, 2083 qrels rows, all rel=1, all queries judged
    assert len(vaswani.documents) == 11429
    assert len(vaswani.queries) == 93
    assert len(vaswani.qrels) == 2083
    assert len(vaswani.qrels.topics) == 93
    assert set(vaswani.qrels.rels.tolist()) == {1}
    assert all(d.text for d in vaswani.documents)
    docs = {d.id: d.text for d in vaswani.documents}
    assert docs["1"] == ("compact memories have flexible capacities  a digital data storage\n"
                         "system with capacity up to bits and random and or sequential access\n"
                         "is described")
    assert vaswani.queries[0] == ("1", "MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS BY THE "
                                       "USE OF MICROWAVE TECHNIQUES")
    assert {"1239", "1502", "4462"} <= set(vaswani.qrels.to_dict()["1"])


def test_vaswani_judgments_round_trip_to_the_same_qrels(vaswani: Collection) -> None:
    corpus = vaswani.corpus()
    judgments = vaswani.to_judgments(corpus)
    assert len(judgments) == 93 and judgments.no_answer == ()
    qrels = judgments.to_qrels(corpus, granularity="document")
    assert qrels.to_dict() == vaswani.qrels.to_dict()
    assert qrels.digest == vaswani.qrels.digest
    # at chunk granularity every chunk of a relevant document is relevant
    chunk_qrels = judgments.to_qrels(corpus, granularity="chunk")
    assert len(chunk_qrels) >= len(qrels)
    assert {c.rpartition("#")[0] for c in chunk_qrels.docids.to_pylist()} == set(
        vaswani.qrels.docids.to_pylist())


def test_cranfield_judgments_keep_positive_documents_with_text(cranfield: Collection) -> None:
    corpus = cranfield.corpus()
    qrels = cranfield.to_judgments(corpus).to_qrels(corpus, granularity="document")
    expected = {(q, d) for q, docs in cranfield.qrels.to_dict().items()
                for d, r in docs.items() if r > 0 and corpus.document(d).text}
    got = {(q, d) for q, docs in qrels.to_dict().items() for d in docs}
    assert got == expected


def test_unknown_collection(shared_data: Path) -> None:
    with pytest.raises(InputError, match="unknown collection 'trec'; expected one of "
                       "cranfield, cisi, vaswani"):
        load_collection("trec", shared_data)


# -- small synthetic files: the readers' own checks --------------------------


def glasgow(tmp_path: Path, docs: str, queries: str, qrels: str) -> tuple[Path, Path, Path]:
    paths = (tmp_path / "d", tmp_path / "q", tmp_path / "r")
    for p, text in zip(paths, (docs, queries, qrels), strict=True):
        p.write_bytes(text.replace("\n", "\r\n").encode())
    return paths


DOCS = ".I 1\n.T\nTitle one\n.A\nAuthor\n.W\nBody one.\n.I 002\n.W\nBody two.\n"
QUERIES = ".I 5\n.W\nfirst query\n.I 9\n.W\nsecond query\n"


def test_glasgow_small(tmp_path: Path) -> None:
    c = read_glasgow(*glasgow(tmp_path, DOCS, QUERIES, "1 1 2\n2 2 1\n"), name="tiny")
    assert [(d.id, d.text) for d in c.documents] == [("1", "Title one\n\nBody one."),
                                                     ("2", "Body two.")]
    assert c.queries == (("1", "first query"), ("2", "second query"))
    assert c.query_source_ids == {"1": "5", "2": "9"}
    assert c.qrels.to_dict() == {"1": {"1": 2}, "2": {"2": 1}}


@pytest.mark.parametrize(
    ("docs", "qrels", "message"),
    [
        (DOCS, "3 1 1\n", "r, line 1, field 'qid': query '3' is not a query position"),
        (DOCS, "1 7 1\n", "r, line 1, field 'docid': unknown document '7'"),
        (DOCS, "1 1\n", "r, line 1: expected 3 or 4 whitespace-separated columns, found 2"),
        (DOCS, "1 1 x\n", "relevance code must be an integer, found 'x'"),
        # the TREC reader's one integer grammar: no non-ASCII digits, no underscores
        (DOCS, "1 1 \u0663\n", "relevance code must be an integer, found '\u0663'"),
        (DOCS, "1 1 1_0\n", "relevance code must be an integer, found '1_0'"),
        (DOCS, "1 1 " + "9" * 60 + "\n", "relevance code is an integer of 60 digits"),
        (DOCS, "\n", "the qrels have no rows"),
        ("text before\n.I 1\n.W\nx\n", "1 1 1\n", "d, line 1: text before the first .I record"),
        (".T\nx\n", "1 1 1\n", "field .T before the first .I record"),
        (".I 1\n.W\nx\n.I 1\n.W\ny\n", "1 1 1\n", "duplicate record id '1'"),
        (".I 1\n.T\nx\n.W\ny\n.T z\n", "1 1 1\n", "d, line 6, field '.T': field .T "
         "repeated in record 1"),
        ("", "1 1 1\n", "no .I records found"),
    ],
)
def test_glasgow_errors(tmp_path: Path, docs: str, qrels: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        read_glasgow(*glasgow(tmp_path, docs, QUERIES, qrels))


def test_glasgow_grade_without_mapping(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="relevance code 5 has no mapping"):
        read_glasgow(*glasgow(tmp_path, DOCS, QUERIES, "1 1 5\n"), grades=CRANFIELD_GRADES)


def vaswani_dir(tmp_path: Path, docs: str, topics: str, qrels: str) -> Path:
    (tmp_path / "doc-text.trec").write_text(docs, encoding="utf-8")
    (tmp_path / "query-text.trec").write_text(topics, encoding="utf-8")
    (tmp_path / "qrels").write_text(qrels, encoding="utf-8")
    return tmp_path


TDOCS = "<DOC>\n<DOCNO>1</DOCNO>\nfirst doc\n</DOC>\n<DOC>\n<DOCNO>2</DOCNO>\nsecond\n</DOC>\n"
TOPICS = "<top>\n<num>1</num><title>\nFIRST   TOPIC\n</title>\n</top>\n"


def test_vaswani_small(tmp_path: Path) -> None:
    c = read_vaswani(vaswani_dir(tmp_path, TDOCS, TOPICS, "1 0 2 1\n"))
    assert [(d.id, d.text) for d in c.documents] == [("1", "first doc"), ("2", "second")]
    assert c.queries == (("1", "FIRST TOPIC"),)
    assert c.qrels.to_dict() == {"1": {"2": 1}}


@pytest.mark.parametrize(
    ("docs", "topics", "qrels", "message"),
    [
        (TDOCS, TOPICS, "1 0 9 1\n", "qrels, line 1, field 'docid': unknown document '9'"),
        (TDOCS, TOPICS, "4 0 1 1\n", "unknown query '4'"),
        (TDOCS, TOPICS, "1 1 1\n", "expected 4 columns 'qid iter docno rel', found 3"),
        (TDOCS + "<DOC>\n<DOCNO>1</DOCNO>\nagain\n</DOC>\n", TOPICS, "1 0 1 1\n",
         "doc-text.trec, line 9, field 'DOCNO': duplicate DOCNO '1' \\(first on line 1\\)"),
        ("<DOC>\nno docno\n</DOC>\n", TOPICS, "1 0 1 1\n", "a <DOC> without a leading <DOCNO>"),
        ("nothing", TOPICS, "1 0 1 1\n", "no <DOC> records found"),
        (TDOCS, "<top><title>x</title></top>", "1 0 1 1\n", "a <top> without <num>"),
        (TDOCS, "<top><num>1</num></top>", "1 0 1 1\n", "a <top> without a <title>"),
    ],
)
def test_vaswani_errors(tmp_path: Path, docs: str, topics: str, qrels: str,
                        message: str) -> None:
    with pytest.raises(InputError, match=message):
        read_vaswani(vaswani_dir(tmp_path, docs, topics, qrels))


def test_glasgow_repeated_field_marker(tmp_path: Path) -> None:
    # CISI repeats .A per author (the field continues); a bare marker of an earlier field
    # met inside another field is a stray line, dropped and noted (Cranfield record 240).
    docs = ".I 1\n.A\nAnn\n.A\nBob\n.W\nline one\n.A\nline two\n"
    c = read_glasgow(*glasgow(tmp_path, docs, QUERIES, "1 1 1\n"))
    assert c.documents[0].text == "line one\nline two"
    assert c.notes == ("d line 8: stray '.A' line inside record 1 dropped",)
