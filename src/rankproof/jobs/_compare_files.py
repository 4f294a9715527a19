"""Run files compared as one request: `compare_files`, the verb behind ``rankproof compare``.

A `CompareFilesRequest` is the files to read (a `RunFilesRequest`, the baseline first)
and the statistics settings (`rankproof.stats.StatSettings`). The verb evaluates every run
file in one task of an executor, with each measure's ``Judged@k`` column beside it (the
comparison's unjudged-document caveat reads them), then pairs, tests and corrects the rows
with `rankproof.comparison.compare_tables`, and attaches the evidence (each run's first
ids per topic, the gold, the query text) when the files request asked for it. The command
line and an experiment file's ``compare`` stage both call it, so a stage accepts what the
command does and computes what it computes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rankproof.comparison import Comparison, collect_evidence, compare_tables, judged_measure
from rankproof.jobs._run_files import Notify, RunFilesRequest, RunFilesResult, measure_files
from rankproof.measures import Measure, resolve_measures
from rankproof.stats import ProgressCallback, StatSettings

if TYPE_CHECKING:
    from rankproof.engine import Executor


@dataclass(frozen=True)
class CompareFilesRequest:
    """The runs to compare (``files.runs[0]`` is the baseline; ``files.measures`` the
    measures compared, none: the default list) and how they are tested.

    ``queries``: each topic's text, for the evidence (``queries_source`` names where it came
    from, in the caveat that says when some topics have none). ``complete_judgments``:
    every document absent from the qrels is known to be non-relevant, which turns off the
    unjudged-document caveat (`rankproof.compare`).
    """

    files: RunFilesRequest
    stats: StatSettings = field(default_factory=StatSettings)
    queries: Mapping[str, str] | None = None
    queries_source: str | None = None
    complete_judgments: bool = False

    def __post_init__(self) -> None:
        if len(self.files.runs) < 2:
            from rankproof._errors import InputError

            raise InputError("a comparison needs a baseline and at least one candidate, "
                             f"found {len(self.files.runs)} run(s)", field="runs")

    @property
    def measures(self) -> tuple[Measure, ...]:
        """The measures compared (the files request's, else the default list)."""
        return resolve_measures(list(self.files.measures) or None)

    def evaluation(self) -> RunFilesRequest:
        """The files request that evaluates the runs for this comparison: every measure
        with its ``Judged@k`` column, every run's table kept."""
        ms = self.measures
        return dataclasses.replace(
            self.files, measures=(*ms, *dict.fromkeys(judged_measure(m) for m in ms)),
            keep_all=True)


@dataclass(frozen=True)
class CompareFilesResult:
    """The comparison (its evidence attached when asked for), and the evaluation of the
    files it was made from (the qrels as read, each run's table, the notes)."""

    comparison: Comparison
    files: RunFilesResult


def compare_files(request: CompareFilesRequest, executor: Executor | None = None, *,
                  notify: Notify | None = None, progress: ProgressCallback | None = None,
                  evaluated: RunFilesResult | None = None) -> CompareFilesResult:
    """Evaluate ``request``'s files and compare every candidate with the baseline.

    ``notify`` hears each note of the evaluation as it arises; ``progress`` is told the
    resamples done (`rankproof.stats.ProgressCallback`; it changes no number).
    ``evaluated``: the files already evaluated, by ``measure_files(request.evaluation())``
    (a command that shows the two steps as two stages of its progress display runs the
    first itself); None evaluates them here.
    """
    done = evaluated if evaluated is not None else measure_files(
        request.evaluation(), executor, notify=notify)
    files, ms = request.files, request.measures
    runs = done.runs
    options = files.options
    result = compare_tables(
        done.qrels, done.tables, ms, baseline=runs[0].per_query.run_name, stats=request.stats,
        rel_level=options.rel_level, topics=options.topics,
        complete_judgments=request.complete_judgments, progress=progress)
    if options.notes():
        result = dataclasses.replace(result, caveats=(*result.caveats, *options.notes()))
    if files.evidence_depth > 0:
        evidence = dataclasses.replace(
            collect_evidence(done.qrels, {}, k=files.evidence_depth, queries=request.queries,
                             rel_level=options.rel_level, order=options.order),
            top={r.per_query.run_name: r.top or {} for r in runs})
        caveats = result.caveats
        if request.queries is not None:
            missing = [t for t in evidence.topics if t not in evidence.queries]
            if missing:
                where = request.queries_source or "the query texts given"
                caveats = (*caveats, f"{len(missing)} of {len(evidence.topics)} topic(s) "
                                     f"have no text in {where}; the evidence shows their ids "
                                     "only")
        result = dataclasses.replace(result, evidence=evidence, caveats=caveats)
    return CompareFilesResult(comparison=result, files=done)


__all__ = ["CompareFilesRequest", "CompareFilesResult", "compare_files"]
