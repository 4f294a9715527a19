"""One verdict per row: every row's interval excludes 0 exactly when its verdict is better/worse.

Checked on real TREC DL19 and DL20 runs (all topics and seeded 12- and
20-topic subsets, with and without Holm, and for every other correction,
test and pairing), on constructed edge cases (Holm's monotonicity step,
BH's false-coverage level, ties at the tolerance), and against brute force:
the inverted randomization interval is exactly the set of shifts the test
does not reject.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.conftest import SHARED_DATA

import rankproof as rp
from rankproof.comparison import Comparison, compare, compare_scores, row_levels
from rankproof.stats import (
    StatSettings,
    correct,
    paired_interval,
    paired_t,
    randomization_test,
    sign_test,
    tukey_hsd_randomized,
    wilcoxon,
)

RUNS = SHARED_DATA / "rankllm_runs"
SYSTEMS = ("BM25", "BM25_RM3", "D_BERT_KD_TASB", "OPEN_AI_ADA2", "SPLADE_P_P_ENSEMBLE_DISTIL")
MEASURES = ("nDCG@10", "RR@10", "AP", "R@100")


def _agrees(c: Comparison) -> list[str]:
    """Rows whose interval and verdict disagree (empty when all agree)."""
    bad = []
    for r in c.rows:
        significant = r.verdict != "no detectable difference"
        side_ok = (not significant or (r.ci_low > 0) == (r.verdict == "better")
                   == r.higher_is_better)
        if r.excludes_zero() != significant or not side_ok:
            bad.append(repr(r))
    return bad


@pytest.fixture(scope="module", params=["dl19", "dl20"])
def year(request: pytest.FixtureRequest) -> tuple[rp.Qrels, dict[str, rp.Run]]:
    qrels = rp.read_trec_qrels(SHARED_DATA / "trec_dl" / f"qrels.{request.param}-passage.txt")
    runs = {s: rp.read_trec_run(RUNS / s / f"trec_results_{request.param}.txt") for s in SYSTEMS}
    return qrels, runs


def _subset(qrels: rp.Qrels, size: int | None, seed: int) -> rp.Qrels:
    if size is None:
        return qrels
    topics = sorted(qrels.topics)
    keep = set(np.random.default_rng(seed).choice(topics, size, replace=False).tolist())
    return rp.Qrels.from_dict({q: d for q, d in qrels.to_dict().items() if q in keep})


@pytest.mark.parametrize("size", [None, 12, 20])
@pytest.mark.parametrize("correction", ["holm", "none"])
def test_zero_disagreements_on_trec_dl(year: tuple[rp.Qrels, dict[str, rp.Run]],
                                       size: int | None, correction: str) -> None:
    qrels, runs = year
    c = compare(_subset(qrels, size, seed=size or 0), runs, MEASURES, baseline="BM25",
                stats=StatSettings(correction=correction, resamples=10_000, seed=0),
                topics="intersection")
    assert len(c.rows) == 4 * len(MEASURES)
    assert _agrees(c) == []
    # The percentile bootstrap that used to sit beside the verdict is still in the row.
    assert all(r.result.bootstrap_low is not None for r in c.rows)


def test_the_example_from_the_issue_now_says_one_thing() -> None:
    """DL19 RR@10, TAS-B vs BM25: the percentile bootstrap excludes 0 while Holm says n.s.
    (the old table printed both); the row's own interval, the test inverted at Holm's
    level, reaches 0."""
    qrels = rp.read_trec_qrels(SHARED_DATA / "trec_dl" / "qrels.dl19-passage.txt")
    runs = {s: rp.read_trec_run(RUNS / s / "trec_results_dl19.txt") for s in SYSTEMS}
    c = compare(qrels, runs, MEASURES, baseline="BM25", stats=StatSettings(seed=0),
                topics="intersection")
    row = next(r for r in c.rows if r.candidate == "D_BERT_KD_TASB" and r.measure == "RR@10")
    assert row.verdict == "no detectable difference" and row.p_corrected > 0.05
    assert row.result.bootstrap_low is not None and row.result.bootstrap_low > 0  # the old CI
    assert row.ci_low <= 0 <= row.ci_high and not row.ci_adjusted
    assert row.ci_level > row.result.confidence_level  # Holm's level is stricter than 95%


@pytest.mark.parametrize("test", ["t", "bootstrap", "wilcoxon", "sign"])
@pytest.mark.parametrize("correction", ["bonferroni", "bh"])
def test_every_test_and_correction_agrees(year: tuple[rp.Qrels, dict[str, rp.Run]], test: str,
                                          correction: str) -> None:
    qrels, runs = year
    c = compare(_subset(qrels, 20, seed=3), runs, ("nDCG@10", "RR@10"), baseline="BM25",
                stats=StatSettings(test=test, correction=correction,  # type: ignore[arg-type]
                                   resamples=2000), topics="intersection")
    assert _agrees(c) == []
    assert {r.ci_method for r in c.rows} == {rp.stats.TEST_INTERVALS[test]}


def test_all_pairs_use_tukey_simultaneous_intervals(
        year: tuple[rp.Qrels, dict[str, rp.Run]]) -> None:
    qrels, runs = year
    c = compare(qrels, runs, ("nDCG@10", "RR@10"), stats=StatSettings(resamples=2000, pairs="all"),
                topics="intersection")
    assert _agrees(c) == []
    assert {r.ci_method for r in c.rows} == {"tukey"}
    for r in c.rows:
        t = c.tukey[r.measure]
        half = (r.ci_high - r.ci_low) / 2
        assert half == pytest.approx(t.critical_difference)
        assert r.ci_level == pytest.approx(0.95)


# --- levels -------------------------------------------------------------------------------


def test_row_levels_by_hand() -> None:
    p = [0.01, 0.04, 0.03, 0.5]
    assert row_levels(p, [0.05] * 4, "none") == [0.05] * 4
    assert row_levels(p, [0.05] * 4, "bonferroni") == pytest.approx([0.0125] * 4)
    # Holm: ranks 0.01 (α/4, rejected), 0.03 (α/3: 0.09 > 0.05, stops), 0.04, 0.5 keep α/3.
    assert row_levels(p, [0.05] * 4, "holm") == pytest.approx([0.0125, 0.05 / 3, 0.05 / 3,
                                                               0.05 / 3])
    # BH: 0.01 ≤ 1·α/4, 0.03 ≤ 2·α/4? no (0.025); 0.04 ≤ 3·α/4 = 0.0375? no; R = 1.
    assert row_levels(p, [0.05] * 4, "bh") == pytest.approx([0.0125] * 4)
    assert row_levels([0.01, 0.02, 0.03], [0.05] * 3, "bh") == pytest.approx([0.05] * 3)


def test_holm_monotonicity_edge_case_resolves_toward_agreement() -> None:
    """p = (0.030, 0.031): the first step fails (2 × 0.030 > 0.05), so the second row is kept
    although 0.031 ≤ α/1. Its own step's level (0.05) would give an interval without 0;
    the level where the step-down stopped (0.025) gives one that reaches 0."""
    p = [0.030, 0.031]
    assert correct(p, "holm").tolist() == pytest.approx([0.06, 0.06])
    assert row_levels(p, [0.05, 0.05], "holm") == pytest.approx([0.025, 0.025])


def test_levels_match_the_corrected_verdicts_on_random_families() -> None:
    rng = np.random.default_rng(5)
    for _ in range(2000):
        m = int(rng.integers(1, 8))
        p = np.round(rng.random(m) ** 3, 4)
        for method in ("holm", "bh", "bonferroni", "none"):
            adjusted = correct(p, method)  # type: ignore[arg-type]
            levels = row_levels(p.tolist(), [0.05] * m, method)
            for raw, adj, level in zip(p, adjusted, levels, strict=True):
                assert (adj <= 0.05) == (raw <= level), (method, p, levels)


# --- the inverted intervals against brute force ---------------------------------------------


def _pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    return a, np.clip(a - 0.08 + rng.normal(0, 0.2, n), 0, 1)


@pytest.mark.parametrize(("n", "resamples"), [(5, 10_000), (12, 10_000), (40, 3000)])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_randomization_interval_is_the_set_the_test_keeps(n: int, resamples: int,
                                                          level: float) -> None:
    a, b = _pair(n, seed=n)
    iv = paired_interval(a, b, confidence_level=level, resamples=resamples, seed=7)
    centre = float((a - b).mean())
    for shift in np.linspace(centre - 0.6, centre + 0.6, 61):
        if math.isfinite(iv.low) and min(abs(shift - iv.low), abs(shift - iv.high)) < 1e-9:
            continue  # the tie tolerance decides exactly at the ends
        p = randomization_test(a - shift, b, resamples=resamples, seed=7).p_value
        assert (p > 1 - level) == (iv.low <= shift <= iv.high), (shift, p, iv)


def test_one_sided_bounds_are_the_one_sided_tests_inverted() -> None:
    a, b = _pair(30, seed=1)
    greater = paired_interval(a, b, alternative="greater", resamples=4000, seed=2)
    less = paired_interval(a, b, alternative="less", resamples=4000, seed=2)
    assert greater.high == math.inf and less.low == -math.inf
    for shift in np.linspace(-0.3, 0.3, 41):
        pg = randomization_test(a - shift, b, alternative="greater", resamples=4000,
                                seed=2).p_value
        pl = randomization_test(a - shift, b, alternative="less", resamples=4000, seed=2).p_value
        assert (pg > 0.05) == (shift >= greater.low)
        assert (pl > 0.05) == (shift <= less.high)


@pytest.mark.parametrize(("method", "p_of"), [("wilcoxon", wilcoxon), ("sign", sign_test)])
def test_rank_intervals_are_the_rank_tests_inverted(method: str, p_of: object) -> None:
    a, b = _pair(25, seed=4)
    iv = paired_interval(a, b, method)  # type: ignore[arg-type]
    assert iv.label.startswith(f"inverted {'Wilcoxon' if method == 'wilcoxon' else 'sign'}")
    for shift in np.linspace(-0.5, 0.5, 101):
        if min(abs(shift - iv.low), abs(shift - iv.high)) < 1e-9:
            continue
        p = p_of(a - shift, b).p_value  # type: ignore[operator]
        assert (p > 0.05) == (iv.low <= shift <= iv.high), (shift, p, iv)


def test_t_interval_is_scipys() -> None:
    a, b = _pair(30, seed=6)
    iv = paired_interval(a, b, "t")
    t = paired_t(a, b)
    assert (iv.low, iv.high) == (pytest.approx(t.ci_low), pytest.approx(t.ci_high))


def test_tukey_interval_excludes_zero_exactly_when_p_is_below_alpha() -> None:
    rng = np.random.default_rng(8)
    base = rng.random(30)
    scores = {f"s{i}": {f"q{j}": float(min(1, max(0, base[j] + i * 0.03 + rng.normal(0, .1))))
                        for j in range(30)} for i in range(4)}
    t = tukey_hsd_randomized(scores, resamples=3000, seed=1, alpha=0.05)
    for pc in t.comparisons:
        low, high = t.interval(pc.a, pc.b)
        assert (low > 0 or high < 0) == (pc.p_value <= 0.05)


def test_constant_and_identical_differences() -> None:
    base = {f"q{i}": 0.1 * (i % 5) for i in range(20)}
    up = {q: v + 0.25 for q, v in base.items()}
    iv = paired_interval(up, base, resamples=5000)
    assert (iv.low, iv.high) == (pytest.approx(0.25), pytest.approx(0.25))
    same = paired_interval(base, base, resamples=5000)
    assert same.low == same.high == 0.0 and not same.excludes(0.0)


def test_too_few_queries_give_an_unbounded_interval_and_no_verdict() -> None:
    base = {"q1": 0.2, "q2": 0.3, "q3": 0.1}
    up = {"q1": 0.9, "q2": 0.8, "q3": 0.7}
    iv = paired_interval(up, base)
    assert (iv.low, iv.high) == (-math.inf, math.inf)  # 3 queries: p ≥ 1/8 whatever the shift
    c = compare_scores({"base": {"m": base}, "up": {"m": up}}, higher_is_better={"m": True})
    row = c.rows[0]
    assert row.verdict == "no detectable difference" and not row.excludes_zero()
    again = type(row).from_dict(row.to_dict())
    assert (again.ci_low, again.ci_high) == (-math.inf, math.inf)
