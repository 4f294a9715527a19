"""The `Executor` protocol, `executor_for` (engine name → executor) and `shards`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from rankproof._errors import ConfigError

T = TypeVar("T")
R = TypeVar("R")

Kind = Literal["cpu", "io"]
"""``cpu``: work that holds the interpreter (parsing, scoring, embedding): processes.
``io``: work that waits (HTTP, a judge service): threads are enough."""

ENGINES = ("local", "ray")


@runtime_checkable
class Executor(Protocol):
    """Runs ``fn`` over ``items`` and returns the results in the order of ``items``.

    ``fn`` must be a module-level function (it is pickled for processes and
    Ray) and must not depend on the worker it runs on. ``on_result(i, r)`` is
    called in the calling process, in completion order, as each item
    finishes: callers checkpoint and show progress there. The first item that
    raises stops the map (items not yet started are cancelled) and its
    exception is raised with its own type, so a `rankproof` error keeps its
    exit code whichever engine ran it.
    """

    name: str
    workers: int

    @property
    def max_in_flight(self) -> int:
        """How many items may run at once: a caller that must bound concurrency across
        tasks (requests to one service) divides its bound by this."""
        ...

    def map(self, fn: Callable[[T], R], items: Sequence[T], *, kind: Kind = "cpu",
            on_result: Callable[[int, R], None] | None = None) -> list[R]: ...

    def describe(self) -> dict[str, Any]:
        """What ran the work, for provenance: ``{"engine", "workers", ...}``."""
        ...

    def close(self) -> None: ...


def executor_for(engine: str = "local", *, address: str | None = None,
                 workers: int | None = None) -> Executor:
    """The executor a ``--engine/--address/--workers`` triple asks for.

    ``address`` only means something to Ray; giving it with ``local`` is a
    mistake (the work would silently run here), so it is refused.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ConfigError(f"--workers must be an integer >= 1, got {workers!r}")
    if engine == "local":
        if address is not None:
            raise ConfigError("--address is for --engine ray; the local engine runs on this "
                              "machine")
        from rankproof.engine._local import LocalExecutor

        return LocalExecutor(workers=workers or 1)
    if engine == "ray":
        from rankproof.engine._ray import RayExecutor

        return RayExecutor(address=address, workers=workers)
    raise ConfigError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")


def shards(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """``items`` cut into consecutive slices of at most ``size`` (order kept)."""
    if size < 1:
        raise ValueError(f"shard size must be >= 1, got {size}")
    return [items[i:i + size] for i in range(0, len(items), size)]
