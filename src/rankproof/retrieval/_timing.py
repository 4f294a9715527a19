"""Honest per-query latency: warm a stage up, set torch's threads, stamp the machine load.

A stage's first searches pay costs a running service pays once: torch
building its kernels and thread pool, the tokenizer filling its caches, the
index pages coming into the CPU's caches. Timed with the rest, they are the
tail of the distribution (the golden corpus's dense stage once showed p50
19 ms and p95 496 ms). `timed_search` therefore searches a **warm-up set**
first — the first ``warmup`` queries (`DEFAULT_WARMUP`), results discarded —
then times every query in a second pass; the warm-up's own time is reported
beside the percentiles (`TimingStamp`), never inside them. A search changes
no stage's results (BM25, dense, fusion and rerank keep nothing but
deterministic caches between searches), so the runs are identical with or
without a warm-up; fusion and rerank time their inputs inside their own
search, so the warm-up's input searches are never added to a timed query.

**Threads.** torch's intra-op pool defaults to one thread per core. Timing
one query at a time on a shared machine, two threads on two contended cores
wait on each other at every operator (docs/collections.md measured ~500 ms
against ~17 ms for one MiniLM query). `timed_search` sets torch's intra-op
threads to ``threads`` (`DEFAULT_THREADS`, one: what a single request gets
on a server answering several at once) for the warm-up and the timed pass,
and restores the previous setting afterwards. It never imports torch: when
no stage has loaded it, nothing is set and the stamp records ``threads=None``
(``threads=None`` as an argument leaves torch's own setting, recorded).

**Load.** The 1-minute load average just before and just after the timed
pass and the CPUs this process may run on are recorded, so that a reader
can tell a quiet machine's percentiles from a contended one's
(`TimingStamp.loaded`: the load exceeded the CPU count).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rankproof._errors import InputError
from rankproof.retrieval._base import Queries, Retriever, StageOutput, retrieved_nothing

DEFAULT_WARMUP = 8
"""Queries searched, untimed, before the timed pass (the first ones of the batch)."""
DEFAULT_THREADS = 1
"""torch's intra-op threads while a stage is timed one query at a time."""


def peak_load(before: float | None, after: float | None) -> float | None:
    """The higher of the load averages read before and after a timed pass (None: neither)."""
    seen = [x for x in (before, after) if x is not None]
    return max(seen) if seen else None


def over_capacity(before: float | None, after: float | None, cpus: int | None) -> bool:
    """Whether the load average exceeded the CPU count around a timed pass: processes
    waited for a core, so the percentiles include that wait."""
    load = peak_load(before, after)
    return load is not None and cpus is not None and load > cpus


@dataclass(frozen=True)
class TimingStamp:
    """The conditions a stage's per-query latencies were measured under.

    ``warmup_queries``: how many queries were searched before the timed pass
    (results discarded; 0: no warm-up) and ``warmup_ms`` their total wall-clock
    milliseconds, excluded from the percentiles. ``threads``: torch's intra-op
    threads during the timed pass (None: torch was not loaded), ``threads_set``
    whether rankproof set them (False: torch's own setting was left).
    ``load_before``/``load_after``: the 1-minute load average around the timed
    pass (None where the platform has none); ``cpus``: the CPUs this process may
    use.
    """

    warmup_queries: int
    warmup_ms: float
    threads: int | None
    threads_set: bool
    load_before: float | None
    load_after: float | None
    cpus: int | None

    @property
    def load(self) -> float | None:
        """The higher of the two load averages (None when neither was read)."""
        return peak_load(self.load_before, self.load_after)

    @property
    def loaded(self) -> bool:
        """True when the load average exceeded the CPU count (see `over_capacity`)."""
        return over_capacity(self.load_before, self.load_after, self.cpus)

    def as_dict(self) -> dict[str, Any]:
        return {"warmup_queries": self.warmup_queries, "warmup_ms": self.warmup_ms,
                "threads": self.threads, "threads_set": self.threads_set,
                "load_before": self.load_before, "load_after": self.load_after,
                "cpus": self.cpus}


@dataclass(frozen=True)
class TimedSearch:
    """A stage's output for every query (``output``, latencies from the timed pass only) and
    the conditions they were measured under (``stamp``)."""

    output: StageOutput
    stamp: TimingStamp


