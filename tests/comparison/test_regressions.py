"""`sample_regressions`: who counts as regressed, and a draw that only the seed decides."""

from __future__ import annotations

import numpy as np
import pytest

from rankproof import InputError
from rankproof.comparison import REGRESSION_SAMPLE_SIZE, Regressions, sample_regressions


def _pairs(n: int = 80, seed: int = 7) -> tuple[list[str], list[float], list[float]]:
    rng = np.random.default_rng(seed)
    qids = [f"q{i:03d}" for i in range(n)]
    base = rng.uniform(0, 1, n).round(3)
    cand = base + rng.choice([-0.3, -0.2, -0.1, 0.0, 0.1], n)
    return qids, base.tolist(), cand.tolist()


def test_population_is_exactly_the_queries_that_fell() -> None:
    qids, base, cand = _pairs()
    fell = {q for q, b, c in zip(qids, base, cand, strict=True) if c < b}
    r = sample_regressions(qids, base, cand, higher_is_better=True, n=len(qids))
    assert r.population == len(fell) and set(r.qids) == fell
    assert r.complete and all(f > 0 for f in r.falls)


def test_polarity_lower_is_better_counts_rises() -> None:
    qids = ["a", "b", "c", "d"]
    base, cand = [1.0, 1.0, 1.0, 1.0], [2.0, 0.5, 1.0, 3.0]
    assert sample_regressions(qids, base, cand, higher_is_better=False).qids == ("d", "a")
    assert sample_regressions(qids, base, cand, higher_is_better=True).qids == ("b",)


def test_ties_are_not_regressions() -> None:
    r = sample_regressions(["a", "b"], [0.5, 0.2], [0.5, 0.2], higher_is_better=True)
    assert (r.population, r.qids) == (0, ())


def test_same_seed_same_sample_whatever_the_input_order() -> None:
    qids, base, cand = _pairs()
    first = sample_regressions(qids, base, cand, higher_is_better=True, n=10, seed=3)
    order = np.random.default_rng(1).permutation(len(qids))
    shuffled = sample_regressions([qids[i] for i in order], [base[i] for i in order],
                                  [cand[i] for i in order], higher_is_better=True, n=10,
                                  seed=3)
    assert first == shuffled
    assert first.population > 10 and len(first.qids) == 10 and not first.complete
    assert (first.seed, first.n) == (3, 10)


def test_a_different_seed_draws_a_different_sample() -> None:
    qids, base, cand = _pairs()
    samples = {sample_regressions(qids, base, cand, higher_is_better=True, n=10,
                                  seed=s).qids for s in range(5)}
    assert len(samples) == 5


def test_all_regressed_queries_when_fewer_than_n_whatever_the_seed() -> None:
    qids, base, cand = _pairs(n=20)
    a = sample_regressions(qids, base, cand, higher_is_better=True, seed=0)
    b = sample_regressions(qids, base, cand, higher_is_better=True, seed=99)
    assert a.population < REGRESSION_SAMPLE_SIZE
    assert a.qids == b.qids and len(a.qids) == a.population


def test_sample_is_listed_largest_fall_first_ties_by_qid() -> None:
    qids = ["d", "c", "b", "a", "e"]
    base = [1.0, 1.0, 1.0, 1.0, 1.0]
    cand = [0.5, 0.9, 0.5, 0.2, 1.0]
    r = sample_regressions(qids, base, cand, higher_is_better=True)
    assert r.qids == ("a", "b", "d", "c")
    assert r.falls == pytest.approx((0.8, 0.5, 0.5, 0.1))
    qids, base, cand = _pairs()
    drawn = sample_regressions(qids, base, cand, higher_is_better=True, n=12, seed=5)
    assert list(drawn.falls) == sorted(drawn.falls, reverse=True)


def test_result_is_a_frozen_dataclass() -> None:
    r = sample_regressions(["a"], [1.0], [0.0], higher_is_better=True)
    assert isinstance(r, Regressions)
    with pytest.raises(AttributeError):
        r.seed = 1  # type: ignore[misc]


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((["a", "b"], [1.0], [1.0, 0.0]), {}, "2 qids but 1 baseline and 2 candidate"),
    ((["a", "a"], [1.0, 1.0], [0.0, 0.0]), {}, "query 'a' is given twice"),
    ((["a"], [float("nan")], [0.0]), {}, "baseline value of query 'a' must be a finite"),
    ((["a"], [1.0], ["x"]), {}, "candidate value of query 'a' must be a finite"),
    (([1], [1.0], [0.0]), {}, "query ids must be strings"),
    ((["a"], [1.0], [0.0]), {"n": 0}, "sample size must be a positive integer"),
    ((["a"], [1.0], [0.0]), {"seed": -1}, "seed must be a non-negative integer"),
])
def test_bad_input_is_refused_with_a_message(args: tuple[list[object], ...],
                                             kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(InputError, match=message):
        sample_regressions(*args, higher_is_better=True, **kwargs)  # type: ignore[arg-type]
