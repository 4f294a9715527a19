"""`collect_evidence`: what a reader must see of some runs, in the order the measures saw it.

The ranking a report shows must be the ranking the measures scored, so each system's top
ids come from `rankproof.data.ranked_order` itself (score descending, ties by docid
descending; or the rank column). Only the rows that can reach a query's top ``k`` are
ranked, so collecting from 7,000 queries × 1,000 rows × 3 runs takes a fraction of a
second when the runs are stored best first, as run files are (see `_score_candidates`).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError
from rankproof._limits import shown
from rankproof.comparison._evidence import MAX_EVIDENCE_DEPTH, Evidence
from rankproof.data import Order, Qrels, Run, arrow_indices, as_qrels, as_run, ranked_order


def _score_candidates(run: Run, k: int) -> npt.NDArray[np.int64]:
    """Rows that may be among their query's first ``k`` by score: every row scoring at least
    the query's k-th best score (ties at that score included, for the tie rule to decide).

    Linear when the run is stored query by query, best first (nearly every run file);
    otherwise the k-th best score of each query comes from one partition of a padded
    matrix, or, for very uneven queries, from a sort.
    """
    q, s = run.qid_codes, run.scores
    n = len(s)
    boundary = q[1:] != q[:-1]
    grouped = int(boundary.sum()) + 1 == len(run.qid_vocab)
    rows: npt.NDArray[np.int64] | None = None
    if grouped and not bool(np.any((s[1:] > s[:-1]) & ~boundary)):
        ss = s
    else:
        rows = (np.arange(n, dtype=np.int64) if grouped
                else np.argsort(q, kind="stable").astype(np.int64))
        ss = s[rows]
        boundary = q[rows][1:] != q[rows][:-1]
    starts = np.concatenate(([0], np.flatnonzero(boundary) + 1)).astype(np.int64)
    lengths = np.diff(np.concatenate((starts, [n])))
    block = np.repeat(np.arange(len(starts)), lengths)
    if rows is None:
        threshold = ss[starts + np.minimum(k, lengths) - 1]
    elif len(starts) * int(lengths.max()) <= 4 * n + 1024:
        padded = np.full((len(starts), int(lengths.max())), -np.inf)
        padded[block, np.arange(n) - np.repeat(starts, lengths)] = ss
        kth = np.minimum(k, lengths) - 1
        width = min(k, padded.shape[1])
        best = -np.partition(-padded, width - 1, axis=1)[:, :width]
        best = -np.sort(-best, axis=1)
        threshold = best[np.arange(len(starts)), kth]
    else:
        order = np.lexsort((-ss, block))
        ss_sorted = ss[order]
        threshold = ss_sorted[starts + np.minimum(k, lengths) - 1]
    slots = np.flatnonzero(ss >= threshold[block])
    return slots if rows is None else rows[slots]


def _top_ids(run: Run, k: int, order: Order, topics: Sequence[str]) -> dict[str, list[str]]:
    """``{qid: first k ids}`` for every topic, in the order the measures rank ``run``.

    By score, only the candidates (`_score_candidates`) are ranked, by `ranked_order`
    itself: a row outside them is outranked by k rows of its query, so the first k of the
    candidates are the first k of the run, tie rule included. By rank, the whole run is
    ordered (and its rank column checked) as the measures order it.
    """
    found: dict[str, list[str]] = {}
    if len(run):
        if order == "score":
            cand = np.sort(_score_candidates(run, k))
            sub = dataclasses.replace(
                run, qid_codes=run.qid_codes[cand],
                docids=run.docids.take(arrow_indices(cand)), scores=run.scores[cand],
                ranks=None, locator=None)
        else:
            cand, sub = np.arange(len(run), dtype=np.int64), run
        ro = ranked_order(sub, order)
        ends = np.append(ro.starts[1:], ro.n_slots)
        # The first k slots of each query's block.
        slots = ro.starts[:, None] + np.arange(k, dtype=np.int64)[None, :]
        slots = slots[slots < ends[:, None]]
        rows = cand[slots if ro.rows is None else ro.rows[slots]]
        codes = run.qid_codes[rows]
        docids = run.docids.take(arrow_indices(rows)).to_pylist()
        vocab = run.topics
        cuts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
        bounds = [0, *cuts.tolist(), len(codes)]
        for lo, hi in itertools.pairwise(bounds):
            found[vocab[int(codes[lo])]] = docids[lo:hi]
    return {q: found.get(q, []) for q in topics}


def _gold_of(qrels: Qrels, rel_level: int, topics: Sequence[str]) -> dict[str, dict[str, int]]:
    keep = np.flatnonzero(qrels.rels >= rel_level)
    codes = qrels.qid_codes[keep]
    by_code = np.argsort(codes, kind="stable")
    rows = keep[by_code]
    codes = codes[by_code]
    docids = qrels.docids.take(arrow_indices(rows)).to_pylist()
    rels = qrels.rels[rows].tolist()
    vocab = qrels.topics
    found: dict[str, dict[str, int]] = {}
    cuts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    bounds = [0, *cuts.tolist(), len(codes)]
    for lo, hi in itertools.pairwise(bounds):
        if hi > lo:
            found[vocab[int(codes[lo])]] = dict(zip(docids[lo:hi], rels[lo:hi], strict=True))
    return {q: found.get(q, {}) for q in topics}


def _topic_list(topics: Iterable[str] | None, qrels: Qrels) -> list[str]:
    if topics is None:
        return qrels.topics
    if isinstance(topics, str):
        raise InputError("topics must be a list of query ids, not one string", field="topics")
    out = list(dict.fromkeys(topics))
    bad = [t for t in out if not isinstance(t, str)]
    if bad:
        raise InputError(f"topics must be query ids (strings), found {shown(bad[0], 60)}",
                         field="topics")
    return out


def collect_evidence(
    qrels: Qrels | Mapping[str, Mapping[str, int]] | Any,
    runs: Mapping[str, Run | Any],
    *,
    k: int = 10,
    queries: Mapping[str, str] | None = None,
    topics: Sequence[str] | None = None,
    rel_level: int = 1,
    order: Order = "score",
) -> Evidence:
    """What a reader needs to see of ``runs``: their first ``k`` ids per topic, the gold
    and the query text (`Evidence`; see the module docstring).

    ``runs`` maps each system's name, as the report's rows name it, to its run (anything
    `rankproof.data.as_run` reads). Each ranking is ordered exactly as the measures order
    it (`rankproof.data.ranked_order` with ``order``). ``topics`` defaults to the qrels'
    topics; a topic a run does not answer gets ``[]``, and run topics outside ``topics``
    are left out. ``gold`` holds the judgments with grade ≥ ``rel_level``; ``queries`` the
    given text of the topics that have one.
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_EVIDENCE_DEPTH:
        raise InputError(f"k must be an integer from 1 to {MAX_EVIDENCE_DEPTH:,}, got {k!r}",
                         field="k")
    if isinstance(rel_level, bool) or not isinstance(rel_level, int):
        raise InputError(f"rel_level must be an integer, got {rel_level!r}", field="rel_level")
    if order not in ("score", "rank"):
        raise InputError(f"order must be 'score' or 'rank', got {order!r}", field="order")
    if not isinstance(runs, Mapping):
        raise InputError(f"runs must be a mapping {{system: run}}, got {type(runs).__name__}",
                         field="runs")
    q = as_qrels(qrels)
    wanted = _topic_list(topics, q)
    texts: dict[str, str] = {}
    if queries is not None:
        if not isinstance(queries, Mapping):
            raise InputError("queries must be a mapping {qid: text}", field="queries")
        for t in wanted:
            text = queries.get(t)
            if text is not None:
                if not isinstance(text, str):
                    raise InputError(f"query {shown(t, 60)}: its text must be a string",
                                     field="queries")
                texts[t] = text
    top: dict[str, dict[str, list[str]]] = {}
    for name, run in runs.items():
        if not isinstance(name, str):
            raise InputError(f"system names must be strings, got {name!r}", field="runs")
        top[name] = _top_ids(as_run(run, name=name) if not isinstance(run, Run) else run,
                             k, order, wanted)
    return Evidence(k=k, queries=texts, gold=_gold_of(q, rel_level, wanted), top=top)
