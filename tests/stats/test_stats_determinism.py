"""Invariant 5: same seed ⇒ same result, whatever the chunk size and the query order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankproof.measures import PerQuery, parse
from rankproof.stats import (
    bootstrap_ci,
    detection_table,
    paired_scores,
    paired_test,
    randomization_test,
    simulated_power,
    tukey_hsd_randomized,
)
from rankproof.stats._randomization import SignFlip


def _scores(n: int, seed: int = 0) -> tuple[dict[str, float], dict[str, float]]:
    rng = np.random.default_rng(seed)
    a = np.round(rng.beta(0.6, 1.2, n), 2)
    a[rng.random(n) < 0.2] = 0.0
    b = np.clip(np.round(a + rng.normal(0.01, 0.08, n), 2), 0, 1)
    tie = rng.random(n) < 0.2
    b[tie] = a[tie]  # exact ties
    qids = [f"q{i:04d}" for i in range(n)]
    return dict(zip(qids, a.tolist(), strict=True)), dict(zip(qids, b.tolist(), strict=True))


def _shuffled(d: dict[str, float], seed: int) -> dict[str, float]:
    keys = list(d)
    np.random.default_rng(seed).shuffle(keys)
    return {k: d[k] for k in keys}


def test_random_words_are_stream_stable() -> None:
    """The k-th resample's sign bits do not depend on how many resamples are drawn per call."""
    flip = SignFlip(np.arange(200, dtype=np.float64))
    whole = flip.random_bytes(np.random.default_rng(3), 50)
    rng = np.random.default_rng(3)
    parts = np.concatenate([flip.random_bytes(rng, k) for k in (1, 7, 13, 29)], axis=1)
    np.testing.assert_array_equal(whole, parts)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_randomization_independent_of_batch(alternative: str) -> None:
    a, b = _scores(500)
    results = [
        randomization_test(a, b, alternative=alternative, resamples=3000, seed=42, batch=k)
        for k in (None, 1, 7, 256, 2999, 3000, 10_000)
    ]
    assert len({(r.count, r.p_value) for r in results}) == 1
    assert results[0].seed == 42


def test_randomization_exact_independent_of_batch() -> None:
    a, b = _scores(12)
    results = {randomization_test(a, b, batch=k).p_value for k in (None, 1, 5, 4096)}
    assert len(results) == 1


def test_randomization_independent_of_query_order() -> None:
    a, b = _scores(300, seed=1)
    ref = randomization_test(a, b, resamples=2000, seed=7)
    for s in range(5):
        r = randomization_test(_shuffled(a, s), _shuffled(b, s + 100), resamples=2000, seed=7)
        assert r == ref


def test_randomization_from_perquery_is_order_independent() -> None:
    a, b = _scores(200, seed=2)
    m = parse("nDCG@10")
    qids = list(a)
    pq_a = PerQuery(tuple(qids), (m,), np.array([[a[q]] for q in qids]))
    rev = qids[::-1]
    pq_b = PerQuery(tuple(rev), (m,), np.array([[b[q]] for q in rev]))
    r = randomization_test(pq_a, pq_b, measure="ndcg@10", resamples=2000)
    ref = randomization_test(a, b, resamples=2000)
    assert (r.count, r.p_value, r.n) == (ref.count, ref.p_value, ref.n)
    assert r.measure == "nDCG@10"


def test_seed_changes_monte_carlo_result_and_is_recorded() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.random(400), rng.random(400)  # no real difference: p well inside (0, 1)
    counts = {randomization_test(a, b, resamples=5000, seed=s).count for s in range(4)}
    assert len(counts) > 1
    assert randomization_test(a, b, resamples=5000, seed=123).to_dict()["seed"] == 123


@pytest.mark.parametrize("method", ["percentile", "studentized"])
def test_bootstrap_independent_of_batch_and_order(method: str) -> None:
    a, b = _scores(300, seed=4)
    ref = bootstrap_ci(a, b, method=method, resamples=2000, seed=5)  # type: ignore[arg-type]
    for k in (1, 3, 999, 2000):
        assert bootstrap_ci(a, b, method=method, resamples=2000, seed=5, batch=k) == ref  # type: ignore[arg-type]
    assert bootstrap_ci(_shuffled(a, 1), _shuffled(b, 2), method=method,  # type: ignore[arg-type]
                        resamples=2000, seed=5) == ref
    assert ref.seed == 5 and ref.resamples == 2000


