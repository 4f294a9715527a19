"""One run evaluated in pieces by many workers: `evaluate_partition` and `combine_partitions`.

Why two steps: `evaluate_partitions` evaluates partitions one after another in one
process; a run cut into byte ranges for several workers (`rankproof.data.topic_ranges`)
is evaluated where each range is read, and only the numbers travel back. So the work of
one partition — its judged topics' values and the tallies the run-level notes and
warnings need — is `evaluate_partition`, a picklable `PartitionResult` any worker can
return, and what depends on the whole run is `combine_partitions`, in the caller's
process. `evaluate_partitions` is the two of them in one loop, so the three paths (one
process, streamed, spread over workers) share every line that decides a number.

Exactly what `evaluate` gives on the whole run (see `evaluate_partitions` for why): the
values of the topics a partition holds depend only on that topic's documents and
judgments; the qrels topics no partition retrieved for are computed here with nothing
retrieved; the topic policy, ``zero_filled``, ``dropped``, the notes and the
rank-like-scores warning are put together from the tallies.

A partition may be evaluated against the whole qrels or against any qrels that hold at
least its own topics' judgments (a worker's slice): the result names its topics by id,
and `combine_partitions` places them in the combining qrels' order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
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


class TopicSlices:
    """The qrels' rows grouped by topic, so that a subset of topics is cut out in
    time proportional to its own judgments (built once per qrels, reused per partition)."""

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


@dataclass(frozen=True)
class PartitionResult:
    """One partition of whole topics, evaluated (`evaluate_partition`): what
    `combine_partitions` needs of it, and nothing of the run itself.

    ``judged`` names the partition's topics that have judgments, in the row order of
    ``values`` (one column per measure); ``unjudged`` its other topics, first-seen order.
    The rest are the tallies behind the notes and the warning (summed over partitions)
    and the run's identity as this partition read it."""

    judged: pa.Array
    values: npt.NDArray[np.float64]
    measures: tuple[Measure, ...]
    unjudged: tuple[str, ...] = ()
    name: str = "run"
    tag: str | None = None
    source: str | None = None
    dedupe: str | None = None
    notes: tuple[str, ...] = ()
    rows: int = 0
    deduplicated: int = 0
    ties: int = 0
    rank_problems: tuple[int, int] = (0, 0)
    """Queries and rows whose rank column is no ranking (`rank_column_problems`)."""
    rank_like: tuple[bool, int, int] = (True, 0, 0)
    """`rank_like_counts`: every score an integer, topics rising, topics varying."""
    order: str = field(default="score")

    def __post_init__(self) -> None:
        if not isinstance(self.judged, pa.Array) or not pa.types.is_string(self.judged.type):
            raise InputError("PartitionResult.judged must be an Arrow string array",
                             field="judged")
        shape = (len(self.judged), len(self.measures))
        if not isinstance(self.values, np.ndarray) or self.values.shape != shape:
            raise InputError(f"PartitionResult.values must have shape {shape} (judged topics "
                             f"x measures), got {getattr(self.values, 'shape', None)}",
                             field="values")
        if self.rows < 0 or self.deduplicated < 0 or self.ties < 0:
            raise InputError("PartitionResult counts must be >= 0", field="rows")


def evaluate_partition(
    qrels: Qrels | Mapping[str, Mapping[str, int]] | Any,
    run: Run,
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    rel_level: int = 1,
    order: Order = "score",
    slices: TopicSlices | None = None,
) -> PartitionResult:
    """Evaluate one partition of whole topics (a worker's job): its judged topics'
    values and its tallies, for `combine_partitions`.

    ``qrels`` must hold the judgments of every topic of ``run`` that has any (the whole
    qrels, or a slice of them); ``slices`` reuses a `TopicSlices` of the same qrels
    across partitions. Topics of the qrels the run does not hold are left to
    `combine_partitions`.

    >>> from rankproof.data import Run
    >>> part = evaluate_partition({"q1": {"d1": 1}}, Run.from_dict({"q1": {"d1": 2.0}}), "P@1")
    >>> part.judged.to_pylist(), part.values.tolist()
    (['q1'], [[1.0]])
    """
    q = as_qrels(qrels)
    if isinstance(q, SubtopicQrels):
        raise InputError("subtopic qrels (diversity measures) are evaluated in memory only; "
                         "evaluate the run whole")
    ms = resolve_measures(measures)
    check_options("intersection", rel_level)
    cut = slices if slices is not None and slices.qrels is q else TopicSlices(q)
    index = cut.index(run.qid_vocab)
    judged = np.sort(index[index >= 0])
    unjudged = tuple(str(t) for t in run.qid_vocab.take(
        arrow_indices(np.flatnonzero(index < 0))).to_pylist())
    if len(judged):
        pq = evaluate(cut.subset(judged), run, ms, rel_level=rel_level,
                      topics="intersection", order=order)
        values = np.asarray(pq.values, dtype=np.float64)
    else:
        values = np.zeros((0, len(ms)), dtype=np.float64)
    problems = rank_column_problems(run) if order != "rank" else (0, 0)
    like = rank_like_counts(run) if order != "rank" else (True, 0, 0)
    return PartitionResult(
        judged=q.qid_vocab.take(arrow_indices(judged)).cast(pa.string()), values=values,
        measures=ms, unjudged=unjudged, name=run.name, tag=run.tag,
        source=None if run.source is None else str(run.source), dedupe=run.dedupe,
        notes=tuple(run.notes), rows=len(run), deduplicated=run.n_dropped_duplicates,
        ties=ranked_order(run, order).n_ties, rank_problems=(int(problems[0]),
                                                             int(problems[1])),
        rank_like=(bool(like[0]), int(like[1]), int(like[2])), order=str(order))


