"""The rank order of a run, exactly as trec_eval builds it.

Within each query, documents are ordered by score descending and ties are
broken by docid **descending, byte-wise** (trec_eval's ``comp_sim_docno``).
The rank column is otherwise ignored.

With ``order="rank"`` the file's rank column decides, so it must be a
ranking: within each query the ranks are distinct and contiguous, ``1..n``
(or ``0..n-1``: Terrier writes 0-based ranks). A repeated rank or a gap
would leave the order to a tie-break the file never stated, so
:func:`check_ranks` refuses it, naming the file, the line, the query and the
rank (the cross-check rule of the RAG evaluation protocol, seed 003). Every
evaluation in rank order — `evaluate`, `compare`, the CLI's ``--order rank``
in ``measure`` and ``compare`` — comes through `ranked_order`, which runs that
one check. Fusion alone reads ranks as written (``strict=False``; see there).

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
from rankproof._limits import shown
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


def ranked_order(run: Run, order: Order = "score", *, strict: bool = True) -> RankedOrder:
    """Compute (or confirm) trec_eval's ranking of ``run``; see the module docstring.

    ``strict=False`` skips `check_ranks` under ``order="rank"``, for fusion
    only: pyserini's fusion reads the rank column as written, gaps included,
    and `rankproof.retrieval.fuse` reproduces its fixtures byte for byte.
    Evaluation always checks.
    """
    if order not in ("score", "rank"):
        raise InputError(f"order must be 'score' or 'rank', got {order!r}", field="order")
    q = run.qid_codes
    s = run.scores
    n = len(s)
    if order == "rank" and run.ranks is None:
        raise InputError("order='rank' needs a rank column, and this run has none",
                         path=run.source, field="rank")
    if order == "rank" and strict:
        check_ranks(run)
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


def check_ranks(run: Run) -> None:
    """Refuse a rank column that is not a ranking: within each query the ranks must be
    distinct and contiguous from 1 (or from 0), i.e. exactly ``1..n`` or ``0..n-1``.

    Raises `InputError` naming the run's file and the line of the first offending
    row in file order (when the reader recorded lines), with the query, docid and
    rank. Linear when the rows are stored query by query in rank order (the usual
    file); one sort otherwise.
    """
    r = run.ranks
    if r is None:
        raise InputError("order='rank' needs a rank column, and this run has none",
                         path=run.source, field="rank")
    q = run.qid_codes
    n = len(r)
    rows = np.arange(n, dtype=np.int64)
    order, rs, boundary, starts, lengths, expected, bad = _rank_slots(run, r)
    if not bad.any():
        return
    slot_row = rows if order is None else order
    repeated = np.zeros(n, dtype=bool)
    repeated[1:] = (rs[1:] == rs[:-1]) & ~boundary
    if repeated.any():
        slot = int(np.flatnonzero(repeated)[np.argmin(slot_row[repeated])])
        row, earlier = int(slot_row[slot]), int(slot_row[slot - 1])
        where = run.line_of(earlier)
        problem = (f"rank {int(rs[slot])} is repeated (also on "
                   f"{'line ' + str(where) if where is not None else 'row ' + str(earlier + 1)})")
    else:
        # The first slot of each query where the ranks leave 1..n (or 0..n-1).
        topic = np.repeat(np.arange(len(starts)), lengths)
        bad_slots = np.flatnonzero(bad)
        _, first_bad = np.unique(topic[bad_slots], return_index=True)
        candidates = bad_slots[first_bad]
        slot = int(candidates[np.argmin(slot_row[candidates])])
        row = int(slot_row[slot])
        if slot == starts[topic[slot]]:
            problem = f"ranks must start at 1 (or 0), and the lowest is {int(rs[slot])}"
        else:
            problem = (f"rank {int(expected[slot])} is missing (the ranks of a query must be "
                       f"contiguous; the next one here is {int(rs[slot])})")
    qid = run.qid_vocab[int(q[row])].as_py()
    docid = run.docids[row].as_py()
    raise InputError(
        "order='rank' (--order rank) needs distinct, contiguous ranks per query: "
        f"query {shown(qid)}, document {shown(docid)}: {problem}",
        path=run.source, line=run.line_of(row), field="rank",
    )


def _rank_slots(run: Run, r: npt.NDArray[np.int64]) -> tuple[
        npt.NDArray[np.int64] | None, npt.NDArray[np.int64], npt.NDArray[np.bool_],
        npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64],
        npt.NDArray[np.bool_]]:
    """The rank column sorted by query then rank: (sort order or None when stored so,
    sorted ranks, query boundaries, each query's first slot, its length, the rank each
    slot should hold, slots that differ)."""
    q = run.qid_codes
    n = len(r)
    rows = np.arange(n, dtype=np.int64)
    boundary = q[1:] != q[:-1]
    order: npt.NDArray[np.int64] | None
    if int(boundary.sum()) + 1 == len(run.qid_vocab) and not np.any(
            (r[1:] < r[:-1]) & ~boundary):
        order = None
        rs = r
    else:
        order = np.lexsort((rows, r, q)).astype(np.int64)
        qs, rs = q[order], r[order]
        boundary = qs[1:] != qs[:-1]
    starts = np.concatenate(([0], np.flatnonzero(boundary) + 1)).astype(np.int64)
    lengths = np.diff(np.concatenate((starts, [n]))).astype(np.int64)
    expected = np.repeat(np.where(rs[starts] == 0, 0, 1), lengths) + (
        rows - np.repeat(starts, lengths))
    return order, rs, boundary, starts, lengths, expected, rs != expected


def _ranks_as_stored(q: npt.NDArray[Any], r: npt.NDArray[np.int64], n_queries: int) -> bool:
    """Whether the rank column is a ranking as the file stores it, the usual run file: each
    query in one block of lines, its ranks 1, 2, 3, ... (or 0, 1, 2, ...) down the block.
    Three passes over the column with no index arrays, where `_rank_slots` builds five
    (seconds at 10 million lines); False sends the run to `_rank_slots`, which decides."""
    boundary = q[1:] != q[:-1]
    if int(np.count_nonzero(boundary)) + 1 != n_queries:
        return False  # a query in more than one block
    if not bool(np.all((r[1:] - r[:-1] == 1) | boundary)):
        return False
    firsts = r[np.concatenate(([0], np.flatnonzero(boundary) + 1))]
    return bool(np.all((firsts == 0) | (firsts == 1)))


def rank_column_problems(run: Run) -> tuple[int, int]:
    """(queries, rows) whose rank column is not a ranking (a repeated rank, a gap, or
    ranks not starting at 1 or 0): what `check_ranks` refuses under ``order="rank"``.

    Under the default score order the rank column is ignored (trec_eval's rule), so
    such ranks change nothing; the evaluator counts them in a note. (0, 0) for a run
    without a rank column.
    """
    r = run.ranks
    if r is None or not len(r) or _ranks_as_stored(run.qid_codes, r, len(run.qid_vocab)):
        return 0, 0
    _, _, _, starts, lengths, _, bad = _rank_slots(run, r)
    if not bad.any():
        return 0, 0
    topic = np.repeat(np.arange(len(starts)), lengths)
    return len(np.unique(topic[bad])), int(bad.sum())


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
