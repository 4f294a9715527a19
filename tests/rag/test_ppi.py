"""Prediction-powered means: agreement with ppi-python, input errors, coverage."""

from __future__ import annotations

import numpy as np
import pytest

from rankproof._errors import InputError
from rankproof.rag._ppi import PPIResult, ppi_mean

ppi_py = pytest.importorskip("ppi_py")


def _data(rng: np.random.Generator, big_n: int, n: int, bias: float = 0.6
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Human labels on a 1–5 scale and a judge that over-scores by ``bias`` with noise."""
    human = rng.integers(1, 6, size=big_n).astype(float)
    judge = np.clip(np.round(human + bias + rng.normal(0, 0.8, size=big_n)), 1, 5)
    idx = rng.choice(big_n, size=n, replace=False)
    return judge, judge[idx], human[idx], human


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_agrees_with_ppi_py(seed: int, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    judge_all, f, y, _ = _data(rng, big_n=int(rng.integers(50, 400)), n=int(rng.integers(5, 40)))
    ours = ppi_mean(judge_all, f, y, alpha=alpha)
    lo, hi = ppi_py.ppi_mean_ci(y, f, judge_all, alpha=alpha)
    point = ppi_py.ppi_mean_pointestimate(y, f, judge_all)
    assert ours.estimate == pytest.approx(float(np.asarray(point).ravel()[0]), abs=1e-9)
    assert ours.ci_low == pytest.approx(float(np.asarray(lo).ravel()[0]), abs=1e-9)
    assert ours.ci_high == pytest.approx(float(np.asarray(hi).ravel()[0]), abs=1e-9)
    clo, chi = ppi_py.classical_mean_ci(y, alpha=alpha)
    assert ours.human_only_ci == pytest.approx((float(clo), float(chi)), abs=1e-9)
    assert ours.human_only_mean == pytest.approx(float(y.mean()), abs=1e-12)
    assert ours.naive_mean == pytest.approx(float(judge_all.mean()), abs=1e-12)
    assert 0.0 <= ours.lam <= 1.0


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_fixed_lambda_agrees_with_ppi_py(lam: float) -> None:
    rng = np.random.default_rng(11)
    judge_all, f, y, _ = _data(rng, 200, 20)
    ours = ppi_mean(judge_all, f, y, lam=lam)
    lo, hi = ppi_py.ppi_mean_ci(y, f, judge_all, alpha=0.05, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, f, judge_all, lam=lam)
    assert ours.estimate == pytest.approx(float(np.asarray(point).ravel()[0]), abs=1e-9)
    assert (ours.ci_low, ours.ci_high) == pytest.approx(
        (float(np.ravel(lo)[0]), float(np.ravel(hi)[0])), abs=1e-9)
    assert ours.lam == lam


def test_hand_computed_plain_ppi() -> None:
    # lam=1: mean(f_all) + mean(y - f) = 23/6 + ((2-3)+(3-4))/2 = 3.8333 - 1
    r = ppi_mean([3, 4, 4, 5, 3, 4], [3, 4], [2, 3], lam=1.0)
    assert r.estimate == pytest.approx(23 / 6 - 1)
    assert r.judge_bias == pytest.approx(1.0)
    assert (r.n, r.N) == (2, 6)
    assert r.to_dict()["human_only_ci"] == list(r.human_only_ci)
    assert isinstance(r, PPIResult) and r.width > 0


def test_constant_judge_falls_back_to_human_mean() -> None:
    r = ppi_mean([3.0] * 10, [3.0, 3.0, 3.0], [1.0, 2.0, 3.0])
    assert r.lam == 0.0
    assert r.estimate == pytest.approx(2.0)
    assert (r.ci_low, r.ci_high) == pytest.approx(r.human_only_ci)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (([1, 2, 3], [1, 2], [1]), {}, "human_labelled needs at least 2 values, got 1"),
    (([1, 2, 3], [1, 2, 3], [1, 2]), {}, "judge_labelled has 3 values but human_labelled has 2"),
    (([1, float("nan")], [1, 2], [1, 2]), {}, "judge_all[1] is nan, expected a finite number"),
    (([1, 2], [1, 2], [1, float("inf")]), {}, "human_labelled[1] is inf"),
    (([1, 2], [1, 2], [1, 2]), {"alpha": 1.5}, "alpha must be a number in (0, 1), got 1.5"),
    (([1, 2], [1, 2], [1, 2]), {"lam": 2}, "lam must be None or a number in [0, 1], got 2"),
    (([[1, 2]], [1, 2], [1, 2]), {}, "judge_all must be one-dimensional"),
    ((["a", "b"], [1, 2], [1, 2]), {}, "judge_all must be a sequence of numbers"),
])
def test_bad_input(args: tuple, kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(InputError) as info:
        ppi_mean(*args, **kwargs)
    assert message in str(info.value)


@pytest.mark.slow
def test_coverage_on_a_biased_judge() -> None:
    """The PPI interval covers the true mean about 95% of the time; the judge's own
    mean, biased by +0.6 before clipping, essentially never lands on it."""
    rng = np.random.default_rng(2023)
    trials, covered, naive_hits = 400, 0, 0
    true_mean = 3.0  # human labels uniform on 1..5
    for _ in range(trials):
        judge_all, f, y, _ = _data(rng, big_n=2000, n=80)
        r = ppi_mean(judge_all, f, y, alpha=0.05)
        covered += r.ci_low <= true_mean <= r.ci_high
        naive_hits += abs(r.naive_mean - true_mean) < 0.1
    rate = covered / trials
    # binomial band around 0.95 for 400 trials (about ±3.3 sd)
    assert 0.91 <= rate <= 0.985, rate
    assert naive_hits / trials < 0.05
