"""Many run files, each loaded and evaluated in one task, on any engine.

``measure`` and ``compare`` over many runs hand each run file to an executor
(`rankproof.engine`) as a `RunFileTask`: the task reads the file, applies
trec_eval's ``-M``/``-J`` when asked, evaluates it and, for ``compare``,
collects its evidence (top ids). The results come back in the order of the
files, and the names are decided afterwards in this process by the same rule
as `rankproof.cli._runs.load_runs`, so the output is byte-identical whichever
engine ran the tasks. Only the per-run numbers travel back, never the run: a
worker holds one run at a time, and so does this process.

`evaluate_run_file` is module-level and imports only `data` and `measures`
(and `comparison` for evidence), so a worker process or a Ray task imports
little. It lives with the command line because it is the command line's
per-file job (read a path, evaluate); the library's `rankproof.evaluate`
and `rankproof.compare` stay the way to evaluate runs already in memory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rankproof._errors import InputError
from rankproof.data import Qrels, ReadOptions, Run
from rankproof.measures import EvalOptions, Measure, PerQuery, evaluate

if TYPE_CHECKING:
    from rankproof.engine import Executor


@dataclass(frozen=True)
class RunFileTask:
    """One run to evaluate: a path (read by the worker) or a `Run` already read (standard
    input can be read only once, here). Everything that decides its numbers travels in it."""

    qrels: Qrels
    run: str | Run
    measures: tuple[Measure, ...]
    name: str | None = None
    """The run's ``--name``, when given (else its tag, else the loader's name, until the
    names of all the runs are decided)."""
    read: ReadOptions = field(default_factory=ReadOptions)
    """How the run file is read: its format (None: by content), ``--dedupe``, extra
    columns, and ``--memory-cap`` (a run over it is streamed: `rankproof.cli._capped`)."""
    options: EvalOptions = field(default_factory=EvalOptions)
    """How it is evaluated: ``-l``, the topic policy, the order, ``-M`` and ``-J``."""
    evidence_depth: int = 0
    held_tables: int = 1
    """Per-query tables the command holds at once under ``--memory-cap`` (``compare``
    keeps every run's, and the comparison's rows: `rankproof.cli._capped.held_bytes`)."""
    cap_share: int = 1
    """Runs evaluated at once under ``--memory-cap``: each gets this share of the room."""


@dataclass(frozen=True)
class RunFileResult:
    """What comes back of a run: its per-query table and what naming it needs (the loader's
    name and the run's tag), plus its top ids per topic when evidence was asked for."""

    per_query: PerQuery
    name: str
    tag: str | None
    source: str | None
    top: dict[str, list[str]] | None = None
    streamed: str | None = None
    """How the run was streamed under ``--memory-cap`` (a note for standard error), or None."""


def nothing_left(name: str, source: object, options: EvalOptions) -> InputError:
    """The refusal when trec_eval's ``-M``/``-J`` leave a run with no document."""
    m, j = options.max_retrieved is not None, options.judged_only
    return InputError(f"no document of run {name!r} is left to evaluate after "
                      f"{'-M' if m else ''}{' and ' if m and j else ''}{'-J' if j else ''}",
                      path=None if source is None else str(source))


def trec_eval_limited(run: Run, qrels: Qrels, options: EvalOptions) -> Run:
    """``run`` after trec_eval's ``-M`` and ``-J`` (itself when neither is given),
    refused by `nothing_left` when they leave nothing."""
    kept = options.limited(run, qrels)
    if kept is None:
        raise nothing_left(run.name, run.source, options)
    return kept


def evaluate_run_file(task: RunFileTask) -> RunFileResult:
    """Read, (``-M``/``-J``,) evaluate and collect the evidence of one run (a worker's job)."""
    if task.read.memory_cap is not None and not isinstance(task.run, Run):
        from rankproof.cli._capped import evaluate_capped

        streamed = evaluate_capped(task, task.read.memory_cap)
        if streamed is not None:
            return streamed
    run = task.run if isinstance(task.run, Run) else task.read.load(task.run)
    loaded = run
    # The name errors quote: the final one when --name gives it, else the usual one (the
    # run's tag) until all the runs' tags are known.
    label = task.name or run.tag or run.name
    if label != run.name:
        run = dataclasses.replace(run, name=label)
    run = trec_eval_limited(run, task.qrels, task.options)
    pq = evaluate(task.qrels, run, task.measures, **task.options.keywords())
    top = None
    if task.evidence_depth > 0:
        from rankproof.comparison import collect_evidence

        top = collect_evidence(task.qrels, {"run": run}, k=task.evidence_depth,
                               rel_level=task.options.rel_level,
                               order=task.options.order).top["run"]
    source = None if loaded.source is None else str(loaded.source)
    return RunFileResult(per_query=pq, name=loaded.name, tag=loaded.tag, source=source, top=top)


def evaluate_run_files(
    qrels: Path | str, paths: Sequence[Path], measures: Sequence[Measure], *,
    executor: Executor, names: list[str] | None = None, read: ReadOptions | None = None,
    options: EvalOptions | None = None, subtopics: bool = False, evidence_depth: int = 0,
    partitions: int | None = None, held_tables: bool = False,
) -> tuple[Qrels, list[RunFileResult]]:
    """The qrels, and every run evaluated by ``executor`` and named as `load_runs` names it.

    The same checks as `rankproof.cli._runs.load_runs`, in the same order: standard input
    at most once, ``--name`` once per run, then the qrels are read here (once, shipped to
    each task), then the runs by the executor, then a run given twice or two runs with one
    name are refused. ``read``'s ``dedupe`` applies to the qrels too; its format, when
    None, is the ``--run-format`` the command line gave (else by content). ``partitions``:
    byte ranges per run (``--partitions``; None: auto).
    ``held_tables``: the command keeps every run's table (``compare``), which
    ``--memory-cap`` takes off its room; each run's plan is made before any run is read.
    """
    from rankproof.cli._runs import (
        FORMATS_ASKED,
        STDIN,
        _check_stdin,
        load_qrels_arg,
        note_input,
        unique_labels,
    )

    read = read or ReadOptions()
    options = options or EvalOptions()
    given = [str(p) for p in paths]
    _check_stdin([str(qrels), *given])
    if names and len(names) != len(given):
        raise InputError(f"--name is given {len(names)} time(s) for {len(given)} run(s); give "
                         "it once per run, in run order", field="--name")
    q: Qrels
    if subtopics:
        from rankproof.data import read_subtopic_qrels

        note_input(qrels)
        q = read_subtopic_qrels(str(qrels))
    else:
        q = load_qrels_arg(qrels, read.dedupe)
    for p in given:
        note_input(p)
    if read.format is None and FORMATS_ASKED["run"] is not None:
        read = read.replace(format=FORMATS_ASKED["run"])
    tasks = [RunFileTask(
        qrels=q, run=read.load(p) if p == STDIN else p, read=read, options=options,
        measures=tuple(measures), name=names[i] if names else None,
        evidence_depth=evidence_depth, held_tables=len(given) if held_tables else 1,
        cap_share=max(1, min(len(given), executor.workers)))
        for i, p in enumerate(given)]
    if read.memory_cap is None and not subtopics:
        # A run that would not fit in the memory available is streamed by itself, with a
        # note (the cap is the available memory: `rankproof.cli._capped.automatic_cap`).
        from rankproof.cli._app import print_note
        from rankproof.cli._capped import _mib, automatic_cap

        auto = automatic_cap(tasks)
        if auto is not None:
            cap, need = auto
            runs = "the run" if len(tasks) == 1 else "the runs"
            print_note(f"{runs} would take about {_mib(need)} in memory, more than the "
                       f"{_mib(cap)} of memory available: streamed as under --memory-cap "
                       f"{_mib(cap)} (give --memory-cap to choose)")
            read = read.replace(memory_cap=cap)
            tasks = [dataclasses.replace(t, read=read) for t in tasks]
    if read.memory_cap is not None:
        # Every run's plan is made (and a cap too small refused) before any run is read.
        from rankproof.cli._capped import plan_shares, stream_plan

        for task in tasks:
            if not isinstance(task.run, Run):
                stream_plan(task.run, read.memory_cap, task.qrels, len(task.measures),
                            **plan_shares(task))
    # A large run, with more workers than runs (or --partitions N), is evaluated as byte
    # ranges of whole topics and combined here (`rankproof.cli._partitioned_runs`).
    from rankproof.cli._partitioned_runs import evaluate_tasks

    results = evaluate_tasks(tasks, executor, partitions=partitions)
    labels = unique_labels(given, names, [_Named(r.name, r.tag) for r in results])
    return q, [r if r.per_query.run_name == n else dataclasses.replace(
        r, per_query=dataclasses.replace(r.per_query, run_name=n))
        for r, n in zip(results, labels, strict=True)]


def read_options(dedupe: object, allow_extra_columns: bool, memory_cap: int | None
                 ) -> ReadOptions:
    """The `ReadOptions` of ``--dedupe``, ``--allow-extra-columns`` and ``--memory-cap``
    (the format is the one ``--run-format`` gave: `evaluate_run_files`)."""
    return ReadOptions(dedupe=None if dedupe is None else str(dedupe),  # type: ignore[arg-type]
                       extra_columns="ignore" if allow_extra_columns else "error",
                       memory_cap=memory_cap)


@dataclass(frozen=True)
class _Named:
    """What `run_names` reads of a run: its loader name and its tag."""

    name: str
    tag: str | None


__all__ = ["RunFileResult", "RunFileTask", "evaluate_run_file", "evaluate_run_files",
           "read_options"]
