"""Sharded target runs against a real local HTTP service: same result, checkpoints, resume,
refusals, and the bound on requests in flight."""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import pytest
from tests.targets._service import Service, answer, cases, service

from rankproof import ConfigError, InputError, TargetError
from rankproof.engine import LocalExecutor
from rankproof.targets import CallableTarget, Case, HttpTarget, RunResult, run, shard_plan
from rankproof.targets._checkpoint import default_root
from rankproof.targets._shards import _HttpSpec, _invoke_shard, _ShardTask

METRICS = ["nDCG@10", "RR", "R@5"]

pytestmark = pytest.mark.usefixtures("own_cache")


def same(a: RunResult, b: RunResult) -> None:
    """Identical per-case rows (values, ranked ids, text) and aggregates; latency is a clock."""
    assert a.case_ids == b.case_ids
    assert a.metrics == b.metrics
    for ra, rb in zip(a.rows, b.rows, strict=True):
        assert dict(ra.values) == dict(rb.values), ra.case_id
        assert ra.response is not None and rb.response is not None
        assert ra.response.ranked_ids == rb.response.ranked_ids
        assert ra.response.text == rb.response.text
    assert dict(a.aggregates) == dict(b.aggregates)
    assert a.notes == b.notes
    assert a.provenance.measures == b.provenance.measures
    assert a.provenance.judgments_digest == b.provenance.judgments_digest


def folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir()) if root.is_dir() else []


def test_sharded_run_is_identical_to_the_unsharded_run(svc: Service) -> None:
    golden = cases(60)
    with HttpTarget(svc.url, "svc", max_concurrency=4) as target:
        plain = run("r", target, golden, METRICS)
        seen: list[tuple[int, int]] = []
        sharded = run("r", target, golden, METRICS, executor=LocalExecutor(workers=3),
                      shard_size=7, progress=lambda d, n: seen.append((d, n)))
    same(plain, sharded)
    # Progress: from 0 to every case, never backwards, always out of the same total.
    assert seen[0] == (0, 60) and seen[-1] == (60, 60)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert {n for _, n in seen} == {60}
    assert len(seen) == 1 + 9  # the start, then one call per shard (60 cases in shards of 7)
    assert svc.hits == {c.id: 2 for c in golden}  # each case once per run, no retries
    assert folders(default_root()) == []  # the checkpoint went when the run completed


def test_an_interrupted_run_resumes_where_it_stopped(svc: Service, tmp_path: Path) -> None:
    golden = cases(50)
    ck = tmp_path / "ck"
    svc.fail_from = 30
    with HttpTarget(svc.url, "svc", max_concurrency=2) as target:
        with pytest.raises(TargetError, match=r"case 'q03\d'.*HTTP 500.*after 2 attempts"):
            run("r", target, golden, METRICS, executor=LocalExecutor(), shard_size=10,
                checkpoint=ck)
        # The three shards before the failure are on disk, one file each, plus the manifest.
        shards = sorted(p.name for p in ck.glob("shard-*.jsonl"))
        assert [s[:12] for s in shards] == ["shard-000000", "shard-000001", "shard-000002"]
        assert (ck / "manifest.json").is_file()
        assert all(svc.hits[c.id] == 1 for c in golden[:30])
        assert all(svc.hits[c.id] == 0 for c in golden[40:])  # never reached

        # Without resume, the checkpoint is refused and left as it was.
        before = {p.name: p.read_bytes() for p in ck.iterdir()}
        with pytest.raises(ConfigError, match=r"interrupted run exists at .*ck \(3 shard\(s\) "
                                              r"done\); pass --resume"):
            run("r", target, golden, METRICS, executor=LocalExecutor(), shard_size=10,
                checkpoint=ck)
        assert {p.name: p.read_bytes() for p in ck.iterdir()} == before

        svc.fail_from = None
        svc.reset()
        seen: list[tuple[int, int]] = []
        resumed = run("r", target, golden, METRICS, executor=LocalExecutor(workers=2),
                      shard_size=10, checkpoint=ck, resume=True,
                      progress=lambda d, n: seen.append((d, n)))
        # Only the missing cases were asked; the restored ones count as done from the start.
        assert set(svc.hits) == {c.id for c in golden[30:]}
        assert all(v == 1 for v in svc.hits.values())
        assert seen[0] == (30, 50) and seen[-1] == (50, 50)
        assert not ck.exists()  # removed once the run completed

        svc.reset()
        fresh = run("r", target, golden, METRICS)
    same(resumed, fresh)
    # Latencies of restored shards come back exactly as measured the first time.
    assert all(r.latency_ms is not None and r.latency_ms > 0 for r in resumed.rows)


