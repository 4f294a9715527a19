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

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from rankproof._errors import InputError
from rankproof.data import Order, Qrels, Run, SubtopicQrels, as_qrels
from rankproof.measures._distributed import (
    PartitionResult,
    TopicSlices,
    combine_partitions,
    evaluate_partition,
)
from rankproof.measures._evaluate import check_options, resolve_measures
from rankproof.measures._measure import Measure
from rankproof.measures._perquery import PerQuery, TopicPolicy


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
    slices = TopicSlices(qrels)

    def evaluated() -> Iterator[PartitionResult]:
        # One partition at a time: each is evaluated and dropped before the next is read
        # (`evaluate_partition`, the same step a worker runs on a byte range).
        for part in partitions:
            yield evaluate_partition(qrels, part, ms, rel_level=rel_level, order=order,
                                     slices=slices)
            del part

    return combine_partitions(qrels, evaluated(), ms, rel_level=rel_level, topics=topics,
                              order=order, slices=slices)
