"""The engine under every comparison: pair, test, correct, decide — once.

`compare_pairs` is the single place where two sides are paired by id, tested,
corrected as one family and given a verdict by the measure's polarity.
`compare_scores` feeds it a ``{system: {measure: {qid: value}}}`` table;
`rankproof.comparison.compare` feeds it evaluated runs; the gate feeds it one
pairing per baseline check (each with its own scope and α). Keeping one
engine is what makes a pairing mismatch the same `PairingError`, and a
"win" the same thing, wherever a comparison is made.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rankproof._errors import ConfigError, InputError, PairingError
from rankproof.comparison._null import summarise_null
from rankproof.comparison._row import Comparison, ComparisonRow, Verdict
from rankproof.measures import polarity
from rankproof.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_TEST,
    TEST_INTERVALS,
    TESTS,
    Cost,
    PairedResult,
    PairsName,
    ProgressCallback,
    StatSettings,
    Tally,
    TukeyHSDResult,
    check_choice,
    check_cost,
    check_int,
    check_probability,
    choose_procedure,
    correct,
    paired_interval,
    paired_test,
    paired_test_cost,
    paired_tests,
    tukey_cost,
    tukey_hsd_randomized,
)

Pairs = PairsName
_SHOWN = 5


@dataclass(frozen=True)
class Pairing:
    """One requested comparison: two sides' ``{id: value}`` scores on one measure.

    ``alpha`` overrides the call's level for this row (a gate check may set
    its own). ``unit`` names what the ids are ("query" or "case") and
    ``context`` says where the pairing comes from (e.g. ``check 'x'``); both
    only shape error messages.
    """

    candidate: str
    baseline: str
    measure: str
    candidate_scores: Mapping[str, float]
    baseline_scores: Mapping[str, float]
    higher_is_better: bool
    alpha: float | None = None
    unit: str = "query"
    context: str | None = None
    margin: float | None = None
    """A non-inferiority margin (> 0): the row then tests, one-sided, "the candidate is
    worse by at least ``margin``" instead of "the two are the same"."""


def _shown(ids: Sequence[str]) -> str:
    head = ", ".join(map(repr, ids[:_SHOWN]))
    return head + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def _plural(unit: str) -> str:
    return unit[:-1] + "ies" if unit.endswith("y") else unit + "s"


def _aligned(p: Pairing) -> tuple[tuple[str, ...], tuple[float, ...], tuple[float, ...]]:
    """The pairing's ids (sorted) and both sides' values; `PairingError` when ids differ."""
    cand, base = p.candidate_scores, p.baseline_scores
    same = cand.keys() == base.keys()  # the usual case, checked without building sets
    only_c = [] if same else sorted(set(cand) - set(base))
    only_b = [] if same else sorted(set(base) - set(cand))
    where = f"{p.context}: " if p.context else ""
    if only_c or only_b:
        raise PairingError(
            f"{where}{p.candidate!r} and {p.baseline!r} cover different {_plural(p.unit)} for "
            f"{p.measure} ({len(only_c)} only in {p.candidate!r}: {_shown(only_c) or 'none'}; "
            f"{len(only_b)} only in {p.baseline!r}: {_shown(only_b) or 'none'}); pairing is "
            f"by {p.unit} id",
            only_left=only_c, only_right=only_b)
    if not p.candidate_scores:
        raise InputError(f"{where}no {p.unit} has a value for {p.measure!r}")
    qids = tuple(sorted(cand))
    return (qids, tuple(map(float, map(cand.__getitem__, qids))),
            tuple(map(float, map(base.__getitem__, qids))))


def verdict(p_corrected: float, alpha: float, difference: float,
            higher_is_better: bool) -> Verdict:
    """*better*/*worse* when ``p_corrected ≤ alpha`` and the means differ, by polarity."""
    if p_corrected <= alpha and difference != 0.0:
        return "better" if (difference > 0) == higher_is_better else "worse"
    return "no detectable difference"


