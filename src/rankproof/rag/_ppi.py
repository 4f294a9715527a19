"""Prediction-powered estimates of a mean judged score (PPI++, power-tuned).

A judge scores every case cheaply; people label a few. The judge's mean over
all cases is precise but biased by however the judge errs; the human mean
over the labelled few is unbiased but wide. Prediction-powered inference
(Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered
inference", *Science* 382, 2023; with the power tuning of Angelopoulos,
Duchi and Zrnic, "PPI++: Efficient prediction-powered inference",
arXiv:2311.01453) corrects the first by the second: with judge scores
``f`` on all ``N`` cases and ``(y, f)`` pairs on the ``n`` labelled ones,

    θ̂(λ) = λ · mean(f_all) + mean(y − λ · f_labelled)

is unbiased for the mean human label for any λ, and its normal-approximation
interval is ``θ̂ ± z_{1−α/2} · sqrt(var(λ f_all)/N + var(y − λ f_labelled)/n)``
(population variances, ``ddof=0``). λ = 1 is plain PPI, λ = 0 the classical
human-only interval.

**Which variant.** This module reproduces ``ppi_py.ppi_mean_ci`` and
``ppi_py.ppi_mean_pointestimate`` with their defaults (``lam=None``,
``lam_optim_mode="overall"``, no weights, two-sided): λ is estimated from the
data as

    λ = 2·cov₀(y − θ₁, f − θ₁) / (2·(1 + n/N) · var₁([f_labelled, f_all]))

clipped to [0, 1], where θ₁ is the λ = 1 estimate, ``cov₀`` the population
covariance over the labelled pairs and ``var₁`` the sample variance
(``ddof=1``) of the labelled and all judge scores pooled — exactly the
quantities ppi_py computes (its `_calc_lam_glm` with an identity Hessian).
The one deliberate difference: where ppi_py divides by a zero variance
(every judge score identical) and returns NaN, λ is 0 here — a constant judge
carries no information, and the estimate falls back to the human mean.

``judge_all`` holds the judge's scores on *every* case, the labelled ones
included, and is passed to the formula as is (as one would pass it to
``ppi_mean_ci(Y, Yhat, Yhat_unlabeled)``); the labelled cases should be a
random sample of all cases, or the correction is itself biased.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.stats import norm

from rankproof._errors import InputError
from rankproof.stats import DEFAULT_ALPHA

PPI_METHOD = "ppi++ mean, power-tuned lambda (ppi_py ppi_mean_ci defaults), normal interval"


@dataclass(frozen=True)
class PPIResult:
    """A prediction-powered estimate of a mean, beside what it improves on.

    ``estimate`` and ``[ci_low, ci_high]`` are the judge-corrected mean and its
    ``1 − alpha`` interval; ``naive_mean`` is the judge's own mean over all
    ``N`` cases (biased by the judge's errors, and given no interval for that
    reason); ``human_only_mean`` and ``human_only_ci`` are the classical
    estimate from the ``n`` labelled cases alone (the interval ppi_py's
    ``classical_mean_ci`` gives). ``lam`` is the power-tuning weight used and
    ``judge_bias`` the mean of ``judge − human`` over the labelled cases.
    """

    estimate: float
    ci_low: float
    ci_high: float
    naive_mean: float
    human_only_mean: float
    human_only_ci: tuple[float, float]
    n: int
    N: int
    alpha: float
    lam: float
    judge_bias: float
    method: str = PPI_METHOD

    @property
    def width(self) -> float:
        return self.ci_high - self.ci_low

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["human_only_ci"] = list(self.human_only_ci)
        return out


def _vector(values: Sequence[float] | np.ndarray, name: str, *, min_len: int) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a sequence of numbers", field=name) from None
    if arr.ndim != 1:
        raise InputError(f"{name} must be one-dimensional, got shape {arr.shape}", field=name)
    if arr.size < min_len:
        raise InputError(f"{name} needs at least {min_len} values, got {arr.size}", field=name)
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise InputError(f"{name}[{bad}] is {float(arr[bad])!r}, expected a finite number",
                         field=name)
    return arr


def _z(alpha: float) -> float:
    return float(norm.ppf(1 - alpha / 2))


def _tuned_lambda(y: np.ndarray, f: np.ndarray, f_all: np.ndarray) -> float:
    """ppi_py's default λ (see the module docstring), 0 for a constant judge."""
    n, big_n = y.size, f_all.size
    theta1 = float(f_all.mean() + (y - f).mean())
    grads = y - theta1
    grads_hat = f - theta1
    cov = 2.0 * float(np.dot(grads - grads.mean(), grads_hat - grads_hat.mean())) / n
    pooled = np.concatenate([grads_hat, f_all - theta1])
    var = float(np.var(pooled, ddof=1))
    denom = 2.0 * (1.0 + n / big_n) * var
    if denom <= 0.0 or not math.isfinite(denom):
        return 0.0
    return min(1.0, max(0.0, cov / denom))


def ppi_mean(
    judge_all: Sequence[float] | np.ndarray,
    judge_labelled: Sequence[float] | np.ndarray,
    human_labelled: Sequence[float] | np.ndarray,
    *,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
) -> PPIResult:
    """The prediction-powered mean of the human label, with a ``1 − alpha`` interval.

    ``judge_labelled[i]`` and ``human_labelled[i]`` are the judge's score and
    the person's label for the same labelled case; ``judge_all`` is the
    judge's score on every case (labelled ones included). ``lam=None``
    (default) tunes λ from the data as ppi_py does; a number in [0, 1] fixes
    it (1: plain PPI; 0: the human-only interval). Scores on an ordinal
    numeric scale are treated as numbers.

    >>> r = ppi_mean([3, 4, 4, 5, 3, 4], [3, 4], [2, 3], lam=1.0)
    >>> round(r.estimate, 4), round(r.naive_mean, 4), r.n, r.N
    (2.8333, 3.8333, 2, 6)
    """
    f_all = _vector(judge_all, "judge_all", min_len=2)
    f = _vector(judge_labelled, "judge_labelled", min_len=2)
    y = _vector(human_labelled, "human_labelled", min_len=2)
    if f.size != y.size:
        raise InputError(f"judge_labelled has {f.size} values but human_labelled has {y.size};"
                         " they must pair case by case", field="human_labelled")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise InputError(f"alpha must be a number in (0, 1), got {alpha!r}", field="alpha")
    if lam is not None and (isinstance(lam, bool) or not isinstance(lam, int | float)
                            or not 0.0 <= lam <= 1.0):
        raise InputError(f"lam must be None or a number in [0, 1], got {lam!r}", field="lam")
    n, big_n = y.size, f_all.size
    used = _tuned_lambda(y, f, f_all) if lam is None else float(lam)
    estimate = float((used * f_all).mean() + (y - used * f).mean())
    se = math.sqrt(float(np.std(used * f_all)) ** 2 / big_n
                   + float(np.std(y - used * f)) ** 2 / n)
    z = _z(alpha)
    human_mean = float(y.mean())
    human_half = z * float(np.std(y)) / math.sqrt(n)
    return PPIResult(
        estimate=estimate,
        ci_low=estimate - z * se,
        ci_high=estimate + z * se,
        naive_mean=float(f_all.mean()),
        human_only_mean=human_mean,
        human_only_ci=(human_mean - human_half, human_mean + human_half),
        n=n,
        N=big_n,
        alpha=float(alpha),
        lam=used,
        judge_bias=float((f - y).mean()),
    )
