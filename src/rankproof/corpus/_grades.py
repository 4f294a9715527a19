"""Graded relevance carried by judgments converted from a graded collection.

Quote-anchored judgments say *where* the evidence is, not *how* relevant it
is, so `Judgments.to_qrels` is binary. A collection judged on a scale (BEIR's
TREC-COVID, NFCorpus, Touché: scores 1 and 2) loses that scale there, and
nDCG is then not the number its users know (TREC DL 2019's passages and
0-3 qrels as a BEIR folder: the published BM25 run scores nDCG@10 0.5456
graded, as pytrec_eval says, and 0.6644 flattened; tests/corpus/test_beir_graded.py).
The BEIR adapter therefore keeps each query's grades in its row's
``meta.grades`` (``{gold document: grade}``), and :func:`graded_qrels` reads
them back: the qrels of `Judgments.to_qrels` with each row's label set to
the grade of its document (every chunk of a document takes the document's
grade). A query without ``meta.grades`` keeps label 1.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rankproof._errors import InputError
from rankproof._limits import shown
from rankproof.corpus._corpus import Corpus
from rankproof.corpus._judgments import Granularity, Judgments
from rankproof.data import Qrels


def query_grades(judgments: Judgments) -> dict[str, dict[str, int]]:
    """``{query_id: {document: grade}}`` for the queries whose ``meta`` has ``grades``.

    Every grade must be a positive integer and name one of the query's gold
    documents; anything else is an `InputError` naming the judgments file, the
    query and the field ``meta.grades``.
    """
    out: dict[str, dict[str, int]] = {}
    for q in judgments.queries:
        raw = (q.meta or {}).get("grades")
        if raw is None:
            continue

        def refuse(message: str, qid: str = q.query_id) -> InputError:
            return InputError(f"query {shown(qid)}: {message}", path=judgments.source,
                              field="meta.grades")

        if not isinstance(raw, Mapping):
            raise refuse(f"meta.grades must be an object {{document: grade}}, found {shown(raw)}")
        gold = {g.doc for g in q.gold}
        grades: dict[str, int] = {}
        for doc, grade in raw.items():
            if doc not in gold:
                raise refuse(f"meta.grades names {shown(doc)}, which is not one of the query's "
                             "gold documents")
            if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
                raise refuse(f"the grade of {shown(doc)} must be a positive integer, found "
                             f"{shown(grade)}")
            grades[doc] = grade
        out[q.query_id] = grades
    return out


def graded_qrels(judgments: Judgments, corpus: Corpus,
                 granularity: Granularity = "chunk") -> Qrels:
    """`Judgments.to_qrels`, with the grades of ``meta.grades`` as relevance labels.

    Identical to ``judgments.to_qrels(corpus, granularity)`` when no query
    carries grades (the golden corpus, hand-written judgments).
    """
    base = judgments.to_qrels(corpus, granularity)
    grades = query_grades(judgments)
    if not grades:
        return base
    chunk_doc = {c.id: c.doc_id for c in corpus.chunks} if granularity == "chunk" else {}
    qids = base.qids().to_pylist()
    ids = base.docids.to_pylist()
    rels = [grades.get(q, {}).get(chunk_doc.get(i, i), 1) for q, i in zip(qids, ids, strict=True)]
    return Qrels.from_columns(qids, ids, np.array(rels, dtype=np.int64), source=base.source)
