"""Per-query stage latency on the golden corpus: untreated timing beside honest timing.

Two fresh processes, one after the other, each running `rankproof eval`'s
experiment (bm25, dense, fusion; the real MiniLM by default):

* ``before`` — no warm-up and torch's own intra-op threads (what rankproof
  timed before warm-ups: the first queries' model start-up and thread
  contention land in the percentiles);
* ``after`` — the defaults: an 8-query warm-up, excluded and reported apart,
  and one torch thread.

Prints, per stage, p50, p95, their ratio, the warm-up, the threads and the
load the stage was timed under, and writes the figures to
``bench-data/latency.json``. The load of a shared machine moves between the
two processes; each row states its own. Not a test: nothing is asserted.

    .venv/bin/python benchmarks/latency.py                    # real MiniLM (the dense extra)
    .venv/bin/python benchmarks/latency.py --embedder hashing  # a quick look, no model
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench-data" / "latency.json"
SETTINGS = {"before": (0, 0), "after": (8, 1)}
"""Label -> (warm-up queries, torch threads; 0: torch's own)."""


def child(embedder: str, warmup: int, threads: int) -> None:
    from rankproof.harness import EvalConfig, golden_inputs, run_experiment

    config = EvalConfig(stages=("bm25", "dense", "fusion"), embedder=embedder,  # type: ignore[arg-type]
                        resamples=200)
    report, _ = run_experiment(golden_inputs("chunk", 800, 100), config, warmup=warmup,
                               threads=threads or None)
    print(json.dumps({s.name: s.latency.model_dump() for s in report.stages}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--child", nargs=2, type=int, metavar=("WARMUP", "THREADS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.embedder, *args.child)
        return
    results: dict[str, Any] = {"embedder": args.embedder, "corpus": "golden"}
    for label, (warmup, threads) in SETTINGS.items():
        proc = subprocess.run([sys.executable, __file__, "--embedder", args.embedder,
                               "--child", str(warmup), str(threads)],
                              capture_output=True, text=True, check=True, cwd=ROOT)
        results[label] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"{'setting':<8} {'stage':<7} {'p50 ms':>8} {'p95 ms':>8} {'p95/p50':>8} "
          f"{'warm-up':>14} {'threads':>8} {'load/CPUs':>10}")
    for label in SETTINGS:
        for stage, lat in results[label].items():
            ratio = lat["p95"] / lat["p50"] if lat["p50"] > 0 else float("nan")
            warm = (f"{lat['warmup_queries']} q {lat['warmup_ms']:.0f} ms"
                    if lat["warmup_queries"] else "none")
            load = max(x for x in (lat["load_before"], lat["load_after"], 0.0) if x is not None)
            stamp = f"{load:.1f}/{lat['cpus']}"
            print(f"{label:<8} {stage:<7} {lat['p50']:>8.1f} {lat['p95']:>8.1f} {ratio:>8.2f} "
                  f"{warm:>14} {lat['threads']!s:>8} {stamp:>10}")
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(results, indent=1) + "\n")
    print(f"written to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
