"""`RayExecutor`: tasks on a Ray cluster, or on a local one started and stopped here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from rankproof._errors import ConfigError, MissingExtraError
from rankproof.engine._executor import Kind

T = TypeVar("T")
R = TypeVar("R")

RAY_EXTRA_HINT = "pip install 'rankproof[ray]'"


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingExtraError(f"--engine ray needs Ray: {RAY_EXTRA_HINT}") from None
    return ray


def _call(fn: Callable[[T], R], item: T) -> R:
    """The task Ray runs: ``fn(item)``. Ray only turns Python functions into tasks, so a
    builtin or a C function (``math.factorial``) travels as this call's argument."""
    return fn(item)


class RayExecutor:
    """Runs each item as a Ray task; results come back in the order of the items.

    With no ``address`` and no running Ray, a local cluster is started with
    ``workers`` CPUs (no dashboard) and shut down by `close`; an already
    initialised Ray (a test's cluster, a notebook's) is used as it is and left
    running. At most ``2 × workers`` tasks are in flight, so a 100,000-item
    map does not put 100,000 arguments in the object store at once. A task's
    exception is re-raised with its own type (Ray wraps it; the wrapper is
    taken off), so a `rankproof` error keeps its exit code.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        ray = _ray()
        self.address = address
        self._started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "configure_logging": False}
            if address is None:
                kwargs["num_cpus"] = workers
            try:
                ray.init(address=address, **kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = f"the Ray cluster at {address!r}" if address else "a local Ray cluster"
                raise ConfigError(f"could not connect to {where}: {exc}") from None
            self._started = True
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = workers or max(1, cpus)

    def __repr__(self) -> str:
        return f"RayExecutor(address={self.address!r}, workers={self.workers})"

    @property
    def max_in_flight(self) -> int:
        return 2 * self.workers

    def describe(self) -> dict[str, Any]:
        ray = _ray()
        nodes = len([n for n in ray.nodes() if n.get("Alive")]) if ray.is_initialized() else 0
        return {"engine": self.name, "workers": self.workers, "address": self.address,
                "nodes": nodes, "ray_version": ray.__version__}

    def close(self) -> None:
        if self._started:
            _ray().shutdown()
            self._started = False

    def map(self, fn: Callable[[T], R], items: Sequence[T], *, kind: Kind = "cpu",
            on_result: Callable[[int, R], None] | None = None) -> list[R]:
        ray = _ray()
        if not items:
            return []
        # I/O-bound tasks mostly wait: they should not hold a whole CPU of the cluster.
        task = ray.remote(num_cpus=1 if kind == "cpu" else 0.25, max_retries=0)(_call)
        limit = self.max_in_flight
        results: dict[int, R] = {}
        in_flight: dict[Any, int] = {}
        nxt = 0
        try:
            while nxt < len(items) or in_flight:
                while nxt < len(items) and len(in_flight) < limit:
                    in_flight[task.remote(fn, items[nxt])] = nxt
                    nxt += 1
                done, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in done:
                    i = in_flight.pop(ref)
                    try:
                        r = ray.get(ref)
                    except ray.exceptions.RayTaskError as exc:
                        cause = exc.cause if isinstance(exc.cause, BaseException) else None
                        if cause is not None:
                            raise cause from None
                        raise
                    results[i] = r
                    if on_result is not None:
                        on_result(i, r)
        except BaseException:
            for ref in in_flight:
                ray.cancel(ref, force=False)
            raise
        return [results[i] for i in range(len(items))]
