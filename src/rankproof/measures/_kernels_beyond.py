"""Vectorised kernels of the measures beyond trec_eval (`_families_beyond`).

Same contract as `rankproof.measures._kernels`: a kernel takes the `Judged`
view and a `Measure` and returns one value per topic, with no Python loop over
topics. Definitions follow the reference programs:

* ``ERR@k`` — gdeval.pl (TREC Web track): R = (2^label - 1) / 2^4;
* ``Compat`` — ir_measures' compat provider (Clarke et al., TOIS 2021);
* ``alpha_nDCG@k``, ``ERR_IA@k``, ``NRBP``, ``P_IA@k``, ``StRecall@k`` —
  ndeval.c (as pyndeval wraps it): binary subtopic judgments (label >= rel),
  novelty discount (1 - alpha) per earlier cover of a subtopic, the number of
  subtopics counting only those with a relevant document.

The only loop in this module is over *ranks* of ndeval's greedy ideal ranking
(`_greedy_ideal`): each step picks, for every topic at once, the document
with the highest novelty gain (ties to the larger docid, as ndeval), so the
ideal is computed once per evaluation, to the depth asked, for all topics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankproof._errors import InputError
from rankproof.data import SubtopicQrels, arrow_indices, to_numpy
from rankproof.measures._kernels import F64, I64, Judged, _positions_within, _safe_div
from rankproof.measures._measure import Measure

# -- gdeval's ERR ------------------------------------------------------------------


def err(j: Judged, m: Measure) -> F64:
    """gdeval's ERR: sum_i R_i / i x prod_{l<i} (1 - R_l), R = (2^label - 1) / 2^gmax."""
    gmax = float(m.param("gmax"))
    sel = j.rel > 0
    if m.cutoff is not None:
        sel &= j.pos < m.cutoff
    t, pos, label = j.topic[sel], j.pos[sel], j.rel[sel].astype(np.float64)
    if len(label) and float(label.max()) > gmax:
        raise InputError(f"{m}: a label of {int(label.max())} exceeds gmax={gmax:g}; ERR needs"
                         f" R = (2^label - 1) / 2^gmax <= 1 (write ERR(gmax=...))")
    r = (np.exp2(label) - 1.0) / np.exp2(gmax)
    # decay before each row: prod over the earlier relevant rows of its topic of (1 - R)
    logs = np.log1p(-r)  # r < 1: label <= gmax
    # running sums that restart at each topic: each topic's first term also takes away
    # the previous topic's total, so the sum never grows past one topic's magnitude
    adjusted = logs.copy()
    if len(logs):
        starts = np.flatnonzero(np.concatenate(([True], t[1:] != t[:-1])))
        adjusted[starts[1:]] -= np.add.reduceat(adjusted, starts)[:-1]
    before = np.cumsum(adjusted) - logs
    if len(logs):
        before[starts] = 0.0
    return j.bincount(t, r * np.exp(before) / (pos + 1.0))


# -- compat -----------------------------------------------------------------------


