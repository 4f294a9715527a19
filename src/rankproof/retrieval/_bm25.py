"""The BM25 baseline: bm25s scoring over PyStemmer-stemmed, stop-worded tokens.

Tokenisation follows bm25s' default analyser — lower-case, tokens matching
``(?u)\\b\\w\\w+\\b`` (two or more word characters), English stop words removed
*before* stemming, then the Snowball English stemmer — but is done here so
that the vocabulary is numbered in first-seen order (bm25s' own tokenizer
numbers stems through a ``set``, whose order changes with the process's hash
seed). Scoring is bm25s' ``method="lucene"``: Lucene's BM25 (idf =
ln(1 + (N - df + 0.5) / (df + 0.5)), no (k1 + 1) factor); defaults k1 = 0.9,
b = 0.4 are Anserini's. A query term repeated n times counts n times, and a
document that shares no term with the query is not retrieved (its score is 0).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from rankproof._errors import InputError, MissingExtraError
from rankproof.data import tie_keys, top_k
from rankproof.retrieval._base import (
    Docs,
    Queries,
    RunBuilder,
    StageOutput,
    check_docs,
    check_queries,
    docs_digest,
    timed,
)

_TOKEN = re.compile(r"(?u)\b\w\w+\b")

RETRIEVAL_EXTRA_HINT = ("BM25 needs the 'retrieval' extra ({missing} is not installed): "
                        "pip install 'rankproof[retrieval]'")
"""The refusal when bm25s or PyStemmer is missing (they are not in the core install)."""


class Analyzer:
    """Text → stems: lower-case, split, drop stop words, stem. Deterministic."""

    def __init__(self, stemmer: str | None = "english",
                 stopwords: str | Sequence[str] | None = "en") -> None:
        self.stemmer_name = stemmer
        self.stopwords = _stopword_set(stopwords)
        self._stem: dict[str, str] = {}
        self._stemmer: Any = None
        if stemmer is not None:
            try:
                import Stemmer
            except ImportError as exc:
                raise MissingExtraError(RETRIEVAL_EXTRA_HINT.format(missing="PyStemmer")
                                        ) from exc
            if stemmer not in Stemmer.algorithms():
                raise InputError(
                    f"stemmer must be one of PyStemmer's algorithms or None, got {stemmer!r}")
            self._stemmer = Stemmer.Stemmer(stemmer)

    def words(self, text: str) -> list[str]:
        """Lower-cased tokens with stop words removed (before stemming)."""
        stop = self.stopwords
        return [w for w in _TOKEN.findall(text.lower()) if w not in stop]

    def stems(self, words: Sequence[str]) -> list[str]:
        if self._stemmer is None:
            return list(words)
        cache = self._stem
        new = [w for w in dict.fromkeys(words) if w not in cache]
        if new:
            cache.update(zip(new, self._stemmer.stemWords(new), strict=True))
        return [cache[w] for w in words]

    def __call__(self, text: str) -> list[str]:
        return self.stems(self.words(text))

    def analyse_all(self, texts: Sequence[str]) -> tuple[list[list[int]], dict[str, int]]:
        """Analyse many texts into stem ids, stemming each distinct word once.

        Returns ``(ids per text, stem -> id)``; ids are numbered in first-seen
        order, so the numbering never depends on hashing.
        """
        stop = self.stopwords
        word_ids: dict[str, int] = {}
        by_word: list[list[int]] = []
        for text in texts:
            ids = []
            for w in _TOKEN.findall(text.lower()):
                if w in stop:
                    continue
                i = word_ids.get(w)
                if i is None:
                    i = word_ids[w] = len(word_ids)
                ids.append(i)
            by_word.append(ids)
        vocab: dict[str, int] = {}
        word_to_stem = [vocab.setdefault(s, len(vocab)) for s in self.stems(list(word_ids))]
        return [[word_to_stem[i] for i in ids] for ids in by_word], vocab


def _stopword_set(stopwords: str | Sequence[str] | None) -> frozenset[str]:
    if stopwords is None:
        return frozenset()
    if isinstance(stopwords, str):
        if stopwords not in ("en", "english"):
            raise InputError(
                f"stopwords must be 'en', a list of words or None, got {stopwords!r}")
        try:
            from bm25s.stopwords import STOPWORDS_EN
        except ImportError as exc:
            raise MissingExtraError(RETRIEVAL_EXTRA_HINT.format(missing="bm25s")) from exc
        return frozenset(STOPWORDS_EN)
    return frozenset(str(w).lower() for w in stopwords)


class BM25Retriever:
    """Lexical BM25 with English stemming and stop words (the baseline stage).

    >>> r = BM25Retriever()
    >>> r.index([("d1", "Cats chase mice."), ("d2", "Dogs chase cats and balls."),
    ...          ("d3", "The weather today")])
    >>> out = r.search([("q1", "chasing cat")], k=5)
    >>> [d for _, d, _ in out.run.iter_rows()]
    ['d1', 'd2']
    """

    def __init__(
        self,
        k1: float = 0.9,
        b: float = 0.4,
        method: str = "lucene",
        stemmer: str | None = "english",
        stopwords: str | Sequence[str] | None = "en",
        *,
        name: str = "bm25",
    ) -> None:
        if not (np.isfinite(k1) and k1 >= 0):
            raise InputError(f"k1 must be a finite number >= 0, got {k1!r}")
        if not (np.isfinite(b) and 0 <= b <= 1):
            raise InputError(f"b must be in [0, 1], got {b!r}")
        if method not in ("lucene", "robertson", "atire", "bm25l", "bm25+"):
            raise InputError(
                "method must be one of 'lucene', 'robertson', 'atire', 'bm25l', 'bm25+', "
                f"got {method!r}")
        self.name = name
        self.k1 = float(k1)
        self.b = float(b)
        self.method = method
        self.analyzer = Analyzer(stemmer, stopwords)
        self._stopwords_spec: str | list[str] | None = (
            stopwords if stopwords is None or isinstance(stopwords, str)
            else sorted(self.analyzer.stopwords))
        self._model: Any = None
        self._vocab: dict[str, int] = {}
        self._ids: list[str] = []
        self._id_array: pa.Array | None = None
        self._keys = np.zeros(0, dtype=np.int64)
        self.indexed_digest: str | None = None

    @property
    def config(self) -> dict[str, Any]:
        return {"stage": "bm25", "name": self.name, "k1": self.k1, "b": self.b,
                "method": self.method, "stemmer": self.analyzer.stemmer_name,
                "stopwords": self._stopwords_spec, "implementation": "bm25s",
                "corpus": self.indexed_digest}

    def index(self, docs: Docs) -> None:
        """Tokenise and index ``docs``; a no-op when the same documents are already indexed."""
        ids, texts = check_docs(docs)
        digest = docs_digest(docs)
        if digest == self.indexed_digest:
            return
        try:
            import bm25s
        except ImportError as exc:
            raise MissingExtraError(RETRIEVAL_EXTRA_HINT.format(missing="bm25s")) from exc
        corpus_ids, vocab = self.analyzer.analyse_all(texts)
        if not vocab:
            raise InputError("no document holds an indexable term (every token is a stop word "
                             "or shorter than two characters)", field="docs")
        model = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        model.index((corpus_ids, dict(vocab)), show_progress=False)
        self._model = model
        self._vocab = vocab
        self._ids = ids
        self._id_array = pa.array(ids, type=pa.string())
        self._keys = tie_keys(ids)
        self.indexed_digest = digest

    def scores(self, text: str) -> np.ndarray:
        """The BM25 score of every indexed document for one query text (float32)."""
        if self._model is None:
            raise RuntimeError(f"{self.name}: call index() before search()")
        vocab = self._vocab
        term_ids = [vocab[s] for s in self.analyzer(text) if s in vocab]
        if not term_ids:
            return np.zeros(len(self._ids), dtype=np.float32)
        out: np.ndarray = self._model.get_scores_from_ids(term_ids)
        return out

    def search(self, queries: Queries, k: int) -> StageOutput:
        """The top ``k`` documents per query, in trec_eval's order; see the module docstring."""
        qids, texts = check_queries(queries, k)
        if self._model is None:
            raise RuntimeError(f"{self.name}: call index() before search()")
        builder = RunBuilder(self._id_array)
        latency: dict[str, float] = {}
        for qid, text in zip(qids, texts, strict=True):
            with timed(latency, qid):
                scores = self.scores(text)
                best = top_k(scores, k, self._keys, positive_only=True)
            builder.add_hits(qid, best, scores[best])
        notes = builder.empty_note(self.name, len(qids))
        return StageOutput(run=builder.build(self.name, notes), latency_ms=latency, notes=notes,
                           config={**self.config, "k": int(k)})
