"""BM25 stage: expected top hits, stemming and stop words, Lucene's formula, ties, validation."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.retrieval._helpers import DOCS, QUERIES

from rankproof import InputError
from rankproof.retrieval import BM25Retriever, Retriever, StageOutput

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bm25() -> BM25Retriever:
    r = BM25Retriever()
    r.index(DOCS)
    return r


def ranked(out: StageOutput, qid: str) -> list[str]:
    return [d for q, d, _ in out.run.iter_rows() if q == qid]


def test_is_a_retriever(bm25: BM25Retriever) -> None:
    assert isinstance(bm25, Retriever)
    assert bm25.name == "bm25"


@pytest.mark.parametrize(("qid", "top"), [
    ("q-honey", "bees"), ("q-lava", "volcano"), ("q-code", "python"), ("q-bake", "bread"),
])
def test_expected_top_hit(bm25: BM25Retriever, qid: str, top: str) -> None:
    out = bm25.search(QUERIES, k=3)
    assert ranked(out, qid)[0] == top


def test_stemming_matches_inflections(bm25: BM25Retriever) -> None:
    # "baking" and "bread" vs "bake"/"Bakers": only the stemmer makes them meet.
    out = bm25.search([("q", "baked breads")], k=5)
    assert ranked(out, "q") == ["bread"]
    plain = BM25Retriever(stemmer=None)
    plain.index(DOCS)
    assert plain.analyzer("baked breads") == ["baked", "breads"]
    with pytest.raises(InputError, match="retrieved no document"):
        plain.search([("q", "baked breads")], k=5)


def test_analyzer_stems_and_drops_stop_words(bm25: BM25Retriever) -> None:
    assert bm25.analyzer("The Rivers are running to the sea") == ["river", "run", "sea"]
    # Stop words are removed before stemming, one-letter tokens are dropped.
    assert bm25.analyzer("a I the of") == []
    keep = BM25Retriever(stopwords=None)
    assert keep.analyzer("the rivers") == ["the", "river"]
    custom = BM25Retriever(stopwords=["rivers"])
    assert custom.analyzer("The rivers") == ["the"]


def test_stop_word_query_retrieves_nothing_and_is_noted(bm25: BM25Retriever) -> None:
    out = bm25.search(QUERIES, k=3)
    assert "q-none" not in out.run.topics
    assert set(out.latency_ms) == {q for q, _ in QUERIES}
    assert any("1 of 5 queries retrieved nothing (q-none)" in n for n in out.notes)


def test_documents_sharing_no_term_are_not_retrieved(bm25: BM25Retriever) -> None:
    out = bm25.search([("q", "honey")], k=8)
    assert ranked(out, "q") == ["bees"]


def _lucene_bm25(query: list[str], docs: list[list[str]], k1: float, b: float) -> list[float]:
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    out = []
    for doc in docs:
        s = 0.0
        for term in query:
            df = sum(term in d for d in docs)
            tf = doc.count(term)
            if tf == 0 or df == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            s += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        out.append(s)
    return out


@pytest.mark.parametrize(("k1", "b"), [(0.9, 0.4), (1.2, 0.75)])
def test_scores_follow_lucene_bm25(k1: float, b: float) -> None:
    r = BM25Retriever(k1=k1, b=b)
    r.index(DOCS)
    query = "rivers carry honey water to the sea"
    expected = _lucene_bm25(r.analyzer(query), [r.analyzer(t) for _, t in DOCS], k1, b)
    got = r.scores(query)
    assert got == pytest.approx(expected, rel=1e-5)
    assert r.search([("q", query)], k=3).config["k1"] == k1


def test_ties_broken_by_docid_descending() -> None:
    docs = [("a", "same text here"), ("c", "same text here"), ("b", "same text here"),
            ("z", "other words")]
    r = BM25Retriever()
    r.index(docs)
    out = r.search([("q", "text")], k=2)
    assert ranked(out, "q") == ["c", "b"]
    scores = [s for _, _, s in out.run.iter_rows()]
    assert scores[0] == scores[1]
    assert out.run.ranks is not None and out.run.ranks.tolist() == [1, 2]


def test_same_inputs_same_run() -> None:
    outs = []
    for _ in range(2):
        r = BM25Retriever()
        r.index(DOCS)
        outs.append(r.search(QUERIES, k=5))
    assert list(outs[0].run.iter_rows()) == list(outs[1].run.iter_rows())
    assert outs[0].config == outs[1].config


_SCRIPT = """
from rankproof.retrieval import BM25Retriever
from tests.retrieval._helpers import DOCS, QUERIES
r = BM25Retriever(); r.index(DOCS)
print(repr(list(r.search(QUERIES, k=5).run.iter_rows())))
"""


def test_same_run_under_different_hash_seeds() -> None:
    # bm25s' own tokenizer numbers stems through a set; ours must not depend on hashing.
    results = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=REPO, env=env,
                              capture_output=True, text=True, check=True)
        results.add(proc.stdout)
    assert len(results) == 1


def test_reindexing_same_docs_is_a_no_op(bm25: BM25Retriever) -> None:
    model = bm25._model
    bm25.index(list(DOCS))
    assert bm25._model is model
    other = BM25Retriever()
    other.index(DOCS[:3])
    digest = other.indexed_digest
    other.index(DOCS)
    assert other.indexed_digest != digest


def test_k_limits_the_list(bm25: BM25Retriever) -> None:
    out = bm25.search([("q", "the bees rivers water lava bread")], k=2)
    assert len(ranked(out, "q")) == 2


@pytest.mark.parametrize(("docs", "message"), [
    ([], "docs is empty"),
    ([("a", "x"), ("a", "y")], "duplicate doc id 'a'"),
    ([("", "x")], "doc id must be a non-empty string"),
    ([("a", 3)], "text must be a string"),
    ([("a",)], "must be an \\(id, text\\) pair"),
    ("abc", "docs must be a sequence"),
    ([("a", "the of and"), ("b", "x y")], "no document holds an indexable term"),
])
def test_bad_docs_are_refused(docs: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        BM25Retriever().index(docs)  # type: ignore[arg-type]


def test_bad_queries_and_parameters_are_refused(bm25: BM25Retriever) -> None:
    with pytest.raises(ValueError, match="k must be a positive integer"):
        bm25.search(QUERIES, k=0)
    with pytest.raises(InputError, match="duplicate qid 'q'"):
        bm25.search([("q", "a"), ("q", "b")], k=1)
    with pytest.raises(InputError, match="queries is empty"):
        bm25.search([], k=1)
    with pytest.raises(RuntimeError, match="call index\\(\\) before search\\(\\)"):
        BM25Retriever().search(QUERIES, k=1)
    with pytest.raises(ValueError, match="b must be in \\[0, 1\\]"):
        BM25Retriever(b=1.5)
    with pytest.raises(ValueError, match="k1 must be a finite number"):
        BM25Retriever(k1=-1)
    with pytest.raises(ValueError, match="method must be one of"):
        BM25Retriever(method="okapi")
    with pytest.raises(ValueError, match="stemmer must be one of"):
        BM25Retriever(stemmer="klingon")
    with pytest.raises(ValueError, match="stopwords must be 'en'"):
        BM25Retriever(stopwords="fr")
