"""`compare`: several runs, several measures, one honest verdict per pair.

Every candidate is compared with the baseline on every measure by a paired
test over the same topics (the qrels' topics, so pairing by query id always
holds). All the p-values of one call form one family and are corrected
together (Holm by default), because a table with twelve cells gives twelve
chances of a false "better". A verdict is *better* or *worse* only when the
corrected p is at most ``alpha``; the direction follows the measure's
polarity. A non-significant difference that would need more queries than
there are is flagged *underpowered*: "no detectable difference" is not "no
difference".

The unjudged-hole caveat: measures score unjudged documents as non-relevant.
A run that retrieves many documents nobody judged (a new dense retriever
evaluated on BM25-pooled qrels) is then penalised for the pool, not for its
quality. When a compared run's Judged@k at the measure's cutoff is below 0.9,
or differs from the baseline's by more than 0.1, the row says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rankproof._errors import InputError, PairingError
from rankproof.comparison._pairs import compare_scores, trusted_family_cost
from rankproof.comparison._row import Comparison
from rankproof.data import Order, Qrels, Run, as_qrels, as_run
from rankproof.measures import Measure, PerQuery, TopicPolicy, evaluate, resolve_measures
from rankproof.stats import ProgressCallback, StatSettings

Topics = TopicPolicy
JUDGED_FLOOR = 0.9
JUDGED_GAP = 0.1
JUDGED_DEFAULT_DEPTH = 100  # measures without a cutoff look deep: Judged@100 stands for them


def judged_measure(m: Measure) -> Measure:
    """The Judged@k that says how much of what ``m`` looks at was ever judged."""
    return Measure("Judged", cutoff=m.depth or JUDGED_DEFAULT_DEPTH)


def _name_runs(runs: Mapping[str, Any] | Sequence[Run]) -> dict[str, Run]:
    """Runs by unique name: a mapping's keys, else each `Run`'s own name."""
    named: dict[str, Run] = {}
    if isinstance(runs, Mapping):
        for name, run in runs.items():
            if not isinstance(name, str):
                raise InputError(f"run names must be strings, got {name!r}")
            named[name] = run if isinstance(run, Run) else as_run(run, name=name)
    elif isinstance(runs, Sequence) and not isinstance(runs, str | bytes):
        for run in runs:
            if not isinstance(run, Run):
                raise InputError(f"a sequence of runs must hold Run objects (got a "
                                 f"{type(run).__name__}); pass a mapping {{name: run}} to "
                                 "compare dicts or DataFrames")
            if run.name in named:
                raise InputError(
                    f"two runs are named {run.name!r}; pass a mapping of unique names to runs")
            named[run.name] = run
    else:
        raise InputError("runs must be a mapping {name: run} or a sequence of runs, got "
                         f"{type(runs).__name__}")
    if len(named) < 2:
        raise InputError(f"compare needs at least two runs, got {len(named)}")
    return named


def _swapped(qrels: Any, runs: Any) -> bool:
    return (isinstance(qrels, Run) or isinstance(runs, Qrels)
            or (isinstance(qrels, Mapping) and any(isinstance(v, Run) for v in qrels.values())))


def compare(
    qrels: Qrels | Mapping[str, Mapping[str, int]] | Any,
    runs: Mapping[str, Any] | Sequence[Run],
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    baseline: str | None = None,
    stats: StatSettings | None = None,
    rel_level: int = 1,
    topics: Topics = "complete",
    complete_judgments: bool = False,
    order: Order = "score",
    progress: ProgressCallback | None = None,
) -> Comparison:
    """Compare runs on the same qrels; see the module docstring for the rules.

    Qrels first, as in `rankproof.evaluate` (and ranx). ``qrels`` is a
    `Qrels` or anything `rankproof.data.as_qrels` reads (a ``{qid: {docid:
    rel}}`` dict, a DataFrame); ``runs`` is a mapping of names to runs (a
    `Run` or anything `rankproof.data.as_run` reads), or a sequence of
    `Run` objects with unique names.
    ``baseline`` defaults to the first run. ``stats`` holds the test, α, correction,
    resamples, seed, confidence level and pairs (`rankproof.stats.StatSettings`,
    validated when it is made; the defaults when None):
    ``StatSettings(test="t", resamples=2000)``. ``pairs="baseline"`` compares
    each candidate with the baseline (corrected together by ``correction``:
    "holm", "bh", "bonferroni" or "none"); ``pairs="all"`` compares every
    pair, with randomized Tukey HSD p-values (which already control the
    error rate over the pairs of one measure). ``complete_judgments=True``
    declares that every document absent from the qrels is known to be
    non-relevant (quote-anchored judgments over a closed corpus are complete
    by construction), which turns off the unjudged-hole caveat; the choice
    is recorded in the result. ``order`` ranks each run as `rankproof.evaluate`
    does: by score (trec_eval) or by the run's rank column. ``progress`` is told the
    resamples done of those planned (`rankproof.stats.ProgressCallback`); it changes no
    number.
    """
    if _swapped(qrels, runs):
        raise InputError("compare(qrels, runs, ...) takes the qrels first, as evaluate and "
                         "ranx do; the arguments look swapped")
    qrels = as_qrels(qrels)
    named = _name_runs(runs)
    ms = resolve_measures(measures)
    settings = StatSettings() if stats is None else stats
    _check_cost(qrels, list(named), ms, baseline=baseline, stats=settings, topics=topics)
    judged_ms = tuple(dict.fromkeys(judged_measure(m) for m in ms))
    tables = {name: evaluate(qrels, run, (*ms, *judged_ms), rel_level=rel_level, topics=topics,
                             order=order)
              for name, run in named.items()}
    return compare_tables(
        qrels, tables, ms, baseline=baseline, stats=settings, rel_level=rel_level,
        topics=topics, complete_judgments=complete_judgments,
        progress=progress)


def _check_cost(qrels: Qrels, names: list[str], ms: Sequence[Measure], *, baseline: str | None,
                stats: StatSettings, topics: Topics) -> None:
    """Refuse an unknown baseline, or resampling that would cost too much, before any run is
    evaluated (the cost check runs again on the evaluated scores)."""
    if baseline is not None and baseline not in names:
        raise InputError(f"baseline {baseline!r} is not one of the runs: {', '.join(names)}")
    # With topics="complete" the qrels' topics are exactly the ids of every row.
    n = len(qrels.topics) if topics == "complete" else 1
    all_pairs = stats.pairs == "all"
    couples = len(names) * (len(names) - 1) // 2 if all_pairs else len(names) - 1
    trusted_family_cost([n] * couples * len(ms), stats.test, stats.resamples,
                        tukey=[(n, len(names))] * len(ms) if all_pairs else ())


def compare_tables(
    qrels: Qrels,
    tables: Mapping[str, PerQuery],
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    baseline: str | None = None,
    stats: StatSettings | None = None,
    rel_level: int = 1,
    topics: Topics = "complete",
    complete_judgments: bool = False,
    progress: ProgressCallback | None = None,
) -> Comparison:
    """`compare`'s second half: the runs were already evaluated against ``qrels``, each
    into one `PerQuery` holding ``measures`` and their `judged_measure` columns, with
    ``rel_level`` and ``topics`` (``rankproof compare`` evaluates each run file in one task
    of an engine, `rankproof.engine`). The rows are those `compare` makes of the same runs.
    """
    if not isinstance(qrels, Qrels):
        raise InputError(f"compare_tables takes a Qrels, got {type(qrels).__name__}")
    if not isinstance(tables, Mapping) or len(tables) < 2:
        raise InputError("compare_tables takes a mapping {system: PerQuery} of at least two "
                         "systems")
    ms = resolve_measures(measures)
    settings = StatSettings() if stats is None else stats
    _check_cost(qrels, list(tables), ms, baseline=baseline, stats=settings, topics=topics)
    try:
        result = compare_evaluated(
            tables, ms, baseline=baseline, stats=settings,
            positives_only=not bool((qrels.rels <= 0).any()),
            complete_judgments=complete_judgments, progress=progress)
    except PairingError as exc:
        raise PairingError(f"{exc} (topics={topics!r}); use topics='complete' to score "
                           "missing topics 0", only_left=exc.only_left,
                           only_right=exc.only_right) from None
    return dataclasses.replace(result, rel_level=rel_level, topics=topics)


def compare_evaluated(
    tables: Mapping[str, PerQuery],
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    baseline: str | None = None,
    stats: StatSettings | None = None,
    positives_only: bool = False,
    complete_judgments: bool = False,
    progress: ProgressCallback | None = None,
) -> Comparison:
    """`compare` from already evaluated per-query tables (one `PerQuery` per system).

    The harness evaluates each stage once and hands its tables here. When the
    tables also hold the Judged@k columns of `judged_measure`, rows get the
    unjudged-hole notes (unless ``complete_judgments``, or ``positives_only``:
    qrels listing only relevant documents say nothing about what was judged).
    """
    if not isinstance(tables, Mapping) or not all(isinstance(t, PerQuery)
                                                  for t in tables.values()):
        raise InputError("compare_evaluated takes a mapping {system: PerQuery}")
    ms = resolve_measures(measures)
    settings = StatSettings() if stats is None else stats
    scores = {name: {str(m): pq.scores(m) for m in ms} for name, pq in tables.items()}
    result = compare_scores(scores, baseline=baseline,
                            higher_is_better={str(m): m.higher_is_better for m in ms},
                            stats=settings, progress=progress)
    judged_ms = tuple(dict.fromkeys(judged_measure(m) for m in ms))
    have_judged = all(str(j) in map(str, pq.measures) for pq in tables.values()
                      for j in judged_ms)
    judged = ({name: {str(j): pq.mean(j) for j in judged_ms} for name, pq in tables.items()}
              if have_judged else {})
    rows = result.rows
    if judged and not complete_judgments and not positives_only:
        by_name = {str(m): m for m in ms}
        rows = tuple(dataclasses.replace(r, notes=_judged_notes(
            judged, r.baseline, r.candidate, judged_measure(by_name[r.measure]))) for r in rows)
    caveats: list[str] = []
    if positives_only and not complete_judgments:
        caveats.append("the qrels list only relevant documents, so how many retrieved documents "
                       "were ever judged cannot be checked; unlisted documents count as "
                       "non-relevant")
    if settings.pairs == "all" and len(ms) > 1:
        caveats.append(f"Tukey HSD controls the error rate within each measure; {len(ms)} measures "
                       "were tested, so read cross-measure patterns with care")
    for name, pq in tables.items():
        caveats.extend(f"{name}: warning: {w}" for w in pq.warnings)
        if pq.zero_filled:
            caveats.append(f"{name}: {len(pq.zero_filled)} topic(s) without results scored 0")
        if pq.dropped:
            caveats.append(f"{name}: {len(pq.dropped)} run topic(s) without judgments ignored")
    return dataclasses.replace(result, rows=rows, judged=judged, caveats=tuple(caveats),
                               complete_judgments=complete_judgments)


def _judged_notes(judged: Mapping[str, Mapping[str, float]], baseline: str, candidate: str,
                  jm: Measure) -> tuple[str, ...]:
    key = str(jm)
    jb, jc = judged[baseline][key], judged[candidate][key]
    notes = []
    for name, value in ((candidate, jc), (baseline, jb)):
        if value < JUDGED_FLOOR:
            notes.append(f"{name} {key} = {value:.2f}: unjudged documents count as non-relevant "
                         "and may bias this comparison")
    if abs(jc - jb) > JUDGED_GAP and not notes:
        notes.append(f"{key} differs ({candidate} {jc:.2f} vs {baseline} {jb:.2f}): unjudged "
                     "documents count as non-relevant and may bias this comparison")
    return tuple(notes)
