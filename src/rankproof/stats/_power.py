"""Power and sample size: how many queries does it take to see a difference?

The quantity throughout is the per-query difference ``d = a − b`` between
two systems: its mean (the *effect*, e.g. 0.02 nDCG@10) and its standard
deviation across queries (``sd``). The mean of ``n`` differences has
standard error ``sd/√n``, so detectability depends on
``δ = effect·√n / sd`` — which is why a paired design, where ``sd`` is the
SD of differences rather than of scores, needs far fewer queries.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from rankproof._errors import InputError
from rankproof.stats._bootstrap import draw_indices
from rankproof.stats._cost import NOTHING, check_cost, simulated_power_cost
from rankproof.stats._defaults import DEFAULT_ALPHA, DEFAULT_SEED
from rankproof.stats._randomization import TIE_RTOL
from rankproof.stats._results import Result
from rankproof.stats._validate import (
    MEMORY_BUDGET,
    Alternative,
    FloatArray,
    check_alternative,
    check_batch,
    check_choice,
    check_int,
    check_probability,
    check_real,
    check_seed,
    rows_per_batch,
)

PowerTest = Literal["t", "randomization"]
_MAX_QUERIES = 2**53


def _power(effect: float, sd: float, n: float, alpha: float, alternative: str) -> float:
    delta = effect * math.sqrt(n) / sd
    if alternative == "two-sided":
        z = float(sps.norm.ppf(1.0 - alpha / 2.0))
        return float(sps.norm.cdf(delta - z) + sps.norm.cdf(-delta - z))
    z = float(sps.norm.ppf(1.0 - alpha))
    return float(sps.norm.cdf(delta - z if alternative == "greater" else -delta - z))


def power(
    effect: float,
    sd: float,
    n: int,
    alpha: float = DEFAULT_ALPHA,
    alternative: Alternative = "two-sided",
) -> float:
    """Probability that a level-``alpha`` paired test detects a true mean difference ``effect``.

    Normal approximation: with ``δ = effect·√n/sd`` and ``z = Φ⁻¹(1 − α/2)``,
    two-sided power is ``Φ(δ − z) + Φ(−δ − z)`` (one-sided: ``Φ(±δ − z_{1−α})``).
    It slightly overstates the t-test's power for small ``n`` (it ignores
    that ``sd`` is estimated); :func:`simulated_power` avoids the
    approximation by resampling pilot differences.

    >>> round(power(0.02, 0.1, 200), 3)
    0.807
    """
    effect = check_real(effect, "effect")
    sd = check_real(sd, "sd", positive=True)
    n = check_int(n, "n", 1)
    alpha = check_probability(alpha, "alpha")
    alternative = check_alternative(alternative)
    return _power(effect, sd, n, alpha, alternative)


def queries_needed(
    effect: float,
    sd: float,
    power: float = 0.8,
    alpha: float = DEFAULT_ALPHA,
    alternative: Alternative = "two-sided",
) -> int:
    """Smallest number of queries (at least 2) at which :func:`power` reaches ``power``.

    Starts from the textbook ``n = ((z_{1−α/2} + z_{power})·sd/effect)²`` and
    adjusts it so that ``power(effect, sd, n) ≥ power > power(effect, sd,
    n − 1)`` under the same normal approximation. At least 2 because a
    paired test needs two queries to estimate the SD of the differences.

    >>> queries_needed(0.02, 0.1)
    197
    """
    effect = check_real(effect, "effect")
    sd = check_real(sd, "sd", positive=True)
    target = check_probability(power, "power")
    alpha = check_probability(alpha, "alpha")
    alternative = check_alternative(alternative)
    if effect == 0.0:
        raise InputError("effect must be non-zero: no number of queries detects a zero effect")
    if alternative != "two-sided" and (effect > 0) != (alternative == "greater"):
        raise InputError(
            f"effect {effect} points away from alternative={alternative!r}; "
            "the power of that test never reaches the target"
        )
    return _queries_needed(effect, sd, target, alpha, alternative)


def _queries_needed(effect: float, sd: float, target: float, alpha: float, alternative: str) -> int:
    sides = 2.0 if alternative == "two-sided" else 1.0
    z = float(sps.norm.ppf(1.0 - alpha / sides) + sps.norm.ppf(target))
    ratio = z * sd / abs(effect)
    if not ratio < math.sqrt(_MAX_QUERIES):
        raise InputError(
            f"effect {effect} is too small relative to sd {sd}: it needs more than "
            f"{_MAX_QUERIES} queries"
        )
    n = max(2, math.ceil(ratio * ratio))
    while _power(effect, sd, n, alpha, alternative) < target:
        n += 1
    while n > 2 and _power(effect, sd, n - 1, alpha, alternative) >= target:
        n -= 1
    return n


# -- simulation ------------------------------------------------------------------


@dataclass(frozen=True)
class SimulatedPower(Result):
    """Result of :func:`simulated_power`.

    ``power = detections / simulations``; ``standard_error`` is its binomial
    standard error ``√(power(1 − power)/simulations)``. ``pilot_sd`` is the
    SD (``ddof=1``) of the pilot differences, which the shift to ``effect``
    keeps. ``resamples`` is None for the t-test.
    """

    power: float
    detections: int
    simulations: int
    standard_error: float
    effect: float
    n: int
    alpha: float
    alternative: str
    test: str
    resamples: int | None
    seed: int
    pilot_n: int
    pilot_sd: float


def _check_pilot(pilot: Any, name: str = "pilot_deltas") -> FloatArray:
    if isinstance(pilot, Mapping):
        items = sorted(pilot.items(), key=lambda kv: str(kv[0]))
        values: Any = [v for _, v in items]
    else:
        values = pilot
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"cannot read {name} as numbers: {exc}", field=name) from None
    if arr.ndim != 1:
        raise InputError(f"expected a 1-D array of differences, got shape {arr.shape}", field=name)
    if len(arr) < 2:
        raise InputError(f"need at least 2 pilot differences; got {len(arr)}", field=name)
    bad = np.flatnonzero(~np.isfinite(arr))
    if len(bad):
        i = int(bad[0])
        raise InputError(
            f"difference at position {i} is {arr[i]}; expected a finite number", field=name
        )
    return arr


def _t_pvalues(samples: FloatArray, alternative: str) -> FloatArray:
    n = samples.shape[1]
    mean = samples.mean(axis=1)
    se = samples.std(axis=1, ddof=1) / math.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / se
    dist = sps.t(n - 1)
    if alternative == "greater":
        p = dist.sf(t)
    elif alternative == "less":
        p = dist.cdf(t)
    else:
        p = np.minimum(1.0, 2.0 * dist.sf(np.abs(t)))
    return np.asarray(p, dtype=np.float64)


def _randomization_pvalues(
    samples: FloatArray, signs: npt.NDArray[np.int8], alternative: str
) -> FloatArray:
    """Sign-flip p-values for each row of ``samples``, sharing one set of sign vectors."""
    resamples, n = signs.shape
    observed = samples.sum(axis=1)
    gamma = TIE_RTOL * np.maximum(np.abs(observed), np.abs(samples).sum(axis=1))
    counts = np.zeros(len(samples), dtype=np.int64)
    rows = rows_per_batch(None, 8 * (n + len(samples)), resamples)
    for start in range(0, resamples, rows):
        block = signs[start : start + rows].astype(np.float64)
        null = block @ samples.T  # (rows, sims)
        if alternative == "greater":
            hits = null >= observed - gamma
        elif alternative == "less":
            hits = null <= observed + gamma
        else:
            hits = np.abs(null) >= np.abs(observed) - gamma
        counts += np.count_nonzero(hits, axis=0)
    return np.asarray((counts + 1) / (resamples + 1), dtype=np.float64)


def simulated_power(
    pilot_deltas: npt.ArrayLike | Mapping[str, float],
    effect: float,
    n: int,
    alpha: float = DEFAULT_ALPHA,
    simulations: int = 1000,
    seed: int = DEFAULT_SEED,
    *,
    test: PowerTest = "t",
    alternative: Alternative = "two-sided",
    resamples: int = 1000,
    batch: int | None = None,
) -> SimulatedPower:
    """Power by simulation from pilot per-query differences, no normality assumed.

    The pilot differences (e.g. from a small first experiment) are shifted
    so that their mean is exactly ``effect`` — keeping their spread, skew
    and ties — and each simulation bootstraps ``n`` of them, runs the
    level-``alpha`` test, and counts a detection when ``p ≤ alpha``.
    ``power`` is the share of detections. With ``effect=0`` it estimates the
    test's false-positive rate on data shaped like the pilot.

    ``test="t"`` is the paired t-test (vectorised over simulations).
    ``test="randomization"`` is a fast sign-flip test with ``resamples``
    sign vectors shared by all simulations: each simulated test is still
    exact in distribution, the shared signs only correlate the
    simulations slightly. Everything comes from one
    ``numpy.random.default_rng(seed)``; ``batch`` (simulations at a time)
    does not change the result.
    """
    pilot = _check_pilot(pilot_deltas)
    effect = check_real(effect, "effect")
    n = check_int(n, "n", 2)
    alpha = check_probability(alpha, "alpha")
    simulations = check_int(simulations, "simulations", 1)
    seed = check_seed(seed)
    test = check_choice(test, "test", ("t", "randomization"))  # type: ignore[assignment]
    alternative = check_alternative(alternative)
    resamples = check_int(resamples, "resamples", 1)
    batch = check_batch(batch)
    check_cost(simulated_power_cost(n, simulations, test, resamples, batch),
               _simulated("simulated_power", simulations, test, resamples, batch, f"n={n}"),
               knobs="simulations, resamples (or batch)", field="simulations")

    shifted = pilot - pilot.mean() + effect
    rng = np.random.default_rng(seed)
    signs: npt.NDArray[np.int8] | None = None
    if test == "randomization":
        signs = (rng.integers(0, 2, size=(resamples, n), dtype=np.int8) * 2 - 1).astype(np.int8)
    detections = 0
    step = rows_per_batch(batch, 32 * n, simulations)
    if signs is not None and batch is None:
        step = max(1, min(step, MEMORY_BUDGET // max(1, 16 * resamples)))
    for start in range(0, simulations, step):
        rows = min(simulations, start + step) - start
        samples = shifted[draw_indices(rng, rows, n, len(shifted))]
        if signs is None:
            p = _t_pvalues(samples, alternative)
        else:
            p = _randomization_pvalues(samples, signs, alternative)
        detections += int(np.count_nonzero(p <= alpha))
    share = detections / simulations
    return SimulatedPower(
        power=share,
        detections=detections,
        simulations=simulations,
        standard_error=math.sqrt(share * (1.0 - share) / simulations),
        effect=effect,
        n=n,
        alpha=alpha,
        alternative=alternative,
        test=test,
        resamples=resamples if test == "randomization" else None,
        seed=seed,
        pilot_n=len(pilot),
        pilot_sd=float(pilot.std(ddof=1)),
    )


# -- detection table ---------------------------------------------------------------


@dataclass(frozen=True)
class DetectionTable(Result):
    """Result of :func:`detection_table`: power for each effect (rows) and query count (columns).

    ``power[i][j]`` is the power to detect ``effects[i]`` with ``ns[j]``
    queries; ``queries_needed[i]`` the queries for ``target_power`` at
    ``effects[i]`` (normal approximation with ``sd``, whatever ``method``
    filled the table; None when a one-sided ``alternative`` points away
    from the effect). ``simulations``/``seed``/``test`` are None for the
    normal approximation.
    """

    effects: tuple[float, ...]
    ns: tuple[int, ...]
    power: tuple[tuple[float, ...], ...]
    queries_needed: tuple[int | None, ...]
    sd: float
    alpha: float
    target_power: float
    alternative: str
    method: str
    simulations: int | None = None
    seed: int | None = None
    test: str | None = None

    @property
    def matrix(self) -> FloatArray:
        """``power`` as a read-only ``len(effects) × len(ns)`` array."""
        m = np.array(self.power, dtype=np.float64).reshape(len(self.effects), len(self.ns))
        m.setflags(write=False)
        return m


def _simulated(name: str, simulations: int, test: str, resamples: int | None,
               batch: int | None, sizes: str) -> str:
    parts = [f"simulations={simulations}", f"test={test!r}"]
    if test == "randomization" and resamples is not None:
        parts.append(f"resamples={resamples}")
    if batch is not None:
        parts.append(f"batch={batch}")
    if sizes:
        parts.append(sizes)
    return f"{name} with {', '.join(parts)}"


def _check_sequence(values: Any, name: str) -> Sequence[Any]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise InputError(f"{name} must be a sequence; got {values!r}")
    if len(values) == 0:
        raise InputError(f"{name} must not be empty")
    return list(values)


def detection_table(
    sd_or_pilot: float | npt.ArrayLike | Mapping[str, float],
    effects: Sequence[float] = (0.02, 0.05, 0.10),
    ns: Sequence[int] = (50, 100, 200, 500),
    *,
    alpha: float = DEFAULT_ALPHA,
    target_power: float = 0.8,
    alternative: Alternative = "two-sided",
    method: Literal["normal", "simulated"] = "normal",
    simulations: int = 1000,
    seed: int = DEFAULT_SEED,
    test: PowerTest = "t",
) -> DetectionTable:
    """Which differences can a test collection of a given size detect?

    ``sd_or_pilot`` is either the SD of per-query differences (a number) or
    pilot differences (an array or ``{qid: delta}``), whose SD is used.
    ``method="normal"`` fills the table with :func:`power`;
    ``method="simulated"`` (pilot only) with :func:`simulated_power`, seeded
    per cell from ``seed`` so the table is reproducible cell by cell.
    """
    pilot: FloatArray | None = None
    if isinstance(sd_or_pilot, numbers.Real) and not isinstance(sd_or_pilot, bool):
        sd = check_real(sd_or_pilot, "sd", positive=True)
    else:
        pilot = _check_pilot(sd_or_pilot, "sd_or_pilot")
        sd = float(pilot.std(ddof=1))
        if np.ptp(pilot) == 0.0:
            raise InputError("pilot differences are all equal; their SD is 0", field="sd_or_pilot")
    effs = tuple(check_real(e, "effect") for e in _check_sequence(effects, "effects"))
    if any(e == 0.0 for e in effs):
        raise InputError("effects must be non-zero")
    sizes = tuple(check_int(k, "n", 2) for k in _check_sequence(ns, "ns"))
    alpha = check_probability(alpha, "alpha")
    target_power = check_probability(target_power, "target_power")
    alternative = check_alternative(alternative)
    method = check_choice(method, "method", ("normal", "simulated"))  # type: ignore[assignment]
    if method == "simulated" and pilot is None:
        raise InputError("method='simulated' needs pilot differences, not just an SD")
    seed = check_seed(seed)
    test = check_choice(test, "test", ("t", "randomization"))  # type: ignore[assignment]
    simulations = check_int(simulations, "simulations", 1)
    if method == "simulated":
        total = NOTHING
        for k in sizes:
            # 1000: the resamples simulated_power uses by default, as each cell below does
            total = total.then(simulated_power_cost(k, simulations, test, 1000).times(len(effs)))
        check_cost(total, _simulated(f"detection_table of {len(effs)} effects × {len(sizes)} "
                                     "query counts", simulations, test, None, None, ""),
                   knobs="simulations (or the effects and query counts)", field="simulations")

    rows: list[tuple[float, ...]] = []
    for i, e in enumerate(effs):
        if pilot is None or method == "normal":
            rows.append(tuple(_power(e, sd, k, alpha, alternative) for k in sizes))
        else:
            rows.append(
                tuple(
                    simulated_power(
                        pilot, e, k, alpha, simulations, seed + i * len(sizes) + j,
                        test=test, alternative=alternative,
                    ).power
                    for j, k in enumerate(sizes)
                )
            )
    needed = tuple(
        _queries_needed(e, sd, target_power, alpha, alternative)
        if alternative == "two-sided" or (e > 0) == (alternative == "greater")
        else None
        for e in effs
    )
    simulated = method == "simulated"
    return DetectionTable(
        effects=effs,
        ns=sizes,
        power=tuple(rows),
        queries_needed=needed,
        sd=sd,
        alpha=alpha,
        target_power=target_power,
        alternative=alternative,
        method=method,
        simulations=simulations if simulated else None,
        seed=seed if simulated else None,
        test=test if simulated else None,
    )
