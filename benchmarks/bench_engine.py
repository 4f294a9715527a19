"""Benchmark: ``rankproof measure`` and ``compare`` on each engine (issues 16 and 23).

``--shape million`` (the default; issue 23, item 6): one run of 1,000,000 topics × 10
documents (``gen_million.py``'s, about 313 MiB) measured, and two such runs compared,
by the whole command line in a fresh process per row: ``local`` (one process),
``local --workers 2`` (the run cut into two byte ranges of whole topics, one spawned
process each), and Ray at 1 and 2 workers (a cluster of that many CPUs this script
starts, reached by ``--address``, its workers started by a small command first: with 1
worker the run is one task, with 2 it is cut into two ranges; ``compare``'s two runs
are one task each). Each row: wall and CPU seconds (the command's own, from
``os.wait4``, plus, on Ray, the CPU its worker processes spent), topics per second per
worker, the command's peak resident memory (for local pools, the largest of it and its
workers), and on Ray the largest worker's peak (``VmHWM``, reset before each command);
every output must equal ``local``'s byte for byte (exit 1 otherwise). Writes
``bench-data/engine-million-results.json``; ``/proc/loadavg`` is printed before and after.

``--shape many`` (issue 16, item 1): ten runs over one qrels (by default 1,000 topics ×
1,000 documents each, 1 million
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

Run: ``.venv/bin/python benchmarks/bench_engine.py --shape many [--runs 10] [--topics 1000]
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


def main_many(args: argparse.Namespace) -> int:
    """The many-runs experiment (issue 16): ten runs, one task each."""

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


def ray_workers() -> dict[int, tuple[float, float]]:
    """Ray's worker processes on this machine now: ``{pid: (CPU seconds, peak MiB)}``
    (their ``/proc`` stat and ``VmHWM``)."""
    found: dict[int, tuple[float, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            if b"default_worker.py" not in cmd and not cmd.startswith(b"ray::"):
                continue
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / tick
            hwm = 0.0
            for line in Path(f"/proc/{entry}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    hwm = float(line.split()[1]) / 1024.0
            found[int(entry)] = (cpu, hwm)
        except (OSError, IndexError, ValueError):
            continue
    return found


class WorkerSampler:
    """Samples Ray's workers every 0.2 s while a command runs. A command reached by
    ``--address`` is a job of its own, and Ray starts that job's workers and ends them
    with it, so they are watched while they live: each one's last CPU figure (less what
    it had when first seen, for a worker that outlives the job) and its peak."""

    def __init__(self) -> None:
        import threading

        self._stop = threading.Event()
        self._first: dict[int, float] = {}
        self._last: dict[int, tuple[float, float]] = {}
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while True:
            for pid, (cpu, hwm) in ray_workers().items():
                self._first.setdefault(pid, cpu)
                self._last[pid] = (cpu, max(hwm, self._last.get(pid, (0.0, 0.0))[1]))
            if self._stop.wait(0.2):
                return

    def __enter__(self) -> WorkerSampler:
        self._first = {pid: cpu for pid, (cpu, _) in ray_workers().items()}
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def cpu_s(self) -> float:
        return sum(cpu - self._first.get(pid, cpu) for pid, (cpu, _) in self._last.items())

    @property
    def peak_mib(self) -> float:
        return max((hwm for _, hwm in self._last.values()), default=0.0)


def main_million(args: argparse.Namespace) -> int:
    """One large run (and a comparison of two) over 1,000,000 topics × 10 documents."""
    from _common import start_launcher, timed_child
    from gen_million import write_million

    start_launcher()  # before any data is held: each child's peak is its own
    paths = write_million(OUT, args.topics, args.depth, 0)
    warm_run, warm_qrels = OUT / "engine-warm.trec", OUT / "engine-warm.qrels"
    with paths.a.open("rb") as fh:  # a small run to start Ray's workers with
        warm_run.write_bytes(b"".join(fh.readline() for _ in range(6000)))
    with paths.qrels.open("rb") as fh:
        warm_qrels.write_bytes(b"".join(fh.readline() for _ in range(1000)))
    ms = [f"-m{m}" for m in args.measure or ["nDCG@10", "RR@10", "R@10"]]
    commands = {
        "measure": [sys.executable, "-m", "rankproof", "measure", str(paths.qrels),
                    str(paths.a), *ms, "--format", "csv", "--quiet"],
        "compare": [sys.executable, "-m", "rankproof", "compare", str(paths.qrels),
                    str(paths.a), str(paths.b), *ms[:2], "--quiet"],
    }
    configs: list[tuple[str, int, list[str], int]] = [("local", 1, [], 0),
                                                      ("local --workers 2", 2,
                                                       ["--workers", "2"], 0)]
    if not args.no_ray:
        configs += [("ray, 1 worker", 1, [], 1), ("ray, 2 workers", 2, [], 2)]
    load_start = Path("/proc/loadavg").read_text().strip()
    rows: list[dict[str, Any]] = []
    outputs: dict[str, bytes] = {}
    for name, workers, extra, ray_cpus in configs:
        ctx = None
        if ray_cpus:
            import ray

            os.environ.setdefault("RAY_AUTH_MODE", "disabled")
            ctx = ray.init(num_cpus=ray_cpus, include_dashboard=False, log_to_driver=False,
                           configure_logging=False)
            extra = ["--engine", "ray", "--address", ctx.address_info["address"]]
            # Start the workers (and their imports) before timing, as a running cluster has.
            timed_child([sys.executable, "-m", "rankproof", "measure", str(warm_qrels),
                         str(warm_run), "-mAP", "--partitions", str(ray_cpus), "--quiet",
                         *extra])
        try:
            for what, argv in commands.items():
                with WorkerSampler() as sampled:
                    out, err, usage = timed_child([*argv, *extra])
                if usage["returncode"] != 0:
                    raise RuntimeError(f"{name} {what} failed:\n{err.decode()[-3000:]}")
                worker_cpu = sampled.cpu_s if ray_cpus else 0.0
                worker_peak = sampled.peak_mib
                outputs[f"{what}:{name}"] = out
                same = out == outputs[f"{what}:local"]
                topics_s = args.topics / usage["wall_s"]
                rows.append({
                    "command": what, "engine": name, "workers": workers,
                    "wall_s": usage["wall_s"], "cpu_s": usage["cpu_s"] + worker_cpu,
                    "driver_peak_mib": usage["peak_mib"],
                    "worker_peak_mib": worker_peak if ray_cpus else None,
                    "topics_per_s": topics_s, "topics_per_s_per_worker": topics_s / workers,
                    "identical": same, "load": Path("/proc/loadavg").read_text().split()[0]})
                print(json.dumps(rows[-1]), flush=True)
        finally:
            if ctx is not None:
                import ray

                ray.shutdown()
    load_end = Path("/proc/loadavg").read_text().strip()
    print(f"\n1,000,000-shape runs ({args.topics:,} topics x {args.depth}, "
          f"{paths.a.stat().st_size / 2**20:,.0f} MiB each); {os.cpu_count()} CPUs; "
          f"/proc/loadavg {load_start} -> {load_end}")
    print(f"{'command':<8} {'engine':<18} {'wall s':>7} {'CPU s':>7} {'topics/s/worker':>16} "
          f"{'driver MiB':>10} {'worker MiB':>10}  identical")
    for r in rows:
        wp = "-" if r["worker_peak_mib"] is None else f"{r['worker_peak_mib']:,.0f}"
        print(f"{r['command']:<8} {r['engine']:<18} {r['wall_s']:>7.1f} {r['cpu_s']:>7.1f} "
              f"{r['topics_per_s_per_worker']:>16,.0f} {r['driver_peak_mib']:>10,.0f} "
              f"{wp:>10}  {'yes' if r['identical'] else 'NO'}")
    OUT.mkdir(exist_ok=True)
    (OUT / "engine-million-results.json").write_text(json.dumps(
        {"topics": args.topics, "depth": args.depth, "cpus": os.cpu_count(),
         "load_start": load_start, "load_end": load_end, "rows": rows}, indent=2) + "\n")
    return 0 if all(r["identical"] for r in rows) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--topics", type=int, default=None,
                    help="Topics per run (default: 1,000,000 for million, 1,000 for many).")
    ap.add_argument("--depth", type=int, default=None,
                    help="Documents per topic (default: 10 for million, 1,000 for many).")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true", help="Leave out the Ray rows.")
    ap.add_argument("-m", "--measure", action="append", metavar="MEASURE",
                    help="Measures (repeatable; default nDCG@10 and AP; all_trec makes the "
                         "evaluation, not the reading, the larger part).")
    ap.add_argument("--shape", choices=("million", "many"), default="million",
                    help="million: one run of --topics (default 1,000,000) x --depth (10) and "
                         "a comparison of two, local vs Ray at 1 and 2 workers; many: --runs "
                         "runs of --topics x --depth, one task each (issue 16).")
    args = ap.parse_args()
    million = args.shape == "million"
    args.topics = args.topics or (1_000_000 if million else 1000)
    args.depth = args.depth or (10 if million else 1000)
    return main_million(args) if million else main_many(args)

if __name__ == "__main__":
    raise SystemExit(main())