def test_the_default_checkpoint_lives_in_the_cache_folder(svc: Service) -> None:
    golden = cases(20)
    svc.fail_from = 12
    with HttpTarget(svc.url, "svc", max_concurrency=2) as target:
        with pytest.raises(TargetError):
            run("r", target, golden, METRICS, executor=LocalExecutor(), shard_size=5)
        root = default_root()
        assert root.is_relative_to(Path(os.environ["RANKPROOF_CACHE"]))
        [folder] = folders(root)
        assert len(list(folder.glob("shard-*.jsonl"))) == 2
        # The same run finds the same folder (its name is a digest of target, cases, metrics).
        with pytest.raises(ConfigError, match="pass --resume"):
            run("r", target, golden, METRICS, executor=LocalExecutor(), shard_size=5)
        # Another metric set is another run: it has its own folder (and fails on its own).
        with pytest.raises(TargetError):
            run("r", target, golden, ["nDCG@10"], executor=LocalExecutor(), shard_size=5)
        assert len(folders(root)) == 2
        svc.fail_from = None
        svc.reset()
        run("r", target, golden, METRICS, executor=LocalExecutor(), shard_size=5, resume=True)
        assert set(svc.hits) == {c.id for c in golden[10:]}
        assert len(folders(root)) == 1  # this run's folder is gone, the other one stays


def _interrupt(svc: Service, ck: Path, golden: list[Case], **kw: Any) -> None:
    svc.fail_from = 10
    with HttpTarget(svc.url, "svc", max_concurrency=2) as target, pytest.raises(TargetError):
        run("r", target, golden, METRICS, executor=LocalExecutor(), shard_size=5,
            checkpoint=ck, **kw)
    svc.fail_from = None


def test_a_checkpoint_of_another_run_is_refused(svc: Service, tmp_path: Path) -> None:
    golden = cases(20)
    ck = tmp_path / "ck"
    _interrupt(svc, ck, golden)
    svc.reset()
    refusals: list[tuple[dict[str, Any], list[Case], int, str]] = [
        ({"name": "other-name"}, golden, 5,
         r"written by a different run \(target.name: checkpoint 'svc', this run 'other-name'"),
        ({"timeout": 3.0}, golden, 5, r"different run \(target.deadline: .*target.timeout"),
        ({}, cases(21), 5, r"different run \(goldens: "),
        ({}, golden, 4, r"written with shard size 5, this run has 4"),
    ]
    for settings, golden_set, size, message in refusals:
        kw: dict[str, Any] = {"name": "svc", "max_concurrency": 2, **settings}
        with HttpTarget(svc.url, **kw) as target, pytest.raises(ConfigError, match=message):
            run("r", target, golden_set, METRICS, executor=LocalExecutor(), shard_size=size,
                checkpoint=ck, resume=True)
    assert svc.hits == {}  # nothing was invoked by a refused run
    assert len(list(ck.glob("shard-*.jsonl"))) == 2


def test_a_damaged_checkpoint_is_refused_naming_the_file(svc: Service, tmp_path: Path) -> None:
    golden = cases(20)
    ck = tmp_path / "ck"
    _interrupt(svc, ck, golden)
    shard = sorted(ck.glob("shard-*.jsonl"))[1]
    lines = shard.read_text().splitlines()
    shard.write_text("\n".join([lines[0], lines[2], *lines[2:]]) + "\n")
    message = rf"{shard.name}, line 2: malformed checkpoint shard \(case 'q007' where 'q006'"
    with HttpTarget(svc.url, "svc", max_concurrency=2) as target, \
            pytest.raises(InputError, match=message):
        run("r", target, golden, METRICS, executor=LocalExecutor(), shard_size=5,
            checkpoint=ck, resume=True)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine")
    with HttpTarget(svc.url, "svc", max_concurrency=2) as target, \
            pytest.raises(ConfigError, match="is not a rankproof target checkpoint"):
        run("r", target, golden, METRICS, checkpoint=tmp_path / "notes")
    assert (tmp_path / "notes" / "todo.txt").read_text() == "mine"


