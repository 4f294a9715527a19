"""trec_eval's preference measures (``-R prefs``/``qrels_prefs``) and judgment-group
measures (``-R qrels_jg``), as trec_eval 10 computes them.

**Preferences** (`prefs_values`). For each topic, the judged documents are
numbered: first the retrieved ones in rank order (score descending, ties by
docid *ascending*, as trec_eval's ``form_prefs_counts`` sorts; ``-M`` keeps
the first N), then the others in docid order. Each judgment group (JG) then
states preferences "A before B": with one subgroup, between every pair of
documents with different levels (equivalence classes); with several
subgroups, each subgroup's pairs plus their transitive closure (a
contradiction within a group is an input error). Each preference is
*fulfilled* (A ranked above B, or A retrieved and B not), *possible* among
retrieved documents, *implied* (only one of A, B retrieved) or neither
retrieved. The 14 measures combine those counts: ``prefs_simp`` (all
fulfilled / all possible), ``prefs_pair`` (averaged per document pair over
groups), ``prefs_avgjg`` (averaged per group), ``prefs_avgjg_Rnonrel`` (as
if each group judged exactly R non-relevant documents); ``_ret`` counts only
pairs both retrieved, ``_imp`` drops pairs neither retrieved; the three
``prefs_num_prefs_*`` are counts (summed over topics).

Every quirk of trec_eval's code is kept, because the drop-in must print its
numbers: ``prefs_avgjg_Rnonrel`` compares the non-relevant class with its
own first R members, its ``_ret`` twin scales by R counted over all judged
documents, an average whose sum is not positive (or not a number) is 0.

**Judgment groups** (`jg_values`): ``map_avgjg``, ``P_avgjg`` and
``Rprec_mult_avgjg`` are ``map``, ``P`` and ``Rprec_mult`` evaluated against
each group's qrels by the ordinary engine, then averaged over the groups that
judge the topic.

The inputs are tiny (a few hundred judgments per topic), so both loop per
topic (the issue allows it); the pair counting itself is vectorised.

Reference: trec_eval 10 (NIST; Chris Buckley's preference measures, 2008),
``form_prefs_counts.c``, ``m_prefs_*.c``, ``form_res_rels_jg.c``; the formats
are described in `rankproof.data.read_prefs`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError
from rankproof.data import PrefJudgment, Prefs, QrelsJG, Run
from rankproof.measures._evaluate import evaluate
from rankproof.measures._measure import Measure
from rankproof.measures._perquery import PerQuery
from rankproof.measures._sets import TREC_JUDGMENT_SETS

PREFS_MEASURES: tuple[str, ...] = TREC_JUDGMENT_SETS["all_prefs"]
"""trec_eval's preference measures, in its print order (the first three are counts)."""

JG_MEASURES: Mapping[str, str] = {"map_avgjg": "map", "P_avgjg": "P",
                                  "Rprec_mult_avgjg": "Rprec_mult"}
"""trec_eval's judgment-group measures -> the trec_eval measure each averages over groups."""

_IntArray = npt.NDArray[np.int64]


@dataclass
class _Group:
    """One judgment group of a topic, with trec_eval's counts."""

    ecs: list[tuple[float, _IntArray]] | None = None
    """Equivalence classes (level, ranks ascending), highest level first; None: a
    preference array."""
    pa: npt.NDArray[np.bool_] | None = None
    rel_array: npt.NDArray[np.float64] | None = None
    ful_ret: int = 0
    poss_ret: int = 0
    ful_imp: int = 0
    poss_imp: int = 0
    notoccur: int = 0
    num_rel: int = 0
    num_rel_ret: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0


def _ranked(docs: Mapping[str, float], max_retrieved: int | None) -> list[str]:
    """The topic's documents in form_prefs_counts' order (score desc, docid asc), cut by -M."""
    order = sorted(docs, key=lambda d: (-docs[d], d.encode()))
    return order if max_retrieved is None else order[:max(max_retrieved, 0)]


