"""Resampling reports its progress through a callback that changes no number.

Each resampling loop (`sign_flip_family`, `paired_tests`, `tukey_hsd_randomized`, and the
comparison layer that adds them up) is run with and without a ``progress=`` callback: the
results are equal field for field, and the calls the callback received count up, never
past what was planned, to exactly what was planned.
"""

from __future__ import annotations

import numpy as np
import pytest

from rankproof.comparison import compare, compare_scores
from rankproof.data import Qrels, Run
from rankproof.stats import (
    StatSettings,
    Tally,
    paired_tests,
    sign_flip_family,
    tukey_hsd_randomized,
)


class Seen:
    """The ``(done, planned)`` calls of one run of a procedure."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, done: int, planned: int) -> None:
        self.calls.append((done, planned))

    def check_complete(self) -> None:
        assert self.calls, "the callback was never called"
        done = [d for d, _ in self.calls]
        planned = {p for _, p in self.calls}
        assert len(planned) == 1, planned  # one plan, fixed from the first call
        assert done == sorted(done)
        assert done[-1] == planned.pop()
        assert all(d >= 0 for d in done)


def _diffs(seed: int, sizes: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(0.02, 0.1, size=n) for n in sizes]


def test_the_family_is_the_same_with_a_callback() -> None:
    ds = _diffs(1, (40, 40, 12, 300))  # 12 queries: 4,096 sign vectors, enumerated
    seen = Seen()
    plain = sign_flip_family(ds, resamples=5_000, seed=3, batch=700, max_level=0.05)
    told = sign_flip_family(ds, resamples=5_000, seed=3, batch=700, max_level=0.05,
                            progress=seen)
    assert plain.counts == told.counts and plain.totals == told.totals
    for a, b in zip((*plain.lows, *plain.highs), (*told.lows, *told.highs), strict=True):
        assert np.array_equal(a, b)
    seen.check_complete()
    assert seen.calls[-1] == (4 * 5_000, 4 * 5_000)
    assert len(seen.calls) > 4  # batch by batch, not once at the end


def test_paired_tests_and_tukey_are_the_same_with_a_callback() -> None:
    rng = np.random.default_rng(2)
    sides = [(rng.random(60), rng.random(60)) for _ in range(3)]
    seen = Seen()
    plain, _ = paired_tests(sides, resamples=2_000, seed=5)
    told, _ = paired_tests(sides, resamples=2_000, seed=5, progress=seen)
    assert [r.to_dict() for r in plain] == [r.to_dict() for r in told]
    seen.check_complete()
    assert seen.calls[-1] == (3 * 2 * 2_000, 3 * 2 * 2_000)  # sign flips and bootstraps

    scores = {s: {f"q{i}": float(v) for i, v in enumerate(rng.random(30))} for s in "abcd"}
    seen = Seen()
    plain_t = tukey_hsd_randomized(scores, resamples=3_000, seed=1, batch=500)
    told_t = tukey_hsd_randomized(scores, resamples=3_000, seed=1, batch=500, progress=seen)
    assert plain_t.to_dict() == told_t.to_dict()
    seen.check_complete()
    assert seen.calls[-1] == (3_000, 3_000)


def _runs(n: int) -> tuple[Qrels, dict[str, Run]]:
    rng = np.random.default_rng(9)
    qrels = Qrels.from_dict({f"q{i}": {f"d{i}-{j}": 1 for j in range(3)} for i in range(n)})
    runs = {}
    for name in ("base", "x", "y"):
        runs[name] = Run.from_dict(
            {f"q{i}": {f"d{i}-{j}": float(rng.random()) for j in range(8)} for i in range(n)},
            name=name)
    return qrels, runs


@pytest.mark.parametrize(("pairs", "test"), [("baseline", "randomization"),
                                             ("all", "randomization"),
                                             ("baseline", "bootstrap"),
                                             ("baseline", "t")])
def test_a_comparison_is_bit_identical_with_a_callback(pairs: str, test: str) -> None:
    qrels, runs = _runs(80)
    settings = StatSettings(pairs=pairs, test=test, resamples=1_500,  # type: ignore[arg-type]
                            seed=4)
    seen = Seen()
    plain = compare(qrels, runs, ["nDCG@10", "RR"], stats=settings)
    told = compare(qrels, runs, ["nDCG@10", "RR"], stats=settings, progress=seen)
    assert plain.to_dict() == told.to_dict()
    if test == "t":  # nothing is resampled: nothing is planned
        assert all(p == 0 for _, p in seen.calls)
        return
    seen.check_complete()


def test_rows_decided_by_the_normal_limit_count_as_done() -> None:
    """With 60,000 queries the normal limit decides clear rows: they draw nothing, and the
    count still reaches what was planned for them (nothing)."""
    rng = np.random.default_rng(0)
    n = 60_000
    qids = [f"q{i}" for i in range(n)]
    base = rng.random(n)
    scores = {"base": {"AP": dict(zip(qids, base.tolist(), strict=True))},
              "far": {"AP": dict(zip(qids, (base + 0.2).tolist(), strict=True))},
              "near": {"AP": dict(zip(qids, (base + rng.normal(0, 1e-3, n)).tolist(),
                                     strict=True))}}
    seen = Seen()
    settings = StatSettings(resamples=500, seed=1)
    plain = compare_scores(scores, stats=settings)
    told = compare_scores(scores, stats=settings, progress=seen)
    assert plain.to_dict() == told.to_dict()
    assert told.rows[0].result.procedure == "normal"
    seen.check_complete()


def test_a_tally_scales_each_part_into_one_plan() -> None:
    seen = Seen()
    tally = Tally(seen, 300)
    first = tally.part(100)
    assert first is not None
    first(5, 10)
    first(10, 10)
    tally.skip(50)
    second = tally.part(150)
    assert second is not None
    second(1, 3)
    second(3, 3)
    assert seen.calls == [(50, 300), (100, 300), (150, 300), (200, 300), (300, 300)]
    assert Tally(None, 10).part(10) is None  # nothing listens: the loop is told nothing
