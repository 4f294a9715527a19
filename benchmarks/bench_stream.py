"""Benchmark: a run evaluated in memory vs streamed under ``--memory-cap`` (issue 16, item 4).

The MS-MARCO-shaped synthetic run of ``measures.py`` (6,980 topics × 1,000
documents, 290 MB; written on first use by `_common.write_synthetic`) is
evaluated by the whole command line, each in a fresh process, side by side:

* ``in memory``: ``rankproof measure QRELS RUN -m all_trec --format trec``;
* ``cap 256 MiB`` and ``cap 64 MiB``: the same with ``--memory-cap``, so the
  run is streamed in partitions of whole topics (cap / 16 of run text each).

Each row: wall and CPU seconds of the process, its peak resident size and
that peak above the **post-import baseline** (a process that imports the
command and exits, measured the same way), the number of partitions, and the
ratios to the in-memory row. The outputs must be byte-identical (the script
exits 1 otherwise). A small launcher process starts each command, so the
peak is the command's own (``wait4``), never pages of this script.

Run: ``.venv/bin/python benchmarks/bench_stream.py [--repeat N]``; writes
``bench-data/stream-results.json``. Timings move with the shared machine's
load (printed at start and end): compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import MSMARCO_DOCS, synthetic_paths, write_synthetic

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench-data"
LAUNCH = """
import os, subprocess, sys, time
with open(sys.argv[1], "wb") as out, open(sys.argv[1] + ".err", "wb") as err:
    start = time.perf_counter()
    proc = subprocess.Popen(sys.argv[2:], stdout=out, stderr=err)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime, wall, os.waitstatus_to_exitcode(status))
"""
BASELINE = ("import rankproof.cli, rankproof.cli.measure, rankproof.jobs._run_files, "
            "rankproof.jobs._capped")


def launch(argv: list[str], out: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", LAUNCH, str(out), *argv],
                          capture_output=True, text=True, check=True)
    maxrss, cpu, wall, status = done.stdout.split()
    err = Path(str(out) + ".err").read_text()
    if int(status) != 0:
        raise RuntimeError(f"{argv} failed ({status}):\n{err[-3000:]}")
    return {"peak_mib": int(maxrss) / 1024, "cpu_s": float(cpu), "wall_s": float(wall),
            "stderr": err}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topics", type=int, default=6980)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1,
                        help="processes per row (interleaved); best wall, largest peak")
    parser.add_argument("--caps", nargs="+", default=["256MiB", "64MiB"])
    args = parser.parse_args()
    paths = synthetic_paths(OUT, args.topics, args.depth, args.seed, MSMARCO_DOCS)
    write_synthetic(paths, args.topics, args.depth, args.seed, MSMARCO_DOCS)
    size = paths.run.stat().st_size
    load_start = os.getloadavg()
    command = [sys.executable, "-m", "rankproof", "measure", str(paths.qrels), str(paths.run),
               "-m", "all_trec", "--format", "trec"]
    rows: dict[str, list[str]] = {"in memory": []}
    rows.update({f"cap {cap}": ["--memory-cap", cap] for cap in args.caps})
    results: dict[str, dict[str, Any]] = {}
    outputs: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        baseline = min(launch([sys.executable, "-c", BASELINE], Path(tmp) / "base")["peak_mib"]
                       for _ in range(3))
        for _ in range(args.repeat):
            for name, extra in rows.items():
                out = Path(tmp) / name.replace(" ", "_")
                got = launch([*command, *extra], out)
                outputs[name] = out.read_bytes()
                best = results.get(name)
                if best is None or got["wall_s"] < best["wall_s"]:
                    got["peak_mib"] = max(got["peak_mib"], best["peak_mib"] if best else 0.0)
                    results[name] = got
                else:
                    best["peak_mib"] = max(best["peak_mib"], got["peak_mib"])
    load_end = os.getloadavg()
    identical = all(text == outputs["in memory"] for text in outputs.values())
    ref = results["in memory"]
    print(f"run {paths.run.name}: {size / 2**20:,.0f} MiB, {args.topics:,} topics × "
          f"{args.depth:,}; baseline (post-import) {baseline:.0f} MiB; load average "
          f"{load_start[0]:.1f} -> {load_end[0]:.1f}")
    header = (f"{'row':<14}{'wall s':>8}{'CPU s':>8}{'peak MiB':>10}{'above base':>12}"
              f"{'parts':>7}{'wall x':>8}{'mem x':>7}")
    print(header)
    print("-" * len(header))
    for name, r in results.items():
        found = re.search(r"(\d+) partition", r["stderr"])
        r["partitions"] = int(found.group(1)) if found else None
        r["above_baseline_mib"] = r["peak_mib"] - baseline
        r["wall_x"] = r["wall_s"] / ref["wall_s"]
        r["memory_x"] = r["above_baseline_mib"] / ref["above_baseline_mib"]
        print(f"{name:<14}{r['wall_s']:>8.2f}{r['cpu_s']:>8.2f}{r['peak_mib']:>10.0f}"
              f"{r['above_baseline_mib']:>12.0f}{r['partitions'] or '-':>7}"
              f"{r['wall_x']:>7.2f}x{r['memory_x']:>6.2f}x")
        del r["stderr"]
    print(f"outputs identical: {identical}")
    doc = {"benchmark": "stream", "run": str(paths.run), "run_bytes": size,
           "topics": args.topics, "depth": args.depth, "baseline_mib": baseline,
           "load_average": {"start": load_start, "end": load_end},
           "repeat": args.repeat, "command": command[1:], "rows": results,
           "identical": identical}
    OUT.mkdir(exist_ok=True)
    (OUT / "stream-results.json").write_text(json.dumps(doc, indent=2) + "\n")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
