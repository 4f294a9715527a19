"""Comparison at scale: the normal limit of the randomization test, used only where proved.

With tens of thousands of queries or more, a randomization row is computed from the
normal limit of its sign-flip distribution wherever the Berry–Esseen bound proves the
exact test's verdict (`rankproof.stats.choose_procedure`); every other row is resampled.
These tests check the bound against exact enumeration, the verdicts and intervals of
both procedures against each other (on synthetic families and on the shared TREC DL
runs' differences), and that each row records how it was made.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import SHARED_DATA

import rankproof as rp
import rankproof.stats._asymptotic as asymptotic
from rankproof.comparison import ComparisonRow, compare, compare_scores
from rankproof.stats import (
    StatSettings,
    choose_procedure,
    null_distribution,
    paired_interval,
    paired_test,
    randomization_test,
)
from rankproof.stats._asymptotic import normal_bounds, sign_flip_normal

RUNS = SHARED_DATA / "rankllm_runs"
SYSTEMS = ("BM25", "D_BERT_KD_TASB", "SPLADE_P_P_ENSEMBLE_DISTIL")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_the_bound_holds_against_exact_enumeration(seed: int, alternative: str) -> None:
    rng = np.random.default_rng(seed)
    d = rng.normal(0.05 * (seed - 2), 0.3, size=16)
    exact = randomization_test(d, np.zeros(16), alternative=alternative,  # type: ignore[arg-type]
                               resamples=2**16)
    assert exact.exact
    p, bound = sign_flip_normal(d, alternative)
    assert abs(p - exact.p_value) <= bound


def test_all_zero_differences_have_p_one_exactly() -> None:
    assert sign_flip_normal(np.zeros(10), "two-sided") == (1.0, 0.0)


def test_the_normal_interval_excludes_zero_exactly_when_p_is_below_the_level() -> None:
    rng = np.random.default_rng(3)
    for shift in np.linspace(-0.01, 0.01, 41):
        d = rng.normal(shift, 0.3, size=5_000)
        p, _ = sign_flip_normal(d, "two-sided")
        low, high = normal_bounds(d, 0.05, "two-sided")
        assert (low > 0 or high < 0) == (p <= 0.05)
        assert low < d.mean() < high


def test_choose_procedure_resamples_what_the_bound_cannot_decide() -> None:
    rng = np.random.default_rng(0)
    big = rng.normal(0.0, 0.3, size=60_000)
    clear = big + 0.02
    assert choose_procedure(clear, "randomization", 0.025, 0.05) == "normal"
    assert choose_procedure(clear, "t", 0.025, 0.05) == "resample"
    assert choose_procedure(clear[:1_000], "randomization", 0.025, 0.05) == "resample"
    # A difference whose normal p sits at the level: no bound can decide it.
    z = 2.05
    near = big - big.mean() + z * big.std() / np.sqrt(len(big))
    p, bound = sign_flip_normal(near, "two-sided")
    assert abs(p - 0.04) < 0.01 < bound + 0.01
    assert choose_procedure(near, "randomization", 0.025, 0.05) == "resample"


def _family(n: int) -> dict[str, dict[str, dict[str, float]]]:
    rng = np.random.default_rng(7)
    qids = [f"q{i:06d}" for i in range(n)]
    base = rng.random(n)
    better = base + 0.01 + rng.normal(0.0, 0.25, n)
    same = base + rng.normal(0.0, 0.25, n)
    return {s: {"nDCG@10": dict(zip(qids, v.tolist(), strict=True))}
            for s, v in (("base", base), ("better", better), ("same", same))}


def _rows_both_ways(scores: dict[str, dict[str, dict[str, float]]],
                    monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[ComparisonRow, ...], ...]:
    auto = compare_scores(scores, stats=StatSettings(resamples=2_000, seed=1)).rows
    with monkeypatch.context() as m:
        m.setattr(asymptotic, "ASYMPTOTIC_MIN_QUERIES", 10**12)
        resampled = compare_scores(scores, stats=StatSettings(resamples=2_000, seed=1)).rows
    return auto, resampled


def test_normal_rows_give_the_resampled_verdicts_and_intervals(
        monkeypatch: pytest.MonkeyPatch) -> None:
    auto, resampled = _rows_both_ways(_family(60_000), monkeypatch)
    for a, r in zip(auto, resampled, strict=True):
        assert a.result.procedure == "normal" and a.result.resamples == 0
        assert a.result.seed is None and a.result.bootstrap_low is None
        assert a.result.error_bound is not None and 0 < a.result.error_bound < 0.02
        assert r.result.procedure == "monte-carlo" and r.result.resamples == 2_000
        assert a.verdict == r.verdict
        half = (r.ci_high - r.ci_low) / 2
        assert abs(a.ci_low - r.ci_low) < 0.1 * half
        assert abs(a.ci_high - r.ci_high) < 0.1 * half
        # The Monte Carlo p estimates the exact p, which is within the bound of the normal p.
        mc_se = np.sqrt(max(r.result.p_value, 1e-3) / 2_000)
        assert abs(a.result.p_value - r.result.p_value) <= a.result.error_bound + 4 * mc_se
    assert [a.verdict for a in auto] == ["better", "no detectable difference"]


def test_a_row_records_its_procedure_in_its_json() -> None:
    row = compare_scores(_family(60_000), stats=StatSettings(resamples=500)).rows[0]
    doc = row.to_dict()
    assert doc["result"]["procedure"] == "normal" and doc["result"]["resamples"] == 0
    again = ComparisonRow.from_dict(doc)
    assert again.result.procedure == "normal"
    assert again.result.error_bound == row.result.error_bound
    small = paired_test([0.1, 0.5, 0.3, 0.9], [0.2, 0.4, 0.1, 0.6])
    assert small.procedure == "exact" and small.error_bound is None
    assert paired_test([0.1, 0.5, 0.3], [0.2, 0.4, 0.1], "t").procedure is None
    legacy = dict(doc, result={k: v for k, v in doc["result"].items()
                               if k not in ("procedure", "error_bound")})
    assert ComparisonRow.from_dict(legacy).result.procedure is None


def test_procedure_normal_is_refused_where_it_does_not_apply() -> None:
    with pytest.raises(rp.InputError, match="procedure='normal'"):
        paired_test([0.1, 0.5, 0.3], [0.2, 0.4, 0.1], "t", procedure="normal")
    with pytest.raises(rp.InputError, match="procedure='normal'"):
        paired_interval([0.1, 0.5, 0.3], [0.2, 0.4, 0.1], "t", procedure="normal")
    with pytest.raises(rp.InputError, match="procedure"):
        paired_test([0.1, 0.5, 0.3], [0.2, 0.4, 0.1], procedure="bogus")  # type: ignore[arg-type]


@pytest.fixture(scope="module", params=["dl19", "dl20"])
def dl_year(request: pytest.FixtureRequest) -> tuple[rp.Qrels, dict[str, rp.Run]]:
    year = request.param
    qrels = rp.read_trec_qrels(SHARED_DATA / "trec_dl" / f"qrels.{year}-passage.txt")
    runs = {s: rp.read_trec_run(RUNS / s / f"trec_results_{year}.txt") for s in SYSTEMS}
    return qrels, runs


def test_trec_dl_rows_are_resampled_as_before(
        dl_year: tuple[rp.Qrels, dict[str, rp.Run]]) -> None:
    qrels, runs = dl_year
    rows = compare(qrels, runs, ["nDCG@10", "RR@10", "AP"],
                   stats=StatSettings(resamples=2_000)).rows
    assert {r.result.procedure for r in rows} == {"monte-carlo"}
    assert {r.result.resamples for r in rows} == {2_000}


@pytest.mark.slow
def test_trec_dl_differences_at_scale_give_the_same_verdicts(
        dl_year: tuple[rp.Qrels, dict[str, rp.Run]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The DL runs' real per-query differences, each query repeated to 60,000 queries."""
    qrels, runs = dl_year
    tables = {s: rp.evaluate(qrels, run, ["nDCG@10", "RR@10"]) for s, run in runs.items()}
    reps = -(-60_000 // len(tables["BM25"].qids))
    scores = {s: {str(m): {f"{q}-{k}": v for k in range(reps)
                           for q, v in pq.scores(m).items()} for m in pq.measures}
              for s, pq in tables.items()}
    auto, resampled = _rows_both_ways(scores, monkeypatch)
    for a, r in zip(auto, resampled, strict=True):
        assert a.verdict == r.verdict
        assert a.result.procedure in ("normal", "monte-carlo")
    assert any(a.result.procedure == "normal" for a in auto)


def test_a_normal_rows_null_picture_is_its_normal_limit_not_a_replay(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A row decided in closed form drew no sign vector, so its stored null picture is the
    normal limit itself; before, the picture replayed 10,000 resamples over every query
    (at a million topics, most of `compare`'s time)."""
    import rankproof.comparison._null as null_module

    def no_replay(*args: object, **kwargs: object) -> None:
        raise AssertionError("a normal row's null was replayed")

    monkeypatch.setattr(null_module, "null_distribution", no_replay)
    rows = compare_scores(_family(60_000), stats=StatSettings(resamples=2_000)).rows
    for row in rows:
        assert row.result.procedure == "normal" and row.null is not None
        assert row.null.shape == "density" and len(row.null.x) == null_module.MAX_POINTS
        assert "normal limit of the randomization test over 60,000 queries" in \
            row.null.description
        assert row.null.statistic == row.result.difference
        assert row.null.mirror == -row.result.difference
        xs, ys = np.asarray(row.null.x), np.asarray(row.null.y)
        assert abs(float(np.sum(ys) * (xs[1] - xs[0])) - 1.0) < 1e-3  # a density
    monkeypatch.undo()
    # The limit's spread is the sign-flip distribution's: compare with a real replay.
    d = np.asarray(rows[0].differences, dtype=np.float64)
    replay = null_distribution(d, resamples=4_000, seed=3)
    assert replay.samples is not None
    sd = float(np.sqrt(np.dot(d, d)) / len(d))
    assert abs(float(np.std(replay.samples)) / sd - 1.0) < 0.05
