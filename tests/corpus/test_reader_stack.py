"""The corpus readers use `rankproof.data`'s reader stack: one text reader (gzip by content,
BOM, ``-``), one JSONL reader (duplicate keys refused) and one parse per qrels format."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import pytest
from tests.corpus.test_beir_adapt import make_beir

from rankproof import InputError
from rankproof.corpus import adapt_beir, read_corpus, read_judgments, read_vaswani
from rankproof.corpus._corpus import Corpus, Document

TDOCS = "<DOC>\n<DOCNO>1</DOCNO>\nfirst doc\n</DOC>\n<DOC>\n<DOCNO>2</DOCNO>\nsecond\n</DOC>\n"
TOPICS = "<top>\n<num>1</num><title>\nFIRST   TOPIC\n</title>\n</top>\n"


def vaswani(folder: Path, qrels: bytes) -> Path:
    (folder / "doc-text.trec").write_text(TDOCS, encoding="utf-8")
    (folder / "query-text.trec").write_text(TOPICS, encoding="utf-8")
    (folder / "qrels").write_bytes(qrels)
    return folder


def test_vaswani_qrels_are_read_as_trec_qrels(tmp_path: Path) -> None:
    # gzip by content, a BOM, a comment and tabs: whatever TREC qrels allow in rankproof.data.
    qrels = gzip.compress(b"\xef\xbb\xbf# judged by NPL\n1\t0\t2\t1\n1 0 1 0\n")
    c = read_vaswani(vaswani(tmp_path, qrels))
    assert c.qrels.to_dict() == {"1": {"2": 1, "1": 0}}


def test_vaswani_qrels_errors_keep_their_location(tmp_path: Path) -> None:
    folder = vaswani(tmp_path, b"1 0 1 1\n\n1 0 9 1\n")
    with pytest.raises(InputError, match="unknown document '9'") as err:
        read_vaswani(folder)
    assert (err.value.line, err.value.field) == (3, "docid")
    vaswani(tmp_path, b"1 0 1 1\n1 0 1 x\n")
    with pytest.raises(InputError, match="relevance must be an integer, found 'x'") as err:
        read_vaswani(tmp_path)
    assert err.value.line == 2


def test_beir_adapter_reads_through_the_data_readers(tmp_path: Path) -> None:
    src = make_beir(tmp_path / "beir")
    qrels = src / "qrels" / "test.tsv"
    qrels.write_bytes(gzip.compress(b"\xef\xbb\xbf" + qrels.read_bytes()))
    corpus = src / "corpus.jsonl"
    corpus.write_bytes(b"\xef\xbb\xbf" + corpus.read_bytes().replace(b"\n", b"\r\n"))
    result = adapt_beir(src, tmp_path / "out")
    assert (result.documents, result.queries, result.positives) == (4, 3, 4)


def test_beir_adapter_refuses_a_repeated_key(tmp_path: Path) -> None:
    src = make_beir(tmp_path / "beir")
    with open(src / "corpus.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"_id": "d9", "text": "a", "text": "b"}\n')
    with pytest.raises(InputError, match=r"corpus\.jsonl, line 5: invalid JSON object: "
                                         "duplicate key 'text'"):
        adapt_beir(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_judgments_from_stdin_and_gzip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = Corpus.from_documents([Document("pumps.md", "Pumps are greased every 2000 hours.")])
    row = {"query_id": "grease", "query": "How often?", "category": "normal",
           "gold": [{"doc": "pumps.md", "quote": "every 2000 hours"}]}
    data = (json.dumps(row) + "\n").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(data))))
    judged = read_judgments("-", corpus)
    assert (judged.query_ids, judged.source) == (("grease",), "<stdin>")
    path = tmp_path / "j.jsonl"
    path.write_bytes(gzip.compress(data))
    assert read_judgments(path, corpus).digest == judged.digest


def test_read_corpus_names_an_unreadable_document(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("fine", encoding="utf-8")
    (tmp_path / "b.md").mkdir()  # a folder with a document's name is walked, not read
    assert [d.id for d in read_corpus(tmp_path).documents] == ["a.md"]
    (tmp_path / "c.md").write_bytes(b"\xef\xbb\xbfwith a BOM\r\n")
    assert read_corpus(tmp_path).document("c.md").text == "with a BOM\n"
