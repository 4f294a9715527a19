"""Run files measured as one request, each file read and evaluated in one task, on any engine.

`measure_files` is the library's verb behind ``rankproof measure`` and ``rankproof
compare`` over files: a `RunFilesRequest` names the qrels, the run files, the measures
and the settings (`rankproof.data.ReadOptions`, `rankproof.measures.EvalOptions`), and
the verb hands each run file to an executor (`rankproof.engine`) as a `RunFileTask`: the
task reads the file, applies trec_eval's ``-M``/``-J`` when asked, evaluates it and, for
a comparison, collects its evidence (top ids). The results come back in the order of the
files, and the names are decided afterwards in this process by the one naming rule
(`rankproof.jobs._naming`), so the output is identical whichever engine ran the tasks.
Only the per-run numbers travel back, never the run: a worker holds one run at a time,
and so does this process.

`evaluate_run_file` is module-level and imports only `data` and `measures` (and
`comparison` for evidence), so a worker process or a Ray task imports little. The
library's `rankproof.evaluate` and `rankproof.compare` stay the way to evaluate runs
already in memory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rankproof._errors import InputError
from rankproof.data import Qrels, ReadOptions, Run, SubtopicQrels, load_qrels
from rankproof.jobs._naming import STDIN, check_names, check_stdin, unique_labels
from rankproof.measures import EvalOptions, Measure, PerQuery, evaluate

if TYPE_CHECKING:
    from rankproof.engine import Executor

Notify = Callable[[str, "str | None"], None]
"""Where a note goes as it arises: ``(text, about)``, ``about`` naming the run or None."""


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
    columns, and ``--memory-cap`` (a run over it is streamed: `rankproof.jobs._capped`)."""
    options: EvalOptions = field(default_factory=EvalOptions)
    """How it is evaluated: ``-l``, the topic policy, the order, ``-M`` and ``-J``."""
    evidence_depth: int = 0
    held_tables: int = 1
    """Per-query tables the command holds at once under ``--memory-cap`` (``compare``
    keeps every run's, and the comparison's rows: `rankproof.jobs._capped.held_bytes`)."""
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
        from rankproof.jobs._capped import evaluate_capped

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


@dataclass(frozen=True)
class Note:
    """A note the request gave rise to (``note (about): text`` on a terminal)."""

    text: str
    about: str | None = None


@dataclass(frozen=True)
class RunFilesRequest:
    """Qrels and run files to evaluate with ``measures``, and how: validated at construction
    (standard input at most once, a name per run when names are given).

    ``qrels`` is a path (``-``: standard input) or `Qrels` already read (an experiment's
    judgments, which may come from quote-anchored judgments rather than a file).

    ``read``'s ``dedupe`` applies to the qrels too, and its format (None: by content) to
    every run; ``qrels_format`` is the qrels' (None: by content). ``subtopics``: the qrels
    are ndeval's subtopic qrels. ``evidence_depth``: keep each run's top ids per topic (a
    comparison's evidence). ``partitions``: byte ranges per run (None: decided by the
    executor's workers, `rankproof.jobs._ranges`). ``keep_all``: the caller keeps every
    run's table (a comparison), which ``--memory-cap`` takes off its room.
    """

    qrels: str | Qrels
    runs: tuple[str, ...]
    measures: tuple[Measure, ...]
    names: tuple[str, ...] | None = None
    read: ReadOptions = field(default_factory=ReadOptions)
    options: EvalOptions = field(default_factory=EvalOptions)
    qrels_format: str | None = None
    subtopics: bool = False
    evidence_depth: int = 0
    partitions: int | None = None
    keep_all: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.qrels, Qrels):
            object.__setattr__(self, "qrels", str(self.qrels))
        object.__setattr__(self, "runs", tuple(str(p) for p in self.runs))
        object.__setattr__(self, "measures", tuple(self.measures))
        if self.names is not None:
            object.__setattr__(self, "names", tuple(self.names))
        check_stdin([*([self.qrels] if isinstance(self.qrels, str) else []), *self.runs])
        check_names(self.names, self.runs)
        if self.evidence_depth < 0:
            raise InputError(f"evidence depth must be 0 or more, not {self.evidence_depth}",
                             field="--evidence-depth")
        if self.partitions is not None and self.partitions < 1:
            raise InputError(f"partitions must be 1 or more, not {self.partitions}",
                             field="--partitions")


