"""Corpora: documents and chunking, quote-anchored judgments, the classic test
collections (Cranfield, CISI, Vaswani, the bundled golden corpus) and the BEIR adapter.

Run and qrels formats are `rankproof.data`'s; a corpus reads its qrels through it.
"""

from rankproof.corpus._beir_adapt import (
    BeirAdaptation,
    adapt_beir,
    find_adaptation,
    read_beir_corpus,
    read_beir_queries,
)
from rankproof.corpus._collections import (
    COLLECTIONS,
    Collection,
    golden_corpus,
    load_collection,
    read_glasgow,
    read_vaswani,
)
from rankproof.corpus._corpus import DOCUMENT_SUFFIXES, Chunk, Corpus, Document, read_corpus
from rankproof.corpus._grades import graded_qrels
from rankproof.corpus._judgments import (
    Gold,
    JudgedQuery,
    Judgments,
    read_judgments,
    write_judgments,
)

__all__ = [
    "COLLECTIONS",
    "DOCUMENT_SUFFIXES",
    "BeirAdaptation",
    "Chunk",
    "Collection",
    "Corpus",
    "Document",
    "Gold",
    "JudgedQuery",
    "Judgments",
    "adapt_beir",
    "find_adaptation",
    "golden_corpus",
    "graded_qrels",
    "load_collection",
    "read_beir_corpus",
    "read_beir_queries",
    "read_corpus",
    "read_glasgow",
    "read_judgments",
    "read_vaswani",
    "write_judgments",
]
