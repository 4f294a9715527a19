"""`read_corpus` and `Corpus`: ids, order, encoding, normalisation, digest."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankproof import InputError
from rankproof.corpus._corpus import Corpus, Document, read_corpus


def write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8", newline="")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write(root, "b.md", "# B\n\nbeta text")
    write(root, "a.txt", "alpha text")
    write(root, "sub/deeper/c.md", "gamma text")
    write(root, "sub/z.TXT", "zeta")
    write(root, "notes.pdf", "not a document")
    write(root, ".hidden.md", "skipped")
    write(root, ".git/config.txt", "skipped too")
    return root


def test_reads_recursively_with_posix_relative_ids_sorted(tree: Path) -> None:
    corpus = read_corpus(tree)
    assert corpus.doc_ids == ("a.txt", "b.md", "sub/deeper/c.md", "sub/z.TXT")
    assert corpus.document("b.md").text == "# B\n\nbeta text"
    assert corpus.source == str(tree)
    assert (corpus.chunk_size, corpus.overlap) == (800, 100)
    assert len(corpus) == 4 and "a.txt" in corpus and "notes.pdf" not in corpus


def test_chunks_cover_each_document(tree: Path) -> None:
    corpus = read_corpus(tree, chunk_size=5, overlap=1)
    for doc in corpus.documents:
        chunks = corpus.chunks_of(doc.id)
        assert chunks[0].start == 0 and chunks[-1].end == len(doc.text)
    assert corpus.chunks == tuple(c for d in corpus.documents for c in corpus.chunks_of(d.id))


def test_invalid_utf8_names_the_file(tmp_path: Path) -> None:
    write(tmp_path, "good.md", "fine")
    write(tmp_path, "bad.md", b"line one\nbad \xff byte")
    with pytest.raises(InputError, match=r"bad\.md, line 2: invalid UTF-8") as info:
        read_corpus(tmp_path)
    assert info.value.path is not None and info.value.path.endswith("bad.md")


def test_empty_directory_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "image.png", b"\x89PNG")
    with pytest.raises(InputError, match=r"no \.txt or \.md documents found in the directory"):
        read_corpus(tmp_path)


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"expected a directory of \.txt/\.md documents, "
                       r"found nothing"):
        read_corpus(tmp_path / "missing")
    write(tmp_path, "file.md", "x")
    with pytest.raises(InputError, match="found a file"):
        read_corpus(tmp_path / "file.md")


def test_line_ends_and_bom_are_normalised(tmp_path: Path) -> None:
    write(tmp_path, "crlf.md", "\ufeffone\r\ntwo\rthree\n")
    assert read_corpus(tmp_path).document("crlf.md").text == "one\ntwo\nthree\n"


def test_empty_document_has_no_chunks(tmp_path: Path) -> None:
    write(tmp_path, "empty.md", "")
    write(tmp_path, "full.md", "text")
    corpus = read_corpus(tmp_path)
    assert corpus.chunks_of("empty.md") == ()
    assert [c.id for c in corpus.chunks] == ["full.md#0"]


def test_digest_is_stable_and_covers_ids_texts_and_parameters(tree: Path) -> None:
    base = read_corpus(tree).digest
    assert base.startswith("sha256:") and read_corpus(tree).digest == base
    assert read_corpus(tree, chunk_size=500).digest != base
    assert read_corpus(tree, overlap=50).digest != base
    write(tree, "b.md", "# B\n\nbeta text!")
    assert read_corpus(tree).digest != base


def test_digest_separates_id_from_text() -> None:
    one = Corpus.from_documents([Document("ab", "c")])
    two = Corpus.from_documents([Document("a", "bc")])
    assert one.digest != two.digest


def test_from_documents_sorts_and_order_does_not_matter() -> None:
    docs = [Document("b", "two"), Document("a", "one")]
    corpus = Corpus.from_documents(docs, chunk_size=10, overlap=2, source="mem")
    assert corpus.doc_ids == ("a", "b")
    assert corpus.digest == Corpus.from_documents(list(reversed(docs)), chunk_size=10,
                                                  overlap=2).digest


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        ([], "the corpus has no documents"),
        ([Document("a", "x"), Document("a", "y")], "duplicate document id 'a'"),
        ([Document("", "x")], "document id must be a non-empty string, got ''"),
        ([Document("a\x00b", "x")], "document id 'a\\\\x00b' contains a NUL character"),
        ([Document("a", 5)], "document 'a': text must be a string, found int"),  # type: ignore[arg-type]
        ([Document("a", "x\ud800")], "document 'a': text holds an unpaired surrogate"),
    ],
)
def test_from_documents_rejects(docs: list[Document], message: str) -> None:
    with pytest.raises(InputError, match=message):
        Corpus.from_documents(docs)


def test_hash_in_document_id_keeps_chunk_ids_unique() -> None:
    corpus = Corpus.from_documents([Document("a", "x " * 20), Document("a#1", "y")],
                                   chunk_size=4, overlap=0)
    ids = [c.id for c in corpus.chunks]
    assert len(ids) == len(set(ids))
    assert all(c.id.rpartition("#")[0] == c.doc_id for c in corpus.chunks)


def test_overlapping_chunks() -> None:
    corpus = Corpus.from_documents([Document("d", "aaaa bbbb cccc dddd")], chunk_size=10,
                                   overlap=0)
    assert [(c.start, c.end) for c in corpus.chunks] == [(0, 10), (10, 19)]
    assert [c.index for c in corpus.overlapping_chunks("d", 0, 4)] == [0]
    assert [c.index for c in corpus.overlapping_chunks("d", 8, 12)] == [0, 1]
    assert [c.index for c in corpus.overlapping_chunks("d", 10, 11)] == [1]
