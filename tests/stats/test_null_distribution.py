"""`null_distribution` replays `paired_test`: same draws, same counting rule, same p-value.

The property that matters: a report recomputes the null distribution from
the per-query differences and the recorded seed, and counting its samples by
the test's own rule (and tie tolerance) gives exactly the p-value the
comparison reported — on real TREC DL19 nDCG@10 and on random data, for
several seeds, every alternative and both bootstrap p-values, whatever the
chunk size.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats as sps
from tests.conftest import SHARED_DATA

import rankproof as rp
from rankproof import InputError
from rankproof.stats import NullDistribution, null_distribution, paired_test
from rankproof.stats._randomization import count_extreme

ALTERNATIVES = ("two-sided", "greater", "less")


@pytest.fixture(scope="module")
def dl19() -> tuple[dict[str, float], dict[str, float]]:
    """Per-query nDCG@10 of TASB (a) and BM25 (b) on TREC DL19 passage (43 topics)."""
    qrels = rp.read_trec_qrels(SHARED_DATA / "trec_dl" / "qrels.dl19-passage.txt")
    runs = SHARED_DATA / "rankllm_runs"
    a = rp.evaluate(qrels, rp.read_trec_run(runs / "D_BERT_KD_TASB" / "trec_results_dl19.txt"),
                    "nDCG@10").scores("nDCG@10")
    b = rp.evaluate(qrels, rp.read_trec_run(runs / "BM25" / "trec_results_dl19.txt"),
                    "nDCG@10").scores("nDCG@10")
    assert len(a) == len(b) == 43
    return dict(a), dict(b)


def _diffs(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    """What a report stores: candidate − baseline per query."""
    return {q: a[q] - b[q] for q in a}


def _subsets(a: dict[str, float], b: dict[str, float]
             ) -> list[tuple[dict[str, float], dict[str, float]]]:
    """All 43 topics, plus seeded 12-topic (enumerated exactly) and 20-topic subsets, where
    the p-value is far from its floor, so the counting is really exercised."""
    out = [(a, b)]
    topics = sorted(a)
    for size, seed in ((12, 1), (12, 2), (20, 3), (20, 4)):
        keep = np.random.default_rng(seed).choice(topics, size, replace=False).tolist()
        out.append(({q: a[q] for q in keep}, {q: b[q] for q in keep}))
    return out


def _random(seed: int, n: int) -> tuple[dict[str, float], dict[str, float]]:
    """Scores rounded to 2 digits (so some differences tie and some are 0), slightly apart."""
    rng = np.random.default_rng(seed)
    a = np.round(rng.beta(0.7, 1.3, n), 2)
    b = np.clip(np.round(a - rng.normal(0.02, 0.12, n), 2), 0.0, 1.0)
    b[: n // 6] = a[: n // 6]
    return ({f"q{i:04d}": float(x) for i, x in enumerate(a)},
            {f"q{i:04d}": float(x) for i, x in enumerate(b)})


def _randomization_p(nd: NullDistribution, alternative: str) -> float:
    """The randomization test's counting rule, applied to the recomputed samples."""
    assert nd.samples is not None and nd.tolerance is not None
    r = count_extreme(nd.samples, nd.statistic, alternative, nd.tolerance)
    total = len(nd.samples)
    return min(1.0, r / total if nd.exact else (r + 1) / (total + 1))


def _bootstrap_p(nd: NullDistribution, alternative: str) -> float:
    """The bootstrap p-value's counting rule ("centred" or "asl"), applied to the samples."""
    s = nd.samples
    assert s is not None
    b = len(s)
    if nd.bootstrap_p == "asl":
        below, above = int(np.count_nonzero(s <= 0)), int(np.count_nonzero(s >= 0))
        r = {"greater": below, "less": above, "two-sided": min(below, above)}[alternative]
        return min(1.0, (2.0 if alternative == "two-sided" else 1.0) * (r + 1) / (b + 1))
    assert nd.tolerance is not None
    t, tol = nd.statistic, nd.tolerance
    hits = {"greater": s >= t - tol, "less": s <= t + tol,
            "two-sided": np.abs(s) >= abs(t) - tol}[alternative]
    return (int(np.count_nonzero(hits)) + 1) / (b + 1)


def _cases(dl19: tuple[dict[str, float], dict[str, float]]
           ) -> list[tuple[dict[str, float], dict[str, float]]]:
    return [*_subsets(*dl19), _random(0, 30), _random(1, 60), _random(2, 250), _random(3, 9)]


