"""`Corpus`: documents, their chunks, and a digest that names both.

An experiment retrieves *chunks* (passages) of documents, because that is what
a retrieval-augmented system hands to a model, while people judge relevance by
quoting the *document* (see ``_judgments``). The corpus is where the two
meet: every chunk records the character span ``[start, end)`` it covers in
its document, so a quote's span can be mapped to every chunk that overlaps it.

Chunking is deterministic and purely character-based — no tokenizer, no
model, no locale — so that the same files and the same ``chunk_size`` and
``overlap`` give the same chunks on every machine, and the corpus digest can
stand for the chunks in a report's provenance.

Text is normalised once, on the way in (:func:`normalise_text`): a leading
byte-order mark is dropped and ``\\r\\n`` / ``\\r`` become ``\\n``. Git may
check text files out with either line ending; without this a quote written
on one machine would not be found (and the digest would differ) on another.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof.data import Input

DEFAULT_CHUNK_SIZE = 800
DEFAULT_OVERLAP = 100
DOCUMENT_SUFFIXES = frozenset({".txt", ".md"})
_DIGEST_VERSION = "rankproof-corpus-v1"


def normalise_text(text: str) -> str:
    """Drop a leading BOM and turn CRLF / lone CR line ends into LF.

    Every reader of documents and every writer of documents (the BEIR adapter)
    goes through this, so that what is written is exactly what is read back.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def is_encodable(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (JSON's ``"\\ud800"`` decodes to a lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True)
class Document:
    """A document: its id (a relative POSIX path for a directory corpus) and text."""

    id: str
    text: str


@dataclass(frozen=True)
class Chunk:
    """A window ``text == document.text[start:end]`` of document ``doc_id``.

    ``index`` counts the document's chunks from 0; ``id`` is ``f"{doc_id}#{index}"``,
    the id a chunk-level run and qrels use.
    """

    id: str
    doc_id: str
    index: int
    start: int
    end: int
    text: str


def _check_chunking(chunk_size: int, overlap: int) -> None:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise InputError(f"chunk_size must be a positive integer, got {chunk_size!r}",
                         field="chunk_size")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise InputError(f"overlap must be a non-negative integer, got {overlap!r}",
                         field="overlap")
    if overlap >= chunk_size:
        raise InputError(
            f"overlap must be smaller than chunk_size, got overlap={overlap} and "
            f"chunk_size={chunk_size}", field="overlap",
        )


def _is_cut(text: str, pos: int) -> bool:
    """Whether a chunk boundary at ``pos`` falls next to whitespace (not inside a word)."""
    return pos <= 0 or pos >= len(text) or text[pos - 1].isspace() or text[pos].isspace()


def _snap_back(text: str, pos: int, floor: int) -> int:
    """The largest cut in ``(floor, pos]`` that touches whitespace, else ``pos`` itself."""
    for p in range(pos, floor, -1):
        if _is_cut(text, p):
            return p
    return pos


def chunk_spans(text: str, chunk_size: int = DEFAULT_CHUNK_SIZE,
                overlap: int = DEFAULT_OVERLAP) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of the chunks of ``text``.

    Windows of at most ``chunk_size`` characters; each next window starts
    ``overlap`` characters before the previous one ended. Both ends of a window
    are moved *back* to the nearest position next to whitespace when the window
    holds any, so words are not cut in half; a window with no whitespace (a very
    long token) is cut hard. Guarantees, whatever the text:

    * every chunk is non-empty and no longer than ``chunk_size``;
    * the chunks cover the whole text, in order (each starts no later than the
      previous one ended, the first at 0, the last ends at ``len(text)``);
    * starts and ends strictly increase, so every chunk adds text and the
      loop always ends (at most ``len(text)`` chunks);
    * an empty text has no chunks.

    >>> chunk_spans("aaa bbb ccc ddd", chunk_size=8, overlap=4)
    [(0, 8), (4, 12), (8, 15)]
    """
    _check_chunking(chunk_size, overlap)
    n = len(text)
    spans: list[tuple[int, int]] = []
    start = prev_end = 0
    while start < n:
        end = min(start + chunk_size, n)
        if end < n:
            # Snap only as far back as the previous end: every chunk must add text
            # the previous one did not have, or it would be a redundant sub-chunk.
            end = _snap_back(text, end, max(start, prev_end))
        spans.append((start, end))
        prev_end = end
        if end >= n:
            break
        nxt = end - overlap
        # When snapping shortened the window so much that the overlap would not
        # move forward, continue without overlap rather than loop.
        start = end if nxt <= start else _snap_back(text, nxt, start)
    return spans


def chunk_document(doc: Document, chunk_size: int = DEFAULT_CHUNK_SIZE,
                   overlap: int = DEFAULT_OVERLAP) -> tuple[Chunk, ...]:
    """The chunks of one document (see :func:`chunk_spans`)."""
    return tuple(
        Chunk(id=f"{doc.id}#{i}", doc_id=doc.id, index=i, start=s, end=e, text=doc.text[s:e])
        for i, (s, e) in enumerate(chunk_spans(doc.text, chunk_size, overlap))
    )


def corpus_digest(documents: Iterable[Document], chunk_size: int, overlap: int) -> str:
    """sha256 over the chunking parameters and every (id, text), in id order.

    Each string is length-prefixed so that no two different corpora can feed
    the hash the same bytes (``("ab", "c")`` vs ``("a", "bc")``).
    """
    h = hashlib.sha256()
    h.update(f"{_DIGEST_VERSION}\nchunk_size={chunk_size}\noverlap={overlap}\n".encode())
    for doc in sorted(documents, key=lambda d: d.id):
        for part in (doc.id, doc.text):
            data = part.encode("utf-8")
            h.update(f"{len(data)}:".encode())
            h.update(data)
    return "sha256:" + h.hexdigest()


@dataclass(frozen=True)
class Corpus:
    """Documents (sorted by id), their chunks, and how they were chunked.

    Build one with :func:`read_corpus` or :meth:`Corpus.from_documents`; the
    constructor trusts its arguments. ``digest`` covers ids, texts and the
    chunking parameters (:func:`corpus_digest`); ``source`` says where the
    documents came from (a directory, a collection name), or is None.
    """

    documents: tuple[Document, ...]
    chunks: tuple[Chunk, ...]
    chunk_size: int
    overlap: int
    digest: str
    source: str | None = None
    _docs: Mapping[str, Document] = field(init=False, repr=False, compare=False)
    _doc_chunks: Mapping[str, tuple[Chunk, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        docs = {d.id: d for d in self.documents}
        by_doc: dict[str, list[Chunk]] = {d.id: [] for d in self.documents}
        for c in self.chunks:
            by_doc[c.doc_id].append(c)
        object.__setattr__(self, "_docs", docs)
        object.__setattr__(self, "_doc_chunks", {k: tuple(v) for k, v in by_doc.items()})

    @classmethod
    def from_documents(
        cls,
        documents: Iterable[Document],
        *,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        overlap: int = DEFAULT_OVERLAP,
        source: str | None = None,
    ) -> Corpus:
        """Validate, sort by id, chunk and digest ``documents``.

        Ids must be unique, non-empty and free of NUL (which the evaluator's
        tie-breaking key cannot represent). A ``#`` is allowed: a chunk id is
        parsed from the right (``doc_id, _, index = chunk_id.rpartition("#")``)
        and the index is all digits, so chunk ids stay unique.
        """
        _check_chunking(chunk_size, overlap)
        docs = sorted(documents, key=lambda d: d.id)
        if not docs:
            raise InputError("the corpus has no documents", path=source)
        seen: set[str] = set()
        for doc in docs:
            if not isinstance(doc, Document):
                raise InputError(f"expected a Document, found {type(doc).__name__}", path=source)
            if not isinstance(doc.id, str) or not doc.id:
                raise InputError(f"document id must be a non-empty string, got {doc.id!r}",
                                 path=source, field="id")
            if "\x00" in doc.id:
                raise InputError(f"document id {doc.id!r} contains a NUL character",
                                 path=source, field="id")
            if not isinstance(doc.text, str):
                raise InputError(f"document {doc.id!r}: text must be a string, found "
                                 f"{type(doc.text).__name__}", path=source, field="text")
            for what, value in (("id", doc.id), ("text", doc.text)):
                if not is_encodable(value):
                    raise InputError(f"document {doc.id!r}: {what} holds an unpaired surrogate "
                                     "and cannot be encoded as UTF-8", path=source, field=what)
            if doc.id in seen:
                raise InputError(f"duplicate document id {doc.id!r}", path=source, field="id")
            seen.add(doc.id)
        chunks = tuple(c for d in docs for c in chunk_document(d, chunk_size, overlap))
        return cls(
            documents=tuple(docs), chunks=chunks, chunk_size=chunk_size, overlap=overlap,
            digest=corpus_digest(docs, chunk_size, overlap), source=source,
        )

    def __len__(self) -> int:
        return len(self.documents)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """Document ids, sorted."""
        return tuple(d.id for d in self.documents)

    def document(self, doc_id: str) -> Document:
        """The document with id ``doc_id`` (KeyError when absent)."""
        return self._docs[doc_id]

    def chunks_of(self, doc_id: str) -> tuple[Chunk, ...]:
        """The chunks of one document, in order (KeyError when absent)."""
        return self._doc_chunks[doc_id]

    def overlapping_chunks(self, doc_id: str, start: int, end: int) -> tuple[Chunk, ...]:
        """Every chunk of ``doc_id`` sharing at least one character with ``[start, end)``."""
        return tuple(c for c in self._doc_chunks[doc_id] if c.start < end and start < c.end)


def _check_regular(path: Path) -> None:
    """Refuse a document that is not a regular file, without opening it (`read_corpus`)."""
    try:
        mode = path.stat().st_mode  # follows a symlink; stat never blocks on a FIFO
    except OSError:
        return  # a dangling link: opening it names the problem
    if stat.S_ISREG(mode):
        return
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
    raise InputError(f"this corpus document is {kind}, not a regular file; a corpus folder "
                     "holds documents only: move it out of the folder", path=str(path))


def read_corpus(
    directory: PathLike, *, chunk_size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_OVERLAP
) -> Corpus:
    """Read every ``.txt`` / ``.md`` file under ``directory`` (recursively) as a document.

    A document's id is its path relative to ``directory`` in POSIX form
    (``pumps/maintenance.md``), so ids are the same on every OS. Files and
    folders whose name starts with ``.`` are skipped (``.git``, editor
    droppings), as are files with other suffixes; symlinked folders are not
    followed (no cycles). A document that is not a regular file (a FIFO, a
    socket, a device, even behind a symlink) is refused with an `InputError`
    naming it, before anything is opened: opening a FIFO waits for a writer
    that may never come, and a document that is a stream would make the
    corpus digest depend on who wrote to it. Files must be UTF-8: anything else raises
    `InputError` naming the file, because guessing an encoding would make the
    digest depend on the guess. A directory with no documents is an error.
    """
    root = Path(directory)
    if not root.is_dir():
        raise InputError("expected a directory of .txt/.md documents, found "
                         + ("a file" if root.exists() else "nothing"), path=str(root))
    files: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            path = Path(dirpath) / name
            if name.startswith(".") or path.suffix.lower() not in DOCUMENT_SUFFIXES:
                continue
            _check_regular(path)
            files.append((path.relative_to(root).as_posix(), path))
    if not files:
        raise InputError("no .txt or .md documents found in the directory", path=str(root))
    docs = []
    for doc_id, path in sorted(files):
        docs.append(Document(doc_id, normalise_text(Input.open(path).text())))
    return Corpus.from_documents(docs, chunk_size=chunk_size, overlap=overlap, source=str(root))
