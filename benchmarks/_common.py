"""Shared helpers for the benchmark scripts: synthetic TREC data and child processes.

The data generator is vectorised (numpy + Arrow string kernels), so a
7-million-line run is written in a few seconds; files are keyed on their
parameters and written atomically, so an interrupted run never leaves a
half-written file that a later run would trust.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy and Arrow are imported lazily: a child process
    import numpy as np  # timing a system's import must not find them loaded
    import pyarrow as pa

#: Size of the MS MARCO passage collection (docids ``0`` .. ``8841822``).
MSMARCO_DOCS = 8_841_823


@dataclass(frozen=True)
class SyntheticPaths:
    run: Path
    qrels: Path


def synthetic_paths(out_dir: Path, topics: int, depth: int, seed: int, docs: int) -> SyntheticPaths:
    stem = f"t{topics}-d{depth}-n{docs}-s{seed}"
    return SyntheticPaths(run=out_dir / f"run-{stem}.trec", qrels=out_dir / f"qrels-{stem}.txt")


def _write_lines(path: Path, lines: pa.Array) -> None:
    """Write the bytes of a string array (each element ends in a newline) atomically."""
    import numpy as np

    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=len(lines) + 1,
                            offset=lines.offset * 4)
    data = memoryview(lines.buffers()[2])[int(offsets[0]):int(offsets[-1])]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _ids(values: np.ndarray) -> pa.Array:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.cast(pa.array(values), pa.string())


def _distinct_rows(rng: np.random.Generator, shape: tuple[int, int], high: int) -> np.ndarray:
    """Random integers in ``[0, high)`` with no repeat within a row, rows in random order."""
    import numpy as np

    draws = rng.integers(0, high, size=shape, dtype=np.int64)
    while True:
        draws.sort(axis=1)
        dup = np.zeros(shape, dtype=bool)
        dup[:, 1:] = draws[:, 1:] == draws[:, :-1]
        if not dup.any():
            break
        draws[dup] = rng.integers(0, high, size=int(dup.sum()), dtype=np.int64)
    return rng.permuted(draws, axis=1)


def write_synthetic(paths: SyntheticPaths, topics: int, depth: int, seed: int, docs: int) -> bool:
    """Write an MS-MARCO-shaped run and qrels unless both already exist; True if written.

    * qids: distinct integers below 1.2 million (as MS MARCO's), one block of
      ``depth`` lines per topic;
    * docids: distinct within a topic, drawn from ``docs`` ids;
    * scores: strictly decreasing within a topic, six decimals, written in
      rank order with a rank column — the shape real run files have;
    * qrels: 1 relevant document per topic, 2 for one topic in ten (about 1.1
      on average); 85% of them are retrieved, at a geometrically distributed
      rank (a third land in the top 10), the rest are random collection docs.
    """
    if paths.run.exists() and paths.qrels.exists():
        return False
    import numpy as np
    import pyarrow.compute as pc

    if depth > docs:
        raise ValueError(f"depth {depth} exceeds the collection size {docs}")
    rng = np.random.default_rng(seed)
    qids = rng.choice(1_200_000, size=topics, replace=False).astype(np.int64)
    docids = _distinct_rows(rng, (topics, depth), docs)
    # Scores in micro-units: a start near 30.0 minus positive gaps, so they
    # are strictly decreasing within a topic (no ties to break).
    gaps = rng.integers(1, 40_000, size=(topics, depth), dtype=np.int64)
    top = rng.integers(25_000_000, 35_000_000, size=(topics, 1), dtype=np.int64)
    units = top - np.cumsum(gaps, axis=1)
    whole = _ids((units // 1_000_000).ravel())
    frac = pc.utf8_lpad(_ids((units % 1_000_000).ravel()), 6, "0")
    score = pc.binary_join_element_wise(whole, frac, ".")
    rank = _ids(np.tile(np.arange(1, depth + 1, dtype=np.int64), topics))
    qid_col = _ids(np.repeat(qids, depth))
    lines = pc.binary_join_element_wise(qid_col, "Q0", _ids(docids.ravel()), rank, score,
                                        "synthetic\n", " ")
    _write_lines(paths.run, lines)

    n_rel = 1 + (rng.random(topics) < 0.1).astype(np.int64)
    q_rows = np.repeat(np.arange(topics), n_rel)
    retrieved = rng.random(len(q_rows)) < 0.85
    ranks = np.minimum(rng.geometric(0.04, size=len(q_rows)) - 1, depth - 1)
    rel_docs = np.where(retrieved, docids[q_rows, ranks],
                        rng.integers(0, docs, size=len(q_rows), dtype=np.int64))
    # A topic's second relevant doc must differ from its first.
    second = np.zeros(len(q_rows), dtype=bool)
    second[1:] = q_rows[1:] == q_rows[:-1]
    clash = second & (rel_docs == np.roll(rel_docs, 1))
    while clash.any():
        rel_docs[clash] = rng.integers(0, docs, size=int(clash.sum()), dtype=np.int64)
        clash = second & (rel_docs == np.roll(rel_docs, 1))
    qrel_lines = pc.binary_join_element_wise(_ids(qids[q_rows]), "0", _ids(rel_docs), "1\n", " ")
    _write_lines(paths.qrels, qrel_lines)
    return True


def run_child(argv: list[str], timeout: float | None = None) -> dict[str, Any]:
    """Run ``python <argv>`` in a fresh process; it prints one JSON object last."""
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                          timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child {argv} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    last = proc.stdout.strip().splitlines()[-1]
    result: dict[str, Any] = json.loads(last)
    return result


def peak_rss_mib() -> float:
    """This process's own peak resident set size, in MiB.

    On Linux, ``VmHWM`` of ``/proc/self/status``: the high-water mark of this process's
    memory since its ``exec``. Not ``getrusage(RUSAGE_SELF).ru_maxrss``: the kernel
    carries that figure across ``exec`` from the process that started it (with
    ``vfork``, as ``subprocess`` uses, from the *parent's* memory), so every child of a
    large benchmark parent reported the parent's peak. Elsewhere, ``ru_maxrss``.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(kib) / 1024.0 if sys.platform != "darwin" else float(kib) / 2**20


_LAUNCHER = r"""
import json, os, subprocess, sys, time
for line in sys.stdin:
    job = json.loads(line)
    with open(job["out"], "wb") as out, open(job["err"], "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(job["argv"], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
    kib = usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss / 1024
    print(json.dumps({"returncode": proc.returncode, "wall_s": wall,
                      "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": kib / 1024}),
          flush=True)
"""


class Launcher:
    """A small process that starts each measured child and reaps it with ``os.wait4``.

    The peak a child's ``wait4`` rusage reports (``ru_maxrss``) is at least the memory of
    the process that spawned it, because the kernel carries the spawner's high-water mark
    across ``exec``. A benchmark parent holding a generated 7-million-line run would
    stamp its own peak on every child (the figure that read 1,127 MiB for every system).
    So the children are spawned by this launcher, started before the parent holds any
    data: each child's figure is then its own peak (or the launcher's ~10 MiB, whichever
    is larger).
    """

    def __init__(self) -> None:
        self._proc = subprocess.Popen([sys.executable, "-S", "-c", _LAUNCHER],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True)

    def run(self, argv: list[str]) -> tuple[bytes, bytes, dict[str, Any]]:
        """Run ``argv`` to its end: ``(stdout, stderr, usage)``; ``usage`` holds
        ``returncode``, ``wall_s``, ``cpu_s`` (user + system) and ``peak_mib``."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        with tempfile.TemporaryDirectory(prefix="rankproof-bench-") as tmp:
            out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
            self._proc.stdin.write(json.dumps({"argv": argv, "out": out, "err": err}) + "\n")
            self._proc.stdin.flush()
            reply = self._proc.stdout.readline()
            if not reply:
                raise RuntimeError("the benchmark launcher died")
            usage: dict[str, Any] = json.loads(reply)
            with open(out, "rb") as fh_out, open(err, "rb") as fh_err:
                return fh_out.read(), fh_err.read(), usage

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait()


_launcher: Launcher | None = None


def start_launcher() -> Launcher:
    """The process-wide `Launcher`; call it first thing, before allocating any data."""
    global _launcher
    if _launcher is None:
        _launcher = Launcher()
    return _launcher


def timed_child(argv: list[str]) -> tuple[bytes, bytes, dict[str, Any]]:
    """Run ``argv`` through the `Launcher`: ``(stdout, stderr, usage)`` with its own
    wall and CPU time and peak resident memory (``os.wait4`` of that child)."""
    return start_launcher().run(argv)