@pytest.mark.parametrize("seed", [0, 1, 12345])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_randomization_p_from_the_samples_is_paired_tests_p(
        dl19: tuple[dict[str, float], dict[str, float]], seed: int, alternative: str) -> None:
    seen = set()
    for a, b in _cases(dl19):
        pt = paired_test(a, b, "randomization", alternative=alternative, seed=seed)
        nd = null_distribution(_diffs(a, b), alternative=alternative, seed=seed)
        assert nd.p_value == pt.p_value
        assert _randomization_p(nd, alternative) == pt.p_value
        assert nd.statistic == pt.statistic
        assert (nd.seed, nd.resamples, nd.exact, nd.n) == (seed, 10_000, pt.exact, pt.n)
        assert nd.samples is not None
        assert len(nd.samples) == (2**pt.n if pt.exact else 10_000)
        seen.add(round(pt.p_value, 2))
    assert len(seen) >= 4  # the cases reach several p-values, not just the floor


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("kind", ["centred", "asl"])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_bootstrap_p_from_the_samples_is_paired_tests_p(
        dl19: tuple[dict[str, float], dict[str, float]], seed: int, kind: str,
        alternative: str) -> None:
    for a, b in _cases(dl19):
        pt = paired_test(a, b, "bootstrap", alternative=alternative, bootstrap_p=kind,
                         seed=seed, resamples=4000)
        nd = null_distribution(_diffs(a, b), test="bootstrap", alternative=alternative,
                               bootstrap_p=kind, seed=seed, resamples=4000)
        assert nd.p_value == pt.p_value
        assert _bootstrap_p(nd, alternative) == pt.p_value
        assert (nd.bootstrap_p, nd.seed, nd.resamples, nd.exact) == (kind, seed, 4000, False)
        assert (nd.tolerance is None) == (kind == "asl")


def test_samples_are_the_null_the_test_compares_with(
        dl19: tuple[dict[str, float], dict[str, float]]) -> None:
    d = _diffs(*dl19)
    mean = float(np.mean([d[q] for q in sorted(d)]))
    rand = null_distribution(d)
    assert rand.samples is not None
    # Sign flips keep every |d_i|: the resampled means are centred on 0 with
    # variance Σd²/n², and never exceed mean |d|.
    assert abs(float(rand.samples.mean())) < 0.01
    assert float(np.abs(rand.samples).max()) <= np.mean(np.abs(list(d.values()))) + 1e-12
    centred = null_distribution(d, test="bootstrap")
    asl = null_distribution(d, test="bootstrap", bootstrap_p="asl")
    assert centred.samples is not None and asl.samples is not None
    np.testing.assert_array_equal(centred.samples, asl.samples - mean)
    assert rand.statistic == centred.statistic == pytest.approx(mean, abs=1e-15)
    assert rand.mirror == -rand.statistic and asl.mirror is None
    assert null_distribution(d, alternative="greater").mirror is None
    assert not rand.samples.flags.writeable


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_chunk_size_changes_nothing(test: str) -> None:
    a, b = _random(5, 70)
    d = _diffs(a, b)
    runs = [null_distribution(d, test=test, resamples=3000, seed=3, batch=batch)  # type: ignore[arg-type]
            for batch in (None, 1, 7, 1000, 2999)]
    for nd in runs[1:]:
        assert nd.samples is not None and runs[0].samples is not None
        np.testing.assert_array_equal(nd.samples, runs[0].samples)
        assert nd.p_value == runs[0].p_value


def test_seed_is_recorded_and_decides_the_draws() -> None:
    d = _diffs(*_random(6, 40))
    first, again, other = (null_distribution(d, seed=s) for s in (11, 11, 12))
    assert first.seed == again.seed == 11 and other.seed == 12
    assert first.samples is not None and again.samples is not None
    assert other.samples is not None
    np.testing.assert_array_equal(first.samples, again.samples)
    assert not np.array_equal(first.samples, other.samples)
    assert first.to_dict()["seed"] == 11


def test_query_order_does_not_matter_and_arrays_are_positional() -> None:
    d = _diffs(*_random(8, 50))
    shuffled = dict(sorted(d.items(), key=lambda kv: kv[1]))
    a, b = null_distribution(d), null_distribution(shuffled)
    assert a.samples is not None and b.samples is not None
    np.testing.assert_array_equal(a.samples, b.samples)
    positional = null_distribution(np.array([d[q] for q in sorted(d)]))
    assert positional.samples is not None
    np.testing.assert_array_equal(positional.samples, a.samples)


def test_exact_enumeration_is_symmetric_and_complete() -> None:
    d = [0.3, -0.1, 0.25, 0.0, 0.05, -0.4, 0.2, 0.1, 0.15, -0.05]
    nd = null_distribution(d)
    assert nd.exact and nd.samples is not None and len(nd.samples) == 2**10
    s = np.sort(nd.samples)
    np.testing.assert_array_equal(s, -s[::-1])
    assert nd.p_value == paired_test(np.array(d), np.zeros(len(d))).p_value