def _no_run_qid(taken: pa.Array) -> str:
    """A query id that no qrels topic (``taken``) has, for a one-row stand-in run."""
    qid = "\x01rankproof-no-topic"
    while pc.is_in(pa.array([qid]), value_set=taken)[0].as_py():
        qid += "\x01"
    return qid


def combine_partitions(
    qrels: Qrels | Mapping[str, Mapping[str, int]] | Any,
    parts: Iterable[PartitionResult],
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    rel_level: int = 1,
    topics: TopicPolicy = "complete",
    order: Order = "score",
    name: str | None = None,
    slices: TopicSlices | None = None,
) -> PerQuery:
    """The `PerQuery` of a run from its partitions' results, in partition (file) order:
    what `evaluate` gives on the whole run (see the module docstring).

    The partitions must hold disjoint sets of whole topics: a topic met in two is
    refused (`InputError`). ``name`` names the run (default: the first partition's);
    ``measures`` must be the partitions' own. Only one result's arrays are needed at a
    time: ``parts`` may be a generator.

    >>> from rankproof.data import Run
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d9": 1}}
    >>> parts = [evaluate_partition(qrels, Run.from_dict({"q1": {"d1": 2.0}}), "P@1"),
    ...          evaluate_partition(qrels, Run.from_dict({"q2": {"d2": 1.0}}), "P@1")]
    >>> combine_partitions(qrels, parts, "P@1").mean()
    {'P@1': 0.5}
    """
    q = as_qrels(qrels)
    if isinstance(q, SubtopicQrels):
        raise InputError("subtopic qrels (diversity measures) are evaluated in memory only; "
                         "evaluate the run whole")
    ms = resolve_measures(measures)
    check_options(topics, rel_level)
    cut = slices if slices is not None and slices.qrels is q else TopicSlices(q)
    n_topics = cut.n_topics
    values = np.zeros((n_topics, len(ms)), dtype=np.float64)
    # Per topic, only arrays: ``present`` says which qrels topics a partition held (so a
    # judged topic in two partitions is found there); the run's unjudged topics, few in
    # any real run, are the one Python collection.
    present = np.zeros(n_topics, dtype=bool)
    dropped: list[str] = []
    unjudged: set[str] = set()
    first: PartitionResult | None = None
    notes: tuple[str, ...] = ()
    n_ties = n_rows = n_deduped = 0
    bad_queries = bad_rows = 0
    all_integer, n_rising, n_varied = True, 0, 0
    for part in parts:
        if part.measures != ms:
            raise InputError(f"a partition was evaluated with {[str(m) for m in part.measures]}"
                             f", not {[str(m) for m in ms]}", path=part.source,
                             field="measures")
        first = part if first is None else first
        index = cut.index(part.judged)
        if (index < 0).any():
            stray = part.judged[int(np.flatnonzero(index < 0)[0])].as_py()
            raise InputError(f"topic {stray!r} of a partition is not a topic of these qrels",
                             path=part.source, field="qid")
        again = ([cut.qrels.qid_vocab[int(i)].as_py() for i in index[present[index]]]
                 + sorted(unjudged.intersection(part.unjudged)))
        if again:
            raise InputError(f"topic {sorted(again)[0]!r} is in two partitions: partitions "
                             "must hold disjoint sets of whole topics", path=part.source,
                             field="qid")
        unjudged.update(part.unjudged)
        dropped.extend(part.unjudged)
        notes = notes or part.notes
        n_rows += part.rows
        n_deduped += part.deduplicated
        n_ties += part.ties
        bad_queries += part.rank_problems[0]
        bad_rows += part.rank_problems[1]
        all_integer &= part.rank_like[0]
        n_rising += part.rank_like[1]
        n_varied += part.rank_like[2]
        if len(index):
            values[index] = part.values
            present[index] = True
    if first is None:
        raise InputError("the run has no partitions (no rows)")
    run_name = first.name if name is None else name
    if n_rows and not present.any() and topics == "complete":
        # No run topic is judged: the run's topics are exactly ``dropped``.
        raise disjoint_error(run_name, dropped, first.source, cut.topics)
    missing = np.flatnonzero(~present)
    all_topics = cut.topics
    if len(missing) and topics != "intersection":
        stand_in = Run.from_columns(pa.array([_no_run_qid(q.qid_vocab)]),
                                    pa.array(["-"]), np.zeros(1), name=run_name)
        pq = evaluate(cut.subset(missing), stand_in, ms, rel_level=rel_level,
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
    out_notes = evaluation_notes(notes, n_ties, first.dedupe, n_deduped, q,
                                 (bad_queries, bad_rows))
    warning = None if order == "rank" else rank_like_warning(all_integer, n_rising, n_varied)
    return PerQuery(
        qids=qids, measures=ms, values=values, run_name=run_name, run_tag=first.tag,
        qrels_digest=None, rel_level=int(rel_level), topics=topics, order=order,
        zero_filled=zero_filled, dropped=tuple(dropped), not_evaluated=not_evaluated,
        notes=tuple(out_notes), warnings=() if warning is None else (warning,),
    )