def _ec_group(entries: list[tuple[float, int]], counts: _IntArray, njr: int,
              qid: str, jg: str) -> _Group:
    classes: list[tuple[float, list[int]]] = []
    for level, rank in entries:  # sorted by level descending, then rank
        if not classes or classes[-1][0] != level:
            classes.append((level, []))
        classes[-1][1].append(rank)
    ecs = [(level, np.asarray(ranks, dtype=np.int64)) for level, ranks in classes]
    g = _Group(ecs=ecs)
    for a, (level, r1) in enumerate(ecs):
        ret = int((r1 < njr).sum())
        if level > 0.0:
            g.num_rel_ret += ret
            g.num_rel += len(r1)
        else:
            g.num_nonrel_ret += ret
            g.num_nonrel += len(r1)
        for _, r2 in ecs[a + 1:]:
            x, y = np.meshgrid(r1, r2, indexing="ij")
            if (x == y).any():
                raise InputError(f"topic {qid!r}, judgment group {jg!r}: a document has two "
                                 "different levels in the same subgroup")
            np.add.at(counts, (x.ravel(), y.ravel()), 1)
            ful = x < y
            g.ful_ret += int((ful & (y < njr)).sum())
            g.ful_imp += int((ful & (y >= njr) & (x < njr)).sum())
            g.notoccur += int((ful & (x >= njr)).sum())
            g.poss_ret += int((~ful & (x < njr)).sum())
            g.poss_imp += int((~ful & (x >= njr) & (y < njr)).sum())
            g.notoccur += int((~ful & (x >= njr) & (y >= njr)).sum())
    g.poss_ret += g.ful_ret
    g.poss_imp += g.ful_imp
    return g


def _pa_group(entries: list[tuple[str, float, int]], counts: _IntArray, njr: int, nj: int,
              qid: str, jg: str, docid_of: Mapping[int, str]) -> _Group:
    pa = np.zeros((nj, nj), dtype=bool)
    rel_array = np.full(nj, -1.0)
    for i, (jsg, level, rank) in enumerate(entries):  # sorted by jsg, level desc, rank
        known = rel_array[rank]
        if (known > 0.0 and level == 0.0) or (known == 0.0 and level > 0.0):
            raise InputError(f"topic {qid!r}, judgment group {jg!r}: document "
                             f"{docid_of[rank]!r} has both level 0 and a non-zero level")
        rel_array[rank] = level
        for jsg2, level2, rank2 in entries[i + 1:]:
            if jsg2 != jsg:
                break
            if level2 != level:
                pa[rank, rank2] = True
    np.fill_diagonal(pa, True)
    for k in range(nj):  # transitive closure (trec_eval multiplies until no change)
        pa |= np.outer(pa[:, k], pa[k, :])
    np.fill_diagonal(pa, False)
    if (pa & pa.T).any():
        i, j = (int(v[0]) for v in np.nonzero(pa & pa.T))
        raise InputError(f"topic {qid!r}, judgment group {jg!r}: contradictory preferences "
                         f"between {docid_of[i]!r} and {docid_of[j]!r}")
    counts += pa
    a = pa.astype(np.int64)
    g = _Group(pa=pa, rel_array=rel_array)
    g.ful_ret = int(np.triu(a[:njr, :njr], 1).sum())
    g.poss_ret = int(a[:njr, :njr].sum())
    g.ful_imp = int(a[:njr, njr:].sum())
    g.poss_imp = g.ful_imp + int(a[njr:, :njr].sum())
    g.notoccur = int(a[njr:, njr:].sum())
    g.num_rel_ret = int((rel_array[:njr] > 0.0).sum())
    g.num_nonrel_ret = int((rel_array[:njr] == 0.0).sum())
    g.num_rel = int((rel_array > 0.0).sum())
    g.num_nonrel = int((rel_array == 0.0).sum())
    return g


