"""`evaluate`: a run and qrels in, a `PerQuery` out — vectorised end to end.

Steps, none of which loops over topics in Python:

1. map run query ids onto qrels topics (integer codes);
2. rank the run as trec_eval does (usually a linear check, no sort);
3. join: find the run rows whose docid the qrels judge for that topic — a
   hash probe of every run docid against the (small) set of judged docids,
   then an integer search among the few hits;
4. hand the judged rows, sorted by (topic, rank), to one kernel per measure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rankproof._errors import InputError
from rankproof.data import (
    Order,
    Qrels,
    Run,
    arrow_indices,
    as_qrels,
    as_run,
    ranked_order,
    to_numpy,
    to_numpy_filled,
)
from rankproof.measures._kernels import KERNELS, Judged
from rankproof.measures._measure import Measure, parse_many
from rankproof.measures._perquery import PerQuery, TopicPolicy

DEFAULT_MEASURES: tuple[str, ...] = ("nDCG@10", "RR@10", "AP", "R@100", "P@10")


def resolve_measures(
    measures: Iterable[str | Measure] | str | Measure | None,
) -> tuple[Measure, ...]:
    """Parse measure spellings into unique Measures, keeping the given order.

    Each spelling goes through `parse_many`, so trec_eval lists (``P.5,10``),
    bare cutoff families (``P``) and named sets (``official``, ``all_trec``)
    expand to their members; a measure named twice (directly or through a
    set) is kept once, at its first position. None means `DEFAULT_MEASURES`.
    """
    if measures is None:
        measures = DEFAULT_MEASURES
    if isinstance(measures, str | Measure):
        measures = [measures]
    out: list[Measure] = []
    for spec in measures:
        for m in parse_many(spec):
            if m not in out:
                out.append(m)
    if not out:
        raise InputError("no measures given")
    return tuple(out)


def _judged_doc_index(
    qrels: Qrels,
) -> tuple[pa.Array, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Judged docid vocabulary, and the sorted (topic, doc) keys with their labels."""
    encoded = pc.dictionary_encode(qrels.docids)
    vocab = encoded.dictionary
    doc_codes = to_numpy(encoded.indices).astype(np.int64)
    keys = qrels.qid_codes.astype(np.int64) * len(vocab) + doc_codes
    order = np.argsort(keys, kind="stable")
    return vocab, keys[order], qrels.rels[order]


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, int]] | Any,
    run: Run | Mapping[str, Mapping[str, float]] | Any,
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    rel_level: int = 1,
    topics: TopicPolicy = "complete",
    order: Order = "score",
) -> PerQuery:
    """Evaluate ``run`` against ``qrels`` with trec_eval's semantics.

    ``topics="complete"`` (default, trec_eval ``-c``): every qrels topic counts,
    and a topic the run lacks scores 0. ``topics="intersection"`` mirrors
    trec_eval 9 without ``-c``: only topics in both. Run topics absent from the
    qrels are ignored either way; both lists are recorded in the result.
    ``rel_level`` is the minimum label counted as relevant (trec_eval ``-l``)
    for measures that do not set their own ``rel=``.

    Qrels come first, as in ranx and trec_eval. Besides `Qrels` and `Run`,
    plain ``{qid: {docid: label}}`` / ``{qid: {docid: score}}`` dicts and
    pandas DataFrames or Arrow tables are accepted (`rankproof.data.as_qrels`,
    `rankproof.data.as_run`); anything else is an `InputError`.
    """
    qrels = as_qrels(qrels)
    run = as_run(run)
    ms = resolve_measures(measures)
    if topics not in ("complete", "intersection"):
        raise InputError(f"topics must be 'complete' or 'intersection', got {topics!r}")
    if isinstance(rel_level, bool) or not isinstance(rel_level, int | np.integer):
        raise InputError(f"rel_level must be an integer, got {rel_level!r}")

    n_qrels_topics = len(qrels.qid_vocab)
    # 1. run query id -> qrels topic index (-1: not judged).
    tmap = to_numpy_filled(
        pc.index_in(run.qid_vocab, value_set=qrels.qid_vocab), -1
    ).astype(np.int64)
    present = np.zeros(n_qrels_topics, dtype=bool)
    present[tmap[tmap >= 0]] = True
    dropped = tuple(v for v, t in zip(run.qid_vocab.to_pylist(), tmap.tolist(), strict=True)
                    if t < 0)
    qrels_topics = qrels.qid_vocab.to_pylist()
    missing = tuple(q for q, p in zip(qrels_topics, present.tolist(), strict=True) if not p)

    # 2. ranking.
    ranking = ranked_order(run, order)

    # 3. join run rows to judgments.
    vocab, qkeys, qrels_sorted = _judged_doc_index(qrels)
    # A membership bitmap over the run's docids, then codes for the few hits
    # only: no index array the size of the run.
    hit_rows = np.flatnonzero(to_numpy(pc.is_in(run.docids, value_set=vocab)))
    hit_docs = to_numpy(
        pc.index_in(run.docids.take(arrow_indices(hit_rows)), value_set=vocab)
    ).astype(np.int64)
    hit_topic = tmap[run.qid_codes[hit_rows]]
    valid = hit_topic >= 0
    hit_rows, hit_docs, hit_topic = hit_rows[valid], hit_docs[valid], hit_topic[valid]
    keys = hit_topic * len(vocab) + hit_docs
    at = np.searchsorted(qkeys, keys)
    at_clipped = np.minimum(at, len(qkeys) - 1)
    matched = (at < len(qkeys)) & (qkeys[at_clipped] == keys)
    j_rows = hit_rows[matched]
    j_topic = hit_topic[matched]
    j_rel = qrels_sorted[at_clipped[matched]]
    j_pos = ranking.positions_at(ranking.slot_of_rows(j_rows))
    sort = np.lexsort((j_pos, j_topic))

    # Documents retrieved per run topic: each topic is one block of ranked
    # slots, so its block length (no pass over every row).
    block_rows = ranking.starts if ranking.rows is None else ranking.rows[ranking.starts]
    num_ret_all = np.zeros(len(run.qid_vocab), dtype=np.int64)
    num_ret_all[run.qid_codes[block_rows]] = np.diff(np.append(ranking.starts, ranking.n_slots))
    num_ret = np.zeros(n_qrels_topics, dtype=np.int64)
    judged_topics = tmap >= 0
    num_ret[tmap[judged_topics]] = num_ret_all[judged_topics]

    judged = Judged(
        n_topics=n_qrels_topics, num_ret=num_ret, topic=j_topic[sort], pos=j_pos[sort],
        rel=j_rel[sort], qrels_topic=qrels.qid_codes.astype(np.int64), qrels_rel=qrels.rels,
        default_level=int(rel_level),
    )
    values = np.empty((n_qrels_topics, len(ms)), dtype=np.float64)
    for i, m in enumerate(ms):
        values[:, i] = KERNELS[m.family](judged, m)

    if topics == "intersection":
        keep = present
        qids = tuple(q for q, p in zip(qrels_topics, present.tolist(), strict=True) if p)
        values = values[keep]
        zero_filled: tuple[str, ...] = ()
        not_evaluated = missing
    else:
        qids = tuple(qrels_topics)
        zero_filled = missing
        not_evaluated = ()
    notes = list(run.notes)
    if ranking.n_ties:
        notes.append(f"{ranking.n_ties} tied scores broken by docid (descending), as trec_eval")
    if run.dedupe:
        notes.append(f"run deduplicated ({run.dedupe}): {run.n_dropped_duplicates} rows dropped")
    if qrels.dedupe:
        notes.append(
            f"qrels deduplicated ({qrels.dedupe}): {qrels.n_dropped_duplicates} rows dropped"
        )
    return PerQuery(
        qids=qids, measures=ms, values=values, run_name=run.name, run_tag=run.tag,
        qrels_digest=None, rel_level=int(rel_level), topics=topics, order=order,
        zero_filled=zero_filled, dropped=dropped, not_evaluated=not_evaluated,
        notes=tuple(notes),
    )
