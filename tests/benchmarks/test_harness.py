"""The benchmark harness measures each child's own peak memory, not its parent's.

A child spawned from a large process inherits that process's high-water mark in
``ru_maxrss`` (the kernel carries it across ``exec``), which is how every system in
``benchmarks/measures.py`` once showed the same 1,127 MiB. These tests start real child
processes with different footprints from a parent that holds more memory than either.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.append(str(BENCHMARKS))

from _common import Launcher, peak_rss_mib  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="VmHWM and wait4's ru_maxrss as Linux reports them")

MIB = 2**20


def _holding(mib: int) -> str:
    """A child that touches ``mib`` MiB (every page written), then exits."""
    return f"block = b'x' * ({mib} * {MIB}); print(len(block))"


def test_two_children_with_different_footprints_get_different_peaks() -> None:
    launcher = Launcher()  # started while this process is as small as it will be
    try:
        ballast = b"y" * (400 * MIB)  # the parent now holds more than either child
        _, _, small = launcher.run([sys.executable, "-c", _holding(20)])
        _, _, large = launcher.run([sys.executable, "-c", _holding(250)])
        assert small["returncode"] == 0 and large["returncode"] == 0
        # Each figure is the child's own: above what it touched, far below the parent's.
        assert 20 <= small["peak_mib"] < 120
        assert 250 <= large["peak_mib"] < 350
        assert large["peak_mib"] - small["peak_mib"] >= 200
        assert peak_rss_mib() >= 400 > large["peak_mib"]
        assert small["cpu_s"] >= 0.0 and large["wall_s"] > 0.0
        del ballast
    finally:
        launcher.close()


def test_a_child_reports_its_own_high_water_mark() -> None:
    launcher = Launcher()
    try:
        ballast = b"y" * (300 * MIB)
        code = (f"import sys; sys.path.insert(0, {str(BENCHMARKS)!r}); "
                f"from _common import peak_rss_mib; {_holding(60)}; print(peak_rss_mib())")
        out, _, usage = launcher.run([sys.executable, "-c", code])
        assert usage["returncode"] == 0
        own = float(out.decode().split()[-1])
        assert 60 <= own < 160  # its VmHWM, not the 300 MiB this parent holds
        del ballast
    finally:
        launcher.close()


def test_the_launcher_reports_a_failing_child() -> None:
    launcher = Launcher()
    try:
        out, err, usage = launcher.run([sys.executable, "-c", "import sys; "
                                        "sys.stderr.write('boom'); sys.exit(3)"])
        assert usage["returncode"] == 3 and err == b"boom" and out == b""
    finally:
        launcher.close()