def test_bad_sharding_arguments_are_refused(svc: Service) -> None:
    with HttpTarget(svc.url, "svc") as target:
        with pytest.raises(InputError, match="shard_size must be an integer >= 1, got 0"):
            run("r", target, cases(3), METRICS, executor=LocalExecutor(), shard_size=0)
        with pytest.raises(InputError, match="resume=True reads a checkpoint"):
            run("r", target, cases(3), METRICS, resume=True, checkpoint=False)
    assert svc.hits == {}


@pytest.mark.parametrize(("workers", "bound", "plan"), [
    (1, 4, (1, 4, False)),   # one worker: the target's own bound, as an unsharded run
    (2, 4, (2, 2, False)),   # two shards at once, two requests each
    (3, 4, (3, 1, False)),   # 3 × 1 ≤ 4 (never 3 × 2)
    (8, 3, (3, 1, True)),    # more workers than the bound: shards go in waves of three
])
def test_requests_in_flight_never_exceed_max_concurrency(
        workers: int, bound: int, plan: tuple[int, int, bool]) -> None:
    golden = cases(48)
    with service(delay_s=0.01) as svc, \
            HttpTarget(svc.url, "svc", max_concurrency=bound) as target:
        executor = LocalExecutor(workers=workers)
        p = shard_plan(target, executor)
        assert (p.lanes, p.per_shard, p.waves) == plan
        assert p.max_in_flight is not None and p.max_in_flight <= bound
        result = run("r", target, golden, METRICS, executor=executor, shard_size=4,
                     checkpoint=False)
        assert svc.max_in_flight <= bound
        assert sum(svc.hits.values()) == 48
    assert len(result.rows) == 48


def test_a_failing_callable_target_leaves_a_checkpoint_and_resumes(tmp_path: Path) -> None:
    golden = cases(30)
    calls: list[str] = []
    broken = {"from": 17}

    def search(case: Case) -> list[str]:
        calls.append(case.id)
        n = int(case.id[1:])
        if n >= broken["from"]:
            raise RuntimeError("index unavailable")
        return [f"d{(n * 7 + k) % 13}" for k in range(5)]

    target = CallableTarget(search, "fn")
    ck = tmp_path / "ck"
    with pytest.raises(TargetError, match=r"case 'q017': the function raised RuntimeError"):
        run("r", target, golden, METRICS, shard_size=6, checkpoint=ck)
    assert len(list(ck.glob("shard-*.jsonl"))) == 2  # q000-q011 are safe
    broken["from"] = 10**6
    calls.clear()
    resumed = run("r", target, golden, METRICS, shard_size=6, checkpoint=ck, resume=True)
    assert calls == [c.id for c in golden[12:]]
    same(resumed, run("r", target, golden, METRICS))
    assert not ck.exists()


def test_the_worker_side_target_keeps_the_retry_rule_and_the_deadline(svc: Service) -> None:
    """What a Ray task or a worker process gets: the target's settings, pickled, built again
    there — with the same one retry on a 5xx and the same per-call deadline."""
    with HttpTarget(svc.url, "svc", max_concurrency=6, timeout=0.2, deadline=0.3,
                    headers={"X-Team": "search"}, max_body_bytes=4096) as target:
        settings = target.settings()
        with HttpTarget(**settings) as again:
            assert again.settings() == settings
        task = pickle.loads(pickle.dumps(_ShardTask(_HttpSpec(settings), tuple(cases(3)), 2)))
    assert [r.ranked_ids for r in _invoke_shard(task)] == [tuple(answer(n)) for n in range(3)]
    svc.reset()
    svc.fail_from = 1
    with pytest.raises(TargetError, match=r"case 'q001'.*HTTP 500.*after 2 attempts"):
        _invoke_shard(task)
    assert svc.hits["q001"] == 2  # the first try and exactly one retry
    svc.fail_from = None
    svc.delay_s = 0.25  # each attempt times out (0.2 s); the retry meets the 0.3 s deadline
    with pytest.raises(TargetError, match=r"deadline of 0.3 s"):
        _invoke_shard(task)
