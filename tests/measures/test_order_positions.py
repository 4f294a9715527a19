"""`RankedOrder.positions_at` agrees with the full `positions` array."""

from __future__ import annotations

import numpy as np

from rankproof.data import Run, ranked_order


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


def test_slot_of_rows_matches_the_inverse_permutation() -> None:
    from rankproof.data import RankedOrder

    rng = np.random.default_rng(1)
    for _ in range(100):
        n = int(rng.integers(1, 400))
        perm = rng.permutation(n).astype(np.int64)
        order = RankedOrder(rows=perm, starts=np.zeros(1, dtype=np.int64), n_slots=n,
                            n_ties=0, resorted=True)
        inverse = np.empty(n, dtype=np.int64)
        inverse[perm] = np.arange(n)
        for k in (0, 1, max(1, n // 40), n):  # few rows (mask search) and many (inverse)
            rows = rng.integers(0, n, k).astype(np.int64)
            assert order.slot_of_rows(rows).tolist() == inverse[rows].tolist()