def compat(j: Judged, m: Measure) -> F64:
    """ir_measures' compatibility: RBO(run, ideal, p) over depth max(retrieved, relevant),
    optionally divided by RBO(ideal, ideal, p).

    With S(i) = sum_{l<i} p^l / (l + 1), a document at run position r and ideal
    position q adds S(depth) - S(max(r, q)) to the overlap sum; the weights sum
    to sum_{l<depth} p^l.
    """
    p = float(m.param("p"))
    normalize = float(m.param("normalize"))
    if normalize not in (0.0, 1.0):
        raise InputError(f"{m}: normalize must be 1 (divide by the ideal) or 0, got {normalize:g}")
    if not 0.0 < p < 1.0:
        raise InputError(f"{m}: p must lie strictly between 0 and 1, got {p:g}")
    positive = j.qrels_rel > 0
    qt = j.qrels_topic[positive]
    qg = j.qrels_rel[positive]
    n_ideal = np.bincount(qt, minlength=j.n_topics)
    depth = np.maximum(j.num_ret, n_ideal)
    top = int(depth.max()) if len(depth) else 0
    weights = np.cumprod(np.concatenate(([1.0], np.full(max(top - 1, 0), p))))[:top]
    s = np.concatenate(([0.0], np.cumsum(weights / np.arange(1.0, top + 1.0))))
    norm = np.concatenate(([0.0], np.cumsum(weights)))[depth]
    # ideal position of each retrieved relevant document: the relevant documents with a
    # higher label, then those with its label ranked above it in the run.
    sel = j.rel > 0
    t, pos, g = j.topic[sel], j.pos[sel], j.rel[sel]
    big = np.int64(int(qg.max()) + 1 if len(qg) else 1)
    qkeys = np.sort(qt.astype(np.int64) * big + qg)
    higher = (np.searchsorted(qkeys, t * big + big - 1, side="right")
              - np.searchsorted(qkeys, t * big + g, side="right"))
    order = np.lexsort((pos, -g, t))
    same = np.empty(len(t), dtype=np.int64)
    tg = t[order] * big + g[order]
    same[order] = _positions_within(tg)
    ideal_pos = higher + same
    overlap = j.bincount(t, s[depth[t]] - s[np.maximum(pos, ideal_pos)])
    score = _safe_div(overlap, norm)
    if normalize == 0.0:
        return score
    cum_s = np.concatenate(([0.0], np.cumsum(s)))
    best = _safe_div(n_ideal.astype(np.float64) * s[depth] - cum_s[n_ideal], norm)
    return _safe_div(score, best)


# -- ndeval's diversity measures ------------------------------------------------------


@dataclass
class _Subtopics:
    """Per evaluation and relevance level: the run's novelty-discounted gains."""

    n_subtopics: F64
    """Subtopics with at least one relevant document, per topic (ndeval actualSubtopics)."""
    row_topic: I64
    row_pos: I64
    row_covers: F64
    """Relevant subtopics of each judged retrieved row."""
    pair_row: I64
    """For each (row, relevant subtopic) pair: the row, its topic-subtopic, its rank and how
    often the subtopic was covered above it."""
    pair_ts: I64
    pair_pos: I64
    pair_seen: I64
    unit_topic: I64
    """Documents of the ideal (qrels documents with a relevant subtopic), by (topic, docid
    descending), with their (unit, topic-subtopic) pairs."""
    unit_pair_unit: I64
    unit_pair_ts: I64
    n_ts: int
    level: int


def _subtopic_qrels(j: Judged, m: Measure) -> SubtopicQrels:
    if not isinstance(j.qrels, SubtopicQrels) or j.qrels_row is None:
        raise InputError(f"{m} is a diversity measure: it needs subtopic qrels (qid subtopic "
                         "docid rel): rankproof measure --subtopics, or "
                         "rankproof.data.read_subtopic_qrels")
    return j.qrels


