"""Sharded target invocation: shards of cases on an executor, a bound on requests, checkpoints.

The cases are cut into consecutive shards; each shard is one task of the
executor (`rankproof.engine`: inline, threads, or Ray tasks). Finished shards
are checkpointed in the calling process as they arrive (`Checkpoint`), and the
responses are put back in case order, so the metrics computed afterwards are
exactly those of an unsharded run.

The bound on concurrency is the target's, not the engine's: an `HttpTarget`
promises at most ``max_concurrency`` requests in flight, and that must hold
however many workers run shards at once. The executor keeps at most
``slots`` tasks in flight (a local pool: its workers; Ray: twice its workers,
see `rankproof.engine.RayExecutor`), so ``lanes = min(slots, max_concurrency)``
shards run at once and each gets ``max(1, max_concurrency // lanes)``
requests: ``lanes × per shard ≤ max_concurrency``. When there are more slots
than the bound allows, shards are handed to the executor in waves of
``lanes``, so no more than ``lanes`` ever run together.

On the local engine the target object itself is shared by the worker threads
(one connection pool, sized to ``max_concurrency``). Elsewhere it must cross a
process boundary: an `HttpTarget` travels as its `HttpTarget.settings` and is
built again in the task (an httpx client does not pickle), with the same URL,
headers, timeout, deadline and body cap — so the one-retry rule and the
per-call deadline hold there too; any other target travels pickled, and one
that does not pickle (a `CallableTarget` over a local closure, say) is refused
before anything runs.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rankproof._errors import ConfigError, TargetError
from rankproof.engine import Executor, LocalExecutor, shards
from rankproof.targets._base import Target
from rankproof.targets._case import Case, TargetResponse
from rankproof.targets._checkpoint import Checkpoint
from rankproof.targets._http import HttpTarget

logger = logging.getLogger("rankproof.targets")

DEFAULT_SHARD_SIZE = 256
Progress = Callable[[int, int], None]
"""``progress(done, total)``: cases answered so far (restored ones included), of all."""


def invoke_checked(target: Target, cases: Sequence[Case], *,
                   concurrency: int | None = None) -> list[TargetResponse]:
    """``target.invoke_many(cases)`` (or ``invoke`` each), checked: one `TargetResponse` each."""
    many = getattr(target, "invoke_many", None)
    if isinstance(target, HttpTarget) and concurrency is not None:
        responses = target.invoke_many(cases, max_concurrency=concurrency)
    elif callable(many):
        responses = list(many(cases))
    else:
        responses = [target.invoke(c) for c in cases]
    if len(responses) != len(cases):
        raise TargetError(f"target {target.name!r} returned {len(responses)} responses for "
                          f"{len(cases)} cases", target=target.name)
    for c, r in zip(cases, responses, strict=True):
        if not isinstance(r, TargetResponse):
            raise TargetError(f"target {target.name!r}, case {c.id!r}: expected a "
                              f"TargetResponse, got {type(r).__name__}", case_id=c.id,
                              target=target.name)
    return responses


@dataclass(frozen=True)
class _HttpSpec:
    """An `HttpTarget` as the keyword arguments that build it again in a worker."""

    settings: dict[str, Any]


@dataclass(frozen=True)
class _ShardTask:
    target: Any  # the live target (local engine), an _HttpSpec, or a pickled target
    cases: tuple[Case, ...]
    concurrency: int | None  # requests in flight for this shard (HTTP targets)


def _invoke_shard(task: _ShardTask) -> list[TargetResponse]:
    """One shard, in whichever worker runs it (module level: it is pickled for Ray)."""
    if isinstance(task.target, _HttpSpec):
        settings = dict(task.target.settings)
        if task.concurrency is not None:
            settings["max_concurrency"] = task.concurrency
        with HttpTarget(**settings) as target:
            return invoke_checked(target, task.cases)
    return invoke_checked(task.target, task.cases, concurrency=task.concurrency)


@dataclass(frozen=True)
class ShardPlan:
    """How a sharded run spreads over an executor without breaking the target's bound.

    ``lanes``: shards running at once; ``per_shard``: requests in flight
    within a shard (None for a target without a bound, which runs its own
    ``invoke_many``); ``waves``: True when shards are handed over ``lanes``
    at a time because the executor would run more at once than the bound
    allows; ``max_in_flight``: ``lanes × per_shard``, never above the target's
    ``max_concurrency``.
    """

    engine: str
    workers: int
    lanes: int
    per_shard: int | None
    waves: bool

    @property
    def max_in_flight(self) -> int | None:
        return None if self.per_shard is None else self.lanes * self.per_shard

    def describe(self) -> str:
        where = f"{self.engine} engine, {self.workers} worker{'s' if self.workers > 1 else ''}"
        if self.per_shard is None:
            return f"{where}: up to {self.lanes} shard(s) at once"
        return (f"{where}: {self.lanes} shard(s) at once × {self.per_shard} request(s) each "
                f"= at most {self.max_in_flight} in flight")


def _slots(executor: Executor) -> int:
    """How many tasks ``executor`` may run at once."""
    return max(1, int(executor.max_in_flight))


def shard_plan(target: Target, executor: Executor) -> ShardPlan:
    """The `ShardPlan` of ``target`` on ``executor`` (see the module docstring)."""
    slots = _slots(executor)
    bound = target.max_concurrency if isinstance(target, HttpTarget) else None
    if bound is None:
        return ShardPlan(executor.name, executor.workers, slots, None, False)
    lanes = min(slots, bound)
    return ShardPlan(executor.name, executor.workers, lanes, max(1, bound // lanes),
                     lanes < slots)


def _carrier(target: Target, executor: Executor) -> Any:
    """What each task carries: the target itself here, or something that pickles."""
    if isinstance(executor, LocalExecutor):
        return target  # inline or threads: one live target, one connection pool
    payload: Any = _HttpSpec(target.settings()) if isinstance(target, HttpTarget) else target
    dumps: Callable[[Any], bytes] = pickle.dumps
    if executor.name == "ray":
        try:
            from ray import cloudpickle  # what Ray itself pickles tasks with

            dumps = cloudpickle.dumps
        except ImportError:  # pragma: no cover - RayExecutor already needed ray
            pass
    try:
        dumps(payload)
    except Exception as exc:
        what = ("its build_payload or extract function" if isinstance(target, HttpTarget)
                else "its function" if hasattr(target, "fn") else "the target")
        raise ConfigError(
            f"target {target.name!r} cannot be sent to {executor.name} workers: {what} does "
            f"not pickle ({type(exc).__name__}: {exc}); use a module-level function, or run "
            "it on the local engine") from None
    return payload


def invoke_sharded(
    target: Target,
    cases: Sequence[Case],
    *,
    executor: Executor,
    shard_size: int = DEFAULT_SHARD_SIZE,
    checkpoint: Callable[[], Checkpoint] | None = None,
    progress: Progress | None = None,
) -> tuple[list[TargetResponse], Checkpoint | None]:
    """Every case's response, in case order, invoked shard by shard on ``executor``; and
    the checkpoint, for the caller to remove once the run has completed.

    ``checkpoint`` opens the checkpoint (`Checkpoint.open`); it is called
    only once the target is known to reach the executor's workers, so a
    refused target leaves no folder behind. Shards already in it are read
    instead of invoked; each newly finished shard is written there before the
    next result is taken. The first failing shard's error is raised (the
    shards finished before it stay checkpointed).
    """
    payload = _carrier(target, executor)
    parts = [tuple(p) for p in shards(list(cases), shard_size)]
    got: dict[int, list[TargetResponse]] = {}
    ck = checkpoint() if checkpoint is not None else None
    if ck is not None:
        for i, part in enumerate(parts):
            restored = ck.read(i, part)
            if restored is not None:
                got[i] = restored
    total = len(cases)
    done = sum(len(parts[i]) for i in got)
    if got:
        logger.info("target %r: %d of %d shard(s) restored from %s", target.name, len(got),
                    len(parts), ck.folder if ck else "?")
    if progress is not None:
        progress(done, total)
    todo = [i for i in range(len(parts)) if i not in got]
    if not todo:
        return [r for i in range(len(parts)) for r in got[i]], ck
    plan = shard_plan(target, executor)
    logger.info("target %r: %d shard(s) of up to %d case(s) on %s", target.name, len(todo),
                shard_size, plan.describe())
    tasks = [_ShardTask(payload, parts[i], plan.per_shard) for i in todo]
    step = plan.lanes if plan.waves else len(tasks)
    for start in range(0, len(tasks), step):
        wave = todo[start:start + step]

        def on_result(j: int, responses: list[TargetResponse], wave: list[int] = wave) -> None:
            nonlocal done
            i = wave[j]
            if len(responses) != len(parts[i]):  # pragma: no cover - invoke_checked checks
                raise TargetError(f"target {target.name!r}: shard {i} returned "
                                  f"{len(responses)} responses for {len(parts[i])} cases",
                                  target=target.name)
            if ck is not None:
                ck.write(i, parts[i], responses)
            got[i] = responses
            done += len(responses)
            if progress is not None:
                progress(done, total)

        executor.map(_invoke_shard, tasks[start:start + step], kind="io", on_result=on_result)
    return [r for i in range(len(parts)) for r in got[i]], ck
