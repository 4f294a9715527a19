"""`RankedOrder.positions_at` agrees with the full `positions` array."""

from __future__ import annotations

import numpy as np

from rankproof.data import Run
from rankproof.measures import ranked_order


def test_positions_at_matches_positions() -> None:
    rng = np.random.default_rng(0)
    qids = [str(q) for q in rng.integers(0, 7, 200)]
    docids = [f"d{i}" for i in range(200)]
    scores = rng.integers(0, 5, 200).astype(float)  # many ties, rows out of order
    run = Run.from_columns(qids, docids, scores)
    order = ranked_order(run)
    slots = np.arange(len(run), dtype=np.int64)
    assert order.positions.tolist() == order.positions_at(slots).tolist()
    picked = rng.choice(len(run), 30, replace=False).astype(np.int64)
    assert order.positions_at(picked).tolist() == order.positions[picked].tolist()
    # Each query's positions run 0, 1, 2, ... in ranked order.
    ranked_q = run.qid_codes[order.row_ids(len(run))]
    for q in np.unique(ranked_q):
        assert order.positions[ranked_q == q].tolist() == list(range(int((ranked_q == q).sum())))
