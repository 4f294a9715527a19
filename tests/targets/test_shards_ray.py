"""A sharded HTTP target run on a real local Ray cluster gives the local engine's result."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from tests.targets._service import Service, cases, write_goldens
from tests.targets.test_shards import METRICS, same
from typer.testing import CliRunner

from rankproof import ConfigError
from rankproof.cli import app
from rankproof.engine import LocalExecutor, RayExecutor
from rankproof.targets import CallableTarget, Case, HttpTarget, run, shard_plan
from rankproof.targets._checkpoint import default_root

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.usefixtures("own_cache")]

CHECKS = """\
checks:
  - id: ndcg_floor
    metric: nDCG@10
    op: ">="
    threshold: 0.2
"""


def test_an_http_target_on_ray_matches_the_local_engine(ray_cluster: object, svc: Service,
                                                        tmp_path: Path) -> None:
    golden = cases(40)
    executor = RayExecutor(workers=2)  # finds the session's cluster and leaves it running
    with HttpTarget(svc.url, "svc", max_concurrency=4) as target:
        plan = shard_plan(target, executor)
        assert (plan.lanes, plan.per_shard) == (4, 1)  # Ray keeps 2 × 2 tasks in flight
        local = run("r", target, golden, METRICS, executor=LocalExecutor(), shard_size=8)
        svc.reset()
        on_ray = run("r", target, golden, METRICS, executor=executor, shard_size=8)
    same(local, on_ray)
    assert svc.hits == {c.id: 1 for c in golden}
    assert svc.max_in_flight <= 4

    # The same through the command line: --engine ray gives the local engine's verdict.
    (tmp_path / "checks.yaml").write_text(CHECKS)
    write_goldens(tmp_path / "goldens.jsonl", 40)
    verdicts = []
    for extra in ([], ["--engine", "ray", "--workers", "2"]):
        result = CliRunner().invoke(app, ["gate", str(tmp_path / "checks.yaml"), "--target",
                                          svc.url, "--goldens", str(tmp_path / "goldens.jsonl"),
                                          "--shard-size", "8", "-f", "json", *extra])
        assert result.exit_code == 0, result.output
        verdicts.append(json.loads(result.stdout))
    assert verdicts[1]["provenance"]["engine"]["engine"] == "ray"
    assert ({k: v for k, v in verdicts[0].items() if k != "provenance"}
            == {k: v for k, v in verdicts[1].items() if k != "provenance"})


def test_a_target_that_does_not_pickle_is_refused_before_it_runs(ray_cluster: object) -> None:
    lock = threading.Lock()  # a function holding a lock cannot be sent to another process
    calls: list[str] = []

    def search(case: Case) -> list[str]:
        with lock:
            calls.append(case.id)
        return ["d1"]

    target = CallableTarget(search, "fn")
    with pytest.raises(ConfigError, match=r"target 'fn' cannot be sent to ray workers: its "
                                          r"function does not pickle .*lock.*module-level "
                                          r"function, or run it on the local engine"):
        run("r", target, cases(4), METRICS, executor=RayExecutor(workers=2))
    assert calls == []
    assert not default_root().exists()  # no checkpoint was started for a refused run
