"""One large run spread over several workers: topic-aligned byte ranges, combined here.

``measure`` and ``compare`` hand each run file to the engine as one task
(`rankproof.jobs._run_files`). With more workers than runs, one large TREC run would still
keep a single worker busy while the others wait, so the run is cut into byte ranges of
whole topics (`rankproof.data.topic_ranges`: a few kilobytes read around each cut) and
each range is a task of its own (`RunRangeTask`): the worker reads its bytes with the one
TREC reader, applies trec_eval's ``-M``/``-J`` (both work topic by topic), evaluates its
topics (`rankproof.measures.evaluate_partition`) and, for ``compare``, collects its top
ids. Only per-topic numbers come back; this process puts them together with
`rankproof.measures.combine_partitions`, the step `evaluate_partitions` uses too, so the
output is the one a single process prints, byte for byte.

**The qrels are not shipped with every task.** A worker reads the qrels file itself, once
per worker process (`QrelsFile`, cached by path, size and modification time), and each
range is evaluated against the judgments of its own topics only. Qrels from standard
input travel as an object (they can be read only once).

**When a run is read whole instead.** Ranges are used only where they cannot change a
result: ``--partitions N`` asks for N ranges per run; by default (``auto``) a TREC run of
at least `AUTO_MIN_BYTES` is cut when there are more workers than runs. A run from
standard input, a gzip, Parquet or non-TREC file, a run too small to cut (under
`RANGE_MIN_BYTES` per range), subtopic qrels or ``--memory-cap``
keep the one-task path, and so does a run whose ranges turn out not to be
topic-contiguous (a topic in two ranges) or in which a range meets an error: the whole
run is then evaluated in one task, which reports exactly what ``local`` would. A note
says so only when the number of partitions was asked for.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankproof._errors import InputError
from rankproof.data import (
    MIN_RANGE_BYTES,
    Qrels,
    ReadOptions,
    Run,
    SubtopicQrels,
    lines_before,
    load_qrels,
    read_run_range,
    topic_ranges,
)
from rankproof.measures import (
    EvalOptions,
    PartitionResult,
    TopicSlices,
    combine_partitions,
    evaluate_partition,
)

if TYPE_CHECKING:
    from rankproof.engine import Executor
    from rankproof.jobs._run_files import Notify, RunFileResult, RunFileTask

AUTO_MIN_BYTES = 64 << 20
"""The smallest run cut without ``--partitions`` (64 MiB, about 1.6 million TREC lines):
below it one worker reads and evaluates the run in about a second, less than what
spreading it costs."""
RANGE_MIN_BYTES = MIN_RANGE_BYTES
"""The smallest range ``--partitions`` cuts (`rankproof.data._ranges.MIN_RANGE_BYTES`;
read when a command runs, so a test may lower it)."""
_LINE_NOTE = re.compile(r"at line (\d+)")
_QRELS_CACHE: dict[tuple[Any, ...], tuple[Qrels, TopicSlices]] = {}


@dataclass(frozen=True)
class QrelsFile:
    """Qrels a worker reads itself (once per process), as the command read them."""

    path: str
    format: str | None = None
    dedupe: str | None = None
    topics: int = 0
    rows: int = 0
    """The command's own count of qrels topics and rows: a worker that reads other
    numbers (the file changed in between) refuses to go on."""

    def load(self) -> tuple[Qrels, TopicSlices]:
        st = os.stat(self.path)
        key = (self.path, st.st_size, st.st_mtime_ns, self.format, self.dedupe)
        found = _QRELS_CACHE.get(key)
        if found is None:
            q = load_qrels(self.path, dedupe=self.dedupe,  # type: ignore[arg-type]
                           format=self.format)  # type: ignore[arg-type]
            if (len(q.qid_vocab), len(q.docids)) != (self.topics, self.rows):
                raise InputError(f"the qrels changed while being read: {len(q.qid_vocab):,} "
                                 f"topics and {len(q.docids):,} judgments here, "
                                 f"{self.topics:,} and {self.rows:,} when the command read "
                                 "them", path=self.path)
            _QRELS_CACHE.clear()  # one qrels per worker process at a time
            found = _QRELS_CACHE[key] = (q, TopicSlices(q))
        return found


@dataclass(frozen=True)
class RunRangeTask:
    """Bytes ``[start, end)`` of one run file, to evaluate (a worker's job)."""

    qrels: Qrels | QrelsFile
    path: str
    start: int
    end: int
    measures: tuple[Any, ...]
    read: ReadOptions = field(default_factory=ReadOptions)
    options: EvalOptions = field(default_factory=EvalOptions)
    evidence_depth: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end:
            raise InputError(f"a byte range must have 0 <= start < end, got [{self.start}, "
                             f"{self.end})", path=self.path, field="start")


@dataclass(frozen=True)
class RunRangeResult:
    """What comes back of a range: its partition's numbers (None when ``-M``/``-J`` left
    it nothing), its top ids for evidence, and its run's name and tag; or ``failed``, why
    it could not be evaluated (the whole run is then evaluated in one task)."""

    part: PartitionResult | None
    name: str = "run"
    tag: str | None = None
    top: dict[str, list[str]] | None = None
    failed: str | None = None


def evaluate_run_range(task: RunRangeTask) -> RunRangeResult:
    """Read, (``-M``/``-J``,) evaluate and collect the top ids of one byte range."""
    if isinstance(task.qrels, QrelsFile):
        qrels, slices = task.qrels.load()
    else:
        qrels, slices = task.qrels, None
    try:
        run = read_run_range(task.path, task.start, task.end, dedupe=task.read.dedupe,
                             extra_columns=task.read.extra_columns)
    except InputError as exc:
        return RunRangeResult(part=None, failed=str(exc))
    if run.notes and task.start:  # the reader counts lines from the range's start
        offset = lines_before(task.path, task.start)
        run = dataclasses.replace(run, notes=tuple(
            _LINE_NOTE.sub(lambda m: f"at line {int(m.group(1)) + offset}", n)
            for n in run.notes))
    name, tag = run.name, run.tag
    kept = task.options.limited(run, qrels)  # -M/-J; the run itself without them
    if kept is None:
        return RunRangeResult(part=None, name=name, tag=tag)
    run = kept
    part = evaluate_partition(qrels, run, task.measures, rel_level=task.options.rel_level,
                              order=task.options.order, slices=slices)
    top = None
    if task.evidence_depth > 0:
        from rankproof.comparison import collect_evidence

        top = collect_evidence(qrels, {"run": run}, k=task.evidence_depth,
                               topics=part.judged.to_pylist(),
                               rel_level=task.options.rel_level,
                               order=task.options.order).top["run"]
    return RunRangeResult(part=part, name=name, tag=tag, top=top)


def evaluate_item(item: Any) -> Any:
    """The engine's one function: a whole run file or one range of one."""
    if isinstance(item, RunRangeTask):
        return evaluate_run_range(item)
    from rankproof.jobs._run_files import evaluate_run_file

    return evaluate_run_file(item)


def _parts_wanted(n_runs: int, executor: Executor, partitions: int | None) -> int:
    """Ranges per run: ``--partitions``, else enough to give every worker a share when
    there are more workers than runs (1: no cut)."""
    if partitions is not None:
        return partitions
    workers = executor.workers
    if executor.name == "local":
        from rankproof.engine import cpu_count

        workers = min(workers, cpu_count())
    return max(1, math.ceil(workers / max(1, n_runs))) if workers > n_runs else 1


def _plan(task: RunFileTask, parts: int, explicit: bool, about: str,
          note: Notify) -> tuple[tuple[int, int], ...] | None:
    """The byte ranges of ``task``'s run, or None (read whole; a note if ``explicit``)."""
    reason: str | None = None
    if isinstance(task.run, Run):
        reason = "standard input is read once, by one reader"
    elif task.read.memory_cap is not None:
        reason = "--memory-cap streams it in partitions in one task instead"
    elif isinstance(task.qrels, SubtopicQrels):
        reason = "subtopic qrels are evaluated with the run whole"
    if reason is None:
        assert isinstance(task.run, str)
        if not explicit:
            try:
                if os.path.getsize(task.run) < AUTO_MIN_BYTES:
                    return None
            except OSError:
                return None  # the one-task path reports it
        try:
            ranges = topic_ranges(task.run, parts, run_format=task.read.format,
                                  min_bytes=RANGE_MIN_BYTES)
        except InputError:
            return None  # the one-task path reports it, as local would
        if ranges.split:
            return ranges.ranges
        reason = ranges.reason
    if explicit and parts > 1:
        note(f"read whole, not in {parts} ranges: {reason}", about)
    return None


def _overlap(results: Sequence[RunRangeResult]) -> str | None:
    """A topic held by two ranges (the run is not topic-contiguous), or None."""
    parts = [r.part for r in results if r.part is not None]
    judged = pa.chunked_array([p.judged for p in parts], type=pa.string())
    if len(judged) and pc.count_distinct(judged).as_py() != len(judged):
        counts = pc.value_counts(judged)
        twice = counts.filter(pc.greater(counts.field("counts"), 1))
        return str(twice.field("values")[0].as_py())
    seen: set[str] = set()
    for p in parts:
        again = seen.intersection(p.unjudged)
        if again:
            return sorted(again)[0]
        seen.update(p.unjudged)
    return None


def _combined(task: RunFileTask, results: Sequence[RunRangeResult], q: Qrels,
              slices: TopicSlices) -> RunFileResult:
    """The run's `RunFileResult` from its ranges' results (all evaluated, disjoint)."""
    from rankproof.jobs._run_files import RunFileResult, nothing_left

    first = results[0]
    label = task.name or first.tag or first.name
    parts = [r.part for r in results if r.part is not None]
    if not parts:
        raise nothing_left(label, task.run, task.options)
    pq = combine_partitions(q, parts, task.measures, **task.options.keywords(), name=label,
                            slices=slices)
    if pq.run_tag != first.tag:
        pq = dataclasses.replace(pq, run_tag=first.tag)
    top = None
    if task.evidence_depth > 0:
        merged: dict[str, list[str]] = {}
        for r in results:
            merged.update(r.top or {})
        top = {t: merged.get(t, []) for t in q.topics}
    return RunFileResult(per_query=pq, name=first.name, tag=first.tag, source=str(task.run),
                         top=top)


def evaluate_tasks(tasks: Sequence[RunFileTask], executor: Executor, *,
                   partitions: int | None = None, qrels_format: str | None = None,
                   note: Notify | None = None) -> list[RunFileResult]:
    """Every task's `RunFileResult`, in task order: large runs as ranges (see the module
    docstring), the others whole, all in one map of ``executor``; a run whose ranges
    overlap or failed is evaluated again whole. ``qrels_format`` is how the qrels were
    read (a worker reads them again); ``note`` hears why a run asked to be cut was not."""
    note = note or _ignore
    from rankproof.jobs._run_files import evaluate_run_file

    wanted = _parts_wanted(len(tasks), executor, partitions)
    explicit = partitions is not None
    plans = [None if wanted < 2 and not explicit else
             _plan(t, wanted, explicit, str(t.name or t.run), note) for t in tasks]
    if not any(plans):
        return executor.map(evaluate_run_file, list(tasks), kind="cpu")
    q = tasks[0].qrels
    slices = TopicSlices(q)
    # In this process the qrels object is at hand; elsewhere each worker reads the file.
    shipped: Qrels | QrelsFile = q
    if not (executor.name == "local" and executor.workers == 1) and q.source is not None \
            and os.path.isfile(str(q.source)):
        shipped = QrelsFile(path=str(q.source), format=qrels_format,
                            dedupe=tasks[0].read.dedupe, topics=len(q.qid_vocab),
                            rows=len(q.docids))
    items: list[Any] = []
    owners: list[int] = []
    for i, (task, plan) in enumerate(zip(tasks, plans, strict=True)):
        if plan is None:
            items.append(task)
            owners.append(i)
            continue
        for start, end in plan:
            items.append(RunRangeTask(
                qrels=shipped, path=str(task.run), start=start, end=end,
                measures=tuple(task.measures), read=task.read, options=task.options,
                evidence_depth=task.evidence_depth))
            owners.append(i)
    done = executor.map(evaluate_item, items, kind="cpu")
    out: list[RunFileResult | None] = [None] * len(tasks)
    again: list[int] = []
    owned = np.asarray(owners)
    for i, task in enumerate(tasks):
        mine = [done[j] for j in np.flatnonzero(owned == i).tolist()]
        if plans[i] is None:
            out[i] = mine[0]
            continue
        failed = next((r.failed for r in mine if r.failed is not None), None)
        twice = None if failed is not None else _overlap(mine)
        if failed is None and twice is None:
            out[i] = _combined(task, mine, q, slices)
            continue
        if explicit:
            why = (f"topic {twice!r} is in two ranges (the run is not grouped by topic)"
                   if twice is not None else "a range could not be read alone")
            note(f"read again whole, in one task: {why}", str(task.name or task.run))
        again.append(i)
    if again:
        for i, r in zip(again, executor.map(evaluate_run_file, [tasks[i] for i in again],
                                            kind="cpu"), strict=True):
            out[i] = r
    return [r for r in out if r is not None]


def _ignore(text: str, about: str | None) -> None:
    """The `Notify` of a caller that does not listen."""


__all__ = ["AUTO_MIN_BYTES", "QrelsFile", "RunRangeResult", "RunRangeTask", "evaluate_item",
           "evaluate_run_range", "evaluate_tasks"]
