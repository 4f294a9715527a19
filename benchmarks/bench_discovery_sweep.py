"""Benchmark: a selector sweep from one retrieval pass vs re-running retrieval per grid point.

``sweep_selector`` scores the whole ``max_k × rel × min_score`` grid (seed
004's default: 5 × 6 × 1 = 30 cells) from **one** retrieval pass, because
the selector's knobs do not change the ranking. The alternative a user would
write is a loop of ``evaluate_selection`` calls, one per cell, each
searching again. Both are timed on the same, already indexed searcher (the
index is built once, untimed, so only the retrieval passes and the scoring
differ), and every cell's report must be identical between the two or the
script exits 1.

Data: the bundled example catalogue and cases
(``src/rankproof/discovery/example/{catalog,cases}.jsonl``); when absent, a
generated catalogue of 200 items and 100 cases (20 abstention). Mode
``bm25`` by default (no model); ``--mode hybrid --hashing`` runs fusion with
the hashing test double (the results say ``degraded``).

Timings are the median of ``--repeat`` runs (wall clock); the machine's load
is printed too: on a shared machine, compare the ratio, not the seconds.
Writes ``bench-data/discovery-sweep-results.json``.

Run: ``.venv/bin/python benchmarks/bench_discovery_sweep.py``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _discovery_data import data  # this folder: the script's own (sys.path[0])

from rankproof.discovery import (
    DFLT_SWEEP_MAX_K,
    DFLT_SWEEP_MIN_SCORE,
    DFLT_SWEEP_REL,
    CatalogSearcher,
    SelectionReport,
    evaluate_selection,
    sweep_selector,
)
from rankproof.retrieval import HashingEmbedder


def median_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="bm25", choices=("bm25", "dense", "hybrid"))
    parser.add_argument("--hashing", action="store_true",
                        help="dense/hybrid with the hashing test double (no model)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out-dir", type=Path, default=Path("bench-data"))
    args = parser.parse_args(argv)

    catalog, cases, origin = data(n_items=200, n_cases=100, abstain_every=5)
    embedder = HashingEmbedder() if args.hashing else None
    searcher = CatalogSearcher(catalog, mode=args.mode, embedder=embedder)
    searcher.search_many([cases[0].query], args.k)  # build the index, untimed
    grid = [(m, r, s) for m in DFLT_SWEEP_MAX_K for r in DFLT_SWEEP_REL
            for s in DFLT_SWEEP_MIN_SCORE]

    before = searcher.calls
    t_sweep, sweep = median_time(
        lambda: sweep_selector(searcher, cases, k=args.k), args.repeat)
    sweep_passes = (searcher.calls - before) // args.repeat

    def per_point() -> list[SelectionReport]:
        return [evaluate_selection(searcher, cases, k=args.k, max_k=m, rel=r, min_score=s)
                for m, r, s in grid]

    before = searcher.calls
    t_loop, loop = median_time(per_point, args.repeat)
    loop_passes = (searcher.calls - before) // args.repeat

    same = [p.report == rep for p, rep in zip(sweep.points, loop, strict=True)]
    best = sweep.best()
    ratio = t_loop / t_sweep
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Selector sweep: {origin} catalogue, {len(catalog)} items, {len(cases)} cases "
          f"({sweep.n_abstention} abstention), mode {sweep.mode}"
          f"{' (degraded: hashing)' if sweep.degraded else ''}, k={args.k}, "
          f"grid {len(grid)} cells")
    print(f"median of {args.repeat} runs; {os.cpu_count()} CPUs, load average {load}\n")
    print(f"{'method':<44} {'retrieval passes':>16} {'seconds':>9} {'× sweep':>8}")
    print("-" * 80)
    print(f"{'sweep_selector (one pass)':<44} {sweep_passes:>16} {t_sweep:9.3f} {1.0:8.1f}")
    print(f"{'evaluate_selection per grid point':<44} {loop_passes:>16} {t_loop:9.3f} "
          f"{ratio:8.1f}")
    print()
    print(f"same numbers in every cell: {all(same)} ({sum(same)}/{len(same)})")
    print(f"best ({sweep.objective}): max_k={best.max_k} rel={best.rel:g} -> "
          f"F1 {best.report.selection_f1:.3f}, P {best.report.selection_precision:.3f}, "
          f"R {best.report.selection_recall:.3f}, size {best.report.mean_selected_size:.2f}")
    print("frontier (recall, precision): " + ", ".join(
        f"({p.report.selection_recall:.3f}, {p.report.selection_precision:.3f})"
        for p in sweep.frontier()))

    args.out_dir.mkdir(parents=True, exist_ok=True)
    out = args.out_dir / "discovery-sweep-results.json"
    result = {"origin": origin, "items": len(catalog), "cases": len(cases), "mode": sweep.mode,
              "degraded": sweep.degraded, "k": args.k, "grid_cells": len(grid),
              "repeat": args.repeat, "load_average": os.getloadavg(),
              "sweep": {"seconds": t_sweep, "retrieval_passes": sweep_passes},
              "per_point": {"seconds": t_loop, "retrieval_passes": loop_passes},
              "ratio": ratio, "same_numbers": all(same), "best": best.to_dict()}
    out.write_text(json.dumps(result, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    if not all(same):
        print("WARNING: the sweep and the per-point loop disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