def _groups(judgments: Sequence[PrefJudgment], ranked: list[str], qid: str
            ) -> tuple[list[_Group], _IntArray, int]:
    judged = {j.docid for j in judgments}
    retrieved = [d for d in ranked if d in judged]
    rank = {d: i for i, d in enumerate(retrieved)}
    njr = len(retrieved)
    for d in sorted(judged - set(rank), key=str.encode):
        rank[d] = len(rank)
    nj = len(rank)
    docid_of = {r: d for d, r in rank.items()}
    entries = sorted(((j.jg, j.jsg, j.level, rank[j.docid]) for j in judgments),
                     key=lambda e: (e[0].encode(), e[1].encode(), -e[2], e[3]))
    counts = np.zeros((nj, nj), dtype=np.int64)
    groups: list[_Group] = []
    start = 0
    while start < len(entries):
        jg = entries[start][0]
        stop = start
        while stop < len(entries) and entries[stop][0] == jg:
            stop += 1
        part = entries[start:stop]
        if len({e[1] for e in part}) > 1:
            groups.append(_pa_group([(e[1], e[2], e[3]) for e in part], counts, njr, nj,
                                    qid, jg, docid_of))
        else:
            groups.append(_ec_group([(e[2], e[3]) for e in part], counts, njr, qid, jg))
        start = stop
    return groups, counts, njr


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def _avg(parts: list[float], n: int) -> float:
    total = math.fsum(parts) if not any(math.isnan(p) for p in parts) else math.nan
    return total / n if total > 0.0 else 0.0


def _pairs(counts: _IntArray, njr: int) -> tuple[float, int, float, int, int]:
    """(sum, pairs) over retrieved×retrieved and retrieved×not pairs, and the
    not×not pairs: each pair scores the share of its preferences it fulfils."""
    both = counts + counts.T
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(both > 0, counts / np.maximum(both, 1), 0.0)
    upper = np.triu(np.ones_like(both, dtype=bool), 1)
    rr = (both[:njr, :njr] > 0) & upper[:njr, :njr]
    ru = both[:njr, njr:] > 0
    uu = (both[njr:, njr:] > 0) & upper[njr:, njr:]
    return (float(share[:njr, :njr][rr].sum()), int(rr.sum()),
            float(share[:njr, njr:][ru].sum()), int(ru.sum()), int(uu.sum()))


def _rnonrel(g: _Group, njr: int, ret_only: bool) -> float:
    if ret_only:
        r, n = g.num_rel_ret, g.num_nonrel_ret
        if r >= n:
            return _ratio(g.ful_ret + g.num_rel_ret * (r - n), g.poss_ret + g.num_rel * (r - n))
    else:
        r, n = g.num_rel, g.num_nonrel
        if r >= n:
            return _ratio(g.ful_ret + g.ful_imp + g.num_rel_ret * (r - n),
                          g.poss_ret + g.poss_imp + g.notoccur + g.num_rel * (r - n))
    ful, poss = (_recalc_ec if g.ecs is not None else _recalc_pa)(g, njr, ret_only)
    return _ratio(ful, poss)


def _recalc_ec(g: _Group, njr: int, ret_only: bool) -> tuple[int, int]:
    assert g.ecs is not None
    ecs = [r[r < njr] if ret_only else r for _, r in g.ecs]
    new = g.ecs[-1][1][:g.num_rel_ret if ret_only else g.num_rel]
    if ret_only:
        new = new[new < njr]
    ful = poss = 0

    def add(r1: _IntArray, r2: _IntArray) -> None:
        nonlocal ful, poss
        x, y = np.meshgrid(r1, r2, indexing="ij")
        hit = (x < y) if ret_only else (x < y) & (x < njr)
        ful += int(hit.sum())
        poss += int((~hit).sum())

    for a in range(len(ecs)):
        for b in range(a + 1, len(ecs) - 1):
            add(ecs[a], ecs[b])
    for a in range(len(ecs)):
        add(ecs[a], new)
    return ful, poss + ful


def _recalc_pa(g: _Group, njr: int, ret_only: bool) -> tuple[int, int]:
    assert g.pa is not None and g.rel_array is not None
    nj = len(g.rel_array)
    zero = g.rel_array == 0.0
    limit = njr if ret_only else nj
    seen = np.flatnonzero(zero[:limit])
    first = int(seen[g.num_rel]) if len(seen) > g.num_rel else limit
    keep = ~((np.arange(nj) >= first) & zero)
    a = (g.pa & keep[:, None] & keep[None, :]).astype(np.int64)
    if ret_only:
        return int(np.triu(a[:njr, :njr], 1).sum()), int(a[:njr, :njr].sum())
    return (int(np.triu(a[:njr, :njr], 1).sum() + a[:njr, njr:].sum()), int(a.sum()))


