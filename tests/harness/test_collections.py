"""BM25 on Cranfield, CISI and Vaswani, checked against two independent implementations.

The numbers ``rankproof eval --collection NAME --granularity document`` reports
for its bm25 stage (docs/collections.md) are reproduced two ways:

1. **Retrieval** — rank-bm25's ``BM25Okapi`` (k1 = 0.9, b = 0.4), fed the same
   tokens (rankproof's own ``Analyzer``: lower-case, ``\\w\\w+``, bm25s' English
   stop words, Snowball English stemmer), gives a mean AP within 0.005. Two
   set-ups, both at the harness's depth (100 documents per query):

   * ``chunks``: the command's default set-up (800-character chunks, 100 overlap,
     each document ranked at its best chunk). rank-bm25 scores the same chunks;
     the chunk → document collapse is re-implemented here.
   * ``documents``: chunks larger than the longest document, so a chunk is a
     document and the harness's bm25 is plain document BM25. rank-bm25 indexes
     the collection's documents directly — no rankproof chunking involved.

   What still differs (why the tolerance is not 0): rank-bm25's idf is
   Robertson–Spärck Jones ``ln((N - df + 0.5) / (df + 0.5))`` with idf < 0
   (terms in more than half the units) replaced by 0.25 × the mean idf, where
   rankproof (bm25s ``method="lucene"``) uses Lucene's ``ln(1 + (N - df + 0.5) /
   (df + 0.5))``; rank-bm25 multiplies every term by (k1 + 1) (a constant factor,
   no change to rankings); it scores in float64, bm25s in float32; and it counts
   Cranfield's two empty documents (471, 995) in N and the mean length, which
   rankproof, having no chunk for them, does not. Units scoring 0 (no query term)
   are not retrieved on either side; ties go to the larger id (trec_eval's order).
   With Lucene's idf swapped into rank-bm25 (and the empty documents left out), its
   whole-document ranking equals rankproof's: per-query values agree within 1e-9.

2. **Evaluation** — the harness's bm25 run (rebuilt here and checked to give the
   report's per-query values exactly) evaluated by pytrec_eval (trec_eval's C
   code) gives the same AP, nDCG@10 and R@100 per query within 1e-9. pytrec_eval
   leaves out queries the run lacks; rankproof scores them 0 (trec_eval ``-c``).

Runtime: about 35 s on one core, nearly all of it rank-bm25 scoring every unit in
Python for each query term; those tests are marked ``slow``, the pytrec_eval ones
(a few seconds) are not.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import cache

import numpy as np
import pytest
import pytrec_eval
from rank_bm25 import BM25Okapi
from tests.conftest import SHARED_DATA

from rankproof.corpus import load_collection
from rankproof.data import Run
from rankproof.harness import (
    EvalConfig,
    EvalInputs,
    EvalReport,
    collapse_to_documents,
    collection_inputs,
    run_experiment,
)
from rankproof.measures import evaluate
from rankproof.retrieval import BM25Retriever
from rankproof.retrieval._bm25 import Analyzer

COLLECTIONS = ("cranfield", "cisi", "vaswani")
MEASURES = ("AP", "nDCG@10", "R@100")
PYTREC = {"AP": "map", "nDCG@10": "ndcg_cut_10", "R@100": "recall_100"}
K1, B = 0.9, 0.4
DEPTH = 100  # EvalConfig.depth: documents per query
OVERLAP = 100
#: chunk size per set-up; 10,000 characters exceeds every document of the three
#: collections (the longest, in Cranfield, has 4,155), so each is one chunk.
SETUPS = {"chunks": 800, "documents": 10_000}
AP_TOLERANCE = 0.005


@cache
def _experiment(name: str, setup: str) -> tuple[EvalInputs, EvalReport, Run]:
    """The harness's bm25-only report, and its document run rebuilt from public parts."""
    chunk_size = SETUPS[setup]
    inputs = collection_inputs(name, SHARED_DATA, "document", chunk_size, OVERLAP)
    config = EvalConfig(stages=("bm25",), measures=MEASURES, granularity="document",
                        chunk_size=chunk_size, overlap=OVERLAP, depth=DEPTH)
    report, _ = run_experiment(inputs, config)
    chunks = inputs.corpus.chunks
    bm25 = BM25Retriever(k1=K1, b=B)
    bm25.index([(c.id, c.text) for c in chunks])
    out = bm25.search(inputs.queries, _chunk_depth(inputs))
    return inputs, report, collapse_to_documents(out.run, inputs.chunk_doc, limit=DEPTH)


def _chunk_depth(inputs: EvalInputs) -> int:
    """Chunks fetched per query so that about DEPTH distinct documents remain (the harness's
    rule; the per-query equality with the report below pins it)."""
    n_chunks, n_docs = len(inputs.corpus.chunks), len(inputs.corpus.documents)
    return min(DEPTH * math.ceil(n_chunks / n_docs), n_chunks)


