"""`NullSummary`: what a picture of a row's null distribution needs, computed with the row.

Renderers compute nothing (docs/architecture.md): a report, an HTML page or
``rankproof plot --kind null`` only draws what the result already holds. So
the comparison layer, which ran the row's test, also replays its null
distribution (`rankproof.stats.null_distribution`, with the row's own test,
alternative, resamples and seed, so the picture is the one the p-value was
counted on) and keeps a bounded summary of it in the row: a histogram of at most
`MAX_BINS` bins for a resampling test, or the analytic reference evaluated at
at most `MAX_POINTS` points (Student t, the signed-rank normal approximation,
the sign test's binomial). A row adds at most about 2 × 242 numbers to its
file, however many resamples the test drew.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from rankproof._errors import InputError
from rankproof.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    NullDistribution,
    PairedResult,
    Result,
    null_distribution,
)

__all__ = ["MAX_BINS", "MAX_POINTS", "NULL_TESTS", "NullSummary", "summarise_null"]

#: Most histogram bins a resampling test's summary keeps (the HTML's own rule, √resamples
#: between 10 and 60, decides how many below that).
MAX_BINS = 60
#: Most points at which an analytic reference (t, Wilcoxon, sign) is evaluated.
MAX_POINTS = 241
#: The tests whose null distribution `rankproof.stats.null_distribution` replays.
NULL_TESTS: tuple[str, ...] = ("randomization", "bootstrap", "t", "wilcoxon", "sign")
ShapeKind = Literal["histogram", "density", "probability", "none"]
_SHAPES: tuple[str, ...] = ("histogram", "density", "probability", "none")


@dataclass(frozen=True)
class NullSummary(Result):
    """A row's null distribution, summarised for drawing, and where the statistic fell.

    ``shape`` says what ``x`` and ``y`` hold: "histogram" (``x`` the ``len(y) + 1``
    bin edges, ``y`` the resamples per bin), "density" (``y`` the reference density
    at the points ``x``: Student t, or the normal approximation of the signed-rank
    sum) or "probability" (the sign test's binomial probabilities at the integers
    ``x``), or "none" (no reference to draw: every difference zero, say; ``x`` and ``y``
    empty). ``statistic`` is the observed statistic (``statistic_label`` names it)
    and ``mirror`` the equally extreme value a two-sided test also counts (None
    when one-sided). ``description`` says how the distribution was drawn ("randomization
    test, 10000 resamples, seed 0"); ``zero_line`` marks a bootstrap whose p-value
    counts the means beyond 0 (``bootstrap_p="asl"``). Validated at construction,
    so a hand-edited file fails when read, naming the field.
    """

    test: str
    statistic_label: str
    statistic: float | None
    mirror: float | None
    p_value: float
    description: str
    shape: ShapeKind
    x: tuple[float, ...]
    y: tuple[float, ...]
    zero_line: bool = False

    def __post_init__(self) -> None:
        if self.shape not in _SHAPES:
            raise InputError(f"null summary: shape must be one of {', '.join(_SHAPES)}, got "
                             f"{self.shape!r}", field="shape")
        want = len(self.y) + 1 if self.shape == "histogram" and self.y else len(self.y)
        if len(self.x) != want:
            raise InputError(f"null summary: a {self.shape} needs {want} x value(s) for "
                             f"{len(self.y)} y value(s), got {len(self.x)}", field="x")
        if len(self.x) > MAX_POINTS + 1:
            raise InputError(f"null summary: at most {MAX_POINTS + 1} x values, got "
                             f"{len(self.x)}", field="x")
        if not all(math.isfinite(v) for v in (*self.x, *self.y)):
            raise InputError("null summary: x and y must be finite numbers", field="y")

    @classmethod
    def from_distribution(cls, null: NullDistribution) -> NullSummary:
        """The bounded summary of a replayed null distribution (`null_distribution`)."""
        return _summary(null)

    @classmethod
    def from_dict(cls, data: Any) -> NullSummary:
        """A summary from its ``to_dict()`` form; every field is checked."""
        if not isinstance(data, Mapping):
            raise InputError(f"a row's null summary must be a mapping, got "
                             f"{type(data).__name__}", field="null")
        missing = [k for k in ("test", "statistic_label", "statistic", "mirror", "p_value",
                               "description", "shape", "x", "y") if k not in data]
        if missing:
            raise InputError(f"a row's null summary lacks {', '.join(missing)}", field="null")
        return cls(test=_text(data["test"], "test"),
                   statistic_label=_text(data["statistic_label"], "statistic_label"),
                   statistic=_maybe(data["statistic"], "statistic"),
                   mirror=_maybe(data["mirror"], "mirror"),
                   p_value=_number(data["p_value"], "p_value"),
                   description=_text(data["description"], "description"),
                   shape=cast(ShapeKind, _text(data["shape"], "shape")),
                   x=_numbers(data["x"], "x"), y=_numbers(data["y"], "y"),
                   zero_line=bool(data.get("zero_line", False)))


def summarise_null(result: PairedResult, differences: Sequence[float] | np.ndarray,
                   margin: float | None = None) -> NullSummary | None:
    """The `NullSummary` of the test ``result`` records, over ``differences`` (``a − b`` in
    the row's query order); None when there is nothing to draw: a non-inferiority row (its
    null is shifted and one-sided), a test with no replayable null (Tukey HSD), no
    variation to draw, or too few queries for the test."""
    if (margin is not None or result.test not in NULL_TESTS or len(differences) == 0
            or (result.test == "t" and len(differences) < 2)):
        return None
    if result.procedure == "normal":
        # Decided by the normal limit (no sign vector was drawn): the picture is that
        # limit, not a replay of 10,000 resamples over a million queries.
        return _normal_limit(result, np.asarray(differences, dtype=np.float64))
    # The row's test ran with these very options, so its cost was checked already.
    null = null_distribution(
        np.asarray(differences, dtype=np.float64), test=cast(Any, result.test),
        alternative=cast(Any, result.alternative),
        bootstrap_p=cast(Any, result.bootstrap_p or "centred"),
        resamples=result.resamples or DEFAULT_RESAMPLES,
        seed=result.seed if result.seed is not None else DEFAULT_SEED)
    return _summary(null)


def _normal_limit(result: PairedResult, d: np.ndarray) -> NullSummary:
    """The randomization test's normal limit, ``N(0, Σdᵢ² / n²)`` for the mean difference
    under random signs, at `MAX_POINTS` points (`rankproof.stats.choose_procedure`)."""
    n = len(d)
    sd = math.sqrt(float(np.dot(d, d))) / n
    mean = float(result.difference)
    two_sided = result.alternative == "two-sided"
    common: dict[str, Any] = {"test": result.test, "statistic_label": "mean difference",
                              "statistic": mean, "mirror": -mean if two_sided else None,
                              "p_value": float(result.p_value)}
    bound = "" if result.error_bound is None else f", Berry–Esseen bound {result.error_bound:.2g}"
    how = f"normal limit of the randomization test over {n:,} queries{bound}"
    if sd == 0.0:
        return NullSummary(**common, description=f"no variation ({how})", shape="none",
                           x=(), y=())
    lim = max(4.0 * sd, 1.15 * abs(mean))
    xs = np.linspace(-lim, lim, MAX_POINTS)
    ys = np.exp(-0.5 * (xs / sd) ** 2) / (sd * math.sqrt(2.0 * math.pi))
    return NullSummary(**common, description=how, shape="density", x=tuple(xs.tolist()),
                       y=tuple(ys.tolist()))


def _summary(null: NullDistribution) -> NullSummary:
    stat = null.statistic if math.isfinite(null.statistic) else None
    mirror = null.mirror if null.mirror is not None and math.isfinite(null.mirror) else None
    common: dict[str, Any] = {"test": null.test, "statistic_label": null.statistic_label,
                              "statistic": stat, "mirror": mirror,
                              "p_value": float(null.p_value),
                              "zero_line": null.bootstrap_p == "asl"}
    if null.samples is not None:
        samples = np.asarray(null.samples, dtype=np.float64)
        how = f"{null.test} test, {null.resamples} resamples, seed {null.seed}"
        if null.exact:
            how = f"{null.test} test, all {len(samples)} sign vectors"
        if len(samples) == 0:
            return NullSummary(**common, description=f"no data ({how})", shape="none",
                               x=(), y=())
        bins = int(min(MAX_BINS, max(10, math.sqrt(len(samples)))))
        counts, edges = np.histogram(samples, bins=bins)
        return NullSummary(**common, description=how, shape="histogram",
                           x=tuple(edges.tolist()), y=tuple(float(c) for c in counts))
    reference = _reference(null)
    if reference is None:
        return NullSummary(**common, description=f"no reference distribution ({null.test} "
                                                 f"test, n = {null.n})", shape="none", x=(), y=())
    xs, how = reference
    ys = null.density(xs)
    return NullSummary(**common, description=how,
                       shape="probability" if null.test == "sign" else "density",
                       x=tuple(xs.tolist()), y=tuple(ys.tolist()))


def _reference(null: NullDistribution) -> tuple[np.ndarray, str] | None:
    """Where to evaluate an analytic test's reference, and how to describe it."""
    stat = null.statistic
    reach = abs(stat) if math.isfinite(stat) else 0.0
    if null.test == "t" and null.df is not None:
        lim = max(4.0, 1.15 * reach)
        return np.linspace(-lim, lim, MAX_POINTS), f"Student t, {null.df} df"
    if null.test == "wilcoxon" and null.mean is not None and null.sd:
        lim = max(4.0 * null.sd, 1.15 * abs(stat - null.mean) if math.isfinite(stat) else 0.0)
        return (np.linspace(null.mean - lim, null.mean + lim, MAX_POINTS),
                f"normal approximation over {null.trials} non-zero differences")
    if null.test == "sign" and null.trials:
        t = null.trials
        half = max(5.0 * math.sqrt(t) / 2.0, abs(stat - t / 2.0) + 1.0)
        lo, hi = max(0, math.floor(t / 2.0 - half)), min(t, math.ceil(t / 2.0 + half))
        if hi - lo + 1 > MAX_POINTS:  # keep the middle MAX_POINTS integers around t / 2
            lo = max(0, int(t // 2) - MAX_POINTS // 2)
            hi = lo + MAX_POINTS - 1
        return (np.arange(lo, hi + 1, dtype=np.float64),
                f"Binomial({t}, 1/2) over the non-tied queries")
    return None


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"null summary: {name} must be text, got {type(value).__name__}",
                         field=name)
    return value


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"null summary: {name} must be a finite number, got {value!r}",
                         field=name)
    return float(value)


def _maybe(value: Any, name: str) -> float | None:
    return None if value is None else _number(value, name)


def _numbers(value: Any, name: str) -> tuple[float, ...]:
    if not isinstance(value, list | tuple):
        raise InputError(f"null summary: {name} must be a list of numbers, got "
                         f"{type(value).__name__}", field=name)
    return tuple(_number(v, name) for v in value)
