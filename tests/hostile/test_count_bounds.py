"""Every count a user types is checked against its cost before work starts (issue 22, item 7).

``discover --curve --trials 1000000000`` used to allocate 73.6 GiB of hit
flags, ``rag score --judge --repeat 1000000000`` was accepted and ran until
killed, and ``--workers 1000000`` was taken without a word. The first two
are now refused with the estimate (exit 2) before anything is indexed or
asked; the third is kept for calls to a server only up to a bound (CPU-bound
work never runs on more processes than CPUs), with a note on standard error.
(``--resamples`` and ``--simulations``: tests/hostile/test_cost_bounds.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from rankproof import InputError
from rankproof.cli import app
from rankproof.cli._engine import MAX_WORKERS, cap_workers
from rankproof.engine import cpu_count

TOY = Path(__file__).resolve().parents[2] / "examples" / "toy"
runner = CliRunner()


def cli(*args: str) -> Result:
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def test_a_billion_curve_trials_are_refused_before_anything_is_searched() -> None:
    from rankproof.discovery._curve import curve_cost

    with pytest.raises(InputError, match="lower --trials") as got:
        curve_cost(20, 153, (1, 2, 5, 10, 50, 153), 1_000_000_000)
    assert got.value.field == "trials" and "distractor curve" in str(got.value)
    assert curve_cost(20, 153, (1, 2, 5, 10, 50, 153), 20).seconds < 1


def test_discover_curve_with_a_billion_trials_exits_2() -> None:
    r = cli("discover", "--mode", "bm25", "--curve", "--trials", "1000000000")
    assert r.exit_code == 2, r.output
    assert "refused before starting: lower --trials" in r.stderr
    assert "bug in rankproof" not in r.output


def test_a_billion_judge_repeats_are_refused_before_the_first_call(tmp_path: Path) -> None:
    from rankproof.rag import AnswerRow, Context, Judge
    from rankproof.rag._judge import check_judge_cost

    calls: list[str] = []

    def call(prompt: str, *, model: str) -> str:
        calls.append(prompt)
        return '{"score": 2, "reason": "ok"}'

    judge = Judge("Right?", "m-1", (1, 2, 3), call, cache_dir=tmp_path / "cache")
    rows = [AnswerRow(f"q{i}", f"answer {i}", (Context(f"d{i}", "text"),), query="q")
            for i in range(10)]
    with pytest.raises(InputError, match="lower --repeat") as got:
        judge.judge(rows, 1_000_000_000)
    assert got.value.field == "repeat" and "1e+10 calls" in str(got.value)
    assert calls == []
    check_judge_cost(10, 3)  # an ordinary request passes
    assert judge.judge(rows, 2).calls == 20


def test_score_answers_refuses_before_any_metric() -> None:
    from rankproof.rag import AnswerFile, AnswerRow, Context, Judge, score_answers

    def never(prompt: str, *, model: str) -> str:
        raise AssertionError("no call may be made")

    judge = Judge("Right?", "m-1", (1, 2, 3), never)
    answers = AnswerFile(tuple(AnswerRow(f"q{i}", "a", (Context("d", "t"),))
                               for i in range(3)))
    with pytest.raises(InputError, match="lower --repeat"):
        score_answers(answers, None, judge=judge, repeat=10**12, metrics=("judge_score",))


def test_workers_beyond_the_cpus_are_capped_with_a_note(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    cpus = cpu_count()
    assert cap_workers(None) is None and cap_workers(1) == 1
    assert cap_workers(cpus) == cpus
    assert capsys.readouterr().err == ""
    assert cap_workers(1_000_000) == MAX_WORKERS
    note = capsys.readouterr().err
    assert note.startswith("rankproof: note: --workers 1000000 is more than this machine's")
    assert note.rstrip().endswith(
        f"CPU-bound work uses {cpus} processes, calls to a server up to {MAX_WORKERS} threads")


def test_cpu_bound_work_never_starts_more_processes_than_cpus(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from rankproof.engine import LocalExecutor, _local

    sizes: list[int] = []

    class Recorded(ThreadPoolExecutor):  # a process pool's stand-in: same interface
        def __init__(self, max_workers: int, **_: object) -> None:
            sizes.append(max_workers)
            super().__init__(max_workers=max_workers)

    monkeypatch.setattr(_local, "ProcessPoolExecutor", Recorded)
    monkeypatch.setattr(_local, "cpu_count", lambda: 2)
    assert LocalExecutor(workers=64).map(abs, [-1, -2, -3, -4, -5]) == [1, 2, 3, 4, 5]
    assert sizes == [2]
    # calls to a server are threads: the requested count holds
    assert LocalExecutor(workers=4).map(abs, [-1, -2, -3, -4, -5], kind="io") == [1, 2, 3, 4, 5]


def test_compare_with_a_million_workers_runs_with_the_note() -> None:
    r = cli("compare", str(TOY / "qrels.txt"), str(TOY / "bm25.run"), str(TOY / "dense.run"),
            "-m", "nDCG@10", "--workers", "1000000", "--resamples", "200")
    assert r.exit_code == 0, r.output
    assert f"--workers 1000000 is more than this machine's {cpu_count()} CPU" in r.stderr
