"""`paired_test`: one call that fills every number a comparison reports."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rankproof._errors import InputError
from rankproof.measures import Measure
from rankproof.stats._asymptotic import normal_bounds, sign_flip_normal
from rankproof.stats._bootstrap import bootstrap_means
from rankproof.stats._cost import check_cost, paired_test_cost
from rankproof.stats._defaults import (
    DEFAULT_ALPHA,
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TEST,
    TESTS,
    TestName,
)
from rankproof.stats._family import SignFlipFamily, sign_flip_family
from rankproof.stats._interval import (
    INTERVAL_METHODS,
    IntervalMethod,
    interval_bounds,
    percentile_bounds,
)
from rankproof.stats._parametric import sign_test, t_interval, wilcoxon
from rankproof.stats._power import _power, _queries_needed
from rankproof.stats._progress import ProgressCallback, Tally
from rankproof.stats._randomization import TIE_RTOL, sign_flip_count, sign_flip_p
from rankproof.stats._results import Result
from rankproof.stats._validate import (
    Alternative,
    FloatArray,
    Scores,
    check_alternative,
    check_batch,
    check_choice,
    check_int,
    check_probability,
    check_seed,
    described,
    paired_scores,
)

CIMethod = IntervalMethod
CI_METHODS = INTERVAL_METHODS
#: The interval each test reports by default: the test itself, inverted.
TEST_INTERVALS: dict[str, str] = {"randomization": "randomization", "t": "t",
                                  "bootstrap": "percentile", "wilcoxon": "wilcoxon",
                                  "sign": "sign"}
Procedure = Literal["resample", "normal"]
PROCEDURE_CHOICES: tuple[str, ...] = ("resample", "normal")
BootstrapP = Literal["centred", "asl"]
BOOTSTRAP_P: tuple[str, ...] = ("centred", "asl")

#: Power and queries-needed in a PairedResult are for this two-sided level and target.
POWER_ALPHA = DEFAULT_ALPHA
POWER_TARGET = 0.8


@dataclass(frozen=True)
class PairedResult(Result):
    """Everything one paired comparison of system a against system b reports.

    With per-query differences ``d = a − b`` over ``n`` queries:

    * ``mean_a``, ``mean_b``; ``difference = mean(d) = mean_a − mean_b``;
      ``relative_difference = difference / mean_b`` (None when ``mean_b``
      is 0).
    * ``ci_low``/``ci_high``: a two-sided ``confidence_level`` interval by
      ``ci_method`` — by default the test itself inverted over shifts
      (`rankproof.stats.paired_interval`), so that at ``confidence_level =
      1 − α`` it excludes 0 exactly when ``p_value ≤ α`` (two-sided). For
      "wilcoxon"/"sign" it is an interval for the (pseudo-)median difference,
      not the mean; ``INTERVAL_LABELS[ci_method]`` says which.
    * ``bootstrap_low``/``bootstrap_high``: the percentile bootstrap interval
      at the same level, reported beside it whenever anything is resampled (labelled as such; it is
      what rankproof showed before intervals followed the test, and it
      under-covers on few queries).
    * ``p_value`` of ``test`` against ``alternative``; ``statistic`` is the
      test's own statistic (mean difference for randomization and
      bootstrap, t, Wilcoxon's W, or the number of wins for the sign test).
    * ``resamples``/``seed``: what the resampling (test or intervals) used;
      None when nothing was random (a t or rank test with its own interval). ``exact`` is True when
      the randomization test enumerated all ``2^n`` sign vectors instead
      of drawing ``resamples`` of them (because ``2^n ≤ resamples``).
    * ``procedure``: how the p-value and interval were computed — "exact" (all sign
      vectors), "monte-carlo" (``resamples`` random ones), "normal" (the normal limit of
      the randomization distribution, `rankproof.stats._asymptotic`; then ``resamples`` is
      0, nothing is random, and ``error_bound`` is the Berry–Esseen bound on its distance
      from the exact randomization p-value); None for a test that draws nothing.
    * ``wins``/``ties``/``losses``: queries with ``d > 0``, ``d == 0``,
      ``d < 0``.
    * ``effect_size`` ``d_z = mean(d) / sd(d)`` (``ddof=1``; None when the
      SD is 0 or ``n < 2``).
    * ``power``: the chance a two-sided level-0.05 test detects a true
      difference as large as the observed one, with the observed SD
      (normal approximation — an optimistic *post hoc* figure, useful to
      judge whether a non-significant result could have been significant).
      ``queries_needed``: queries for 80% such power. Both None when the SD
      or the difference is 0.
    """

    n: int
    mean_a: float
    mean_b: float
    difference: float
    relative_difference: float | None
    ci_low: float
    ci_high: float
    ci_method: str
    confidence_level: float
    p_value: float
    statistic: float
    test: str
    alternative: str
    resamples: int | None
    seed: int | None
    exact: bool
    wins: int
    ties: int
    losses: int
    effect_size: float | None
    power: float | None
    queries_needed: int | None
    measure: str | None = None
    bootstrap_low: float | None = None
    bootstrap_high: float | None = None
    bootstrap_p: str | None = None
    procedure: str | None = None
    error_bound: float | None = None

    def significant(self, alpha: float = DEFAULT_ALPHA) -> bool:
        """``p_value ≤ alpha`` (uncorrected; see :func:`correct` for families of tests)."""
        return self.p_value <= check_probability(alpha, "alpha")


def paired_test(
    a: Scores,
    b: Scores,
    test: TestName = DEFAULT_TEST,
    *,
    measure: str | Measure | None = None,
    alternative: Alternative = "two-sided",
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    ci_method: CIMethod | None = None,
    bootstrap_p: BootstrapP = "centred",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    batch: int | None = None,
    procedure: Procedure = "resample",
) -> PairedResult:
    """Compare system a with system b on the same queries, and report everything.

    ``test`` picks the p-value: "randomization" (default; sign-flip on the
    mean difference), "t" (paired t-test), "bootstrap", "wilcoxon" or "sign"
    (available for comparison; they test another null, see their
    docstrings). The bootstrap p-value is ``bootstrap_p``: "centred"
    (default: the bootstrap distribution recentred at 0 under the null,
    ``p = (r + 1)/(B + 1)`` with ``r`` the resampled deviations at least as
    extreme as the observed difference) or "asl" (the achieved significance
    level of groundkit and Efron–Tibshirani: twice the smaller share of
    resampled means on either side of 0, ``2(min(#≤0, #≥0) + 1)/(B + 1)``,
    which agrees with the percentile interval's verdict).

    The interval is the test inverted (``TEST_INTERVALS``: the randomization
    test's own interval, the t interval, the percentile bootstrap for the
    bootstrap test, the Hodges–Lehmann / median intervals for the rank
    tests) unless ``ci_method`` says otherwise; the percentile bootstrap is
    always reported beside it. It is always two-sided. The same ``seed``
    drives the test and the intervals; ``batch`` only bounds memory.

    ``procedure="normal"`` (randomization test and interval only) computes both from the
    normal limit of the randomization distribution instead of drawing sign vectors, and
    records the Berry–Esseen bound on the p-value's error (``error_bound``); no
    bootstrap is drawn beside it. The comparison engine chooses it only where that bound
    proves the verdict (see docs/scaling.md).
    """
    pairs = paired_scores(a, b, measure)
    test = check_choice(test, "test", TESTS)  # type: ignore[assignment]
    alternative = check_alternative(alternative)
    confidence_level = check_probability(confidence_level, "confidence_level")
    method: str = check_choice(TEST_INTERVALS[test] if ci_method is None else ci_method,
                               "ci_method", CI_METHODS)
    bootstrap_p = check_choice(bootstrap_p, "bootstrap_p", BOOTSTRAP_P)  # type: ignore[assignment]
    resamples = check_int(resamples, "resamples", 1)
    seed = check_seed(seed)
    batch = check_batch(batch)
    procedure = check_choice(procedure, "procedure", PROCEDURE_CHOICES)  # type: ignore[assignment]
    n = pairs.n
    if procedure == "normal":
        if test != "randomization" or method != "randomization":
            raise InputError("procedure='normal' is the randomization test's normal limit: "
                             f"it needs test='randomization' and its own interval; got "
                             f"test={test!r}, ci_method={method!r}", field="procedure")
        return _normal_result(pairs.a, pairs.b, pairs.differences, alternative,
                              confidence_level, pairs.measure)
    if n < 2 and (test == "t" or method in ("t", "studentized")):
        raise InputError(f"the t-test and t/studentized intervals need at least 2 queries; got {n}")
    check_cost(paired_test_cost(n, test, method, resamples, batch),
               described(f"paired_test ({test}, {method} interval)", resamples, batch, n),
               knobs="resamples (or batch)", field="resamples")

    d = pairs.differences
    mean_d = float(d.mean())
    exact = False

    alpha = 1.0 - confidence_level
    # The percentile bootstrap rides along whenever something is resampled anyway; a t or
    # rank test with its own (deterministic) interval stays free of randomness.
    random = test in ("randomization", "bootstrap") or method in (
        "randomization", "percentile", "studentized")
    boot_low, boot_high = (percentile_bounds(d, alpha, "two-sided", resamples, seed, batch)
                           if random else (None, None))
    if method == "percentile":
        assert boot_low is not None and boot_high is not None

        ci_low, ci_high = boot_low, boot_high
    else:
        ci_low, ci_high, _ = interval_bounds(d, method, alpha, "two-sided", resamples,
                                             seed, batch)

    if test == "randomization":
        count, total, exact = sign_flip_count(d, alternative, resamples, seed, batch)
        p = sign_flip_p(count, total, exact)
        statistic = mean_d
    elif test == "t":
        statistic, p, _, _, _ = t_interval(d, alternative, confidence_level)
    elif test == "bootstrap":
        p = _bootstrap_p(d, mean_d, alternative, resamples, seed, batch, bootstrap_p)
        statistic = mean_d
    elif test == "wilcoxon":
        w = wilcoxon(pairs.a, pairs.b, alternative=alternative)
        statistic, p = w.statistic, w.p_value
    else:
        s = sign_test(pairs.a, pairs.b, alternative=alternative)
        statistic, p = float(s.wins), s.p_value

    return PairedResult(
        **_described(pairs.a, pairs.b, d),
        ci_low=float(ci_low),
        ci_high=float(ci_high),
        ci_method=method,
        confidence_level=confidence_level,
        p_value=min(1.0, float(p)),
        statistic=float(statistic),
        test=test,
        alternative=alternative,
        resamples=resamples if random else None,
        seed=seed if random else None,
        exact=exact,
        measure=pairs.measure,
        bootstrap_low=boot_low,
        bootstrap_high=boot_high,
        bootstrap_p=bootstrap_p if test == "bootstrap" else None,
        procedure=(("exact" if exact else "monte-carlo") if test == "randomization"
                   else "monte-carlo" if random else None),
    )


def _described(a: FloatArray, b: FloatArray, d: FloatArray) -> dict[str, Any]:
    """What every paired result reports that nothing random decides: the means, the
    difference, wins/ties/losses, the effect size, post hoc power and queries needed."""
    n = len(d)
    mean_d = float(d.mean())
    mean_b = float(b.mean())
    sd = float(d.std(ddof=1)) if n > 1 else math.nan
    wins = int(np.count_nonzero(d > 0))
    losses = int(np.count_nonzero(d < 0))
    effect_size = mean_d / sd if n > 1 and sd > 0 else None
    pw: float | None = None
    needed: int | None = None
    if effect_size is not None and mean_d != 0.0:
        pw = _power(mean_d, sd, n, POWER_ALPHA, "two-sided")
        try:
            needed = _queries_needed(mean_d, sd, POWER_TARGET, POWER_ALPHA, "two-sided")
        except InputError:  # a zero effect: no number of queries detects it
            needed = None
    return {"n": n, "mean_a": float(a.mean()), "mean_b": mean_b, "difference": mean_d,
            "relative_difference": mean_d / mean_b if mean_b != 0.0 else None,
            "wins": wins, "ties": n - wins - losses, "losses": losses,
            "effect_size": effect_size, "power": pw, "queries_needed": needed}


def paired_tests(
    sides: Sequence[tuple[Scores, Scores]],
    *,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    batch: int | None = None,
    bootstrap: bool = True,
    max_level: float | None = None,
    progress: ProgressCallback | None = None,
) -> tuple[tuple[PairedResult, ...], SignFlipFamily]:
    """`paired_test` (randomization, two-sided, its own interval) of every ``(a, b)``
    side, the sign-flip parts of all of them from one pass (`sign_flip_family`).

    The same seed draws the same sign vectors for every test of one query count, so each
    result equals ``paired_test(a, b, confidence_level=…, resamples=…, seed=…)`` field
    for field; ``bootstrap=False`` leaves out the percentile bootstrap interval drawn
    beside it (then None, as in a "normal" result), which is most of the time on many
    queries. The family is returned too: `SignFlipFamily.bounds` gives each side's
    inverted interval at any level up to ``max_level`` (default ``1 −
    confidence_level``), e.g. the level a correction gives its row.

    ``progress`` is told the row-resamples done of those planned (``resamples`` per side,
    twice that with ``bootstrap``) as the sign flips and bootstraps advance
    (`rankproof.stats._progress`); it changes no number.
    """
    confidence_level = check_probability(confidence_level, "confidence_level")
    resamples = check_int(resamples, "resamples", 1)
    seed = check_seed(seed)
    batch = check_batch(batch)
    level = 1.0 - confidence_level
    top = level if max_level is None else max(level, check_probability(max_level, "max_level"))
    paired = [paired_scores(a, b) for a, b in sides]
    for pairs in paired:
        check_cost(paired_test_cost(pairs.n, "randomization", "randomization", resamples,
                                    batch),
                   described("paired_test (randomization, randomization interval)",
                             resamples, batch, pairs.n),
                   knobs="resamples (or batch)", field="resamples")
    tally = Tally(progress, len(paired) * resamples * (2 if bootstrap else 1))
    family = sign_flip_family([pairs.differences for pairs in paired], resamples=resamples,
                              seed=seed, batch=batch, max_level=top,
                              progress=tally.part(len(paired) * resamples))
    results = []
    for i, pairs in enumerate(paired):
        d = pairs.differences
        boot_low, boot_high = (percentile_bounds(d, level, "two-sided", resamples, seed, batch)
                               if bootstrap else (None, None))
        if bootstrap:
            tally.skip(resamples)
        ci_low, ci_high = family.bounds(i, level)
        results.append(PairedResult(
            **_described(pairs.a, pairs.b, d), ci_low=ci_low, ci_high=ci_high,
            ci_method="randomization", confidence_level=confidence_level,
            p_value=min(1.0, family.p_value(i)), statistic=float(d.mean()),
            test="randomization", alternative="two-sided", resamples=resamples, seed=seed,
            exact=family.exact[i], measure=pairs.measure, bootstrap_low=boot_low,
            bootstrap_high=boot_high,
            procedure="exact" if family.exact[i] else "monte-carlo"))
    return tuple(results), family


def _normal_result(a: FloatArray, b: FloatArray, d: FloatArray, alternative: str,
                   confidence_level: float, measure: str | None) -> PairedResult:
    """`paired_test`'s result by the normal limit of the randomization test."""
    p, bound = sign_flip_normal(d, alternative)
    low, high = normal_bounds(d, 1.0 - confidence_level, "two-sided")
    return PairedResult(
        **_described(a, b, d),
        ci_low=float(low), ci_high=float(high), ci_method="randomization",
        confidence_level=confidence_level, p_value=min(1.0, p), statistic=float(d.mean()),
        test="randomization", alternative=alternative, resamples=0, seed=None, exact=False,
        measure=measure, procedure="normal", error_bound=bound)


def _bootstrap_p(
    d: FloatArray, observed: float, alternative: str, resamples: int, seed: int,
    batch: int | None, kind: str = "centred",
) -> float:
    """Bootstrap p-value: "centred" (resampled means recentred at 0 vs the observed mean)
    or "asl" (the share of resampled means on the far side of 0, ``(r + 1)/(B + 1)``)."""
    return bootstrap_p_value(bootstrap_null(d, observed, resamples, seed, batch, kind),
                             d, observed, alternative, kind)


def bootstrap_null(
    d: FloatArray, observed: float, resamples: int, seed: int, batch: int | None, kind: str,
) -> FloatArray:
    """What the bootstrap p-value counts in: the resampled means minus ``observed``
    ("centred", a distribution under the null) or the resampled means themselves ("asl")."""
    means, _ = bootstrap_means(d, resamples, seed, batch, studentized=False)
    return means - observed if kind == "centred" else means


def bootstrap_p_value(
    null: FloatArray, d: FloatArray, observed: float, alternative: str, kind: str,
) -> float:
    """The bootstrap p-value of ``kind`` from `bootstrap_null`'s ``null``.

    "centred": ``r`` counts resampled deviations at least as extreme as ``observed``
    (ties within ``TIE_RTOL × max(|observed|, mean |d|)``); "asl": ``r`` counts resampled
    means on the far side of 0 (twice the smaller side when two-sided). ``p = (r + 1)/(B + 1)``.
    """
    resamples = len(null)
    if kind == "asl":
        below = int(np.count_nonzero(null <= 0.0))
        above = int(np.count_nonzero(null >= 0.0))
        if alternative == "greater":
            return float((below + 1) / (resamples + 1))
        if alternative == "less":
            return float((above + 1) / (resamples + 1))
        return float(min(1.0, 2.0 * (min(below, above) + 1) / (resamples + 1)))
    gamma = bootstrap_tolerance(d, observed)
    if alternative == "greater":
        r = np.count_nonzero(null >= observed - gamma)
    elif alternative == "less":
        r = np.count_nonzero(null <= observed + gamma)
    else:
        r = np.count_nonzero(np.abs(null) >= abs(observed) - gamma)
    return float((r + 1) / (resamples + 1))


def bootstrap_tolerance(d: FloatArray, observed: float) -> float:
    """Ties for the centred bootstrap p: deviations within this of ``observed`` count."""
    return TIE_RTOL * max(abs(observed), float(np.abs(d).mean()))
