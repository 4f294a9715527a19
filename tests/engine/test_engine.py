"""The executor seam: every engine returns the same results, in the order of the items.

The functions mapped here are real library and standard-library functions
(`math.factorial`, `rankproof.measures.parse`, the CLI's per-run-file task), so
that spawned processes and Ray workers import them by name, as they import a
command's own tasks.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from rankproof._errors import ConfigError, InputError
from rankproof.cli._engine import describe_where, engine_from
from rankproof.data import load_qrels
from rankproof.engine import ENGINES, Executor, LocalExecutor, RayExecutor, executor_for, shards
from rankproof.jobs import RunFileTask, evaluate_run_file
from rankproof.measures import parse, resolve_measures
from rankproof.stats import StatSettings

TOY = Path(__file__).resolve().parents[2] / "examples" / "toy"

# Sizes chosen so that the first items take longest: a pool finishes them out of order.
ITEMS = [4000, 5, 3000, 1, 2000, 0, 1000, 7]
EXPECTED = [math.factorial(n) for n in ITEMS]
# Ray remotes Python functions only (not builtins such as math.factorial): json.dumps.
LISTS = [list(range(n * 20)) for n in ITEMS]
DUMPED = [json.dumps(x) for x in LISTS]


def _map_recording(executor: Executor, fn: Any, items: list[Any],
                   kind: str = "cpu") -> tuple[list[Any], dict[int, Any]]:
    seen: dict[int, Any] = {}

    def on_result(i: int, r: Any) -> None:
        assert i not in seen, f"on_result called twice for item {i}"
        seen[i] = r

    out = executor.map(fn, items, kind=kind, on_result=on_result)  # type: ignore[arg-type]
    return out, seen


LOCAL = [(1, "cpu"), (2, "io"), (2, "cpu")]
"""Inline in this process; a thread pool; a pool of spawned processes."""


@pytest.mark.parametrize(("workers", "kind"), LOCAL, ids=["inline", "threads", "processes"])
def test_local_results_come_back_in_item_order(workers: int, kind: str) -> None:
    executor = LocalExecutor(workers=workers)
    out, seen = _map_recording(executor, math.factorial, ITEMS, kind)
    assert out == EXPECTED
    assert seen == dict(enumerate(EXPECTED))  # once per item, with that item's result
    assert executor.describe() == {"engine": "local", "workers": workers}
    executor.close()


@pytest.mark.parametrize(("workers", "kind"), LOCAL, ids=["inline", "threads", "processes"])
def test_an_item_error_keeps_its_type_locally(workers: int, kind: str) -> None:
    with pytest.raises(InputError, match="unknown measure 'bogus'"):
        LocalExecutor(workers=workers).map(parse, ["AP", "bogus", "nDCG@10"],
                                           kind=kind)  # type: ignore[arg-type]


def _toy_tasks() -> list[RunFileTask]:
    qrels = load_qrels(str(TOY / "qrels.txt"))
    ms = resolve_measures(["AP", "nDCG@10", "P@5", "RR"])
    return [RunFileTask(qrels=qrels, run=str(TOY / name), measures=ms, evidence_depth=3)
            for name in ("bm25.run", "dense.run")]


def _table(result: Any) -> tuple[Any, ...]:
    pq = result.per_query
    return (result.name, result.tag, pq.qids, tuple(map(str, pq.measures)),
            pq.values.tobytes(), pq.notes, result.top)


def test_run_files_evaluate_identically_inline_and_in_processes() -> None:
    tasks = _toy_tasks()
    inline = [_table(r) for r in LocalExecutor().map(evaluate_run_file, tasks)]
    pooled = [_table(r) for r in LocalExecutor(workers=2).map(evaluate_run_file, tasks)]
    assert pooled == inline
    assert [t[0] for t in inline] == ["bm25", "dense"]
    assert all(t[-1] for t in inline)  # evidence collected in the task


def test_executor_for_refuses_what_it_cannot_run() -> None:
    with pytest.raises(ConfigError, match=r"unknown engine 'spark'; choose one of local, ray"):
        executor_for("spark")
    for bad in (0, -1, True, 1.5, "2"):
        with pytest.raises(ConfigError, match=r"--workers must be an integer >= 1, got"):
            executor_for("local", workers=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="--address is for --engine ray"):
        executor_for("local", address="ray://head:10001")
    assert ENGINES == ("local", "ray")


def test_the_default_engine_is_this_process() -> None:
    executor = executor_for()
    assert isinstance(executor, LocalExecutor) and executor.workers == 1
    assert executor.describe() == {"engine": "local", "workers": 1}
    assert describe_where(executor) == "rankproof: running on this machine (1 workers)"
    with engine_from("local", None, 3) as pooled:
        assert pooled.describe() == {"engine": "local", "workers": 3}


def test_engine_from_says_nothing_for_local(capsys: pytest.CaptureFixture[str]) -> None:
    with engine_from("local") as executor:
        assert executor.map(math.factorial, [3, 4]) == [6, 24]
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    with pytest.raises(ConfigError, match="--address is for --engine ray"), \
            engine_from("local", "auto"):
        pass


def test_shards_keep_order() -> None:
    assert shards(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert shards([], 2) == []
    with pytest.raises(ValueError, match="shard size must be >= 1, got 0"):
        shards([1], 0)


@pytest.mark.xdist_group("ray")
def test_ray_gives_the_local_results(ray_cluster: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """On the session's real local cluster: same ordered results, one on_result per item,
    an item's InputError raised as itself, the cluster left running by close()."""
    import ray

    with engine_from("ray") as executor:
        assert isinstance(executor, RayExecutor)
        out, seen = _map_recording(executor, json.dumps, LISTS)
        assert out == DUMPED and seen == dict(enumerate(DUMPED))
        io_out, _ = _map_recording(executor, json.dumps, LISTS, "io")
        assert io_out == DUMPED
        with pytest.raises(InputError, match="unknown measure 'bogus'"):
            executor.map(parse, ["AP", "bogus", "nDCG@10"])
        tasks = _toy_tasks()
        assert ([_table(r) for r in executor.map(evaluate_run_file, tasks)]
                == [_table(r) for r in LocalExecutor().map(evaluate_run_file, tasks)])
        info = executor.describe()
        assert info["engine"] == "ray" and info["workers"] == 2 and info["nodes"] == 1
        assert info["address"] is None and info["ray_version"] == ray.__version__
        assert executor.map(json.dumps, []) == []
        assert executor.map(math.factorial, [3, 4]) == [6, 24]  # a builtin travels as data
    assert ray.is_initialized()  # a cluster this process did not start is left running
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "rankproof: running on a local Ray cluster (2 workers, 1 node)\n"


def test_compare_tables_gives_compare_rows_from_tables_evaluated_elsewhere() -> None:
    """``rankproof compare`` evaluates each run in an engine task and hands the tables to
    `compare_tables`: the same comparison `compare` makes of the runs themselves."""
    from rankproof.comparison import compare, compare_tables, judged_measure
    from rankproof.data import load_run

    qrels = load_qrels(str(TOY / "qrels.txt"))
    runs = [load_run(str(TOY / n)) for n in ("bm25.run", "dense.run")]
    ms = resolve_measures(["AP", "nDCG@10"])
    tasks = [RunFileTask(qrels=qrels, run=r, measures=(*ms, *map(judged_measure, ms)))
             for r in runs]
    tables = {r.per_query.run_name: r.per_query
              for r in LocalExecutor(workers=2).map(evaluate_run_file, tasks)}
    assert list(tables) == ["bm25", "dense"]
    direct = compare(qrels, runs, ms, stats=StatSettings(resamples=300, seed=1))
    made = compare_tables(qrels, tables, ms, stats=StatSettings(resamples=300, seed=1))
    assert made.to_dict() == direct.to_dict()
    with pytest.raises(InputError, match="at least two systems"):
        compare_tables(qrels, {"bm25": tables["bm25"]}, ms)
