"""Exact inner-product search in blocks of document rows, with a running top-k per query.

The corpus matrix is read block by block (from memory, or gathered from
memory-mapped shard files), so memory holds one block, one block of scores and
``k`` candidates per query — never the whole corpus. Results are those of a
single pass over all scores: each score is the float32 product BLAS computes
for the same query block and the same document block as `exact_search` always
used (``chunk_size`` documents from row 0, query blocks of
``max(1, 2**24 // n_docs)``), so the scores are identical bit for bit, and the
order is trec_eval's (score descending, ties by docid descending, via
`rankproof.data.tie_keys`), a total order, so which of several tied documents
make the top ``k`` does not depend on the blocking.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError
from rankproof.data import top_k

SCORE_BUDGET = 1 << 24
"""Scores one query block may span over the whole corpus (float32): the query-block rule."""

Hits = tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]


def query_block(n_docs: int) -> int:
    """Queries scored together: as many as keep ``queries x n_docs`` under 2**24."""
    return max(1, SCORE_BUDGET // max(n_docs, 1))


def block_search(
    queries: npt.NDArray[np.float32],
    blocks: Iterable[tuple[int, npt.NDArray[np.float32]]],
    n_docs: int,
    k: int,
    keys: npt.NDArray[np.int64],
    *,
    queries_per_product: int | None = None,
) -> list[Hits]:
    """Top-``k`` ``(doc indices, scores)`` per query row, best first, over ``blocks``.

    ``blocks`` yields ``(start, rows)`` covering documents ``0 .. n_docs`` in
    order; ``keys`` (from `tie_keys`) breaks ties, ascending. Each block is read
    once for all queries. ``queries_per_product``: query rows per matrix
    product (None: `query_block`'s rule, as `exact_search`; 1: each query
    alone, bit for bit what a search of that one query gives — BLAS may round
    a many-row product differently in the last bit).
    """
    if queries.ndim != 2:
        raise InputError(f"queries must be a matrix, got shape {queries.shape}")
    nq = queries.shape[0]
    qb = query_block(n_docs) if queries_per_product is None else queries_per_product
    if qb < 1:
        raise InputError(f"queries_per_product must be >= 1, got {qb}")
    best_idx: list[npt.NDArray[np.int64]] = [np.zeros(0, np.int64)] * nq
    best_score: list[npt.NDArray[np.float32]] = [np.zeros(0, np.float32)] * nq
    seen = 0
    for start, rows in blocks:
        if start != seen or rows.ndim != 2 or rows.shape[1] != queries.shape[1]:
            raise InputError(f"block at row {start} (shape {rows.shape}) does not continue "
                             f"row {seen} of a {queries.shape[1]}-dimensional corpus")
        seen = start + rows.shape[0]
        bkeys = keys[start:seen]
        scores = np.empty((min(qb, nq), rows.shape[0]), dtype=np.float32)
        for q0 in range(0, nq, qb):
            qrows = queries[q0:q0 + qb]
            out = scores[:len(qrows)]
            np.matmul(qrows, rows.T, out=out)
            for j, row in enumerate(out):
                qi = q0 + j
                cur_i, cur_s = best_idx[qi], best_score[qi]
                if len(cur_i) == k and row.max() < cur_s[-1]:
                    continue  # nothing in this block reaches the current k-th score
                cand = top_k(row, k, bkeys)
                if len(cur_i) == 0:
                    best_idx[qi], best_score[qi] = cand + start, row[cand]
                    continue
                idx = np.concatenate([cur_i, cand + start])
                sc = np.concatenate([cur_s, row[cand]])
                order = np.lexsort((keys[idx], -sc))[:k]
                best_idx[qi], best_score[qi] = idx[order], sc[order]
    if seen != n_docs:
        raise InputError(f"blocks covered {seen} documents, expected {n_docs}")
    return list(zip(best_idx, best_score, strict=True))


def matrix_blocks(docs: npt.NDArray[np.float32],
                  size: int) -> Iterable[tuple[int, npt.NDArray[np.float32]]]:
    """``(start, docs[start:start+size])`` for an in-memory matrix."""
    for start in range(0, docs.shape[0], size):
        yield start, docs[start:start + size]


def recall_against(approx: Sequence[npt.NDArray[np.int64]],
                   exact: Sequence[npt.NDArray[np.int64]]) -> float:
    """Mean over queries of |approx ∩ exact| / |exact| (the exact top-k is the reference;
    a query whose exact list is empty counts 1)."""
    if not exact:
        return 1.0
    shares = [len(np.intersect1d(a, e)) / len(e) if len(e) else 1.0
              for a, e in zip(approx, exact, strict=True)]
    return float(np.mean(shares))
