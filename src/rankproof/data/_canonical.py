"""Canonical runs: the ranking written so that no evaluator can reorder it.

TREC evaluators sort by score and break ties their own way: trec_eval by
docid descending, others by docid ascending, by file order or by the rank
column. A run with tied scores can therefore score differently in two
evaluators that agree on every formula. The canonical form (seed 003's
"canonical export") removes the choice: each topic is ranked once, by
trec_eval's order (`ranked_order`), ranks are rewritten ``1..n`` and every
score becomes ``1/rank``. The scores are then distinct and strictly falling
with the rank, so every evaluator reproduces that one ranking.

A canonical file is recognised by its scores (nearly every one is ``1/rank``,
see `is_canonical`) and checked by `check_canonical`: a repeated rank, a gap, a
rank that does not start at 1 or a score other than ``1/rank`` is refused,
naming the file, the line and the field.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError
from rankproof._limits import shown
from rankproof.data._model import Run
from rankproof.data._order import Order, ranked_order
from rankproof.data._strings import arrow_indices

SCORE_RTOL = 1e-12
"""Relative tolerance of a canonical score against ``1/rank``: ``repr`` of a float reads
back bit for bit, so only a writer that rounds (``%.6f``) falls outside it — and such a
writer ties ranks past a few thousand again."""


def canonical_run(run: Run, order: Order = "score", *, name: str | None = None) -> Run:
    """``run`` ranked by trec_eval's order, with ranks ``1..n`` and scores ``1/rank``.

    ``order="rank"`` ranks by the run's own (checked) rank column instead, as
    `ranked_order` does. Rows are stored topic by topic in rank order; the
    name and tag are kept unless ``name`` is given.
    """
    ranked = ranked_order(run, order)
    rows = ranked.row_ids(len(run))
    take = arrow_indices(rows)
    ranks = ranked.positions + 1
    return Run.from_columns(
        run.qids().take(take), run.docids.take(take), 1.0 / ranks.astype(np.float64), ranks,
        name=run.name if name is None else name, tag=run.tag, source=None,
    )


def _score_ok(run: Run) -> npt.NDArray[np.bool_]:
    assert run.ranks is not None
    ranks = run.ranks.astype(np.float64)
    with np.errstate(divide="ignore"):
        expected = np.where(ranks > 0, 1.0 / np.where(ranks > 0, ranks, 1.0), np.nan)
    return np.abs(run.scores - expected) <= SCORE_RTOL * expected


CLAIM_SHARE = 0.9
"""A run in which at least this share of rows has score = 1/rank is taken for a canonical
file (`is_canonical`): a canonical file with a damaged row still looks like one, while an
ordinary run, whose scores are not reciprocals of its ranks, does not."""


def is_canonical(run: Run) -> bool:
    """True when the run looks like a canonical file: a rank column, and score = ``1/rank``
    on at least `CLAIM_SHARE` of its rows.

    Whether it *is* one — every score ``1/rank``, ranks ``1..n`` — is `check_canonical`'s
    question; a run that looks canonical is checked by ``rankproof export``.
    """
    if run.ranks is None or len(run) == 0:
        return False
    return float(np.mean(_score_ok(run))) >= CLAIM_SHARE


def _about(run: Run, row: int) -> str:
    qid = run.qid_vocab[int(run.qid_codes[row])].as_py()
    docid = run.docids[row].as_py()
    where = "" if run.line_of(row) is not None else f"row {row + 1}, "
    return f"{where}query {shown(qid)}, document {shown(docid)}"


def check_canonical(run: Run) -> None:
    """Refuse a run that is not canonical; return None when it is.

    Canonical means: a rank column; within each query the ranks are exactly
    ``1..n`` (no repeat, no gap, starting at 1); every score is ``1/rank``
    (within `SCORE_RTOL`). The first offending row in file order is named:
    its file, line (or row, for inputs without lines), query, document and
    field (``rank`` or ``score``).
    """
    ranks = run.ranks
    if ranks is None:
        raise InputError("a canonical run needs a rank column (score = 1/rank), and this run "
                         "has none", path=run.source, field="rank")
    n = len(ranks)
    rows = np.arange(n, dtype=np.int64)
    order = np.lexsort((rows, ranks, run.qid_codes)).astype(np.int64)
    qs, rs = run.qid_codes[order], ranks[order]
    boundary = np.ones(n, dtype=bool)
    boundary[1:] = qs[1:] != qs[:-1]
    starts = np.flatnonzero(boundary)
    lengths = np.diff(np.concatenate((starts, [n])))
    expected = rows - np.repeat(starts, lengths) + 1
    bad_slots = np.flatnonzero(rs != expected)
    if len(bad_slots):
        repeated = np.zeros(n, dtype=bool)
        repeated[1:] = (rs[1:] == rs[:-1]) & ~boundary[1:]
        if repeated.any():
            slot = int(np.flatnonzero(repeated)[np.argmin(order[repeated])])
            other = int(order[slot - 1])
            line = run.line_of(other)
            also = f"line {line}" if line is not None else f"row {other + 1}"
            row, message = int(order[slot]), f"rank {int(rs[slot])} is repeated (also on {also})"
        else:
            topic = np.cumsum(boundary) - 1
            _, first = np.unique(topic[bad_slots], return_index=True)
            candidates = bad_slots[first]
            slot = int(candidates[np.argmin(order[candidates])])
            if boundary[slot]:
                message = f"ranks must start at 1, and the lowest is {int(rs[slot])}"
            else:
                message = (f"rank {int(expected[slot])} is missing (ranks must be contiguous; "
                           f"the next one here is {int(rs[slot])})")
            row = int(order[slot])
        raise InputError(f"not a canonical run: {_about(run, row)}: {message}",
                         path=run.source, line=run.line_of(row), field="rank")
    bad = np.flatnonzero(~_score_ok(run))
    if len(bad):
        row = int(bad[0])
        raise InputError(
            f"not a canonical run: {_about(run, row)}: score {float(run.scores[row])!r} is not "
            f"1/rank = {1.0 / int(ranks[row])!r} (rank {int(ranks[row])})",
            path=run.source, line=run.line_of(row), field="score")