def test_t_reference_is_students_t(dl19: tuple[dict[str, float], dict[str, float]]) -> None:
    a, b = dl19
    nd = null_distribution(_diffs(a, b), test="t")
    pt = paired_test(a, b, "t")
    assert (nd.statistic, nd.p_value, nd.df) == (pt.statistic, pt.p_value, 42)
    assert nd.samples is None and nd.seed is None and nd.resamples is None
    xs = np.linspace(-5, 5, 11)
    np.testing.assert_allclose(nd.density(xs), sps.t.pdf(xs, 42))
    assert nd.mirror == -nd.statistic
    grid = np.linspace(-60, 60, 200_001)
    assert float(np.sum(nd.density(grid)) * (grid[1] - grid[0])) == pytest.approx(1, abs=1e-4)


def test_wilcoxon_reference_is_the_normal_approximation() -> None:
    a, b = _random(9, 80)
    d = _diffs(a, b)
    nd = null_distribution(d, test="wilcoxon")
    pt = paired_test(a, b, "wilcoxon")
    assert (nd.statistic, nd.p_value) == (pt.statistic, pt.p_value)
    x = np.array([d[q] for q in sorted(d)])
    m = int(np.count_nonzero(x))
    assert nd.trials == m and nd.mean == m * (m + 1) / 4
    # scipy's own normal approximation (no continuity correction) has the same z.
    approx = sps.wilcoxon(x, method="approx", correction=False)
    assert nd.sd is not None
    assert abs((nd.statistic - nd.mean) / nd.sd) == pytest.approx(abs(approx.zstatistic))
    assert nd.mirror == 2 * nd.mean - nd.statistic


def test_sign_reference_is_the_binomial() -> None:
    a, b = _random(10, 45)
    nd = null_distribution(_diffs(a, b), test="sign")
    pt = paired_test(a, b, "sign")
    assert (nd.statistic, nd.p_value) == (pt.statistic, pt.p_value)
    assert nd.trials == pt.wins + pt.losses and nd.statistic == pt.wins
    assert float(nd.density(np.arange(nd.trials + 1)).sum()) == pytest.approx(1.0)
    assert nd.mirror == nd.trials - nd.statistic


def test_degenerate_references() -> None:
    zero = null_distribution([0.0, 0.0, 0.0], test="wilcoxon")
    assert (zero.p_value, zero.trials, zero.sd) == (1.0, 0, 0.0)
    with pytest.raises(InputError, match="no analytic density"):
        zero.density([0.0])
    with pytest.raises(InputError, match="no analytic density"):
        null_distribution([0.1, 0.2]).density([0.0])
    flat = null_distribution([0.0, 0.0], test="t")
    assert math.isnan(flat.statistic) and flat.p_value == 1.0


def test_result_serialises() -> None:
    nd = null_distribution({"q1": 0.1, "q2": -0.2, "q3": 0.3})
    doc = json.loads(nd.to_json())
    assert doc["test"] == "randomization" and len(doc["samples"]) == 8
    assert nd.statistic_label == "mean difference"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"differences": []}, "no differences"),
    ({"differences": {}}, "no differences"),
    ({"differences": {"q1": float("nan")}}, "score for query 'q1' is nan"),
    ({"differences": [[0.1]]}, "expected a 1-D array"),
    ({"differences": {1: 0.1}}, "query id 1 is a int"),
    ({"differences": [0.1], "test": "z"}, "test must be one of"),
    ({"differences": [0.1], "test": "t"}, "the t-test needs at least 2 queries; got 1"),
    ({"differences": [0.1], "alternative": "up"}, "alternative must be one of"),
    ({"differences": [0.1], "bootstrap_p": "x"}, "bootstrap_p must be one of"),
    ({"differences": [0.1], "resamples": 0}, "resamples must be at least 1"),
    ({"differences": [0.1], "seed": -1}, "seed must be at least 0"),
    ({"differences": [0.1], "batch": 0}, "batch must be at least 1"),
    ({"differences": [0.1] * 100, "resamples": 10**13}, "refused before starting"),
    ({"differences": [0.1] * 100, "test": "bootstrap", "resamples": 10**13},
     "refused before starting"),
])
def test_errors(kwargs: dict[str, object], message: str) -> None:
    differences = kwargs.pop("differences")
    with pytest.raises(InputError, match=message) as info:
        null_distribution(differences, **kwargs)  # type: ignore[arg-type]
    if "differences" in message or "score for" in message:
        assert info.value.field == "differences"