def row_levels(p_values: Sequence[float], alphas: Sequence[float], correction: str
               ) -> list[float]:
    """The level each row of a family is tested at, so that its interval can match it.

    A row is declared *better*/*worse* when its corrected p-value is at most
    its α; equivalently, when its raw p-value is at most the level returned
    here, and the row's interval is built at confidence ``1 − level``:

    * "none": α. "bonferroni": α/m.
    * "holm": the step-down level. With p-values sorted ascending, a rejected
      row of rank j is tested at α/(m − j + 1). A row that is not rejected
      gets the level at which the step-down stopped, α/(m − i + 1) for the
      first rank i ≤ j that failed — not its own step's level: its own p
      may be below its own level (Holm's monotonicity: once one hypothesis
      is kept, every later one is), and its interval must then still reach
      0. This is the one place where Holm's levels and its verdicts part,
      resolved toward agreement.
    * "bh": the false-coverage-rate level of Benjamini & Yekutieli (2005),
      R·α/m with R the number of rows declared (α/m when none is), computed
      per row when rows carry different α.
    """
    m = len(p_values)
    p = [float(x) for x in p_values]
    if correction == "none":
        return [float(a) for a in alphas]
    if correction == "bonferroni":
        return [float(a) / m for a in alphas]
    order = sorted(range(m), key=lambda i: p[i])  # stable, as `correct` ranks them
    levels = [0.0] * m
    for rank0, row in enumerate(order):
        a = float(alphas[row])
        if correction == "holm":
            stop = next((i for i in range(rank0 + 1) if (m - i) * p[order[i]] > a), None)
            levels[row] = a / (m - (rank0 if stop is None else stop))
        else:  # "bh"
            declared = max((k + 1 for k in range(m) if p[order[k]] <= (k + 1) * a / m),
                           default=0)
            levels[row] = max(declared, 1) * a / m
    return levels


def agree(low: float, high: float, significant: bool, difference: float
          ) -> tuple[float, float, bool]:
    """The interval moved, if it must, so that it excludes 0 exactly when ``significant``.

    Built from the test, it already does, except within the test's rounding
    tolerance or for a rank test whose p-value is not monotone in the shift.
    Not significant: widen the interval to reach 0. Significant: move the end
    that touches 0 just past it, on the side of the estimate. The third value
    says whether anything moved (the row then carries a note).
    """
    excludes = low > 0.0 or high < 0.0
    if excludes == significant:
        return low, high, False
    if not significant:
        return min(low, 0.0), max(high, 0.0), True
    if difference >= 0.0:
        return math.nextafter(0.0, 1.0), max(high, math.nextafter(0.0, 1.0)), True
    return min(low, math.nextafter(0.0, -1.0)), math.nextafter(0.0, -1.0), True


def family_cost(sizes: Sequence[int], *, test: str = DEFAULT_TEST,
                resamples: int = DEFAULT_RESAMPLES, tukey: Sequence[tuple[int, int]] = (),
                what: str = "the comparison",
                error: type[InputError] | type[ConfigError] = InputError) -> Cost:
    """Check what testing one family costs before any of it runs; refuse it over the bounds.

    ``sizes`` holds the number of paired ids of each row; ``tukey`` the
    ``(ids, systems)`` of each Tukey HSD run beside them. The rows run one
    after another, so their times add up while memory is one row's peak.
    Every entry point that compares (`compare`, `compare_scores`,
    `compare_pairs`, the harness, the gate's checks files) calls this, so a
    ``resamples`` typo is refused with the estimate, in seconds, instead of
    failing hours later (or with a ``MemoryError``). ``error`` is
    `ConfigError` when the number came from a checks or config file.
    """
    try:
        test = check_choice(test, "test", TESTS)
        resamples = check_int(resamples, "resamples", 1)
    except InputError as exc:
        if issubclass(error, InputError):
            raise
        raise error(str(exc)) from None
    return trusted_family_cost(sizes, test, resamples, tukey, what, error)


def trusted_family_cost(sizes: Sequence[int], test: str, resamples: int,
                        tukey: Sequence[tuple[int, int]] = (), what: str = "the comparison",
                        error: type[InputError] | type[ConfigError] = InputError) -> Cost:
    """`family_cost` for a ``test`` and ``resamples`` already validated (a `StatSettings`'s):
    the comparison functions call this, so the choices are not checked again per call."""
    total = Cost(0.0, 0.0)
    for n in sizes:
        # The test (with its uncorrected interval), then the row's interval at its level.
        total = total.then(paired_test_cost(max(1, n), test, None, resamples)).then(
            paired_test_cost(max(1, n), "t", TEST_INTERVALS[test], resamples))
    for ids, systems in tukey:
        total = total.then(tukey_cost(max(1, ids), systems, resamples))
    largest = max(sizes, default=0)
    rows = f"{len(sizes)} paired test{'s' if len(sizes) != 1 else ''}"
    extra = f" and {len(tukey)} Tukey HSD" if tukey else ""
    return check_cost(total, f"{what} ({rows}{extra} on up to {largest} "
                             f"id{'s' if largest != 1 else ''}, {test} test) with "
                             f"resamples={resamples}", error=error, field="resamples")


