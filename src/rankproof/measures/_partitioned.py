"""`evaluate_partitions`: a run evaluated one partition of whole topics at a time.

Why it gives exactly what `evaluate` gives on the whole run: every measure
of the registry's retrieval families is computed topic by topic from that
topic's ranked documents and judgments (the kernels reduce per topic with
segment operations, in an order within the topic that does not depend on
the other topics), and the run-level numbers — ``GMAP``'s geometric mean,
the sums of ``NumRet`` — are derived from the per-topic matrix afterwards,
by `PerQuery.aggregate`. So each partition is evaluated against the qrels
restricted to its topics, its rows are placed at those topics' positions,
and what depends on the whole run is put together here, as `evaluate` does:

* the topic policy: qrels topics the run never retrieved for are computed
  with nothing retrieved (zero-filled and listed in ``zero_filled``), run
  topics absent from the qrels are listed in ``dropped`` (first-seen order),
  a run sharing no topic with the qrels is refused under ``"complete"``;
* the notes (ties broken, rows deduplicated: counts summed over partitions)
  and the rank-like-scores warning (its tallies summed: `rank_like_counts`).

The partitions must hold disjoint sets of whole topics (`rankproof.data.
RunPartitions` guarantees it and refuses a run that is not grouped by topic);
a topic met in two partitions is refused here too.
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
    SubtopicQrels,
    arrow_indices,
    as_qrels,
    rank_column_problems,
    ranked_order,
    to_numpy_filled,
)
from rankproof.measures._evaluate import (
    check_options,
    disjoint_error,
    evaluate,
    evaluation_notes,
    rank_like_counts,
    rank_like_warning,
    resolve_measures,
)
from rankproof.measures._measure import Measure
from rankproof.measures._perquery import PerQuery, TopicPolicy


class _TopicSlices:
    """The qrels' rows grouped by topic, so that a subset of topics is cut out in
    time proportional to its own judgments."""

    def __init__(self, qrels: Qrels) -> None:
        self.qrels = qrels
        self.n_topics = len(qrels.qid_vocab)
        codes = qrels.qid_codes.astype(np.int64)
        self.rows = np.argsort(codes, kind="stable")
        self.bounds = np.searchsorted(codes[self.rows], np.arange(self.n_topics + 1))

    def index(self, vocab: pa.Array) -> npt.NDArray[np.int64]:
        """The qrels topic index of each id of ``vocab`` (-1: not a qrels topic), found by
        Arrow: no Python dict of every topic (about 130 MiB at a million topics)."""
        return to_numpy_filled(pc.index_in(vocab, value_set=self.qrels.qid_vocab),
                               -1).astype(np.int64)

    @property
    def topics(self) -> list[str]:
        """Every qrels topic id (made when the result is, not held while streaming)."""
        return list(self.qrels.qid_vocab.to_pylist())

    def subset(self, topics: npt.NDArray[np.int64]) -> Qrels:
        """The qrels of ``topics`` (ascending topic indices), rows in their original
        order within each topic, topic order kept (byte order)."""
        q = self.qrels
        starts, ends = self.bounds[topics], self.bounds[topics + 1]
        lengths = ends - starts
        rows = self.rows[np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
                         + np.arange(int(lengths.sum()))]
        codes = np.repeat(np.arange(len(topics), dtype=np.int32), lengths)
        return Qrels(qid_codes=codes, qid_vocab=q.qid_vocab.take(arrow_indices(topics)),
                     docids=q.docids.take(arrow_indices(rows)), rels=q.rels[rows],
                     source=q.source)


def _no_run_qid(taken: pa.Array) -> str:
    """A query id that no qrels topic (``taken``) has, for a one-row stand-in run."""
    qid = "\x01rankproof-no-topic"
    while pc.is_in(pa.array([qid]), value_set=taken)[0].as_py():
        qid += "\x01"
    return qid


def evaluate_partitions(
    qrels: Qrels | Mapping[str, Mapping[str, int]] | Any,
    partitions: Iterable[Run],
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    rel_level: int = 1,
    topics: TopicPolicy = "complete",
    order: Order = "score",
) -> PerQuery:
    """Evaluate a run given as partitions of whole topics (see the module docstring).

    Same arguments and same result as `evaluate` on the run the partitions
    make up, per-query values, means, measure order and query order alike; the
    run's name, tag and source are the first partition's. Only one partition
    is held at a time: pass `rankproof.data.stream_run` (a `RunPartitions`) to
    evaluate a run larger than memory.

    >>> from rankproof.data import Run
    >>> parts = [Run.from_dict({"q1": {"d1": 2.0}}), Run.from_dict({"q2": {"d2": 1.0}})]
    >>> evaluate_partitions({"q1": {"d1": 1}, "q2": {"d9": 1}}, parts, "P@1").mean()
    {'P@1': 0.5}
    """
    qrels = as_qrels(qrels)
    if isinstance(qrels, SubtopicQrels):
        raise InputError("subtopic qrels (diversity measures) are evaluated in memory only; "
                         "evaluate the run whole")
    ms = resolve_measures(measures)
    check_options(topics, rel_level)
    slices = _TopicSlices(qrels)
    n_topics = slices.n_topics
    values = np.zeros((n_topics, len(ms)), dtype=np.float64)
    # Per topic, only arrays: ``present`` says which qrels topics a partition held (so a
    # judged topic in two partitions is found there); the run's unjudged topics, few in
    # any real run, are the one Python collection.
    present = np.zeros(n_topics, dtype=bool)
    dropped: list[str] = []
    unjudged: set[str] = set()
    first: Run | None = None
    notes: tuple[str, ...] = ()
    n_ties = n_rows = n_deduped = 0
    bad_queries = bad_rows = 0
    all_integer, n_rising, n_varied = True, 0, 0
    for part in partitions:
        first = part if first is None else first
        index = slices.index(part.qid_vocab)
        judged = np.sort(index[index >= 0])
        new_unjudged = [str(t) for t in part.qid_vocab.take(
            arrow_indices(np.flatnonzero(index < 0))).to_pylist()]
        again = ([slices.qrels.qid_vocab[int(i)].as_py() for i in judged[present[judged]]]
                 + sorted(unjudged.intersection(new_unjudged)))
        if again:
            raise InputError(f"topic {sorted(again)[0]!r} is in two partitions: partitions "
                             "must hold disjoint sets of whole topics", path=part.source,
                             field="qid")
        unjudged.update(new_unjudged)
        dropped.extend(new_unjudged)
        notes = notes or part.notes
        n_rows += len(part)
        n_deduped += part.n_dropped_duplicates
        n_ties += ranked_order(part, order).n_ties
        if order != "rank":
            part_queries, part_rows = rank_column_problems(part)
            bad_queries += part_queries
            bad_rows += part_rows
            integer, rising, varied = rank_like_counts(part)
            all_integer &= integer
            n_rising += rising
            n_varied += varied
        if len(judged):
            pq = evaluate(slices.subset(judged), part, ms, rel_level=rel_level,
                          topics="intersection", order=order)
            values[judged] = pq.values
            present[judged] = True
        del part
    if first is None:
        raise InputError("the run has no partitions (no rows)")
    if n_rows and not present.any() and topics == "complete":
        # No run topic is judged: the run's topics are exactly ``dropped``.
        raise disjoint_error(first.name, dropped, first.source, slices.topics)
    missing = np.flatnonzero(~present)
    all_topics = slices.topics
    if len(missing) and topics != "intersection":
        stand_in = Run.from_columns(pa.array([_no_run_qid(qrels.qid_vocab)]),
                                    pa.array(["-"]), np.zeros(1), name=first.name)
        pq = evaluate(slices.subset(missing), stand_in, ms, rel_level=rel_level,
                      topics="complete-allow-disjoint")
        values[missing] = pq.values
    missing_topics = tuple(all_topics[i] for i in missing.tolist())
    if topics == "intersection":
        qids = tuple(all_topics[i] for i in np.flatnonzero(present).tolist())
        values = values[present]
        zero_filled: tuple[str, ...] = ()
        not_evaluated = missing_topics
    else:
        qids = tuple(all_topics)
        zero_filled = missing_topics
        not_evaluated = ()
    out_notes = evaluation_notes(notes, n_ties, first.dedupe, n_deduped, qrels,
                                 (bad_queries, bad_rows))
    warning = None if order == "rank" else rank_like_warning(all_integer, n_rising, n_varied)
    return PerQuery(
        qids=qids, measures=ms, values=values, run_name=first.name, run_tag=first.tag,
        qrels_digest=None, rel_level=int(rel_level), topics=topics, order=order,
        zero_filled=zero_filled, dropped=tuple(dropped), not_evaluated=not_evaluated,
        notes=tuple(out_notes), warnings=() if warning is None else (warning,),
    )
