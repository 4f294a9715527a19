"""`LocalExecutor`: this process, a thread pool, or a pool of spawned processes."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import (
    FIRST_EXCEPTION,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from concurrent.futures import Executor as _PoolExecutor
from typing import Any, TypeVar

from rankproof.engine._executor import Kind

T = TypeVar("T")
R = TypeVar("R")


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity mask, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class LocalExecutor:
    """Runs work on this machine.

    One worker runs every item in this process, in order: no pool, no
    pickling, the behaviour rankproof had before the seam existed. More
    workers use threads for ``io`` work and spawned processes for ``cpu``
    work (spawn, not fork: a forked copy of a process that holds torch or
    Arrow threads can deadlock).
    """

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
        self.workers = workers

    def __repr__(self) -> str:
        return f"LocalExecutor(workers={self.workers})"

    @property
    def max_in_flight(self) -> int:
        return self.workers

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name, "workers": self.workers}

    def close(self) -> None:
        """Nothing to release: pools live only for one `map` call."""

    def map(self, fn: Callable[[T], R], items: Sequence[T], *, kind: Kind = "cpu",
            on_result: Callable[[int, R], None] | None = None) -> list[R]:
        if self.workers == 1 or len(items) <= 1:
            out = []
            for i, item in enumerate(items):
                r = fn(item)
                if on_result is not None:
                    on_result(i, r)
                out.append(r)
            return out
        n = min(self.workers, len(items))
        if kind != "io":  # more processes than CPUs only queue for them
            n = min(n, cpu_count())
        pool: _PoolExecutor = (
            ThreadPoolExecutor(max_workers=n, thread_name_prefix="rankproof")
            if kind == "io" else
            ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn")))
        results: dict[int, R] = {}
        with pool:
            futures: dict[Future[R], int] = {pool.submit(fn, item): i
                                             for i, item in enumerate(items)}
            pending = set(futures)
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                    for f in sorted(done, key=futures.__getitem__):
                        r = f.result()  # raises the item's own exception
                        results[futures[f]] = r
                        if on_result is not None:
                            on_result(futures[f], r)
            except BaseException:
                for f in pending:
                    f.cancel()
                raise
        return [results[i] for i in range(len(items))]
