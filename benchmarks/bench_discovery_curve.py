"""Benchmark: the distractor curve's time per trial, per catalogue size.

``distractor_robustness_curve`` indexes and searches a fresh sub-catalogue
(the gold plus ``N − 1`` random distractors) for every probe, trial and size
``N``; probes whose sub-catalogues coincide are searched together. A
*trial* at size ``N`` is one draw for every probe: the time per trial is
what one more trial costs, and what ``--trials`` multiplies. ``N = 1`` is
1.0 by construction and never searched (no time); a size that takes the
whole catalogue runs one trial.

Data: the bundled example catalogue and its single-gold cases
(``src/rankproof/discovery/example/{catalog,cases}.jsonl``); when absent, a
generated catalogue of 160 items and 60 probes. Mode ``bm25`` by default (no
model); ``--mode hybrid --hashing`` runs fusion with the hashing test double
(the results say ``degraded``); ``--mode dense`` without ``--hashing`` needs
the ``dense`` extra (refused with the install hint otherwise).

Each size's time per trial is the median over ``--repeat`` whole curves
(wall clock); every repeat must give the same accuracies (the draws are
seeded) or the script exits 1. The machine's load is printed too: on a
shared machine, compare sizes, not absolute seconds. Writes
``bench-data/discovery-curve-results.json``.

Run: ``.venv/bin/python benchmarks/bench_discovery_curve.py``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

from _discovery_data import data  # this folder: the script's own (sys.path[0])

from rankproof.discovery import (
    DFLT_DISTRACTOR_SIZES,
    DistractorCurve,
    distractor_curve_from_cases,
)
from rankproof.retrieval import HashingEmbedder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="bm25", choices=("bm25", "dense", "hybrid"))
    parser.add_argument("--hashing", action="store_true",
                        help="dense/hybrid with the hashing test double (no model)")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out-dir", type=Path, default=Path("bench-data"))
    args = parser.parse_args(argv)

    catalog, cases, origin = data(n_items=160, n_cases=60)
    embedder = HashingEmbedder() if args.hashing else None
    curves: list[DistractorCurve] = [
        distractor_curve_from_cases(catalog, cases, mode=args.mode, embedder=embedder,
                                    sizes=DFLT_DISTRACTOR_SIZES, trials=args.trials,
                                    seed=args.seed, k=args.k)
        for _ in range(args.repeat)]
    curve = curves[0]
    same = all(c.accuracy() == curve.accuracy() for c in curves)

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Distractor curve: {origin} catalogue, {len(catalog)} items, {curve.n_probes} "
          f"probes, mode {curve.mode}{' (degraded: hashing)' if curve.degraded else ''}, "
          f"top-{curve.k}, {args.trials} trials, seed {curve.seed}")
    print(f"median of {args.repeat} curves; {os.cpu_count()} CPUs, load average {load}\n")
    print(f"{'N':>5} {'accuracy':>9} {'95% interval':>17} {'trials':>7} {'searches':>9} "
          f"{'s/trial':>9} {'ms/probe':>9}")
    print("-" * 72)
    rows = []
    for i, p in enumerate(curve.points):
        times = [c.points[i].seconds_per_trial for c in curves]
        per_trial = None if p.seconds_per_trial is None else statistics.median(
            t for t in times if t is not None)
        per_probe = None if per_trial is None else 1000 * per_trial / curve.n_probes
        shown = "-" if per_trial is None else f"{per_trial:9.3f}"
        shown_probe = "-" if per_probe is None else f"{per_probe:9.2f}"
        print(f"{p.size:>5} {p.accuracy:9.3f}  [{p.ci_low:6.3f}, {p.ci_high:6.3f}] {p.trials:>7} "
              f"{p.searches:>9} {shown:>9} {shown_probe:>9}")
        rows.append({**p.to_dict(), "median_seconds_per_trial": per_trial,
                     "ms_per_probe_search": per_probe})
    total = statistics.median(c.seconds for c in curves)
    print(f"\nwhole curve: {total:.2f} s (median); same accuracies in every repeat: {same}")
    for note in curve.notes:
        print(f"note: {note}")

    args.out_dir.mkdir(parents=True, exist_ok=True)
    out = args.out_dir / "discovery-curve-results.json"
    result = {"origin": origin, "items": len(catalog), "probes": curve.n_probes,
              "mode": curve.mode, "degraded": curve.degraded, "k": curve.k,
              "trials": args.trials, "seed": curve.seed, "repeat": args.repeat,
              "load_average": os.getloadavg(), "seconds": total, "same_accuracies": same,
              "points": rows, "interval": curve.interval, "notes": list(curve.notes)}
    out.write_text(json.dumps(result, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    if not same:
        print("WARNING: repeats of the same seeded curve disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
