"""Class 5: ``baseline save`` without ``--force`` succeeds for exactly one of N concurrent
processes saving the same name; the others exit 2 saying it exists, and the saved file is
complete.

Real processes behind a barrier, several rounds. The barrier is the documented test-only
hook ``RANKPROOF_TEST_PAUSE_BEFORE_RENAME`` (`rankproof._io`): each process has read the
report, found no baseline of that name and written its complete temporary file when it
stops at the hook; once all N are there the flag is removed and they commit at the same
moment. A check-then-rename save would let every one of them "succeed" (each had checked
before any committed), so the test fails for that design every time, not by luck."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.hostile._writes import PAUSE_ENV, leftovers, report, start

from rankproof.gate import load_baseline

N = 4
ROUNDS = 3


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_exactly_one_concurrent_save_wins(round_: int, tmp_path: Path) -> None:
    directory = tmp_path / "baselines"
    flag = tmp_path / "barrier"
    procs = [start("baseline", "save", report(), "--name", "main", "--baseline-dir", directory,
                   cwd=tmp_path, extra_env={PAUSE_ENV: str(flag)}) for _ in range(N)]
    deadline = time.monotonic() + 240
    while len(leftovers(directory) if directory.exists() else []) < N:
        assert time.monotonic() < deadline, "the processes never all reached the barrier"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.01)
    time.sleep(0.2)  # from its complete temporary file to the hook is a few instructions
    assert flag.exists()
    flag.unlink()  # release all N at once
    results = [(p, *p.communicate(timeout=120)) for p in procs]
    codes = sorted(p.returncode for p, _, _ in results)
    assert codes == [0] + [2] * (N - 1), [(p.returncode, err) for p, _, err in results]
    for p, out, err in results:
        if p.returncode == 0:
            assert "saved baseline 'main'" in out
        else:
            assert "already exists" in err and "--force" in err
    saved = load_baseline("main", directory)  # complete and valid, not a mix
    assert saved.name == "main" and len(saved.result.rows) > 0
    assert sorted(p.name for p in directory.iterdir()) == ["main.json"]
    assert leftovers(tmp_path) == []
