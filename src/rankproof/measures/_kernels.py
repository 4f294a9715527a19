"""Vectorised measure kernels, one per registered family.

Every kernel receives a `Judged` view: the run rows that have a judgment,
sorted by (topic, rank), plus per-topic counts. Unjudged rows never matter to
any measure here except through ``num_ret``, so after the join the work is
proportional to the number of *judged* retrieved rows, not the run's size.
Per-topic sums use ``np.bincount``, which accumulates in array order — the same
order trec_eval adds in — so sums agree with trec_eval's bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from rankproof.measures._measure import Measure

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


@dataclass
class Judged:
    """What the kernels see for one (run, qrels) pair over ``n_topics`` topics."""

    n_topics: int
    num_ret: I64
    """Retrieved documents per topic."""
    topic: I64
    """Topic index of each judged retrieved row (sorted by topic, then rank)."""
    pos: I64
    """0-based rank of each judged retrieved row."""
    rel: I64
    """Label of each judged retrieved row (negative: pooled but unjudged)."""
    qrels_topic: I64
    """Topic index of every qrels row whose topic is evaluated."""
    qrels_rel: I64
    default_level: int
    _cache: dict[tuple[object, ...], F64] = field(default_factory=dict)
    qrels_row: I64 | None = None
    """Index of each judged retrieved row's judgment among the qrels' rows."""
    qrels: Any = None
    """The `Qrels` evaluated (a `SubtopicQrels` carries the subtopic judgments)."""

    def bincount(self, topics: I64, weights: F64 | None = None) -> F64:
        return np.bincount(topics, weights=weights, minlength=self.n_topics).astype(np.float64)

    def num_rel_ret(self, level: int) -> F64:
        key: tuple[object, ...] = ("num_rel_ret", level)
        if key not in self._cache:
            self._cache[key] = self.bincount(self.topic[self.is_rel(level)])
        return self._cache[key]

    def level(self, m: Measure) -> int:
        return self.default_level if m.rel is None else m.rel

    def is_rel(self, level: int) -> npt.NDArray[np.bool_]:
        return (self.rel >= level) & (self.rel >= 0)

    def num_rel(self, level: int) -> F64:
        key: tuple[object, ...] = ("num_rel", level)
        if key not in self._cache:
            sel = (self.qrels_rel >= level) & (self.qrels_rel >= 0)
            self._cache[key] = self.bincount(self.qrels_topic[sel])
        return self._cache[key]

    def num_nonrel(self, level: int) -> F64:
        key: tuple[object, ...] = ("num_nonrel", level)
        if key not in self._cache:
            sel = (self.qrels_rel >= 0) & (self.qrels_rel < level)
            self._cache[key] = self.bincount(self.qrels_topic[sel])
        return self._cache[key]

    def ideal_dcg(self, cutoff: float | None, gain: str | None,
                  gains: tuple[tuple[int, float], ...] | None = None) -> F64:
        key: tuple[object, ...] = ("idcg", cutoff, gain, gains)
        if key not in self._cache:
            g_all = _gain(self.qrels_rel, gain, gains)
            positive = g_all > 0
            t = self.qrels_topic[positive]
            g = g_all[positive]
            order = np.lexsort((-g, t))
            t, g = t[order], g[order]
            pos = _positions_within(t)
            w = g / np.log2(pos + 2.0)
            if cutoff is not None:
                keep = pos < cutoff
                t, w = t[keep], w[keep]
            self._cache[key] = self.bincount(t, w)
        return self._cache[key]


def _positions_within(topic: I64) -> I64:
    """0-based index of each element within its run of equal (sorted) topics."""
    n = len(topic)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], topic[1:] != topic[:-1])))
    lengths = np.diff(np.concatenate((starts, [n])))
    return np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)


def _topic_offsets(topic: I64, values: I64) -> tuple[I64, I64]:
    """``values`` at the first element of each run of equal topics, and the run lengths."""
    if len(topic) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], topic[1:] != topic[:-1])))
    lengths = np.diff(np.concatenate((starts, [len(topic)])))
    return values[starts], lengths


def _gain(rel: I64, gain: str | None, gains: tuple[tuple[int, float], ...] | None = None) -> F64:
    """Gain of each label: the label, 2^label - 1 (``exp``), or a label -> gain map
    (trec_eval ``ndcg.1=3,2=9``: unlisted labels gain their label, negative ones 0)."""
    r = rel.astype(np.float64)
    if gains:
        out = np.where(rel >= 0, r, 0.0)
        for label, value in gains:
            out[rel == label] = value
        return out
    return np.exp2(r) - 1.0 if gain == "exp" else r


def _safe_div(num: F64, den: F64) -> F64:
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _within(j: Judged, m: Measure) -> npt.NDArray[np.bool_]:
    return np.ones(len(j.pos), dtype=bool) if m.cutoff is None else j.pos < m.cutoff


def precision(j: Judged, m: Measure) -> F64:
    assert m.cutoff is not None
    sel = j.is_rel(j.level(m)) & _within(j, m)
    return j.bincount(j.topic[sel]) / float(m.cutoff)


def recall(j: Judged, m: Measure) -> F64:
    level = j.level(m)
    sel = j.is_rel(level) & _within(j, m)
    return _safe_div(j.bincount(j.topic[sel]), j.num_rel(level))


def success(j: Judged, m: Measure) -> F64:
    sel = j.is_rel(j.level(m)) & _within(j, m)
    return (j.bincount(j.topic[sel]) > 0).astype(np.float64)


def average_precision(j: Judged, m: Measure) -> F64:
    level = j.level(m)
    rel = j.is_rel(level)
    t, p = j.topic[rel], j.pos[rel]
    rank_among_rel = _positions_within(t) + 1
    prec = rank_among_rel / (p + 1.0)
    if m.cutoff is not None:
        keep = p < m.cutoff
        t, prec = t[keep], prec[keep]
    return _safe_div(j.bincount(t, prec), j.num_rel(level))


def reciprocal_rank(j: Judged, m: Measure) -> F64:
    sel = j.is_rel(j.level(m)) & _within(j, m)
    t, p = j.topic[sel], j.pos[sel]
    first = np.ones(len(t), dtype=bool)
    first[1:] = t[1:] != t[:-1]
    out = np.zeros(j.n_topics, dtype=np.float64)
    out[t[first]] = 1.0 / (p[first] + 1.0)
    return out


def ndcg(j: Judged, m: Measure) -> F64:
    gains = m.param("gains")
    if gains is None:
        sel = (j.rel > 0) & _within(j, m)
        w = _gain(j.rel[sel], m.gain) / np.log2(j.pos[sel] + 2.0)
        dcg = j.bincount(j.topic[sel], w)
    else:  # trec_eval adds every non-zero gain, negative ones too
        g = _gain(j.rel, None, gains)
        sel = (g != 0) & _within(j, m)
        dcg = j.bincount(j.topic[sel], g[sel] / np.log2(j.pos[sel] + 2.0))
    return _safe_div(dcg, j.ideal_dcg(m.cutoff, m.gain, gains))


def r_precision(j: Judged, m: Measure) -> F64:
    level = j.level(m)
    num_rel = j.num_rel(level)
    sel = j.is_rel(level) & (j.pos < num_rel[j.topic])
    return _safe_div(j.bincount(j.topic[sel]), num_rel)


def bpref(j: Judged, m: Measure) -> F64:
    level = j.level(m)
    judged = j.rel >= 0
    t, r = j.topic[judged], j.rel[judged]
    nonrel = (r < level).astype(np.int64)
    # Non-relevant documents ranked above each row, within its topic.
    csum = np.cumsum(nonrel)
    above = csum - np.repeat(*_topic_offsets(t, csum - nonrel))
    is_rel = r >= level
    num_rel = j.num_rel(level)
    num_nonrel = j.num_nonrel(level)
    tr, above_r = t[is_rel], above[is_rel].astype(np.float64)
    rr = num_rel[tr]
    denom = np.minimum(num_nonrel[tr], rr)
    penalty = np.zeros_like(above_r)
    has = above_r > 0
    penalty[has] = np.minimum(above_r[has], rr[has]) / denom[has]
    return _safe_div(j.bincount(tr, 1.0 - penalty), num_rel)


def judged_at(j: Judged, m: Measure) -> F64:
    assert m.cutoff is not None
    sel = j.pos < m.cutoff
    shown = np.minimum(j.num_ret, m.cutoff).astype(np.float64)
    return _safe_div(j.bincount(j.topic[sel]), shown)


def num_ret(j: Judged, m: Measure) -> F64:
    return j.num_ret.astype(np.float64)


def num_rel(j: Judged, m: Measure) -> F64:
    return j.num_rel(j.level(m)).copy()


def num_rel_ret(j: Judged, m: Measure) -> F64:
    return j.bincount(j.topic[j.is_rel(j.level(m))])


KERNELS: dict[str, Callable[[Judged, Measure], F64]] = {
    "P": precision,
    "R": recall,
    "AP": average_precision,
    "RR": reciprocal_rank,
    "nDCG": ndcg,
    "Rprec": r_precision,
    "Bpref": bpref,
    "Success": success,
    "Judged": judged_at,
    "NumRet": num_ret,
    "NumRel": num_rel,
    "NumRelRet": num_rel_ret,
}
