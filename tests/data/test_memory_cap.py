"""``--memory-cap`` is a cap: the process's peak resident memory stays within the cap plus
the start-up baseline, and a cap that cannot hold is refused before the run is read.

The peak is the child's own ``VmHWM`` (``/proc/self/status``), read by the child itself at
its end: the command runs in a small Python wrapper that calls the CLI's ``main`` and then
reads its own high-water mark (a figure no parent's pages can inflate, unlike
``ru_maxrss``, which the kernel carries across ``exec``). The start-up baseline is the peak
of the same command on a tiny input: the interpreter, the modules it imports and the
code Arrow and numpy page in at first use (``docs/scaling.md`` states it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

_WRAP = """
import json, os, sys
os.environ["RANKPROOF_TEARDOWN"] = "interpreter"
report = sys.argv[1]
sys.argv = ["rankproof", *sys.argv[2:]]
from rankproof.cli import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
with open("/proc/self/status", encoding="ascii") as fh:
    hwm = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
with open(report, "w") as out:
    json.dump({"code": code, "hwm": hwm}, out)
"""


def _run(tmp: Path, *args: str) -> tuple[int, int, str, str]:
    """(exit status, peak resident bytes, stdout, stderr) of ``rankproof ARGS``."""
    report = tmp / f"hwm-{len(list(tmp.glob('hwm-*')))}.json"
    done = subprocess.run([sys.executable, "-c", _WRAP, str(report), *args],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "RANKPROOF_MEMORY_CAP": ""})
    got = json.loads(report.read_text())
    return got["code"], got["hwm"], done.stdout, done.stderr


def _write(path: Path, topics: int, depth: int, seed: int = 3) -> Path:
    """A run of ``topics`` x ``depth`` (grouped by topic, rank order) and a qrels with one
    relevant document per topic; the qrels path is returned."""
    rng = np.random.default_rng(seed)
    n = topics * depth
    topic = np.repeat(np.arange(topics), depth)
    rank = np.tile(np.arange(1, depth + 1), topics)
    doc = rng.integers(0, 10**9, size=n) * depth + rank  # distinct within a topic
    qid = pc.binary_join_element_wise("q", pc.cast(pa.array(topic), pa.string()), "")
    docid = pc.binary_join_element_wise("d", pc.cast(pa.array(doc), pa.string()), "")
    score = pc.cast(pa.array(1000.0 - rank + rng.random(n).round(3)), pa.string())
    lines = pc.binary_join_element_wise(qid, "Q0", docid, pc.cast(pa.array(rank), pa.string()),
                                        score, "cap\n", " ")
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=n + 1)
    path.write_bytes(memoryview(lines.buffers()[2])[:int(offsets[n])])
    pick = np.arange(topics) * depth + rng.integers(0, depth, size=topics)
    qrels = path.with_suffix(".qrels")
    qlines = pc.binary_join_element_wise(qid.take(pa.array(pick)), "0",
                                         docid.take(pa.array(pick)), "1\n", " ")
    qoff = np.frombuffer(qlines.buffers()[1], dtype=np.int32, count=topics + 1)
    qrels.write_bytes(memoryview(qlines.buffers()[2])[:int(qoff[topics])])
    return qrels


def test_a_cap_the_qrels_alone_exceed_is_refused_before_the_run_is_read(
        tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    qrels = _write(run, topics=300_000, depth=2)
    # The run is made unreadable past its first line: reading it would be a parse error.
    with run.open("a") as fh:
        fh.write("not a trec line\n")
    code, _, _, err = _run(tmp_path, "measure", str(qrels), str(run), "-m", "RR",
                           "--memory-cap", "8MiB")
    flat = " ".join(err.split())
    assert code == 2
    assert "--memory-cap 8 MiB cannot hold this evaluation" in flat
    assert "300,000 qrels topics" in flat and "give --memory-cap" in flat
    assert "not a trec line" not in flat and "line" not in flat.split("cannot hold")[0]


@pytest.mark.slow
def test_the_peak_stays_within_the_cap_plus_the_baseline(tmp_path: Path) -> None:
    """A 3-million-line run of 300,000 topics (about 100 MiB of text, which read whole
    peaks far above a 192 MiB cap) is streamed, and the process's VmHWM stays under the
    start-up baseline plus the cap; the output equals the in-memory output."""
    run = tmp_path / "run.trec"
    qrels = _write(run, topics=300_000, depth=10)
    tiny = tmp_path / "tiny.trec"
    tiny_qrels = _write(tiny, topics=20, depth=5)
    measures = ["-m", "nDCG@10", "-m", "RR@10", "-m", "AP", "--format", "csv"]
    code, baseline, _, _ = _run(tmp_path, "measure", str(tiny_qrels), str(tiny), *measures)
    assert code == 0
    cap = 192 << 20
    code, whole_peak, whole, _ = _run(tmp_path, "measure", str(qrels), str(run), *measures)
    assert code == 0
    code, peak, streamed, err = _run(tmp_path, "measure", str(qrels), str(run), *measures,
                                     "--memory-cap", "192MiB")
    assert code == 0, err
    assert "streamed under --memory-cap 192 MiB" in err
    assert streamed == whole
    print(f"run {run.stat().st_size / 2**20:.0f} MiB; baseline {baseline / 2**20:.0f} MiB, "
          f"streamed peak {peak / 2**20:.0f} MiB, in memory {whole_peak / 2**20:.0f} MiB")
    assert peak <= baseline + cap
    assert whole_peak > baseline + cap  # the run did not fit: the cap was what held it


def test_seen_topics_is_exact_and_small() -> None:
    """Streaming's record of the topics seen: arrays, not a Python set, and exact."""
    from rankproof.data._partitions import SeenTopics

    seen = SeenTopics()
    first = [f"q{i}" for i in range(50_000)]
    seen.add(pa.array(first), first)
    assert seen.first_seen(["new-1", "new-2"]) is None
    assert seen.first_seen(["new-1", "q49999", "q7"]) == "q49999"
    assert "q0" in seen and "q50000" not in seen
    later = ["z1", "z2"]
    seen.add(pa.array(later), later)
    assert seen.first_seen(["z2"]) == "z2"


def test_the_topic_estimate_reads_only_the_head(tmp_path: Path) -> None:
    from rankproof.data import RunPartitions

    run = tmp_path / "run.trec"
    _write(run, topics=200_000, depth=10)  # about 7 MiB: the 4 MiB head is a sample
    estimate = RunPartitions(run).estimate_topics()
    assert estimate is not None and 150_000 <= estimate <= 250_000
