"""Benchmark: ``rankproof measure`` over many runs on each engine (issue 16, item 1).

Ten runs over one qrels (by default 1,000 topics × 1,000 documents each, 1 million
lines, about 40 MB: the MS-MARCO-shaped synthetic run of ``measures.py`` with each
system's scores perturbed by its own seed) are evaluated by the whole command line, each
configuration in a fresh process, side by side:

* ``local``: ``rankproof measure QRELS RUN×10 -m nDCG@10 -m AP --format csv`` (every run
  read and evaluated in this process, one after another);
* ``local --workers 2``: the same on a pool of two spawned processes (each run read and
  evaluated by one of them);
* ``ray (own cluster)``: ``--engine ray --workers 2``: the command starts a local Ray
  cluster, runs one task per run, and stops it (cluster start-up included);
* ``ray --address``: ``--engine ray --address ADDR`` against a cluster this script
  started beforehand (2 CPUs), as a team with a running cluster would use it.

Each row: wall seconds from process start to exit (best of ``--repeat``, configurations
interleaved so a busy spell hits each; Ray's work runs in processes outside the
command's, so CPU time is not comparable and is not shown), runs per second, and the
speed-up over ``local`` (local wall / this wall). Every configuration's output must be
byte-identical to ``local``'s (the script exits 1 otherwise).

Run: ``.venv/bin/python benchmarks/bench_engine.py [--runs 10] [--topics 1000]
[--repeat 2]``; writes ``bench-data/engine-results.json``. The machine is shared: the
load average is printed at start and end; compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import MSMARCO_DOCS, synthetic_paths, write_synthetic

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench-data"
MEASURES = ["nDCG@10", "AP"]


def system_runs(base: Path, n: int, out_dir: Path) -> list[Path]:
    """``n`` runs over ``base``'s topics and documents, each with its own score noise
    (seeded by its index), written once and reused."""
    paths = [out_dir / f"{base.stem}-sys{i}.trec" for i in range(n)]
    if all(p.exists() for p in paths):
        return paths
    import numpy as np

    from rankproof.data import Run, load_run, write_trec_run

    run = load_run(str(base))
    for i, path in enumerate(paths):
        if path.exists():
            continue
        noise = np.random.default_rng(i).normal(0.0, 0.05, len(run.scores))
        variant = Run.from_columns(run.qids(), run.docids, run.scores + noise, None,
                                   name=f"sys{i}")
        write_trec_run(variant, path, tag=f"sys{i}")
    return paths


def timed(argv: list[str]) -> dict[str, Any]:
    """One command in a fresh process: its wall time (start to exit) and its output."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} failed ({proc.returncode}):\n{err.decode()[-3000:]}")
    return {"wall_s": wall, "stdout": out}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true", help="Leave out the Ray rows.")
    ap.add_argument("-m", "--measure", action="append", metavar="MEASURE",
                    help="Measures (repeatable; default nDCG@10 and AP; all_trec makes the "
                         "evaluation, not the reading, the larger part).")
    args = ap.parse_args()

    data = OUT / "engine"
    paths = synthetic_paths(data, args.topics, args.depth, 0, MSMARCO_DOCS)
    write_synthetic(paths, args.topics, args.depth, 0, MSMARCO_DOCS)
    runs = system_runs(paths.run, args.runs, data)
    base = [sys.executable, "-m", "rankproof", "measure", str(paths.qrels),
            *map(str, runs), *(f"-m{m}" for m in args.measure or MEASURES),
            "--format", "csv"]
    configs: dict[str, list[str]] = {"local": [], "local --workers 2": ["--workers", "2"]}
    ray_ctx: Any = None
    if not args.no_ray:
        import ray

        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        configs["ray (own cluster)"] = ["--engine", "ray", "--workers", "2"]
        ray_ctx = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                           configure_logging=False)
        configs["ray --address"] = ["--engine", "ray", "--address",
                                    ray_ctx.address_info["address"]]
    load_start = os.getloadavg()
    best: dict[str, float] = {}
    outputs: dict[str, bytes] = {}
    try:
        for _ in range(args.repeat):
            for name, extra in configs.items():
                got = timed([*base, *extra])
                best[name] = min(best.get(name, float("inf")), got["wall_s"])
                outputs.setdefault(name, got["stdout"])
    finally:
        if ray_ctx is not None:
            import ray

            ray.shutdown()
    load_end = os.getloadavg()
    same = {name: out == outputs["local"] for name, out in outputs.items()}
    lines = sum(1 for _ in paths.run.open("rb"))
    print(f"measure -m {' -m '.join(args.measure or MEASURES)} over {len(runs)} runs of "
          f"{lines:,} lines ({args.topics} topics × {args.depth}); {os.cpu_count()} CPUs; "
          f"load {load_start[0]:.1f} → {load_end[0]:.1f}")
    print(f"{'engine':<20} {'wall s':>8} {'speed-up':>9} {'runs/s':>7}  identical")
    for name, wall in best.items():
        print(f"{name:<20} {wall:>8.2f} {best['local'] / wall:>8.2f}× "
              f"{len(runs) / wall:>7.2f}  {'yes' if same[name] else 'NO'}")
    OUT.mkdir(exist_ok=True)
    result = {"measures": args.measure or MEASURES, "runs": len(runs),
              "lines_per_run": lines, "topics": args.topics,
              "depth": args.depth, "repeat": args.repeat, "cpus": os.cpu_count(),
              "load_start": load_start, "load_end": load_end,
              "wall_s": best, "speedup_vs_local": {n: best["local"] / w for n, w in best.items()},
              "identical": same}
    (OUT / f"engine-results{'-' + '-'.join(args.measure) if args.measure else ''}.json"
     ).write_text(json.dumps(result, indent=2) + "\n")
    if not all(same.values()):
        print("WARNING: an engine's output differs from the local engine's", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