def _subtopics(j: Judged, m: Measure) -> _Subtopics:
    level = j.level(m)
    key = ("subtopics", level)
    cached = j._cache.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    sq = _subtopic_qrels(j, m)
    rel = sq.sub_rels >= level
    row, sub = sq.sub_row[rel], sq.sub_codes[rel]
    topic = sq.qid_codes[row].astype(np.int64)
    n_sub = np.int64(max(len(sq.subtopic_vocab), 1))
    ts_raw = topic * n_sub + sub
    ts_keys, ts = np.unique(ts_raw, return_inverse=True)
    n_subtopics = np.bincount(ts_keys // n_sub, minlength=j.n_topics).astype(np.float64)
    # pairs sorted by (qrels row, subtopic code): ndeval's summation order
    order = np.lexsort((sub, row))
    row, ts = row[order], ts[order]
    n_rows = len(sq.rels)
    start = np.searchsorted(row, np.arange(n_rows + 1))
    count = np.diff(start)
    # -- the run: expand each judged retrieved row to its relevant subtopics
    assert j.qrels_row is not None
    jr = j.qrels_row
    per = count[jr]
    pair_row = np.repeat(np.arange(len(jr), dtype=np.int64), per)
    offset = np.arange(len(pair_row), dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
    src = start[jr][pair_row] + offset
    pair_ts = ts[src]
    pair_pos = j.pos[pair_row]
    by_ts = np.lexsort((pair_pos, pair_ts))
    seen = np.empty(len(pair_ts), dtype=np.int64)
    seen[by_ts] = _positions_within(pair_ts[by_ts])
    # -- the ideal's candidates: qrels rows with a relevant subtopic, by topic then docid
    # descending (ndeval breaks ties of the greedy to the larger docno)
    units = np.flatnonzero(count > 0)
    if len(units):  # Arrow compares strings by their bytes, as strcmp
        by_doc = pc.sort_indices(
            pa.table({"t": sq.qid_codes[units], "d": sq.docids.take(arrow_indices(units))}),
            sort_keys=[("t", "ascending"), ("d", "descending")])
        units = units[to_numpy(by_doc).astype(np.int64)]
    unit_of_row = np.full(n_rows, -1, dtype=np.int64)
    unit_of_row[units] = np.arange(len(units))
    pair_unit = unit_of_row[row]
    value = _Subtopics(
        n_subtopics=n_subtopics, row_topic=j.topic, row_pos=j.pos,
        row_covers=per.astype(np.float64), pair_row=pair_row, pair_ts=pair_ts,
        pair_pos=pair_pos, pair_seen=seen, unit_topic=sq.qid_codes[units].astype(np.int64),
        unit_pair_unit=pair_unit, unit_pair_ts=ts, n_ts=len(ts_keys), level=level,
    )
    j._cache[key] = value  # type: ignore[assignment]
    return value


def _row_gain(d: _Subtopics, alpha: float) -> F64:
    """Novelty gain of each judged retrieved row: sum over its relevant subtopics of
    (1 - alpha)^(covers of the subtopic above it), added in subtopic order."""
    w = np.power(1.0 - alpha, d.pair_seen.astype(np.float64))
    return np.bincount(d.pair_row, weights=w, minlength=len(d.row_pos)).astype(np.float64)


def _greedy_ideal(j: Judged, d: _Subtopics, alpha: float, depth: int) -> F64:
    """ndeval's greedy ideal: gain at each rank 0..depth-1, per topic (topics × depth).

    One step per rank, every topic at once: each remaining document's gain is the
    sum of its subtopics' current weights; the best (ties: larger docid) is taken
    and its subtopics' weights are multiplied by (1 - alpha).
    """
    key = ("div_ideal", d.level, alpha)
    cached = j._cache.get(key)
    if cached is not None and cached.shape[1] >= depth:  # a deeper ideal starts the same
        return cached[:, :depth]
    out = np.zeros((j.n_topics, depth), dtype=np.float64)
    n_units = len(d.unit_topic)
    if n_units == 0 or depth == 0:
        j._cache[key] = out
        return out
    weight = np.ones(d.n_ts, dtype=np.float64)
    chosen = np.zeros(n_units, dtype=bool)
    seg_start = np.flatnonzero(np.concatenate(([True], d.unit_topic[1:] != d.unit_topic[:-1])))
    seg_topic = d.unit_topic[seg_start]
    seg_of_unit = np.repeat(np.arange(len(seg_start)), np.diff(np.append(seg_start, n_units)))
    index = np.arange(n_units)
    for rank in range(min(depth, n_units)):
        gain = np.bincount(d.unit_pair_unit, weights=weight[d.unit_pair_ts],
                           minlength=n_units).astype(np.float64)
        gain[chosen] = -1.0
        best = np.maximum.reduceat(gain, seg_start)
        hit = np.where(gain == best[seg_of_unit], index, n_units)
        pick = np.minimum.reduceat(hit, seg_start)
        live = best >= 0.0
        out[seg_topic[live], rank] = best[live]
        picked = pick[live]
        chosen[picked] = True
        now = np.zeros(n_units, dtype=bool)
        now[picked] = True
        weight[d.unit_pair_ts[now[d.unit_pair_unit]]] *= 1.0 - alpha
    j._cache[key] = out
    return out


def _cut(d: _Subtopics, k: int | None) -> np.ndarray:
    return np.ones(len(d.row_pos), dtype=bool) if k is None else d.row_pos < k


def alpha_ndcg(j: Judged, m: Measure) -> F64:
    """ndeval alpha-nDCG@k: the run's alpha-DCG@k over the greedy ideal's."""
    assert isinstance(m.cutoff, int)
    alpha = float(m.param("alpha"))
    d = _subtopics(j, m)
    keep = _cut(d, m.cutoff)
    gain = _row_gain(d, alpha)
    dcg = j.bincount(d.row_topic[keep], gain[keep] / np.log2(d.row_pos[keep] + 2.0))
    ideal = _greedy_ideal(j, d, alpha, m.cutoff)
    idcg = ideal @ (1.0 / np.log2(np.arange(m.cutoff) + 2.0))
    return _safe_div(dcg, idcg)


def err_ia(j: Judged, m: Measure) -> F64:
    """ndeval ERR-IA@k: sum of novelty gain / rank over the top k, divided by the same
    for a list that covers every subtopic at every rank (ndeval's "ideal ideal")."""
    assert isinstance(m.cutoff, int)
    alpha = float(m.param("alpha"))
    d = _subtopics(j, m)
    keep = _cut(d, m.cutoff)
    gain = _row_gain(d, alpha)
    score = j.bincount(d.row_topic[keep], gain[keep] / (d.row_pos[keep] + 1.0))
    ranks = np.arange(m.cutoff, dtype=np.float64)
    ideal_ideal = float(np.sum(np.power(1.0 - alpha, ranks) / (ranks + 1.0)))
    return _safe_div(score, d.n_subtopics * ideal_ideal)


def nrbp(j: Judged, m: Measure) -> F64:
    """ndeval NRBP: (1 - (1 - alpha) beta) / subtopics x sum of novelty gain x beta^(rank-1)."""
    alpha, beta = float(m.param("alpha")), float(m.param("beta"))
    d = _subtopics(j, m)
    gain = _row_gain(d, alpha)
    total = j.bincount(d.row_topic, gain * np.power(beta, d.row_pos.astype(np.float64)))
    return _safe_div(total * (1.0 - (1.0 - alpha) * beta), d.n_subtopics)


def p_ia(j: Judged, m: Measure) -> F64:
    """ndeval P-IA@k: relevant (document, subtopic) pairs in the top k / (k x subtopics)."""
    assert isinstance(m.cutoff, int)
    d = _subtopics(j, m)
    keep = _cut(d, m.cutoff)
    pairs = j.bincount(d.row_topic[keep], d.row_covers[keep])
    return _safe_div(pairs, d.n_subtopics * float(m.cutoff))


def st_recall(j: Judged, m: Measure) -> F64:
    """ndeval strec@k: subtopics covered in the top k / subtopics."""
    assert isinstance(m.cutoff, int)
    d = _subtopics(j, m)
    first = (d.pair_seen == 0) & (d.pair_pos < m.cutoff)
    covered = j.bincount(d.row_topic[d.pair_row[first]])
    return _safe_div(covered, d.n_subtopics)


BEYOND_KERNELS: dict[str, Callable[[Judged, Measure], F64]] = {
    "ERR": err,
    "Compat": compat,
    "alpha_nDCG": alpha_ndcg,
    "ERR_IA": err_ia,
    "NRBP": nrbp,
    "P_IA": p_ia,
    "StRecall": st_recall,
}
"""Kernels of the families in `_families_beyond`, by canonical family name."""