def machine_load() -> tuple[float | None, int | None]:
    """The 1-minute load average (None where unavailable) and the CPUs this process may use."""
    try:
        load: float | None = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = None
    try:
        cpus: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count()
    return load, cpus


def _check(warmup: int, threads: int | None) -> None:
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise InputError(f"warmup must be an integer >= 0 (0: no warm-up), got {warmup!r}",
                         field="warmup")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise InputError(f"threads must be a positive integer or None (torch's own setting), "
                         f"got {threads!r}", field="threads")


class _TorchThreads:
    """Sets torch's intra-op threads once torch is loaded, and restores them on exit."""

    def __init__(self, threads: int | None) -> None:
        self.threads = threads
        self._previous: int | None = None

    def apply(self) -> None:
        """Set the threads if torch is loaded now (a warm-up may have loaded it)."""
        torch = sys.modules.get("torch")
        if self.threads is None or torch is None or self._previous is not None:
            return
        self._previous = int(torch.get_num_threads())
        if self._previous != self.threads:
            torch.set_num_threads(self.threads)

    def current(self) -> int | None:
        torch = sys.modules.get("torch")
        return None if torch is None else int(torch.get_num_threads())

    def restore(self) -> None:
        torch = sys.modules.get("torch")
        if self._previous is not None and torch is not None \
                and int(torch.get_num_threads()) != self._previous:
            torch.set_num_threads(self._previous)
        self._previous = None


@contextmanager
def torch_threads(threads: int | None = DEFAULT_THREADS) -> Iterator[_TorchThreads]:
    """Set torch's intra-op threads to ``threads`` for the ``with`` body, when torch is loaded.

    Never imports torch. ``threads=None`` changes nothing. The yielded object's
    ``apply()`` sets them later when torch was loaded inside the body, and
    ``current()`` says what they are; the previous setting is restored on exit.
    """
    _check(0, threads)
    limit = _TorchThreads(threads)
    limit.apply()
    try:
        yield limit
    finally:
        limit.restore()


def warm_up(stage: Retriever, queries: Queries, k: int, n: int) -> tuple[int, float]:
    """Search the first ``n`` queries (results discarded); ``(queries searched, ms)``.

    A warm-up batch that retrieves nothing at all is not an error (the timed
    pass decides that for the whole batch).
    """
    chosen = list(queries[:n])
    if not chosen:
        return 0, 0.0
    start = time.perf_counter()
    try:
        stage.search(chosen, k)
    except InputError as exc:
        if not retrieved_nothing(exc):
            raise
    return len(chosen), (time.perf_counter() - start) * 1000.0


def timed_search(stage: Retriever, queries: Queries, k: int, *, warmup: int = DEFAULT_WARMUP,
                 threads: int | None = DEFAULT_THREADS) -> TimedSearch:
    """Warm ``stage`` up on the first ``warmup`` queries, then search every query, timed.

    The returned output is the timed pass's own (`StageOutput.latency_ms` has
    every query exactly once, none of the warm-up's time); the stamp records
    the warm-up, torch's threads and the machine load (see the module
    docstring). ``stage`` must be indexed.

    >>> from rankproof.retrieval import BM25Retriever
    >>> bm25 = BM25Retriever()
    >>> bm25.index([("d1", "cats chase mice"), ("d2", "dogs chase cats")])
    >>> timed = timed_search(bm25, [("q1", "cats"), ("q2", "dogs")], k=2, warmup=1)
    >>> sorted(timed.output.latency_ms), timed.stamp.warmup_queries
    (['q1', 'q2'], 1)
    """
    _check(warmup, threads)
    with torch_threads(threads) as limit:
        used, warm_ms = warm_up(stage, queries, k, warmup)
        limit.apply()
        load_before, cpus = machine_load()
        out = stage.search(queries, k)
        load_after, _ = machine_load()
        current = limit.current()
    stamp = TimingStamp(warmup_queries=used, warmup_ms=warm_ms, threads=current,
                        threads_set=threads is not None and current is not None,
                        load_before=load_before, load_after=load_after, cpus=cpus)
    return TimedSearch(output=out, stamp=stamp)
