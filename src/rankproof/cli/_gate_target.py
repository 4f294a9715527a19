"""``rankproof gate --target URL --goldens PATH``: run a search service, then gate the run.

The target is an `rankproof.targets.HttpTarget` (POST ``{"query", "id"}``, read
``{"ids": [...]}``; exactly one retry on a 5xx or a transport error; a
deadline per call). The run is sharded on the engine ``--engine/--workers``
ask for, never with more requests in flight than ``--max-concurrency``,
checkpointed in the rankproof cache folder as shards finish, and resumed by
``--resume`` after an interruption. Progress goes to standard error only:
a bar on a terminal, otherwise a line at each tenth of the cases.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rankproof._errors import ConfigError, TargetError
from rankproof.cli._app import err_console
from rankproof.cli._engine import engine_from
from rankproof.cli._progress import stages
from rankproof.gate import Baseline, ChecksFile, GateVerdict, evaluate_target
from rankproof.report.console import plain
from rankproof.targets import Case, HttpTarget, RunResult, shard_plan

if TYPE_CHECKING:
    from rankproof.cli.gate import GateArgs


def parse_headers(values: list[str] | None) -> dict[str, str]:
    """``--header 'Name: value'`` (repeatable) as a mapping; a line without ``:`` is refused."""
    out: dict[str, str] = {}
    for raw in values or ():
        name, sep, value = raw.partition(":")
        if not sep or not name.strip():
            raise ConfigError(f"--header must look like 'Name: value', got {raw!r}")
        out[name.strip()] = value.strip()
    return out


@contextmanager
def progress_display(quiet: bool, label: str) -> Iterator[Callable[[int, int], None]]:
    """``progress(done, total)`` on standard error: the commands' bar on a terminal
    (`rankproof.cli._progress`: calls done / total with an ETA, after the delay), else a
    plain line at each tenth (and at the end), which a CI log keeps; nothing with
    ``--quiet``."""
    if quiet:
        yield lambda _done, _total: None
        return
    if err_console.is_terminal:
        with stages(False) as bar, bar.counting(f"{label}: target calls", "cases") as tick:
            yield tick
        return
    start = time.perf_counter()
    shown = -1

    def line(done: int, total: int) -> None:
        nonlocal shown
        tenth = done * 10 // max(total, 1)
        if tenth == shown and done != total:
            return
        shown = tenth
        err_console.print(plain(f"{label}: {done:,}/{total:,} cases answered "
                                f"({time.perf_counter() - start:.1f} s)"))

    yield line


def run_target_gate(spec: ChecksFile, base: Baseline | None, cases: Sequence[Case],
                    a: GateArgs) -> tuple[GateVerdict, RunResult, dict[str, Any]]:
    """Run the target at ``a.target`` over the golden set and gate it, with the command's
    target and engine options; also what ran it (for provenance)."""
    assert a.target is not None
    with engine_from(str(a.engine), a.address, a.workers) as executor, \
            HttpTarget(a.target, a.target_name, max_concurrency=a.max_concurrency,
                       timeout=a.timeout, deadline=a.deadline,
                       headers=parse_headers(a.headers)) as target:
        plan = shard_plan(target, executor)
        if not a.quiet:
            err_console.print(plain(f"rankproof gate: {len(cases):,} cases to {a.target}, "
                                    f"shards of {a.shard_size}; {plan.describe()}"))
        answered = 0
        with progress_display(a.quiet, "rankproof gate") as show:
            def progress(done: int, total: int) -> None:
                nonlocal answered
                answered = done
                show(done, total)

            try:
                verdict, result = evaluate_target(spec, target, cases, baseline=base,
                                                  executor=executor, shard_size=a.shard_size,
                                                  resume=a.resume, progress=progress)
            except TargetError:
                if answered:
                    err_console.print(plain(
                        f"rankproof gate: {answered:,} of {len(cases):,} cases are "
                        "checkpointed; rerun with --resume to continue from there"))
                raise
        ran = {"engine": executor.describe(),
               "target": {"url": a.target, "name": a.target_name,
                          "max_concurrency": a.max_concurrency,
                          "timeout": target.timeout, "deadline": target.deadline,
                          "shard_size": a.shard_size, "resumed": a.resume,
                          "max_in_flight": plan.max_in_flight}}
    return verdict, result, ran
