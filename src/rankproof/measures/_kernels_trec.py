"""Vectorised kernels for trec_eval's set, interpolated and parameterised measures.

Same contract as `rankproof.measures._kernels`: a kernel takes the `Judged`
view and a `Measure` and returns one value per topic, with no Python loop
over topics. Definitions follow trec_eval 10 (``m_*.c``), including its
rounding of recall levels to ranks (``lround`` for iprec_at_recall and
11pt_avg, ``(long)(mult * R + 0.9)`` for Rprec_mult).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from rankproof.measures._kernels import (
    F64,
    I64,
    KERNELS,
    Judged,
    _gain,
    _positions_within,
    _safe_div,
    average_precision,
    bpref,
)
from rankproof.measures._measure import Measure


def _counts(j: Judged, m: Measure) -> tuple[F64, F64, F64]:
    """Per topic: retrieved, relevant, relevant retrieved (at the measure's level)."""
    level = j.level(m)
    return j.num_ret.astype(np.float64), j.num_rel(level), j.num_rel_ret(level)


def num_nonrel_judged_ret(j: Judged, m: Measure) -> F64:
    level = j.level(m)
    return j.bincount(j.topic[(j.rel >= 0) & (j.rel < level)])


def set_precision(j: Judged, m: Measure) -> F64:
    ret, _, rel_ret = _counts(j, m)
    return _safe_div(rel_ret, ret)


def set_recall(j: Judged, m: Measure) -> F64:
    _, rel, rel_ret = _counts(j, m)
    return _safe_div(rel_ret, rel)


def set_relative_precision(j: Judged, m: Measure) -> F64:
    ret, rel, rel_ret = _counts(j, m)
    return _safe_div(rel_ret, np.minimum(ret, rel))


def set_map(j: Judged, m: Measure) -> F64:
    ret, rel, rel_ret = _counts(j, m)
    return _safe_div(rel_ret * rel_ret, ret * rel)


def set_f(j: Judged, m: Measure) -> F64:
    """(x+1) P R / (x P + R); 0 where nothing relevant is retrieved (trec_eval: 0/0)."""
    ret, rel, rel_ret = _counts(j, m)
    x = float(m.param("beta"))
    p = _safe_div(rel_ret, ret)
    r = _safe_div(rel_ret, rel)
    return _safe_div((x + 1.0) * p * r, x * p + r)


def _suffix_max(topic: I64, values: F64) -> F64:
    """Within each run of equal (sorted) topics, the max of each value and all after it.

    A doubling scan: log2(n) vectorised passes, exact (no offsets added).
    """
    v = values.copy()
    n, s = len(v), 1
    while s < n:
        cand = np.where(topic[s:] == topic[:-s], v[s:], -np.inf)
        v[:-s] = np.maximum(v[:-s], cand)
        s *= 2
    return v


def _iprec_table(j: Judged, level: int) -> tuple[F64, I64]:
    """Interpolated precision at each relevant retrieved row, and each topic's first row."""
    key: tuple[object, ...] = ("iprec", level)
    if key not in j._cache:
        sel = j.is_rel(level)
        t, p = j.topic[sel], j.pos[sel]
        prec = (_positions_within(t) + 1) / (p + 1.0)
        j._cache[key] = _suffix_max(t, prec)
        j._cache[("iprec_start", level)] = np.searchsorted(
            t, np.arange(j.n_topics)).astype(np.float64)
    return j._cache[key], j._cache[("iprec_start", level)].astype(np.int64)


def _iprec_at(j: Judged, level: int, recall: float) -> F64:
    """trec_eval's iprec_at_recall at one recall level, per topic."""
    iprec, start = _iprec_table(j, level)
    num_rel = j.num_rel(level)
    rel_ret = j.num_rel_ret(level)
    cut = np.floor(recall * num_rel + 0.5)  # lround, for non-negative values
    reached = (cut <= rel_ret) & (rel_ret > 0)
    k = np.maximum(cut, 1.0).astype(np.int64)
    out = np.zeros(j.n_topics, dtype=np.float64)
    idx = start[reached] + k[reached] - 1
    out[reached] = iprec[idx]
    return out


def iprec_at_recall(j: Judged, m: Measure) -> F64:
    assert m.cutoff is not None
    return _iprec_at(j, j.level(m), float(m.cutoff))


def iprec_avg(j: Judged, m: Measure) -> F64:
    """trec_eval's 11pt_avg: interpolated precision summed over the levels, divided by
    their number (summed from the highest level down, as trec_eval adds)."""
    levels: tuple[float, ...] = m.param("levels")
    level = j.level(m)
    total = np.zeros(j.n_topics, dtype=np.float64)
    for recall in reversed(levels):  # a handful of levels, each vectorised over topics
        total += _iprec_at(j, level, recall)
    return total / float(len(levels))


def r_precision_mult(j: Judged, m: Measure) -> F64:
    """Precision at rank (long)(mult x R + 0.9); past the end of the list, relevant
    retrieved over that rank (trec_eval Rprec_mult)."""
    level = j.level(m)
    num_rel = j.num_rel(level)
    cut = np.floor(float(m.param("mult")) * num_rel + 0.9)
    sel = j.is_rel(level) & (j.pos < cut[j.topic])
    return _safe_div(j.bincount(j.topic[sel]), cut)


def r_precision_any(j: Judged, m: Measure) -> F64:
    if m.params:
        return r_precision_mult(j, m)
    return KERNELS["Rprec"](j, m)


def utility(j: Judged, m: Measure) -> F64:
    """a·relret + b·(ret − relret) + c·(rel − relret) + d·(N + relret − ret − rel), N = 0.

    A topic with nothing retrieved scores ``c·rel − d·rel`` by this definition, as
    trec_eval computes it under ``-M``/``-J``; only ``rankproof trec_eval -c`` zeroes
    the bare ``utility`` line of a topic the run lacks (trec_eval.c's clean-up of its
    stand-in ranking), an artefact the drop-in alone reproduces.
    """
    ret, rel, rel_ret = _counts(j, m)
    a, b, c, d = (float(m.param(n)) for n in "abcd")
    return a * rel_ret + b * (ret - rel_ret) + c * (rel - rel_ret) + d * (
        0.0 + rel_ret - ret - rel)


def relative_precision(j: Judged, m: Measure) -> F64:
    assert m.cutoff is not None
    level = j.level(m)
    sel = j.is_rel(level) & (j.pos < m.cutoff)
    return _safe_div(j.bincount(j.topic[sel]), np.minimum(float(m.cutoff), j.num_rel(level)))


def yaap(j: Judged, m: Measure) -> F64:
    """trec_eval's yaap: log((1 + S) / (1 + R - S)), S the sum of precision at each
    relevant retrieved document (AP's numerator), R the relevant documents."""
    level = j.level(m)
    rel = j.is_rel(level)
    t, p = j.topic[rel], j.pos[rel]
    total = j.bincount(t, (_positions_within(t) + 1) / (p + 1.0))
    return np.log((1.0 + total) / (1.0 + j.num_rel(level) - total))


TREC_KERNELS: dict[str, Callable[[Judged, Measure], F64]] = {
    "NumNonRelJudgedRet": num_nonrel_judged_ret,
    "SetP": set_precision,
    "SetR": set_recall,
    "SetRelP": set_relative_precision,
    "SetAP": set_map,
    "SetF": set_f,
    "IPrec": iprec_at_recall,
    "IPrecAvg": iprec_avg,
    "GMAP": average_precision,
    "GMBpref": bpref,
    "Rprec": r_precision_any,
    "Utility": utility,
    "RelP": relative_precision,
    "YAAP": yaap,
}
"""Kernels of the families registered in `_families` for trec_eval's wider set
(``Rprec`` here dispatches on ``mult``)."""

ALL_KERNELS: dict[str, Callable[[Judged, Measure], F64]] = {**KERNELS, **TREC_KERNELS}
"""Every family's kernel, by canonical family name."""


def unjudged_at(j: Judged, m: Measure) -> F64:
    """Unjudged in the top k over k; ranks past the end of a short list count as judged."""
    assert m.cutoff is not None
    k = float(m.cutoff)
    shown = np.minimum(j.num_ret.astype(np.float64), k)
    judged = j.bincount(j.topic[(j.pos < k) & (j.rel >= 0)])
    return (shown - judged) / k


def _powers(p: float, n: int) -> F64:
    """p^0 .. p^(n-1), by repeated multiplication as trec_eval computes them."""
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    return np.cumprod(np.concatenate(([1.0], np.full(n - 1, p))), dtype=np.float64)


def label_gains(rel: I64, gains: tuple[tuple[int, float], ...] | None) -> F64:
    """trec_eval's ``get_gain``: a judged label's gain (the label, or the ``gains`` map);
    a document judged below 0 (pooled, unjudged) gains 0."""
    return np.where(rel >= 0, _gain(rel, None, gains), 0.0)


def _rbp_range(j: Judged, gains: tuple[tuple[int, float], ...] | None) -> tuple[F64, F64]:
    """Per topic, (lo, hi) of trec_eval's gain table: min(0, gains) and max(0, gains) over the
    labels 0 .. the topic's highest judged label (each its own gain unless listed) and every
    listed label (listed labels count whether or not the topic has them, as in trec_eval's
    ``setup_gains``)."""
    top = np.full(j.n_topics, -1, dtype=np.int64)
    has = j.qrels_rel >= 0
    np.maximum.at(top, j.qrels_topic[has], j.qrels_rel[has])
    listed = np.array([label for label, _ in gains or ()], dtype=np.int64)
    values = [value for _, value in gains or ()]
    unlisted = top.copy()  # the highest label 0 .. top that keeps its own gain (-1: none)
    for _ in range(len(listed)):
        unlisted = np.where(np.isin(unlisted, listed), unlisted - 1, unlisted)
    hi = np.maximum(np.maximum(unlisted, 0).astype(np.float64), max([0.0, *values]))
    lo = np.full(j.n_topics, min([0.0, *values]))
    return lo, hi


def rbp(j: Judged, m: Measure) -> F64:
    """(1 - p) sum_i gain_i p^(i-1). Gains: trec_eval's (the labels, or the ``gains`` map,
    scaled per topic to [0, 1] by (g - lo) / (hi - lo) when lo < 0 or hi > 1, see
    `_rbp_range`); with ``rel``, 1 for a label >= rel (ir_measures, cwl-eval)."""
    p = float(m.param("p"))
    n = int(j.pos.max()) + 1 if len(j.pos) else 0
    if m.rel is not None:
        sel = j.is_rel(m.rel)
        return (1.0 - p) * j.bincount(j.topic[sel], _powers(p, n)[j.pos[sel]])
    gains = m.param("gains")
    lo, hi = _rbp_range(j, gains)
    sel = j.rel >= 0
    t = j.topic[sel]
    gain = label_gains(j.rel[sel], gains)
    scaled = (lo[t] < 0.0) | (hi[t] > 1.0)
    gain = np.where(scaled, (gain - lo[t]) / np.where(scaled, hi[t] - lo[t], 1.0), gain)
    w = gain * _powers(p, n)[j.pos[sel]]
    return (1.0 - p) * j.bincount(t, w)


def rbp_resid(j: Judged, m: Measure) -> F64:
    """p^ret + (1 - p) x (sum of p^(i-1) over unjudged ranks i): the RBP weight of unjudged
    ranks and of the ranks past the list. trec_eval reports 0 when every retrieved document
    is judged; with ``rel`` (cwl-eval's residual) the tail always counts."""
    p = float(m.param("p"))
    n = int(j.num_ret.max()) if len(j.num_ret) else 0
    powers = _powers(p, n + 1)
    all_sum = np.concatenate(([0.0], np.cumsum(powers)))[j.num_ret]
    judged = j.rel >= 0
    judged_sum = j.bincount(j.topic[judged], powers[j.pos[judged]])
    n_unjudged = j.num_ret - j.bincount(j.topic[judged]).astype(np.int64)
    value = powers[j.num_ret] + (1.0 - p) * (all_sum - judged_sum)
    if m.rel is not None:  # a topic the run lacks scores 0, as every measure (-c)
        return np.where(j.num_ret > 0, value, 0.0)
    return np.where(n_unjudged > 0, value, 0.0)


def bin_g(j: Judged, m: Measure) -> F64:
    level = j.level(m)
    sel = j.is_rel(level)
    t, pos = j.topic[sel], j.pos[sel]
    k = _positions_within(t) + 1
    return _safe_div(j.bincount(t, 1.0 / np.log2(3.0 + pos - k)), j.num_rel(level))


def _ideal(j: Judged, gains: tuple[tuple[int, float], ...] | None) -> tuple[I64, F64]:
    """The ideal list's (topic, gain) rows: every judged document with a positive gain, by
    topic, gains descending (trec_eval walks its gain levels from the highest down and
    stops at the first gain of 0 or less)."""
    qg = label_gains(j.qrels_rel, gains)
    positive = qg > 0
    qt, qg = j.qrels_topic[positive], qg[positive]
    order = np.lexsort((-qg, qt))
    return qt[order], qg[order]


def g_measure(j: Judged, m: Measure) -> F64:
    """trec_eval's G, gains the labels or the ``gains`` map (with label gains every sum is
    of integers, so any order adds exactly).

    Each retrieved document with a non-zero gain g adds g / log2(2 + cost - gain so far);
    the cost of a rank is the ideal gain there when it is at least 1, else 1.
    """
    qt, qg = _ideal(j, m.param("gains"))
    ideal_sum = j.bincount(qt, qg)
    # cost up to rank i (0-based) = (i + 1) + sum over the first i+1 ideal gains of
    # max(g - 1, 0)
    excess = np.cumsum(np.maximum(qg - 1.0, 0.0))
    start = np.searchsorted(qt, np.arange(j.n_topics))
    n_ideal = np.bincount(qt, minlength=j.n_topics)
    before = np.concatenate(([0.0], excess))[start]
    all_gains = label_gains(j.rel, m.param("gains"))
    sel = all_gains != 0
    t, pos, gain = j.topic[sel], j.pos[sel], all_gains[sel]
    gain_so_far = np.cumsum(gain)
    gain_so_far -= np.concatenate(([0.0], gain_so_far))[np.searchsorted(t, t)]
    upto = np.minimum(pos + 1, n_ideal[t])
    cost_excess = np.where(upto > 0, np.concatenate(([0.0], excess))[start[t] + upto] -
                           before[t], 0.0)
    cost = (pos + 1.0) + cost_excess
    return _safe_div(j.bincount(t, gain / np.log2(2.0 + cost - gain_so_far)), ideal_sum)


TREC_KERNELS.update({
    "Unjudged": unjudged_at,
    "RBP": rbp,
    "RBPResid": rbp_resid,
    "BinG": bin_g,
    "G": g_measure,
})
ALL_KERNELS.update(TREC_KERNELS)


def _segmented_cumsum(topic: I64, values: F64) -> F64:
    """Running sums restarting at each run of equal (sorted) topics (a doubling scan,
    so no large offsets are added and subtracted across topics)."""
    v = values.copy()
    n, s = len(v), 1
    while s < n:
        add = np.where(topic[s:] == topic[:-s], v[:-s], 0.0)
        v[s:] = v[s:] + add
        s *= 2
    return v


class _Dcg:
    """The cumulative DCG of the run and of the ideal list, per topic: gains the labels or
    a ``gains`` map. The run's rows are those with a non-zero gain (trec_eval adds negative
    gains too); the ideal's, those with a positive one."""

    def __init__(self, j: Judged, gains: tuple[tuple[int, float], ...] | None = None) -> None:
        g = label_gains(j.rel, gains)
        sel = g != 0
        self.t, self.pos, self.g = j.topic[sel], j.pos[sel], g[sel]
        self.dcg = _segmented_cumsum(self.t, self.g / np.log2(self.pos + 2.0))
        self.qt, self.qg = _ideal(j, gains)
        self.qpos = _positions_within(self.qt)
        self.ideal = _segmented_cumsum(self.qt, self.qg / np.log2(self.qpos + 2.0))
        self.n_ideal = np.bincount(self.qt, minlength=j.n_topics)
        self.ideal_total = np.zeros(j.n_topics)
        last = np.flatnonzero(np.append(self.qt[1:] != self.qt[:-1], True)) if len(
            self.qt) else np.zeros(0, dtype=np.int64)
        self.ideal_total[self.qt[last]] = self.ideal[last]
        self.final = np.zeros(j.n_topics)
        last_r = np.flatnonzero(np.append(self.t[1:] != self.t[:-1], True)) if len(
            self.t) else np.zeros(0, dtype=np.int64)
        self.final[self.t[last_r]] = self.dcg[last_r]
        self.n_topics = j.n_topics

    def run_dcg_at(self, topic: I64, pos: I64) -> F64:
        """The run's DCG over ranks 0..pos of each (topic, pos) pair (pos may be -1)."""
        # One key space for the table and the queries: a query position past every
        # relevant row's must not spill into the next topic's keys.
        big = np.int64(max(np.max(self.pos, initial=0), np.max(pos, initial=0)) + 2)
        keys = self.t * big + self.pos
        at = np.searchsorted(keys, topic * big + pos, side="right") - 1
        ok = (at >= 0) & (self.t[np.maximum(at, 0)] == topic) if len(keys) else np.zeros(
            len(topic), dtype=bool)
        out = np.zeros(len(topic))
        out[ok] = self.dcg[at[ok]]
        return out


def ndcg_rel(j: Judged, m: Measure) -> F64:
    """trec_eval ndcg_rel: nDCG averaged over the relevant documents (at each one's rank;
    an unretrieved one contributes the final nDCG)."""
    d = _Dcg(j, m.param("gains"))
    ideal_at = np.concatenate(([0.0], d.ideal))
    start = np.searchsorted(d.qt, np.arange(j.n_topics))
    k = np.minimum(d.pos, np.maximum(d.n_ideal[d.t] - 1, 0))
    ideal_here = ideal_at[start[d.t] + k + 1]
    rel = d.g > 0  # a point of the average: a retrieved document with a positive gain
    rel_ret = np.bincount(d.t[rel], minlength=j.n_topics)
    total = j.bincount(d.t[rel], _safe_div(d.dcg, ideal_here)[rel])
    total = total + _safe_div((d.n_ideal - rel_ret) * d.final, d.ideal_total)
    return np.where(total > 0, _safe_div(total, d.n_ideal.astype(np.float64)), 0.0)


def rndcg(j: Judged, m: Measure) -> F64:
    """trec_eval Rndcg: nDCG averaged over the ranks where the ideal gain drops a level
    (and over the end of a list that runs past the ideal one)."""
    d = _Dcg(j, m.param("gains"))
    n = len(d.qg)
    # boundaries: ideal row b (b >= 1 within its topic) whose gain differs from row b - 1,
    # plus the end of each topic's ideal list (gain drops to 0).
    change = np.zeros(n, dtype=bool)
    if n:
        change[1:] = (d.qt[1:] == d.qt[:-1]) & (d.qg[1:] != d.qg[:-1])
    end = np.append(d.qt[1:] != d.qt[:-1], True) if n else np.zeros(0, dtype=bool)
    # a boundary at ideal row b is scored with the ideal up to row b - 1; the end one
    # with the whole ideal list: index both by the ideal row they close.
    closes = np.concatenate((np.flatnonzero(change) - 1, np.flatnonzero(end)))
    bt = d.qt[closes]
    bpos = d.qpos[closes]  # = b - 1
    num_ret = j.num_ret[bt]
    run_dcg = d.run_dcg_at(bt, np.minimum(bpos, num_ret - 1))
    order = np.lexsort((bpos, bt))
    bt, values = bt[order], _safe_div(run_dcg, d.ideal[closes])[order]
    total = j.bincount(bt, values)
    count = np.bincount(bt, minlength=j.n_topics).astype(np.float64)
    tail = j.num_ret > d.n_ideal + 1
    total = np.where(tail, total + _safe_div(d.final, d.ideal_total), total)
    count = count + tail
    has_rel = j.num_rel(j.default_level) > 0
    return np.where(has_rel, _safe_div(total, count), 0.0)


TREC_KERNELS.update({"NDCGRel": ndcg_rel, "RnDCG": rndcg})
ALL_KERNELS.update(TREC_KERNELS)


_INFAP_EPSILON = 0.00001


def _running_count(topic: I64, flag: npt.NDArray[np.bool_]) -> I64:
    """How many flagged rows so far (inclusive) within each run of equal topics."""
    c = np.cumsum(flag.astype(np.int64))
    start = np.searchsorted(topic, topic)
    return c - np.concatenate(([0], c))[start]


def inf_ap(j: Judged, m: Measure) -> F64:
    """trec_eval infAP (Yilmaz & Aslam, CIKM 2006): a document without a judgment is
    outside the pool (skipped); a negative label marks one pooled but not judged."""
    level = j.level(m)
    t, pos, rel = j.topic, j.pos, j.rel
    unjudged = rel < 0
    nonrel = (rel >= 0) & (rel < level)
    is_rel = ~unjudged & ~nonrel
    rel_so_far = _running_count(t, is_rel)[is_rel]
    nonrel_so_far = _running_count(t, nonrel)[is_rel]
    pool_so_far = _running_count(t, unjudged)[is_rel]
    fj = pos[is_rel].astype(np.float64)
    safe = np.where(fj > 0, fj, 1.0)
    r1 = (rel_so_far - 1).astype(np.float64)
    term = 1.0 / (safe + 1.0) + (safe / (safe + 1.0)) * (
        (rel_so_far - 1 + nonrel_so_far + pool_so_far) / safe) * (
        (r1 + _INFAP_EPSILON) / (r1 + nonrel_so_far + 2 * _INFAP_EPSILON))
    term = np.where(fj > 0, term, 1.0)
    return _safe_div(j.bincount(t[is_rel], term), j.num_rel(level))


TREC_KERNELS["InfAP"] = inf_ap
ALL_KERNELS["InfAP"] = inf_ap


# The measures beyond trec_eval (gdeval, compat, ndeval) keep their kernels apart.
from rankproof.measures._kernels_beyond import BEYOND_KERNELS  # noqa: E402

ALL_KERNELS.update(BEYOND_KERNELS)
