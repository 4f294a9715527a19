"""The null distribution a paired test compared its statistic with, recomputed for a picture.

A report shows *why* a p-value is what it is: the resampled statistic as a
histogram with the observed value marked. Storing 10,000 resampled values per
row would multiply a comparison file's size, and they are cheap to redraw: the
draws are fixed by the per-query differences, their order (query id) and the
recorded seed. So reports keep the differences and the seed, and
:func:`null_distribution` replays the test. It does not reimplement it: the
sign flips come from the same `SignFlipPlan` and the bootstrap means from the
same `bootstrap_means` that `paired_test` uses, and the p-value is counted by
the same rule, so the picture and the verdict cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from rankproof._errors import InputError
from rankproof.stats._cost import Cost, bootstrap_cost, check_cost, randomization_cost
from rankproof.stats._defaults import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TEST,
    TESTS,
    TestName,
)
from rankproof.stats._paired import (
    BOOTSTRAP_P,
    BootstrapP,
    bootstrap_null,
    bootstrap_p_value,
    bootstrap_tolerance,
)
from rankproof.stats._parametric import sign_test, t_interval, wilcoxon
from rankproof.stats._randomization import count_extreme, sign_flip_p, sign_flip_plan
from rankproof.stats._results import Result
from rankproof.stats._validate import (
    Alternative,
    FloatArray,
    _check_array,
    _check_mapping,
    check_alternative,
    check_batch,
    check_choice,
    check_int,
    check_seed,
    described,
)

#: What a `NullDistribution`'s samples and statistic measure, per test (for axis labels).
STATISTIC_LABELS: dict[str, str] = {
    "randomization": "mean difference",
    "bootstrap": "mean difference",
    "t": "t",
    "wilcoxon": "W (signed-rank sum)",
    "sign": "wins",
}


@dataclass(frozen=True, eq=False)
class NullDistribution(Result):
    """The distribution `paired_test`'s statistic is compared with, and where it fell.

    ``statistic`` is the observed statistic exactly as `paired_test` reports
    it (``STATISTIC_LABELS[test]`` names it) and ``p_value`` is `paired_test`'s
    p-value for the same differences, options and seed.

    Resampling tests (``samples`` is a float array; ``seed`` and ``resamples``
    record what drew it):

    * "randomization": ``samples[k]`` is the mean difference under the k-th
      random sign vector, ``Σ s_i d_i / n`` (all ``2^n`` vectors, in
      enumeration order, when ``exact``). A sample is at least as extreme as
      the observed mean when, two-sided, ``|sample| ≥ |statistic| − tolerance``.
    * "bootstrap": with ``bootstrap_p`` "centred", ``samples`` are the
      bootstrap means minus the observed mean (what the test compares the
      observed mean with, same ``tolerance`` rule); with "asl" they are the
      bootstrap means themselves, and the p-value counts those on the far
      side of 0.

    Analytic tests (``samples`` is None) carry what draws the reference:
    "t": Student's t with ``df`` degrees of freedom; "wilcoxon": the normal
    approximation ``N(mean, sd²)`` of the signed-rank statistic over the
    ``trials`` non-zero differences (with the tie correction; scipy may have
    used the exact distribution for the p-value on few queries); "sign":
    ``Binomial(trials, 1/2)`` over the non-tied queries. :meth:`density`
    evaluates it.

    ``mirror`` is the value as extreme as ``statistic`` on the other side of
    the null's centre, which a two-sided test also counts (None when one-sided,
    or for the "asl" bootstrap, whose reference point is 0).
    """

    test: str
    alternative: str
    statistic: float
    p_value: float
    n: int
    seed: int | None
    resamples: int | None
    exact: bool
    samples: FloatArray | None
    tolerance: float | None = None
    bootstrap_p: str | None = None
    df: int | None = None
    mean: float | None = None
    sd: float | None = None
    trials: int | None = None

    @property
    def statistic_label(self) -> str:
        """What the statistic and samples measure ("mean difference", "t", ...)."""
        return STATISTIC_LABELS[self.test]

    @property
    def mirror(self) -> float | None:
        """The equally extreme value on the other side, counted by a two-sided test."""
        if self.alternative != "two-sided" or self.bootstrap_p == "asl":
            return None
        if self.test == "wilcoxon" and self.mean is not None:
            return 2.0 * self.mean - self.statistic
        if self.test == "sign" and self.trials is not None:
            return float(self.trials) - self.statistic
        return -self.statistic

    def density(self, x: npt.ArrayLike) -> FloatArray:
        """The analytic reference at ``x``: a density (t, wilcoxon) or probabilities (sign).

        Raises `InputError` for resampling tests (their picture is ``samples``)
        and when the reference is degenerate (no non-zero differences).
        """
        xs = np.asarray(x, dtype=np.float64)
        if self.test == "t" and self.df is not None:
            return np.asarray(sps.t.pdf(xs, self.df), dtype=np.float64)
        if self.test == "wilcoxon" and self.mean is not None and self.sd:
            return np.asarray(sps.norm.pdf(xs, self.mean, self.sd), dtype=np.float64)
        if self.test == "sign" and self.trials:
            return np.asarray(sps.binom.pmf(np.round(xs), self.trials, 0.5), dtype=np.float64)
        raise InputError(f"the {self.test} null distribution has no analytic density here "
                         f"(samples: {'yes' if self.samples is not None else 'no'})")


def null_distribution(
    differences: Mapping[str, float] | npt.ArrayLike,
    *,
    test: TestName = DEFAULT_TEST,
    alternative: Alternative = "two-sided",
    bootstrap_p: BootstrapP = "centred",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    batch: int | None = None,
) -> NullDistribution:
    """Recompute the null distribution `paired_test` used, from per-query differences ``a − b``.

    ``differences`` is a ``{qid: a − b}`` mapping (ordered by query id, as
    `paired_test` orders mappings) or a 1-D array in the order `paired_test`
    saw the queries. With the options and ``seed`` the comparison recorded,
    the result's ``p_value`` equals that comparison's ``p_value`` exactly, and
    counting ``samples`` by the test's rule gives it again. ``batch`` bounds
    scratch memory and never changes the samples; the samples themselves take
    ``8 × resamples`` bytes, and a request over the bounds of
    ``rankproof._limits`` is refused before it starts (as every resampling
    entry point is).

    >>> nd = null_distribution({"q1": 0.1, "q2": 0.2, "q3": 0.0})
    >>> nd.exact, len(nd.samples), nd.p_value
    (True, 8, 0.5)
    """
    d = _differences(differences)
    test = check_choice(test, "test", TESTS)  # type: ignore[assignment]
    alternative = check_alternative(alternative)
    bootstrap_p = check_choice(bootstrap_p, "bootstrap_p", BOOTSTRAP_P)  # type: ignore[assignment]
    resamples = check_int(resamples, "resamples", 1)
    seed = check_seed(seed)
    batch = check_batch(batch)
    n = len(d)
    if test == "t" and n < 2:
        raise InputError(f"the t-test needs at least 2 queries; got {n}")
    check_cost(_cost(n, test, resamples, batch),
               described(f"null_distribution ({test})", resamples, batch, n),
               knobs="resamples (or batch)", field="resamples")
    mean_d = float(d.mean())
    base: dict[str, Any] = {"test": test, "alternative": alternative, "n": n}
    if test == "randomization":
        plan = sign_flip_plan(d, resamples)
        samples = np.empty(plan.total, dtype=np.float64)
        count = start = 0
        for sums in plan.sums(seed, batch):
            count += count_extreme(sums, plan.observed, alternative, plan.tolerance)
            samples[start:start + len(sums)] = sums
            start += len(sums)
        samples /= n
        return NullDistribution(**base, statistic=mean_d,
                                p_value=sign_flip_p(count, plan.total, plan.exact),
                                seed=seed, resamples=resamples, exact=plan.exact,
                                samples=_frozen(samples), tolerance=plan.tolerance / n)
    if test == "bootstrap":
        null = bootstrap_null(d, mean_d, resamples, seed, batch, bootstrap_p)
        p = bootstrap_p_value(null, d, mean_d, alternative, bootstrap_p)
        return NullDistribution(**base, statistic=mean_d, p_value=min(1.0, p), seed=seed,
                                resamples=resamples, exact=False, samples=_frozen(null),
                                tolerance=(bootstrap_tolerance(d, mean_d)
                                           if bootstrap_p == "centred" else None),
                                bootstrap_p=bootstrap_p)
    analytic: dict[str, Any] = {**base, "seed": None, "resamples": None, "exact": False,
                                "samples": None}
    if test == "t":
        t, p, _, _, _ = t_interval(d, alternative, 0.95)
        return NullDistribution(**analytic, statistic=float(t), p_value=min(1.0, float(p)),
                                df=n - 1)
    zeros = np.zeros(n)
    if test == "wilcoxon":
        w = wilcoxon(d, zeros, alternative=alternative)
        mean, sd = _signed_rank_moments(d)
        return NullDistribution(**analytic, statistic=float(w.statistic),
                                p_value=min(1.0, float(w.p_value)),
                                mean=mean, sd=sd, trials=w.nonzero)
    s = sign_test(d, zeros, alternative=alternative)
    return NullDistribution(**analytic, statistic=float(s.wins), p_value=min(1.0, s.p_value),
                            trials=s.wins + s.losses)


def _differences(values: Mapping[str, float] | npt.ArrayLike) -> FloatArray:
    """The differences as a float array, in `paired_test`'s order (query id for a mapping)."""
    if isinstance(values, Mapping):
        checked = _check_mapping(values, "differences")
        d = np.fromiter((checked[q] for q in sorted(checked)), dtype=np.float64,
                        count=len(checked))
    else:
        d = _check_array(values, "differences")
    if len(d) == 0:
        raise InputError("no differences: a null distribution needs at least one query",
                         field="differences")
    return d


def _signed_rank_moments(d: FloatArray) -> tuple[float, float]:
    """Mean and SD of the signed-rank sum under the null (zeros dropped, ties corrected)."""
    nz = np.abs(d[d != 0.0])
    m = len(nz)
    if m == 0:
        return 0.0, 0.0
    _, counts = np.unique(nz, return_counts=True)
    ties = float(np.sum(counts.astype(np.float64) ** 3 - counts))
    var = m * (m + 1) * (2 * m + 1) / 24.0 - ties / 48.0
    return m * (m + 1) / 4.0, math.sqrt(max(var, 0.0))


def _cost(n: int, test: str, resamples: int, batch: int | None) -> Cost:
    """The test's own cost, plus the ``8 × resamples`` bytes of samples kept."""
    if test == "randomization":
        cost = randomization_cost(n, resamples, batch)
        total = 2**n if n < 63 and 2**n <= resamples else resamples
        return Cost(cost.operations, cost.memory_bytes + 8.0 * total)
    if test == "bootstrap":
        return bootstrap_cost(n, resamples, batch, keep=2)
    return Cost(n * max(1.0, math.log2(max(n, 2))), 8.0 * n)


def _frozen(x: FloatArray) -> FloatArray:
    x.setflags(write=False)
    return x

