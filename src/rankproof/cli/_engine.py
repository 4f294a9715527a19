"""The shared ``--engine/--address/--workers`` options and `engine_from`.

Every command that fans work out (``measure`` and ``compare`` over many runs,
``eval``, ``gate`` target runs, ``discover`` sweeps and curves, ``rag``
judging) takes the same three options, declared once here::

    def command(..., engine: EngineOption = "local", address: AddressOption = None,
                workers: WorkersOption = None) -> None:
        with engine_from(engine, address, workers) as executor:
            rows = executor.map(task, items)

`engine_from` prints nothing on standard output (it may be JSON); with Ray it
writes one line on standard error saying where the work runs. The engine is
imported only when a command runs, so ``--help`` stays cheap.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rankproof.engine import Executor

    EngineChoice = str
else:
    class EngineChoice(StrEnum):
        """``--engine``'s values (`rankproof.engine.ENGINES`, spelled out so that
        declaring the option does not import the engine)."""

        local = "local"
        ray = "ray"


RAY_USED = False
"""Set once a command in this process ran on Ray: `rankproof.cli.entry` then ends the
process without the interpreter's teardown or its atexit handlers (``cli.end_process``)."""

EngineOption = Annotated[EngineChoice, typer.Option(
    "--engine",
    help="Where independent work runs: 'local' (this machine; --workers > 1 uses a pool) or "
         "'ray' (a Ray cluster; the 'ray' extra). Results are identical whichever engine "
         "runs them.")]
"""``--engine local|ray`` (default ``local``)."""

AddressOption = Annotated[str | None, typer.Option(
    "--address", metavar="ADDR",
    help="The Ray cluster to use (e.g. 'ray://head:10001' or 'auto'); without it, --engine "
         "ray starts a local cluster for this command and stops it afterwards.")]
"""``--address ADDR`` (Ray only; default None)."""

WorkersOption = Annotated[int | None, typer.Option(
    "--workers", min=1, metavar="N",
    help="How many workers: local defaults to 1 (in this process), ray to the cluster's "
         "CPUs.")]
"""``--workers N`` (>= 1; default None: the engine's own default)."""


def describe_where(executor: Executor) -> str:
    """One line saying where an executor's work runs (for standard error)."""
    info = executor.describe()
    if info.get("engine") == "ray":
        address = info.get("address")
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        nodes = info.get("nodes")
        node_text = f", {nodes} node{'s' if nodes != 1 else ''}" if nodes else ""
        return f"rankproof: running on {where} ({info.get('workers')} workers{node_text})"
    return f"rankproof: running on this machine ({info.get('workers')} workers)"


#: The most threads ``--workers`` starts for calls to a server (judge, targets):
#: past this, threads only queue on the server and cost memory.
MAX_WORKERS = 256


def cap_workers(workers: int | None) -> int | None:
    """``--workers`` for the local engine, bounded before any pool starts.

    CPU-bound work never runs on more processes than this machine has CPUs
    (`LocalExecutor.map` lowers it), but calls to a server (a judge, a target)
    wait on the network, so a larger count still helps them: it is kept, up to
    `MAX_WORKERS`. Above the CPUs one note on standard error says both; a
    million workers is lowered to `MAX_WORKERS` rather than exhausting the
    machine before any work starts.
    """
    from rankproof.engine import cpu_count

    if workers is None or isinstance(workers, bool) or not isinstance(workers, int):
        return workers
    cpus = cpu_count()
    if workers <= cpus:
        return workers
    used = min(workers, MAX_WORKERS)
    print(f"rankproof: note: --workers {workers} is more than this machine's {cpus} "
          f"CPU{'s' if cpus != 1 else ''}; CPU-bound work uses {cpus} processes, calls to a "
          f"server up to {used} threads", file=sys.stderr, flush=True)
    return used


@contextmanager
def engine_from(engine: str = "local", address: str | None = None,
                workers: int | None = None) -> Iterator[Executor]:
    """The executor the three options ask for, closed when the block ends.

    A bad combination (``--address`` with ``local``) or a missing ``ray`` extra
    raises the engine's `ConfigError` / `MissingExtraError` (exit 2).
    """
    global RAY_USED
    from rankproof.engine import executor_for

    if str(engine) == "local":
        workers = cap_workers(workers)
    executor = executor_for(str(engine), address=address, workers=workers)
    RAY_USED = RAY_USED or executor.name == "ray"
    try:
        if executor.name == "ray":
            print(describe_where(executor), file=sys.stderr, flush=True)
        yield executor
    finally:
        executor.close()


__all__ = ["MAX_WORKERS", "AddressOption", "EngineChoice", "EngineOption", "WorkersOption",
           "cap_workers", "describe_where", "engine_from"]
