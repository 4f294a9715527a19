"""A memory cap: a run larger than memory, evaluated in partitions of whole topics.

A request whose `rankproof.data.ReadOptions` carries a ``memory_cap`` (``rankproof
measure QRELS RUN --memory-cap 64MiB``, or ``RANKPROOF_MEMORY_CAP``) evaluates a run
whose estimated in-memory size exceeds the cap by streaming it
(`rankproof.data.stream_run`, `rankproof.measures.evaluate_partitions`): the output is
the one the in-memory evaluation prints, byte for byte, and a note says that the run was
streamed and in how many partitions. A run under the cap is read whole, as without the option.

How the cap is kept (`stream_plan`; ``docs/scaling.md`` has the measurements): once
the qrels are read, what the evaluation holds however the run is read (`held_bytes`: the
qrels' arrays, the per-topic results, the record of the run's topics seen) is taken off
the cap. The run is read whole when its estimated in-memory peak (`in_memory_bytes`:
``IN_MEMORY_FACTOR`` per byte of text and ``IN_MEMORY_BYTES_PER_TOPIC`` per topic,
the topics estimated from the run's first 4 MiB) fits in the rest; otherwise each
partition holds 1/``PARTITION_FACTOR`` of the rest as run text (a partition in flight
holds about 6 to 7 times its text). A cap with no room left is refused before the run
is read. The process's peak then stays within the cap plus the start-up baseline (the
peak of the same command on a tiny input, about 100 MiB here):
``tests/data/test_memory_cap.py`` measures it.

The run must be grouped by topic (``LC_ALL=C sort -s -k1,1 RUN``); a topic
larger than one partition is refused with the cap it would need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rankproof._errors import InputError

if TYPE_CHECKING:
    from rankproof.data import Qrels
    from rankproof.jobs._run_files import RunFileResult, RunFileTask

IN_MEMORY_FACTOR = 1.85
IN_MEMORY_BYTES_PER_TOPIC = 520
RESULT_BYTES_PER_TOPIC = 160
SEEN_BYTES_PER_TOPIC = 48
ROW_BYTES_PER_TOPIC = 96
"""What one comparison row holds per topic (`compare`): the paired values and ids it keeps,
and the arrays its test draws on."""
EVIDENCE_BYTES_PER_ID = 80
"""One kept document id of the evidence (``--evidence-depth``): a Python string in a list."""
PARTITION_SHARE = 16
PARTITION_FACTOR = 16
MEMORY_MARGIN = 64 << 20
"""What the peak may exceed the cap by, above the post-import size (see the docstring)."""
_MIN_PARTITION = 64 << 10
_SHORTEST_LINE = 6
"""The fewest bytes a run line takes (``q d 1`` and its newline: MS MARCO's three columns),
so a run of ``size`` bytes holds at most ``size // 6`` topics (`automatic_cap`)."""
_MIN_ROOM = 16 << 10
"""The smallest partition a cap is allowed to leave room for (`stream_plan`)."""
def partition_bytes(cap: int) -> int:
    """The run text one partition holds under ``cap`` with nothing else held (see the
    module docstring); `stream_plan` takes what the qrels and results need off first."""
    return max(_MIN_PARTITION, cap // PARTITION_SHARE)


@dataclass(frozen=True)
class StreamPlan:
    """How a run is read under a cap: whole (``partition_bytes`` None) or streamed in
    partitions of that much text, with the figures that decided it."""

    partition_bytes: int | None
    held: int
    """Bytes the cap holds before any of the run: the qrels, the per-topic results and
    the record of the run's topics (`held_bytes`)."""
    in_memory: int
    """The estimated peak of reading and evaluating the run whole (`in_memory_bytes`)."""


def held_bytes(qrels: Qrels | None, n_measures: int, run_topics: int, *, tables: int = 1,
               evidence_depth: int = 0) -> int:
    """What an evaluation holds however the run is read, above the start-up baseline: the
    qrels' arrays, per qrels topic the values (a matrix, and each partition's own) and the
    query id the result names it by (``RESULT_BYTES_PER_TOPIC``), and per run topic the
    record streaming keeps of it (``SEEN_BYTES_PER_TOPIC``).

    ``compare`` keeps ``tables`` per-query tables (one per run) and then its rows (one per
    candidate and measure, ``ROW_BYTES_PER_TOPIC``), and with ``evidence_depth`` each
    run's top ids per topic (``EVIDENCE_BYTES_PER_ID``): all of them are held at the end,
    whichever run is read, so all are taken off the cap before the first run is."""
    if qrels is None:
        return run_topics * SEEN_BYTES_PER_TOPIC
    arrays = int(qrels.qid_vocab.nbytes + qrels.docids.nbytes + qrels.qid_codes.nbytes
                 + qrels.rels.nbytes)
    n = max(1, n_measures)
    tables = max(1, tables)
    per_topic = tables * (RESULT_BYTES_PER_TOPIC + 16 * n)
    if tables > 1:
        per_topic += (tables - 1) * n * ROW_BYTES_PER_TOPIC
    per_topic += tables * evidence_depth * EVIDENCE_BYTES_PER_ID
    return arrays + len(qrels.qid_vocab) * per_topic + run_topics * SEEN_BYTES_PER_TOPIC


def in_memory_bytes(size: int, run_topics: int) -> int:
    """The estimated peak above the baseline of a run of ``size`` bytes of text and about
    ``run_topics`` topics read whole: ``IN_MEMORY_FACTOR`` per byte (its columns, the
    parse, the ranking) and ``IN_MEMORY_BYTES_PER_TOPIC`` per topic (the dictionary of
    query ids, the per-topic arrays). Measured: 1.8 per byte at 6,980 x 1,000 (MS MARCO),
    and about 500 bytes per topic more at 1,000,000 x 10 (``benchmarks/measures.py``)."""
    return int(size * IN_MEMORY_FACTOR) + run_topics * IN_MEMORY_BYTES_PER_TOPIC


def plan_shares(task: RunFileTask) -> dict[str, int]:
    """The `stream_plan` keywords a task's command decides (tables kept, evidence, share)."""
    return {"tables": task.held_tables, "evidence_depth": task.evidence_depth,
            "share": task.cap_share}


def stream_plan(path: str, cap: int | None, qrels: Qrels | None = None,
                n_measures: int = 1, *, tables: int = 1, evidence_depth: int = 0,
                share: int = 1) -> StreamPlan | None:
    """Whether and how the run at ``path`` is read under ``cap``; None without a cap, for
    standard input or a pipe (size unknown: read whole).

    A Parquet run is always streamed (the command reads Parquet no other way); a text
    run is streamed when its estimated in-memory peak (`in_memory_bytes`) plus what is
    held anyway (`held_bytes`) exceeds the cap. Streamed, a partition gets what is left of
    the cap divided by ``PARTITION_FACTOR`` (what one partition in flight holds per byte
    of its text); a cap that leaves no room for the smallest partition is refused before
    the run is read, naming the cap it would take. So is a cap whose partition would not
    hold one topic (the run's text per topic, estimated from its head): streaming works
    topic by topic, and reading would fail at the first topic.

    ``tables`` and ``evidence_depth`` say what the command keeps of every run
    (`held_bytes`); ``share`` runs are read at once (the engine's workers), and each gets
    that share of the room."""
    from rankproof.data import RunPartitions, run_size

    if cap is None or path == "-":
        return None
    size = run_size(path)
    if size is None:
        return None
    reader = RunPartitions(path)
    topics = reader.estimate_topics() or 0
    held = held_bytes(qrels, n_measures, topics, tables=tables, evidence_depth=evidence_depth)
    whole = in_memory_bytes(size, topics)
    share = max(1, share)
    if reader.kind == "trec" and whole * share + held <= cap:
        return StreamPlan(partition_bytes=None, held=held, in_memory=whole)
    room = (cap - held) // (PARTITION_FACTOR * share)
    per_topic = -(-size // topics) if reader.kind == "trec" and topics else 0
    if room >= _MIN_ROOM and room < per_topic:
        need = -(-(held + per_topic * PARTITION_FACTOR * share) // (1 << 20)) << 20
        raise InputError(
            f"--memory-cap {mib(cap)} cannot hold one topic of this run: a topic takes about "
            f"{mib(per_topic)} of run text (about {topics:,} topics in {mib(size)}), and a "
            f"partition under this cap holds {mib(room)} once the qrels and the per-topic "
            f"results ({mib(held)}) are held; give --memory-cap {mib(need)} or more",
            path=path, field="--memory-cap")
    if room < _MIN_ROOM:
        need = -(-(held + _MIN_ROOM * PARTITION_FACTOR * share) // (1 << 20)) << 20
        raise InputError(
            f"--memory-cap {mib(cap)} cannot hold this evaluation: before any of the run is "
            f"read, the qrels and the per-topic results take about {mib(held)} "
            f"({0 if qrels is None else len(qrels.qid_vocab):,} qrels topics, about "
            f"{topics:,} run topics); give --memory-cap {mib(need)} or more", path=path,
            field="--memory-cap")
    return StreamPlan(partition_bytes=int(room), held=held, in_memory=whole)


def available_memory() -> int | None:
    """The kernel's estimate of the memory a process can still take without swapping
    (``MemAvailable`` in ``/proc/meminfo``), in bytes; None where there is no such file."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def automatic_cap(tasks: list[RunFileTask]) -> tuple[int, int] | None:
    """Without ``--memory-cap``: (the available memory, the largest estimated need) when some
    run, read whole with the others the engine reads at once, would not fit in what is
    available, so that the command streams it under that cap instead; None when every run
    fits, the amount is unknown, or even streaming could not fit (the run is then read whole,
    as before: a help, never a refusal)."""
    from rankproof.data import Run, run_size

    avail = available_memory()
    if avail is None:
        return None
    need = 0
    for task in tasks:
        if isinstance(task.run, Run):
            continue
        size = run_size(task.run)
        if size is None:
            continue
        # Most runs fit whatever their number of topics: then their head is not read for
        # an estimate (`stream_plan`'s, tens of milliseconds per run on every command).
        most = size // _SHORTEST_LINE
        if (in_memory_bytes(size, most) * max(1, task.cap_share)
                + held_bytes(task.qrels, len(task.measures), most, tables=task.held_tables,
                             evidence_depth=task.evidence_depth)) <= avail:
            continue
        try:
            plan = stream_plan(task.run, avail, task.qrels, len(task.measures),
                               **plan_shares(task))
        except (InputError, OSError):
            return None
        if plan is None:
            continue
        whole = plan.in_memory * max(1, task.cap_share) + plan.held
        if whole > avail:
            need = max(need, whole)
    return (avail, need) if need else None


def should_stream(path: str, cap: int | None, qrels: Qrels | None = None,
                  n_measures: int = 1) -> bool:
    """Whether the run at ``path`` is streamed under ``cap`` (`stream_plan`)."""
    plan = stream_plan(path, cap, qrels, n_measures)
    return plan is not None and plan.partition_bytes is not None


def evaluate_capped(task: RunFileTask, cap: int) -> RunFileResult | None:
    """`rankproof.jobs.evaluate_run_file` for a run streamed under ``cap``, or None
    when the run is read whole (`should_stream`)."""
    from rankproof.data import sniff_format, stream_run
    from rankproof.jobs._run_files import RunFileResult
    from rankproof.measures import evaluate_partitions

    path = str(task.run)
    plan = stream_plan(path, cap, task.qrels, len(task.measures), **plan_shares(task))
    if plan is None or plan.partition_bytes is None:
        return None
    size = plan.partition_bytes
    parts = stream_run(path, partition_bytes=size, dedupe=task.read.dedupe,
                       extra_columns=task.read.extra_columns)
    if parts.kind == "trec" and (fmt := task.read.format or sniff_format(path)) != "trec":
        raise InputError(f"the run is {fmt}, and a run over --memory-cap is streamed, which "
                         "reads TREC runs and Parquet files or datasets: convert it (rankproof "
                         "export) or raise --memory-cap", path=path)
    kept = _trec_eval_partitions(parts, task) if task.options.limits_run else parts
    top: dict[str, list[str]] | None = None
    if task.evidence_depth:
        top = {}
        kept = _with_evidence(kept, task, top)
    pq = evaluate_partitions(task.qrels, kept, task.measures, **task.options.keywords())
    if top is not None:  # in the qrels' topic order, [] for a topic the run lacks (as whole)
        top = {t: top.get(t, []) for t in task.qrels.topics}
    s = parts.stats
    note = (f"streamed under --memory-cap {mib(cap)}: {s.partitions} partition(s) of whole "
            f"topics, at most {mib(size)} of run text each (largest "
            f"{mib(s.largest)}), {s.rows:,} rows")
    return RunFileResult(per_query=pq, name=parts.name, tag=pq.run_tag, source=parts.source,
                         streamed=note, top=top)


def _with_evidence(parts: Any, task: RunFileTask, top: dict[str, list[str]]) -> Any:
    """The partitions, each one's top ``evidence_depth`` ids per topic collected into
    ``top`` on the way (a partition holds whole topics, so each topic's ids are the ones
    `collect_evidence` finds in the whole run)."""
    from rankproof.comparison import collect_evidence

    judged = set(task.qrels.topics)
    for part in parts:
        wanted = [t for t in part.topics if t in judged]
        if wanted:
            top.update(collect_evidence(task.qrels, {"run": part}, k=task.evidence_depth,
                                        topics=wanted, rel_level=task.options.rel_level,
                                        order=task.options.order).top["run"])
        yield part


def _trec_eval_partitions(parts: Any, task: RunFileTask) -> Any:
    """trec_eval's ``-M``/``-J`` applied to each partition (both work topic by topic); the
    same refusal as in memory when they leave nothing."""
    kept_any = False
    for part in parts:
        kept = task.options.limited(part, task.qrels)
        if kept is not None:
            kept_any = True
            yield kept
    if not kept_any:
        from rankproof.jobs._run_files import nothing_left

        raise nothing_left(parts.name, parts.source, task.options)


def mib(n: int) -> str:
    """``n`` bytes as people read them: ``512 MiB``, ``1.5 GiB``, ``64 KiB``."""
    if n >= 2**30:
        return f"{n / 2**30:,.3g} GiB"
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n / 2**10:,.0f} KiB"


__all__ = ["StreamPlan", "automatic_cap", "available_memory", "evaluate_capped", "held_bytes",
           "in_memory_bytes", "mib", "plan_shares", "should_stream", "stream_plan"]
