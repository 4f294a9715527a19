"""The twenty planted results come back exactly from trend and since, on SQLite and on
PostgreSQL (the ``store_url`` fixture), and end to end through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.history import open_store, since, trend
from rankproof.stats import paired_test
from tests.history._planted import DROP_AT, LOST_AT, LOST_QID, N_RESULTS, RUN_NAME, Planted


@pytest.fixture
def planted(planted_store: tuple[str, Planted]) -> Planted:
    return planted_store[1]


@pytest.fixture
def store_url(planted_store: tuple[str, Planted]) -> str:
    return planted_store[0]


def test_the_trend_finds_the_drop_at_12_and_only_there(planted: Planted, store_url: str) -> None:
    with open_store(store_url) as store:
        assert len(store.results()) == N_RESULTS
        t = trend(store, "ndcg@10", run=RUN_NAME, branch="main")
    assert [p.index for p in t.points] == list(range(1, N_RESULTS + 1))
    assert [p.commit for p in t.points] == list(planted.commits)
    steps = {p.index: p.step for p in t.points}
    assert steps[1] is None
    assert steps[DROP_AT] == "worse"
    assert {i for i, s in steps.items() if s not in (None, "no detectable difference")} \
        == {DROP_AT}
    drop = t.points[DROP_AT - 1]
    assert drop.difference is not None and drop.difference < -0.1
    assert drop.p_corrected is not None and drop.p_corrected <= 0.05
    assert t.correction == "holm" and len(t.rows) == N_RESULTS - 1


def test_each_step_is_its_own_randomization_test(planted: Planted, store_url: str) -> None:
    """The steps are tested together (one shared draw of sign vectors), with the very
    p-value and interval each step's own `paired_test` gives; no bootstrap beside them."""
    with open_store(store_url) as store:
        t = trend(store, "ndcg@10", run=RUN_NAME, branch="main")
        series = [store.series(store.get(p.id), RUN_NAME, "nDCG@10")[1] for p in t.points]
    for i, row in enumerate(t.rows, start=1):
        qids = sorted(series[i])
        single = paired_test(np.array([series[i][q] for q in qids]),
                             np.array([series[i - 1][q] for q in qids]))
        assert row.result.procedure == "monte-carlo" and row.result.resamples == 10_000
        assert row.result.p_value == single.p_value
        assert (row.result.ci_low, row.result.ci_high) == (single.ci_low, single.ci_high)
        assert row.result.bootstrap_low is None and row.result.bootstrap_high is None


def test_since_names_result_15_and_its_commit(planted: Planted, store_url: str) -> None:
    with open_store(store_url) as store:
        s = since(store, LOST_QID, "nDCG@10", run=RUN_NAME)
        kept = since(store, "q-3", "nDCG@10", run=RUN_NAME)
    assert s.found and s.index == LOST_AT
    assert s.commit == planted.commits[LOST_AT - 1]
    assert s.before is not None and s.before > 0.5 and s.after == 0.0 and s.now == 0.0
    assert len(s.values) == N_RESULTS
    # q-3 dropped at 12 with the others and never came back: found there, not at 5
    assert kept.found and kept.index == DROP_AT


def test_the_cli_reads_the_same_answers(planted: Planted, store_url: str) -> None:
    runner = CliRunner()
    got = runner.invoke(app, ["history", "trend", "-m", "nDCG@10", "--run", RUN_NAME,
                              "-f", "json", "--history", store_url])
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)
    assert [p["index"] for p in data["points"] if p["step"] == "worse"] == [DROP_AT]
    got = runner.invoke(app, ["history", "since", LOST_QID, "-m", "nDCG@10", "--run",
                              RUN_NAME, "--history", store_url])
    assert got.exit_code == 0, got.output
    assert f"#{LOST_AT}" in got.stdout
    assert planted.commits[LOST_AT - 1][:12] in got.stdout
    got = runner.invoke(app, ["history", "list", "--branch", "main", "-f", "json",
                              "--history", store_url])
    rows = json.loads(got.stdout)
    assert [r["git_commit"] for r in rows] == list(planted.commits)
    assert {r["git_branch"] for r in rows} == {"main"} and {r["git_dirty"] for r in rows} \
        == {False}


def test_trend_figure_marks_the_drop(planted: Planted, store_url: str, tmp_path: Path) -> None:
    fig = tmp_path / "trend.svg"
    got = CliRunner().invoke(app, ["history", "trend", "-m", "nDCG@10", "--run", RUN_NAME,
                                   "-o", str(fig), "--history", store_url])
    assert got.exit_code == 0, got.output
    svg = fig.read_text()
    assert svg.lstrip().startswith("<svg") and "worse than the point before" in svg


@pytest.mark.parametrize(("values", "expected"), [
    ([1.0, 1.0, 0.0, 0.0], 2),          # dropped at the third and stayed down
    ([1.0, 0.0, 1.0, 0.0], 3),          # recovered once: lost only since the last drop
    ([1.0, 0.5, 0.2], 1),               # kept falling: lost since the first drop
    ([0.2, 0.5, 1.0], None),            # never lost
    ([1.0, 0.0, 0.0, 1.0], None),       # came back: not lost
    ([0.5], None),
])
def test_lost_at_known_answers(values: list[float], expected: int | None) -> None:
    from rankproof.history._trend import lost_at

    assert lost_at(values) == expected
    assert lost_at([-v for v in values], higher=False) == expected