@dataclass(frozen=True)
class RunFilesResult:
    """The qrels as read, every run's `RunFileResult` in the request's order (named), and
    the notes the request gave rise to, in the order they arose."""

    qrels: Qrels
    runs: tuple[RunFileResult, ...]
    notes: tuple[Note, ...] = ()

    @property
    def tables(self) -> dict[str, PerQuery]:
        """Each run's per-query table, by its name."""
        return {r.per_query.run_name: r.per_query for r in self.runs}


def measure_files(request: RunFilesRequest, executor: Executor | None = None, *,
                  notify: Notify | None = None) -> RunFilesResult:
    """Every run of ``request`` evaluated by ``executor`` (default: this process) and named.

    The checks run in this order: the request's own (at construction), then the qrels are
    read here (once, shipped to each task), then each run's memory plan when a cap applies
    (a cap too small is refused before any run is read), then the runs by the executor,
    then a run given twice or two runs with one name are refused. ``notify`` hears each
    note as it arises (a command prints it at once); the result holds them all.
    """
    if executor is None:
        from rankproof.engine import LocalExecutor

        executor = LocalExecutor(workers=1)
    notes: list[Note] = []

    def note(text: str, about: str | None = None) -> None:
        notes.append(Note(text, about))
        if notify is not None:
            notify(text, about)

    read, given = request.read, list(request.runs)
    q: Qrels
    if isinstance(request.qrels, Qrels):
        q = request.qrels
    elif request.subtopics:
        from rankproof.data import read_subtopic_qrels

        q = read_subtopic_qrels(request.qrels)
    else:
        q = load_qrels(request.qrels, dedupe=read.dedupe,
                       format=request.qrels_format)  # type: ignore[arg-type]
    names = request.names
    tasks = [RunFileTask(
        qrels=q, run=read.load(p) if p == STDIN else p, read=read, options=request.options,
        measures=request.measures, name=names[i] if names else None,
        evidence_depth=request.evidence_depth,
        held_tables=len(given) if request.keep_all else 1,
        cap_share=max(1, min(len(given), executor.workers)))
        for i, p in enumerate(given)]
    if read.memory_cap is None and not isinstance(q, SubtopicQrels):
        # A run that would not fit in the memory available is streamed by itself, with a
        # note (the cap is the available memory: `rankproof.jobs._capped.automatic_cap`).
        from rankproof.jobs._capped import automatic_cap, mib

        auto = automatic_cap(tasks)
        if auto is not None:
            cap, need = auto
            runs = "the run" if len(tasks) == 1 else "the runs"
            note(f"{runs} would take about {mib(need)} in memory, more than the "
                 f"{mib(cap)} of memory available: streamed as under --memory-cap "
                 f"{mib(cap)} (give --memory-cap to choose)")
            read = read.replace(memory_cap=cap)
            tasks = [dataclasses.replace(t, read=read) for t in tasks]
    if read.memory_cap is not None:
        # Every run's plan is made (and a cap too small refused) before any run is read.
        from rankproof.jobs._capped import plan_shares, stream_plan

        for task in tasks:
            if not isinstance(task.run, Run):
                stream_plan(task.run, read.memory_cap, task.qrels, len(task.measures),
                            **plan_shares(task))
    # A large run, with more workers than runs (or partitions asked for), is evaluated as
    # byte ranges of whole topics and combined here (`rankproof.jobs._ranges`).
    from rankproof.jobs._ranges import evaluate_tasks

    results = evaluate_tasks(tasks, executor, partitions=request.partitions,
                             qrels_format=request.qrels_format, note=note)
    labels = unique_labels(given, names, [_Named(r.name, r.tag) for r in results])
    named = tuple(r if r.per_query.run_name == n else dataclasses.replace(
        r, per_query=dataclasses.replace(r.per_query, run_name=n))
        for r, n in zip(results, labels, strict=True))
    for done in named:
        if done.streamed is not None:
            note(done.streamed, done.per_query.run_name)
    return RunFilesResult(qrels=q, runs=named, notes=tuple(notes))


@dataclass(frozen=True)
class _Named:
    """What `run_names` reads of a run: its loader name and its tag."""

    name: str
    tag: str | None


__all__ = ["Note", "Notify", "RunFileResult", "RunFileTask", "RunFilesRequest", "RunFilesResult",
           "evaluate_run_file", "measure_files", "nothing_left", "trec_eval_limited"]
