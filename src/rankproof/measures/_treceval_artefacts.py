"""What ``rankproof trec_eval`` reproduces of trec_eval 10's arithmetic, and only there.

The drop-in's last bytes (issue 26): `trec_eval_stand_in`, `trec_eval_leftovers`,
`trec_eval_iprec_nan`, `trec_eval_collection_size`.

Each function mirrors one place of trec_eval's C source (docs/trec_eval.md, "trec_eval's
artefacts, reproduced here only"); `rankproof measure` keeps the consistent values.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankproof.data import Run
    from rankproof.measures._measure import Measure
    from rankproof.measures._perquery import PerQuery
    from rankproof.measures._treceval import TrecSelection


_BOGUS_DOCNO = "ceci_nest_pas_un_docno"
"""The one document of the ranking trec_eval evaluates for a topic missing under -c."""


def trec_eval_stand_in(run: Run, lacking: list[str]) -> Run:
    """``run`` plus trec_eval's stand-in ranking for each lacking topic: one document,
    ``ceci_nest_pas_un_docno`` with score 1 (trec_eval.c's ``bogus_ranking``), which
    ``-M`` and ``-J`` then treat as any other document."""
    import numpy as np
    import pyarrow as pa

    from rankproof.data import Run

    n = len(lacking)
    qids = run.qid_vocab.take(pa.array(run.qid_codes))
    qids = pa.concat_arrays([qids, pa.array(lacking, type=qids.type)])
    docids = pa.concat_arrays([run.docids, pa.array([_BOGUS_DOCNO] * n, type=run.docids.type)])
    scores = np.concatenate([run.scores, np.ones(n)])
    ranks = None if run.ranks is None else np.concatenate(
        [run.ranks, np.ones(n, dtype=run.ranks.dtype)])
    return Run.from_columns(qids, docids, scores, ranks, name=run.name, tag=run.tag,
                            source=run.source)


# trec_eval.c's "clean up leftovers" after scoring the stand-in ranking: these
# printed names (exact, or a prefix for unj*) are set to 0; a parameterised
# name (utility_1,-1,0,0, rbp_resid_p=0.5) is not among them and keeps its value.
_LEFTOVERS = ("num_ret", "utility", "rbp_resid")


def trec_eval_leftovers(pq: PerQuery, selection: TrecSelection, lacking: list[str]) -> PerQuery:
    """Zero what trec_eval zeroes for a topic scored under ``-c`` without results."""
    import dataclasses

    cols = sorted({pq.measures.index(c.measure) for c in selection.columns
                   if c.measure is not None
                   and (c.name in _LEFTOVERS or c.name.startswith("unj"))})
    cols.append(pq.measures.index(_num_ret()))
    values = pq.values.copy()
    gone = set(lacking)
    rows = [i for i, q in enumerate(pq.qids) if q in gone]
    for j in set(cols):
        values[rows, j] = 0.0
    return dataclasses.replace(pq, values=values)


def _num_ret() -> Measure:
    from rankproof.measures._measure import parse

    return parse("num_ret")


def trec_eval_collection_size(pq: PerQuery, selection: TrecSelection, num_docs: int) -> PerQuery:
    """``-N``: m_utility.c's ``d`` term counts ``N + relret - ret - rel`` non-relevant
    documents not retrieved; the measure itself takes N = 0, so add ``d x N``."""
    import dataclasses

    cols = [(pq.measures.index(c.measure), float(c.measure.param("d")))
            for c in selection.columns if c.measure is not None and c.family == "utility"]
    if not cols:
        return pq
    values = pq.values.copy()
    for j, d in cols:
        values[:, j] += d * num_docs
    return dataclasses.replace(pq, values=values)


def trec_eval_iprec_nan(pq: PerQuery, selection: TrecSelection,
               counts: tuple[Measure, Measure]) -> PerQuery:
    """trec_eval's NaN for a topic with nothing retrieved (after -M, -J).

    m_iprec_at_recall.c and m_11pt_avg.c start from ``num_rel_ret / num_ret``,
    0.0 / 0.0 when nothing is retrieved, and give that value to every recall
    level whose rank ``lround(level * num_rel)`` is 0: that iprec_at_recall
    line is NaN, and 11pt_avg, a sum over its levels, is NaN when any level
    is. The ``all`` mean over topics is then NaN too. rankproof's own measures
    (``rankproof measure``) keep 0 for such a topic.
    """
    import dataclasses

    import numpy as np

    cols = [(pq.measures.index(c.measure), c) for c in selection.columns
            if c.measure is not None and c.family in ("iprec_at_recall", "11pt_avg")]
    if not cols:
        return pq
    num_ret = pq.values[:, pq.measures.index(counts[0])]
    num_rel = pq.values[:, pq.measures.index(counts[1])]
    empty = num_ret == 0
    if not empty.any():
        return pq
    values = pq.values.copy()
    for j, c in cols:
        assert c.measure is not None
        levels = ((float(c.measure.cutoff or 0.0),) if c.family == "iprec_at_recall"
                  else tuple(c.measure.param("levels")))
        at_zero = np.zeros(pq.n, dtype=bool)
        for level in levels:
            at_zero |= np.floor(level * num_rel + 0.5) == 0  # lround, non-negative
        values[empty & at_zero, j] = math.nan
    return dataclasses.replace(pq, values=values)
