"""What an experiment evaluates: a chunked corpus, queries, and judgments at a granularity.

Three sources share one shape:

* a corpus directory plus a quote-anchored judgments file (or the bundled
  golden corpus), whose quotes resolve to chunks;
* a classic collection (Cranfield, CISI, Vaswani) with document-level qrels,
  graded where the collection is;
* a BEIR folder, read through the BEIR adapter's validation (or a folder the
  adapter wrote);
* an ir_datasets dataset by id (``irds:ID``), read from its local cache only
  (`irds_inputs`): documents, queries and qrels become a classic collection.

BEIR judges whole documents, on a scale where the dataset has one, and its
published numbers rank documents: so judgments read from BEIR keep their
grades (`graded_qrels`), and at chunk granularity — every chunk of a relevant
document relevant, the ideal ranking holding all of them — the inputs carry
`CHUNK_CAVEAT`, stamped on the report and printed.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from rankproof._errors import InputError
from rankproof.comparison import read_queries
from rankproof.corpus import (
    Collection,
    Corpus,
    Document,
    Judgments,
    adapt_beir,
    golden_corpus,
    graded_qrels,
    load_collection,
    read_corpus,
    read_judgments,
)
from rankproof.data import IRDS_PREFIX, Qrels, irds_documents, irds_files, is_irds, load_qrels

Granularity = Literal["chunk", "document"]

CHUNK_CAVEAT = (
    "chunk granularity on document-level judgments (BEIR): every chunk of a relevant "
    "document counts as relevant and the ideal ranking holds all of them, so these numbers "
    "are not comparable to published BEIR numbers, which rank documents "
    "(--granularity document is)"
)

IRDS_CHUNK_CAVEAT = (
    "chunk granularity on document-level judgments (ir_datasets): every chunk of a judged "
    "document carries the document's label and the ideal ranking holds all of them, so these "
    "numbers are not comparable to the dataset's published numbers, which rank documents "
    "(--granularity document is)"
)


@dataclass(frozen=True)
class EvalInputs:
    """A corpus, the queries to run, and the qrels at the chosen granularity."""

    name: str
    source: str | None
    corpus: Corpus
    queries: tuple[tuple[str, str], ...]
    qrels: Qrels
    granularity: Granularity
    judgments_digest: str
    no_answer: tuple[str, ...] = ()
    categories: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    complete_judgments: bool = False
    """True when every unlisted chunk is known non-relevant (quote-anchored judgments)."""
    query_categories: dict[str, str] = field(default_factory=dict)
    """qid -> judgment category (normal, ambiguous, no_answer, adversarial), when known."""

    @property
    def chunk_doc(self) -> dict[str, str]:
        """Chunk id -> document id."""
        return {c.id: c.doc_id for c in self.corpus.chunks}


def document_level(judgments: Judgments, corpus: Corpus) -> bool:
    """Whether every gold quote is its whole document (judgments converted from BEIR)."""
    golds = [g for q in judgments.queries for g in q.gold]
    return bool(golds) and all(
        g.start == 0 and g.end == len(corpus.document(g.doc).text) for g in golds)


def from_judgments(name: str, corpus: Corpus, judgments: Judgments, granularity: Granularity,
                   source: str | None = None, complete: bool = True) -> EvalInputs:
    """Inputs from quote-anchored judgments; graded where the judgments carry grades."""
    queries = tuple((q.query_id, q.query) for q in judgments.queries)
    cats = Counter(q.category for q in judgments.queries)
    notes = (CHUNK_CAVEAT,) if granularity == "chunk" and document_level(judgments,
                                                                          corpus) else ()
    return EvalInputs(
        name=name, source=source, corpus=corpus, queries=queries,
        qrels=graded_qrels(judgments, corpus, granularity), granularity=granularity,
        judgments_digest=judgments.digest, no_answer=tuple(judgments.no_answer),
        categories=dict(sorted(cats.items())), notes=notes, complete_judgments=complete,
        query_categories={q.query_id: q.category for q in judgments.queries},
    )


def golden_inputs(granularity: Granularity, chunk_size: int, overlap: int) -> EvalInputs:
    corpus, judgments = golden_corpus(chunk_size=chunk_size, overlap=overlap)
    return from_judgments("golden", corpus, judgments, granularity, source="rankproof.golden")


def directory_inputs(corpus_dir: Path, judgments_path: Path, granularity: Granularity,
                     chunk_size: int, overlap: int, *, name: str | None = None,
                     complete: bool = True) -> EvalInputs:
    """A corpus folder and its judgments; ``complete=False`` for pooled judgments (BEIR)."""
    corpus = read_corpus(corpus_dir, chunk_size=chunk_size, overlap=overlap)
    judgments = read_judgments(judgments_path, corpus)
    return from_judgments(name or corpus_dir.name or str(corpus_dir), corpus, judgments,
                          granularity, source=str(corpus_dir), complete=complete)


def _chunk_qrels(collection: Collection, corpus: Corpus) -> Qrels:
    """Document-level labels copied onto every chunk of the document."""
    chunks_of: dict[str, list[str]] = {}
    for c in corpus.chunks:
        chunks_of.setdefault(c.doc_id, []).append(c.id)
    q, d, r = [], [], []
    for qid, docid, rel in zip(collection.qrels.qids().to_pylist(),
                               collection.qrels.docids.to_pylist(),
                               collection.qrels.rels.tolist(), strict=True):
        for chunk in chunks_of.get(docid, []):
            q.append(qid)
            d.append(chunk)
            r.append(rel)
    return Qrels.from_columns(q, d, np.array(r, dtype=np.int64), source=collection.name)


def collection_inputs(name: str, root: Path, granularity: Granularity, chunk_size: int,
                      overlap: int) -> EvalInputs:
    return _from_collection(load_collection(name, root), str(root), granularity, chunk_size,
                            overlap)


def _from_collection(collection: Collection, source: str, granularity: Granularity,
                     chunk_size: int, overlap: int) -> EvalInputs:
    """A document-level collection as inputs (chunk qrels copied from the documents')."""
    name = collection.name
    corpus = collection.corpus(chunk_size=chunk_size, overlap=overlap)
    qrels = collection.qrels if granularity == "document" else _chunk_qrels(collection, corpus)
    judged = set(collection.qrels.topics)
    unjudged = tuple(q for q, _ in collection.queries if q not in judged)
    notes = list(collection.notes)
    if unjudged:
        notes.append(f"{len(unjudged)} of {len(collection.queries)} queries have no judgments "
                     "and are not scored")
    return EvalInputs(
        name=name, source=source, corpus=corpus, queries=collection.queries, qrels=qrels,
        granularity=granularity, judgments_digest=collection.qrels.digest,
        no_answer=unjudged, categories={"normal": len(judged)}, notes=tuple(notes),
    )


def beir_inputs(folder: Path, split: str, granularity: Granularity = "document",
                chunk_size: int = 800, overlap: int = 100) -> EvalInputs:
    """Adapt a BEIR folder into a temporary corpus + judgments, then read those.

    Document granularity by default, BEIR's own (graded where the qrels are);
    chunk granularity carries `CHUNK_CAVEAT`.
    """
    with tempfile.TemporaryDirectory(prefix="rankproof-beir-") as tmp:
        out = Path(tmp) / "adapted"
        adapt_beir(folder, out, split=split)
        corpus = read_corpus(out / "docs", chunk_size=chunk_size, overlap=overlap)
        judgments = read_judgments(out / "judgments.jsonl", corpus)
    # BEIR qrels come from pooling: documents outside the pool were never judged.
    return from_judgments(folder.name, corpus, judgments, granularity, source=str(folder),
                          complete=False)


def irds_inputs(dataset: str, granularity: Granularity = "document", chunk_size: int = 800,
                overlap: int = 100) -> EvalInputs:
    """An ir_datasets dataset (``ID`` or ``irds:ID``) as a classic collection, from its local
    cache only (`rankproof.data.irds_documents`: nothing is ever downloaded).

    Every cached file of its documents, queries and qrels is checked before any is read
    (`rankproof.data.irds_files`), so a half-cached dataset is refused before minutes of
    reading. Documents are ``(doc_id, text)`` — title, a blank line and text where the
    dataset's documents have a title — and more than ``RANKPROOF_MAX_IRDS_DOCS`` (default
    2,000,000) are refused; queries are each record's ``default_text()``; qrels are read as
    a TREC qrels file would be, grades kept. Like a collection's, the judgments are
    document-level: document granularity by default, and chunk granularity (every chunk of
    a judged document carries its label) carries `IRDS_CHUNK_CAVEAT`. A qrels row naming a query
    the dataset's queries lack is refused; one naming a document its corpus lacks is kept
    (it counts in recall's denominator, as trec_eval counts it) and noted.
    """
    label = dataset if is_irds(dataset) else IRDS_PREFIX + dataset
    irds_files(label)
    documents = tuple(Document(doc_id, text) for doc_id, text in irds_documents(label))
    queries = tuple(read_queries(label).items())
    qrels = load_qrels(label)
    asked = {q for q, _ in queries}
    unasked = [q for q in qrels.topics if q not in asked]
    if unasked:
        raise InputError(f"the qrels judge {len(unasked)} quer{'y' if len(unasked) == 1 else 'ies'}"
                         f" the dataset's queries do not hold (first: {unasked[0]!r}); "
                         "they could not be run", path=label, field="qrels")
    ids = {d.id for d in documents}
    absent = {d for d in qrels.docids.to_pylist() if d not in ids}
    notes = [f"{len(absent)} judged document(s) are not in the corpus (e.g. "
             f"{sorted(absent)[0]!r}): they cannot be retrieved and count as missed"] \
        if absent else []
    collection = Collection(name=label, documents=documents, queries=queries, qrels=qrels,
                            notes=tuple(notes))
    made = _from_collection(collection, label, granularity, chunk_size, overlap)
    if granularity == "chunk":
        made = dataclasses.replace(made, notes=(IRDS_CHUNK_CAVEAT, *made.notes))
    return made