Interval = tuple[float, float, float, str]  # low, high, level (1 − confidence), method


def _margin_row(p: Pairing, r: PairedResult, p_corrected: float, level: float,
                interval: Interval) -> tuple[float, float, bool, Verdict]:
    """A non-inferiority row's interval (moved, if it must, to agree) and verdict."""
    assert p.margin is not None
    low, high, _, _ = interval
    if p.higher_is_better:  # one-sided [low, ∞): is the loss smaller than the margin?
        bound = -p.margin
        clears = low > bound
    else:  # (−∞, high]: is the increase (e.g. latency) smaller than the margin?
        bound = p.margin
        clears = high < bound
    shown = clears if r.test == "bootstrap" else p_corrected <= level
    adjusted = shown != clears
    if adjusted and p.higher_is_better:
        low = math.nextafter(bound, math.inf) if shown else bound
    elif adjusted:
        high = math.nextafter(bound, -math.inf) if shown else bound
    return low, high, adjusted, "non-inferior" if shown else "not shown non-inferior"


def _row(p: Pairing, aligned: tuple[tuple[str, ...], tuple[float, ...], tuple[float, ...]],
         r: PairedResult, p_corrected: float, alpha: float, correction: str,
         interval: Interval) -> ComparisonRow:
    level = alpha if p.alpha is None else p.alpha
    low, high, row_level, method = interval
    qids, cand, base = aligned
    v: Verdict
    if p.margin is not None:
        low, high, adjusted, v = _margin_row(p, r, p_corrected, level, interval)
        notes = (("the interval was moved to its bound to agree with the test (a tie "
                  "within the test's rounding tolerance)",) if adjusted else ())
        return ComparisonRow(
            baseline=p.baseline, candidate=p.candidate, measure=p.measure,
            higher_is_better=p.higher_is_better, result=r, p_corrected=float(p_corrected),
            verdict=v, underpowered=False, alpha=level, correction=correction, qids=qids,
            candidate_values=cand, baseline_values=base, ci_low=float(low),
            ci_high=float(high), ci_level=1.0 - row_level, ci_method=method,
            ci_adjusted=adjusted, notes=notes, margin=p.margin)  # no null: it is shifted
    if r.test == "bootstrap":  # the bootstrap's verdict is its interval's (seeds 000, 003)
        significant = low > 0.0 or high < 0.0
    else:
        significant = p_corrected <= level and not (r.difference == 0.0
                                                   and method not in ("wilcoxon", "sign"))
    centre = (r.difference if method not in ("wilcoxon", "sign")
              or not (math.isfinite(low) and math.isfinite(high)) else (low + high) / 2.0)
    low, high, adjusted = agree(low, high, significant, centre)
    if significant:
        v = "better" if (low > 0.0) == p.higher_is_better else "worse"
    else:
        v = "no detectable difference"
    underpowered = (v == "no detectable difference" and r.queries_needed is not None
                    and r.queries_needed > r.n)
    notes = (("the interval was widened to reach 0, or moved just past it, to agree with "
              "the test (a tie within the test's rounding tolerance)",) if adjusted else ())
    return ComparisonRow(
        baseline=p.baseline, candidate=p.candidate, measure=p.measure,
        higher_is_better=p.higher_is_better, result=r, p_corrected=float(p_corrected),
        verdict=v, underpowered=underpowered, alpha=level, correction=correction, qids=qids,
        candidate_values=cand, baseline_values=base, ci_low=float(low), ci_high=float(high),
        ci_level=1.0 - row_level, ci_method=method, ci_adjusted=adjusted, notes=notes,
        null=summarise_null(r, np.subtract(cand, base)))