def prefs_topic(judgments: Sequence[PrefJudgment], ranked: list[str],
                qid: str = "") -> dict[str, float]:
    """The 14 preference measures of one topic: its judgments and the run's ranking."""
    groups, counts, njr = _groups(judgments, ranked, qid)
    n = len(groups)
    ful_ret = sum(g.ful_ret for g in groups)
    ful_imp = sum(g.ful_imp for g in groups)
    poss_ret = sum(g.poss_ret for g in groups)
    poss_imp = sum(g.poss_imp for g in groups)
    notoccur = sum(g.notoccur for g in groups)
    s_rr, n_rr, s_ru, n_ru, n_uu = _pairs(counts, njr)

    def share(ful: float, poss: float) -> float:
        return ful / poss if poss else 0.0

    return {
        "prefs_num_prefs_poss": float(poss_ret + poss_imp + notoccur),
        "prefs_num_prefs_ful": float(ful_ret + ful_imp),
        "prefs_num_prefs_ful_ret": float(ful_ret),
        "prefs_simp": share(ful_ret + ful_imp, poss_ret + poss_imp + notoccur),
        "prefs_pair": share(s_rr + s_ru, n_rr + n_ru + n_uu),
        "prefs_avgjg": _avg([share(g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp + g.notoccur)
                             for g in groups], n),
        "prefs_avgjg_Rnonrel": _avg([_rnonrel(g, njr, False) for g in groups], n),
        "prefs_simp_ret": share(ful_ret, poss_ret),
        "prefs_pair_ret": share(s_rr, n_rr),
        "prefs_avgjg_ret": _avg([share(g.ful_ret, g.poss_ret) for g in groups], n),
        "prefs_avgjg_Rnonrel_ret": _avg([_rnonrel(g, njr, True) for g in groups], n),
        "prefs_simp_imp": share(ful_ret + ful_imp, poss_ret + poss_imp),
        "prefs_pair_imp": share(s_rr + s_ru, n_rr + n_ru),
        "prefs_avgjg_imp": _avg([share(g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp)
                                 for g in groups], n),
    }


def prefs_values(prefs: Prefs, run: Run | None, topics: Sequence[str], *,
                 max_retrieved: int | None = None) -> dict[str, dict[str, float]]:
    """topic -> the 14 preference measures, for each of ``topics`` (prefs topics;
    one the run lacks is evaluated with nothing retrieved, as trec_eval ``-c`` does)."""
    docs = run.to_dict() if run is not None else {}
    return {q: prefs_topic(prefs.topics[q], _ranked(docs.get(q, {}), max_retrieved), q)
            for q in topics}


def jg_values(groups: QrelsJG, run: Run, measures: Sequence[Measure], *, rel_level: int = 1,
              max_retrieved: int | None = None, judged_only: bool = False) -> PerQuery:
    """``measures`` evaluated against each judgment group, averaged over the groups
    that judge each topic (trec_eval's ``*_avgjg``). Every judged topic is a row."""
    from rankproof.measures._treceval import trec_eval_run

    qids = groups.qids
    where = {q: i for i, q in enumerate(qids)}
    total = np.zeros((len(qids), len(measures)))
    seen = np.zeros(len(qids))
    for qrels in groups.groups.values():
        kept = trec_eval_run(run, qrels, max_retrieved=max_retrieved, judged_only=judged_only)
        target = kept if kept is not None else _empty_run(run, qids)
        pq = evaluate(qrels, target, measures, rel_level=rel_level,
                      topics="complete-allow-disjoint")
        rows = [where[q] for q in pq.qids]
        total[rows] += pq.values
        seen[rows] += 1
    return PerQuery(qids=tuple(qids), measures=tuple(measures),
                    values=total / np.maximum(seen, 1)[:, None], run_name=run.name,
                    run_tag=run.tag, rel_level=rel_level, topics="complete")


def _empty_run(run: Run, qids: Sequence[str]) -> Run:
    qid = "rankproof-no-topic"
    while qid in qids:
        qid += "-"
    return Run.from_columns([qid], ["none"], [0.0], name=run.name, tag=run.tag)