class LuceneIdfBM25(BM25Okapi):  # type: ignore[misc]
    """rank-bm25's BM25Okapi with Lucene's idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))``."""

    def _calc_idf(self, nd: Mapping[str, int]) -> None:
        n = self.corpus_size
        self.idf = {w: math.log(1 + (n - df + 0.5) / (df + 0.5)) for w, df in nd.items()}


def _rank_bm25_run(units: Sequence[tuple[str, str, str]], queries: Iterable[tuple[str, str]],
                   k: int, model_class: type[BM25Okapi] = BM25Okapi,
                   ) -> dict[str, dict[str, float]]:
    """rank-bm25 over ``(unit id, document id, text)`` units: each query's top ``k`` units by
    score (ties: larger unit id first), collapsed to documents at their best unit and cut to
    DEPTH documents (as the harness does); scores become n, n-1, ..., 1 so that pytrec_eval
    keeps exactly this order."""
    analyzer = Analyzer()
    model = model_class([analyzer(text) for _, _, text in units], k1=K1, b=B)
    assert (model.k1, model.b, model.epsilon) == (K1, B, 0.25)
    by_id_desc = sorted(range(len(units)), key=lambda i: units[i][0].encode(), reverse=True)
    run: dict[str, dict[str, float]] = {}
    for qid, text in queries:
        scores = model.get_scores(analyzer(text))
        hits = [i for i in by_id_desc if scores[i] > 0]
        hits.sort(key=lambda i: -scores[i])  # stable: ties stay in descending id order
        docs = list(dict.fromkeys(units[i][1] for i in hits[:k]))[:DEPTH]
        if docs:
            run[qid] = {d: float(len(docs) - r) for r, d in enumerate(docs)}
    return run


def _pytrec(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
            ) -> dict[str, dict[str, float]]:
    """pytrec_eval's values per qrels topic, 0 for a topic the run lacks (trec_eval -c)."""
    got = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC.values())).evaluate(run)
    zero = dict.fromkeys(PYTREC, 0.0)
    return {q: {m: got[q][name] for m, name in PYTREC.items()} if q in got else dict(zero)
            for q in qrels}


@cache
def _rank_bm25_ap(name: str, setup: str) -> float:
    inputs, _, _ = _experiment(name, setup)
    if setup == "chunks":
        units = [(c.id, c.doc_id, c.text) for c in inputs.corpus.chunks]
        k = _chunk_depth(inputs)
    else:
        units = [(d.id, d.id, d.text) for d in load_collection(name, SHARED_DATA).documents]
        k = DEPTH
    values = _pytrec(inputs.qrels.to_dict(), _rank_bm25_run(units, inputs.queries, k))
    return float(np.mean([v["AP"] for v in values.values()]))


@pytest.mark.slow
@pytest.mark.parametrize("setup", list(SETUPS))
@pytest.mark.parametrize("name", COLLECTIONS)
def test_bm25_ap_agrees_with_rank_bm25(name: str, setup: str) -> None:
    _, report, _ = _experiment(name, setup)
    ours = report.stage("bm25").means["AP"]
    theirs = _rank_bm25_ap(name, setup)
    assert abs(ours - theirs) <= AP_TOLERANCE, (name, setup, ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize("name", COLLECTIONS)
def test_bm25_equals_rank_bm25_with_lucene_idf(name: str) -> None:
    """With Lucene's idf swapped in, rank-bm25 ranks whole documents exactly as rankproof
    does: the AP gap above is the idf formula and nothing else. Cranfield's two empty
    documents are left out here, as rankproof (no chunk, no document) leaves them out of N
    and the mean length."""
    inputs, report, _ = _experiment(name, "documents")
    units = [(d.id, d.id, d.text) for d in load_collection(name, SHARED_DATA).documents
             if d.text]
    theirs = _pytrec(inputs.qrels.to_dict(),
                     _rank_bm25_run(units, inputs.queries, DEPTH, LuceneIdfBM25))
    ours = report.stage("bm25").per_query
    assert set(theirs) == set(ours)
    for q, values in theirs.items():
        for m in MEASURES:
            assert ours[q][m] == pytest.approx(values[m], abs=1e-9, rel=0), (q, m)


@pytest.mark.parametrize("setup", list(SETUPS))
@pytest.mark.parametrize("name", COLLECTIONS)
def test_bm25_run_evaluates_the_same_in_pytrec_eval(name: str, setup: str) -> None:
    inputs, report, run = _experiment(name, setup)
    pq = evaluate(inputs.qrels, run, MEASURES)
    ours = {q: {m: float(v) for m, v in zip(MEASURES, row, strict=True)}
            for q, row in zip(pq.qids, pq.values.tolist(), strict=True)}
    # The rebuilt run is the harness's: its values are the report's, bit for bit.
    assert ours == report.stage("bm25").per_query
    theirs = _pytrec(inputs.qrels.to_dict(), run.to_dict())
    assert set(theirs) == set(ours) == set(inputs.qrels.topics)
    for q, values in theirs.items():
        for m in MEASURES:
            assert ours[q][m] == pytest.approx(values[m], abs=1e-9, rel=0), (q, m)
