"""The rank order of a run, exactly as trec_eval builds it.

Within each query, documents are ordered by score descending and ties are
broken by docid **descending, byte-wise** (trec_eval's ``comp_sim_docno``).
With ``order="rank"`` the file's rank column decides, and score then docid
break its ties. The rank column is otherwise ignored.

Run files are nearly always written in this order already, so the common
case is a linear check and no sort at all; only rows whose scores tie need
their docids looked at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankproof._errors import InputError
from rankproof.data._model import Run
from rankproof.data._strings import arrow_indices, order_words

Order = Literal["score", "rank"]


@dataclass(frozen=True)
class RankedOrder:
    """``rows[i]`` is the run row at ranked slot ``i``; ``positions[i]`` its 0-based rank.

    ``rows`` is None when the stored row order already is the ranked order.
    ``positions`` is built on first use; the evaluator only needs the ranks of
    the few judged rows, which `positions_at` gives without an array the size
    of the run.
    """

    rows: npt.NDArray[np.int64] | None
    starts: npt.NDArray[np.int64]
    """The first slot of each query's block of slots."""
    n_slots: int
    n_ties: int
    resorted: bool

    @cached_property
    def positions(self) -> npt.NDArray[np.int64]:
        lengths = np.diff(np.concatenate((self.starts, [self.n_slots])))
        return np.arange(self.n_slots, dtype=np.int64) - np.repeat(self.starts, lengths)

    def positions_at(self, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """0-based rank of each given slot (``positions[slots]``)."""
        return slots - self.starts[np.searchsorted(self.starts, slots, side="right") - 1]

    def row_ids(self, n: int) -> npt.NDArray[np.int64]:
        return np.arange(n, dtype=np.int64) if self.rows is None else self.rows

    def slot_of_rows(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Ranked slot of each given run row."""
        if self.rows is None:
            return rows
        n = len(self.rows)
        if len(rows) * 16 < n:
            # A few rows (the judged ones): find their slots with a mask
            # instead of inverting the whole permutation.
            wanted = np.zeros(n, dtype=bool)
            wanted[rows] = True
            slots = np.flatnonzero(wanted[self.rows])
            found = self.rows[slots]
            by_row = np.argsort(found)
            return slots[by_row][np.searchsorted(found[by_row], rows)]
        inverse = np.empty(n, dtype=np.int64)
        inverse[self.rows] = np.arange(n, dtype=np.int64)
        return inverse[rows]


def ranked_order(run: Run, order: Order = "score") -> RankedOrder:
    """Compute (or confirm) trec_eval's ranking of ``run``; see the module docstring."""
    if order not in ("score", "rank"):
        raise InputError(f"order must be 'score' or 'rank', got {order!r}", field="order")
    q = run.qid_codes
    s = run.scores
    n = len(s)
    if order == "rank" and run.ranks is None:
        raise InputError("order='rank' needs a rank column, and this run has none",
                         path=run.source, field="rank")
    boundary = q[1:] != q[:-1]
    contiguous = int(boundary.sum()) + 1 == len(run.qid_vocab)
    if order == "score":
        in_order = contiguous and not bool(np.any((s[1:] > s[:-1]) & ~boundary))
    else:
        r = run.ranks
        assert r is not None
        # Equal ranks are ordered by score, so a higher score after an equal
        # rank is out of order too.
        out_of_order = (r[1:] < r[:-1]) | ((r[1:] == r[:-1]) & (s[1:] > s[:-1]))
        in_order = contiguous and not bool(np.any(out_of_order & ~boundary))
    rows: npt.NDArray[np.int64] | None
    if in_order:
        rows = None
        qs, ss = q, s
    else:
        keys: tuple[npt.NDArray[np.generic], ...] = (-s, q)
        if order == "rank":
            assert run.ranks is not None
            keys = (-s, run.ranks, q)
        rows = np.lexsort(keys).astype(np.int64)
        qs, ss = q[rows], s[rows]
        boundary = qs[1:] != qs[:-1]
    tied = (ss[1:] == ss[:-1]) & ~boundary
    if order == "rank":
        rr = run.ranks[rows] if rows is not None else run.ranks  # type: ignore[index]
        assert rr is not None
        tied &= rr[1:] == rr[:-1]
    n_ties = int(tied.sum())
    if n_ties:
        rows = _break_ties(run.docids, rows, tied, n)
    starts = np.concatenate(([0], np.flatnonzero(boundary) + 1)).astype(np.int64)
    return RankedOrder(rows=rows, starts=starts, n_slots=n, n_ties=n_ties,
                       resorted=rows is not None)


def _break_ties(
    docids: pa.Array, rows: npt.NDArray[np.int64] | None, tied: npt.NDArray[np.bool_], n: int
) -> npt.NDArray[np.int64] | None:
    """Order each group of tied slots by docid, byte-wise descending."""
    member = np.zeros(n, dtype=bool)
    member[:-1] |= tied
    member[1:] |= tied
    slots = np.flatnonzero(member)
    starts_group = np.ones(len(slots), dtype=bool)
    starts_group[1:] = ~tied[slots[1:] - 1]
    group = np.cumsum(starts_group)
    slot_rows = slots if rows is None else rows[slots]
    words = order_words(docids.take(arrow_indices(slot_rows)))
    keys = [~words[:, j] for j in range(words.shape[1] - 1, -1, -1)]
    within = np.lexsort((*keys, group))
    if np.array_equal(within, np.arange(len(slots))):
        return rows
    out = np.arange(n, dtype=np.int64) if rows is None else rows.copy()
    out[slots] = slot_rows[within]
    return out


def tie_keys(ids: Sequence[str]) -> npt.NDArray[np.int64]:
    """``key[i]`` = position of ``ids[i]`` when all ids are sorted byte-wise **descending**.

    The same tie rule as `ranked_order`, for code that ranks arrays of scores
    over a fixed id list (retrieval's top-k, fusion, rerank) rather than a `Run`.

    Sorting by ``(-score, key)`` ascending is trec_eval's order: score
    descending, ties broken by docid descending. (For UTF-8, code-point order
    equals byte order, so Python's ``str`` comparison is the byte-wise one.)
    """
    order = sorted(range(len(ids)), key=ids.__getitem__, reverse=True)
    keys = np.empty(len(ids), dtype=np.int64)
    keys[np.asarray(order, dtype=np.int64)] = np.arange(len(ids), dtype=np.int64)
    return keys


def top_k(
    scores: npt.NDArray[np.floating[Any]],
    k: int,
    keys: npt.NDArray[np.int64],
    *,
    positive_only: bool = False,
) -> npt.NDArray[np.int64]:
    """Indices of the ``k`` best entries of ``scores``, best first, in trec_eval's order.

    ``keys`` comes from :func:`tie_keys`. Selection is ``argpartition`` (linear
    time) followed by a stable sort of the candidates only; every entry tied
    with the k-th score stays a candidate, so which tied documents make the
    cut is decided by the tie rule and not by the partition's internals.
    ``positive_only`` drops entries whose score is not > 0 (BM25: documents
    sharing no term with the query are not retrieved, as in Lucene).
    """
    n = len(scores)
    if k < n:
        part = np.argpartition(-scores, k - 1)[:k]
        threshold = scores[part].min()
        cand = np.flatnonzero(scores >= threshold)
    else:
        cand = np.arange(n, dtype=np.int64)
    if positive_only:
        cand = cand[scores[cand] > 0]
    order = np.lexsort((keys[cand], -scores[cand]))
    return cand[order[:k]].astype(np.int64, copy=False)