def compare_pairs(
    pairings: Sequence[Pairing],
    *,
    stats: StatSettings | None = None,
    p_corrected: Sequence[float] | None = None,
    corrected_by: str | None = None,
    intervals: Sequence[Interval] | None = None,
    bootstrap: bool = True,
    progress: ProgressCallback | None = None,
) -> tuple[ComparisonRow, ...]:
    """Pair, test and correct every pairing as one family; one row each, in order.

    Every pairing must cover the same ids on both sides (`PairingError`
    otherwise, listing both sides' extra ids). The p-values of all pairings
    are adjusted together by ``stats.correction`` ("holm", "bh", "bonferroni",
    "none"), unless ``p_corrected`` supplies them (e.g. from Tukey HSD, which
    controls the family itself; ``corrected_by`` then names that procedure, and
    ``intervals`` should supply its simultaneous intervals). ``stats`` holds the
    test, α, resamples, seed and confidence level (`rankproof.stats.StatSettings`,
    validated when it was made; the defaults when None); a pairing's own ``alpha``
    overrides α for its row. ``stats.pairs`` plays no part: the pairings are given.

    Each row's interval is the test inverted at the level its correction
    implies (`row_levels`), so it excludes 0 exactly when the verdict is
    *better* or *worse*; ``confidence_level`` sets the level of the
    uncorrected interval kept in ``row.result`` (``stats.confidence_level``).

    With many ids, a randomization row is computed from the normal limit of its
    randomization distribution instead of drawn sign vectors wherever the Berry–Esseen
    bound proves the exact test's verdict at any level the correction could give the
    row (`rankproof.stats.choose_procedure`, between α/m and α); every other row is
    resampled as before. ``row.result.procedure`` and ``row.result.resamples`` say which.

    The resampled randomization rows are tested together (`rankproof.stats.paired_tests`):
    one draw of sign vectors per query count serves every row's p-value and both its
    intervals, and gives the numbers each row's own test would. ``bootstrap=False``
    leaves out the percentile bootstrap interval those rows report beside their own
    (``row.result.bootstrap_low`` None) — a trend over many results, which shows none,
    would spend most of its time drawing it.

    ``progress`` is told the row-resamples done of those planned (`rankproof.stats.Tally`,
    `row_resamples`) as the rows are resampled; it changes no number.
    """
    settings = StatSettings() if stats is None else stats
    test, alpha, resamples = settings.test, settings.alpha, settings.resamples
    seed, confidence_level = settings.seed, settings.confidence_level
    correction: str = settings.correction
    if p_corrected is not None:
        if not corrected_by:
            raise InputError("p_corrected needs corrected_by: the name of the procedure "
                             "that corrected them (recorded in every row)")
        correction = corrected_by
    for p in pairings:
        if p.alpha is not None:
            check_probability(p.alpha, "alpha")
        if p.margin is not None and not (math.isfinite(p.margin) and p.margin > 0):
            raise InputError(f"{p.context + ': ' if p.context else ''}a non-inferiority margin "
                             f"must be a positive number, got {p.margin!r}")
    aligned = [_aligned(p) for p in pairings]
    trusted_family_cost([len(a[0]) for a in aligned], test, resamples)
    results = []
    sides = []
    procedures: list[str] = []
    family = max(1, len(pairings))
    for p, (_, cand, base) in zip(pairings, aligned, strict=True):
        # The ids are sorted (`_aligned`): the arrays pair position by position, in the
        # order the tests would sort {id: value} mappings into.
        c = np.asarray(cand, dtype=np.float64)
        b = np.asarray(base, dtype=np.float64)
        sides.append((c, b))
        level = alpha if p.alpha is None else p.alpha
        procedures.append("resample" if p.margin is not None or p_corrected is not None
                          else choose_procedure(c - b, test, level / family, level))
    # The resampled randomization rows: one pass of shared sign vectors for all of them.
    together = [i for i, (p, procedure) in enumerate(zip(pairings, procedures, strict=True))
                if test == "randomization" and procedure == "resample" and p.margin is None]
    top = max([alpha, *(p.alpha for p in pairings if p.alpha is not None)])
    top = max(top, 1.0 - (1.0 - top))  # every row's level as its interval reads it (below)
    weights = [row_resamples(test, procedure, joint=i in together, bootstrap=bootstrap,
                             interval=intervals is None, margin=p.margin is not None,
                             resamples=resamples)
               for i, (p, procedure) in enumerate(zip(pairings, procedures, strict=True))]
    tally = Tally(progress, sum(weights))
    tested, signs = paired_tests([sides[i] for i in together],
                                 confidence_level=confidence_level, resamples=resamples,
                                 seed=seed, bootstrap=bootstrap, max_level=top,
                                 progress=tally.part(sum(weights[i] for i in together)))
    joint = dict(zip(together, tested, strict=True))
    position = {row: k for k, row in enumerate(together)}
    for i, (p, (c, b), procedure) in enumerate(zip(pairings, sides, procedures, strict=True)):
        if i in joint:
            results.append(dataclasses.replace(joint[i], measure=p.measure))
            continue
        r = paired_test(c, b, test, confidence_level=confidence_level, resamples=resamples,
                        seed=seed, procedure=procedure)  # type: ignore[arg-type]
        if p.margin is not None:
            # One-sided against the margin: shift the candidate by it and ask "better?".
            shift, alternative = ((p.margin, "greater") if p.higher_is_better
                                  else (-p.margin, "less"))
            one = paired_test(c + shift, b, test,
                              alternative=alternative,  # type: ignore[arg-type]
                              confidence_level=confidence_level, resamples=resamples, seed=seed)
            r = dataclasses.replace(r, p_value=one.p_value, statistic=one.statistic,
                                    alternative=alternative)
        results.append(dataclasses.replace(r, measure=p.measure))
        tally.skip(weights[i] // 2 if intervals is None else weights[i])
    alphas = [alpha if p.alpha is None else p.alpha for p in pairings]
    if p_corrected is None:
        adjusted = (correct([r.p_value for r in results], correction).tolist()  # type: ignore[arg-type]
                    if results else [])
        levels = row_levels([r.p_value for r in results], alphas, correction)
    else:
        adjusted = [float(x) for x in p_corrected]
        if len(adjusted) != len(results):
            raise InputError(f"{len(adjusted)} corrected p-values for {len(results)} pairings")
        levels = alphas
    if intervals is None:
        method = TEST_INTERVALS[test]
        built: list[Interval] = []
        for i, (p, (c, b), level, procedure) in enumerate(zip(pairings, sides, levels,
                                                              procedures, strict=True)):
            # The level exactly as `paired_interval` reads it back from 1 − level.
            read = 1.0 - (1.0 - level)
            if i in position and read <= signs.max_level:
                built.append((*signs.bounds(position[i], read), level, method))
                continue
            side = ("two-sided" if p.margin is None
                    else "greater" if p.higher_is_better else "less")
            iv = paired_interval(c, b, method, confidence_level=1.0 - level,  # type: ignore[arg-type]
                                 alternative=side,  # type: ignore[arg-type]
                                 resamples=resamples, seed=seed,
                                 procedure=procedure)  # type: ignore[arg-type]
            built.append((iv.low, iv.high, level, method))
            if i not in position:
                tally.skip(weights[i] - weights[i] // 2)
        intervals = built
    elif len(intervals) != len(results):
        raise InputError(f"{len(intervals)} intervals for {len(results)} pairings")
    return tuple(_row(p, a, r, q, alpha, correction, iv)
                 for p, a, r, q, iv in zip(pairings, aligned, results, adjusted, intervals,
                                           strict=True))


def _after(tally: Tally, progress: ProgressCallback | None) -> ProgressCallback | None:
    """``progress`` of the part that follows what ``tally`` counted so far: its own
    ``(done, planned)`` are added to the tally's."""
    if progress is None:
        return None
    before = tally.done

    def forward(done: int, planned: int) -> None:
        progress(before + done, before + planned)

    return forward


def row_resamples(test: str, procedure: str, *, joint: bool, bootstrap: bool, interval: bool,
                  margin: bool, resamples: int) -> int:
    """The row-resamples `compare_pairs` plans for one row (what its progress counts): a
    row tested with the others (``joint``) draws its sign flips and, with ``bootstrap``, its
    percentile bootstrap; another resampled row draws its test (and its margin test) and
    then its own interval unless ``interval`` is False (given, as Tukey's are); a row
    decided by the normal limit, or a t or rank test, draws nothing."""
    if joint:
        return resamples * (2 if bootstrap else 1)
    if procedure != "resample" or test not in ("randomization", "bootstrap"):
        return 0
    test_part = resamples * (2 if margin else 1)
    return test_part * 2 if interval else test_part


def compare_scores(
    scores: Mapping[str, Mapping[str, Mapping[str, float]]],
    *,
    baseline: str | None = None,
    higher_is_better: Mapping[str, bool] | None = None,
    stats: StatSettings | None = None,
    unit: str = "query",
    progress: ProgressCallback | None = None,
) -> Comparison:
    """Compare systems given as per-query scores: ``{system: {measure: {qid: value}}}``.

    ``baseline`` defaults to the first system. Every measure the baseline has is compared;
    each system must have every one of them. Polarity comes from ``higher_is_better`` or,
    for names it lacks, from the metric registry (`rankproof.measures.polarity`). ``stats``
    (`rankproof.stats.StatSettings`; the defaults when None): ``pairs="baseline"`` compares
    each other system with the baseline, corrected together by ``correction``; ``"all"``
    every pair, with randomized Tukey HSD p-values per measure. ``progress`` is told the
    row-resamples done of those planned, Tukey's permutations included (`compare_pairs`);
    it changes no number.
    """
    if not isinstance(scores, Mapping) or len(scores) < 2:
        got = len(scores) if isinstance(scores, Mapping) else type(scores).__name__
        raise InputError(f"a comparison needs at least two systems, got {got}")
    systems = list(scores)
    base = baseline if baseline is not None else systems[0]
    if base not in scores:
        raise InputError(f"baseline {base!r} is not one of the systems: {', '.join(systems)}")
    settings = StatSettings() if stats is None else stats
    pairs, alpha, correction = settings.pairs, settings.alpha, settings.correction
    test, resamples, seed = settings.test, settings.resamples, settings.seed
    measures = list(scores[base])
    if not measures:
        raise InputError(f"the baseline {base!r} has no measures")
    for s in systems:
        lacking = [m for m in measures if m not in scores[s]]
        if lacking:
            raise InputError(f"system {s!r} has no scores for {', '.join(lacking)}")
    hib = {m: (higher_is_better[m] if higher_is_better and m in higher_is_better
               else polarity(m)) for m in measures}
    if pairs == "baseline":
        couples = [(base, c) for c in systems if c != base]
    else:
        couples = [(systems[i], systems[j]) for i in range(len(systems))
                   for j in range(i + 1, len(systems))]
    pairings = [Pairing(candidate=c, baseline=b, measure=m, candidate_scores=scores[c][m],
                        baseline_scores=scores[b][m], higher_is_better=hib[m], unit=unit)
                for m in measures for b, c in couples]
    tukey: dict[str, TukeyHSDResult] = {}
    fixed: list[float] | None = None
    simultaneous: list[Interval] = []
    trusted_family_cost([len(p.baseline_scores) for p in pairings], test, resamples,
                        tukey=[(len(scores[base][m]), len(systems)) for m in measures]
                        if pairs == "all" else ())
    # Tukey's rows are all resampled, each with its interval given (`row_resamples`).
    tukey_part = len(measures) * resamples if pairs == "all" else 0
    tally = Tally(progress, tukey_part + (sum(
        row_resamples(test, "resample", joint=test == "randomization", bootstrap=True,
                      interval=False, margin=False, resamples=resamples)
        for _ in pairings) if pairs == "all" else 0))
    if pairs == "all":
        for p in pairings:
            _aligned(p)  # the one pairing rule, before Tukey reports it its own way
        for m in measures:
            tukey[m] = tukey_hsd_randomized({s: scores[s][m] for s in systems},
                                            resamples=resamples, seed=seed, alpha=alpha,
                                            progress=tally.part(resamples))
        fixed = [tukey[p.measure].p_value(p.baseline, p.candidate) for p in pairings]
        simultaneous = [(*tukey[p.measure].interval(p.candidate, p.baseline), alpha, "tukey")
                        for p in pairings]
    rows = compare_pairs(pairings, stats=settings, p_corrected=fixed,
                         corrected_by=None if fixed is None else "tukey-hsd",
                         intervals=simultaneous if fixed else None,
                         progress=_after(tally, progress) if pairs == "all" else progress)
    n = rows[0].result.n if rows else 0
    return Comparison(
        systems=tuple(systems), baseline=base, measures=tuple(measures), pairs=pairs,
        test=test, alpha=alpha,
        correction=correction if pairs == "baseline" else "tukey-hsd", resamples=resamples,
        seed=seed, confidence_level=settings.confidence_level, n_topics=n, rows=rows,
        tukey=tukey)