@pytest.mark.parametrize("test", ["randomization", "t", "bootstrap", "wilcoxon", "sign"])
def test_paired_test_independent_of_batch_and_order(test: str) -> None:
    a, b = _scores(250, seed=6)
    ref = paired_test(a, b, test, resamples=2000, seed=9)  # type: ignore[arg-type]
    assert paired_test(a, b, test, resamples=2000, seed=9, batch=3) == ref  # type: ignore[arg-type]
    assert paired_test(_shuffled(a, 3), _shuffled(b, 4), test,  # type: ignore[arg-type]
                       resamples=2000, seed=9) == ref


@pytest.mark.parametrize("test", ["t", "randomization"])
def test_simulated_power_independent_of_batch(test: str) -> None:
    rng = np.random.default_rng(0)
    pilot = rng.normal(0.0, 0.1, 80)
    ref = simulated_power(pilot, 0.02, 60, simulations=300, seed=4, test=test,  # type: ignore[arg-type]
                          resamples=500)
    for k in (1, 17, 300):
        assert simulated_power(pilot, 0.02, 60, simulations=300, seed=4, test=test,  # type: ignore[arg-type]
                               resamples=500, batch=k) == ref
    assert ref.seed == 4


def test_simulated_power_pilot_mapping_is_order_independent() -> None:
    rng = np.random.default_rng(1)
    pilot = {f"q{i}": float(v) for i, v in enumerate(rng.normal(0, 0.1, 50))}
    rev = dict(reversed(list(pilot.items())))
    assert simulated_power(pilot, 0.03, 40, simulations=200) == simulated_power(
        rev, 0.03, 40, simulations=200
    )


def test_simulated_detection_table_is_reproducible() -> None:
    pilot = np.random.default_rng(2).normal(0, 0.1, 60)
    t1 = detection_table(pilot, (0.02, 0.05), (20, 50), method="simulated", simulations=200)
    t2 = detection_table(pilot, (0.02, 0.05), (20, 50), method="simulated", simulations=200)
    assert t1 == t2 and t1.seed == 0 and t1.simulations == 200


def test_tukey_independent_of_batch_and_order() -> None:
    rng = np.random.default_rng(3)
    qids = [f"q{i}" for i in range(120)]
    scores = {
        f"sys{k}": dict(zip(qids, np.round(rng.random(120) + 0.03 * k, 2).tolist(), strict=True))
        for k in range(4)
    }
    ref = tukey_hsd_randomized(scores, resamples=1500, seed=8)
    for k in (1, 11, 1500):
        assert tukey_hsd_randomized(scores, resamples=1500, seed=8, batch=k) == ref
    reordered = {s: _shuffled(scores[s], i) for i, s in enumerate(reversed(list(scores)))}
    assert tukey_hsd_randomized(reordered, resamples=1500, seed=8) == ref
    assert ref.seed == 8


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.integers(1, 64))
def test_property_query_order_and_batch_never_matter(n: int, seed: int, batch: int) -> None:
    a, b = _scores(n, seed=seed % 1000)
    perm = np.random.default_rng(seed).permutation(n)
    keys = [list(a)[i] for i in perm]
    a2, b2 = {k: a[k] for k in keys}, {k: b[k] for k in keys}
    r1 = randomization_test(a, b, resamples=300, seed=seed)
    r2 = randomization_test(a2, b2, resamples=300, seed=seed, batch=batch)
    assert r1 == r2
    assert paired_scores(a, b).qids == tuple(sorted(a))


def test_tukey_many_systems_uses_sorting_and_is_batch_independent() -> None:
    """Beyond 8 systems the permutations come from sorting keys; same guarantees."""
    rng = np.random.default_rng(4)
    qids = [f"q{i}" for i in range(40)]
    scores = {f"s{k}": dict(zip(qids, rng.random(40).tolist(), strict=True)) for k in range(9)}
    ref = tukey_hsd_randomized(scores, resamples=300, seed=1)
    assert tukey_hsd_randomized(scores, resamples=300, seed=1, batch=7) == ref
    assert len(ref.comparisons) == 36


def test_randomization_memory_is_bounded_at_full_scale() -> None:
    """10,000 resamples × 6,980 queries stay well under 64 MiB of scratch memory."""
    import tracemalloc

    rng = np.random.default_rng(0)
    a, b = rng.random(6980), rng.random(6980)
    tracemalloc.start()
    try:
        randomization_test(a, b)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20
