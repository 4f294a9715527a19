"""Benchmark: the sign-flip randomization test at MS MARCO dev scale.

10,000 resamples × 6,980 queries of random nDCG-like scores, three ways:

* rankproof's ``randomization_test`` (table look-ups over packed sign bits,
  chunked to bound memory), called on ``{qid: score}`` dicts so that pairing,
  validation and sorting are included;
* a naive pure-Python loop drawing one sign at a time — only ``NAIVE_RESAMPLES``
  resamples are timed and the time is extrapolated linearly (printed as such);
* ``ranx.statistical_tests.fisher_randomization_test`` (numba, parallel), the
  function ``ranx.compare(stat_test="fisher")`` calls per metric, on the same
  two score arrays with the same number of permutations. Its first call may
  include numba compilation; it is reported separately and the timed calls
  come after a warm-up.

Timings are the median of ``REPEATS`` runs (one warm run for ranx, which
takes seconds); peak memory is measured in a separate run under
``tracemalloc`` (numpy reports its buffers to it; numba's do not show).
The machine's load is printed too: on a shared machine, timings vary.

Run: ``.venv/bin/python benchmarks/stats.py``
"""

from __future__ import annotations

import os
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from rankproof.stats import randomization_test

N_QUERIES = 6_980
RESAMPLES = 10_000
NAIVE_RESAMPLES = 100
REPEATS = 5
RANX_REPEATS = 1  # ranx takes seconds per call; one warm call is enough to compare
TARGET_SECONDS = 0.5
TARGET_NAIVE_RATIO = 40.0
MEMORY_LIMIT = 64 * 2**20


def make_data(seed: int = 0) -> tuple[dict[str, float], dict[str, float]]:
    """nDCG-like scores: skewed, ~25% zeros, some exact ties, a small true difference."""
    rng = np.random.default_rng(seed)
    base = rng.beta(0.6, 1.2, N_QUERIES)
    a = np.clip(base + rng.normal(0.0, 0.12, N_QUERIES), 0, 1).round(4)
    b = np.clip(base + rng.normal(0.004, 0.12, N_QUERIES), 0, 1).round(4)
    hard = rng.random(N_QUERIES) < 0.25
    a[hard] = b[hard] = 0.0
    qids = [str(1_000_000 + i) for i in range(N_QUERIES)]
    return dict(zip(qids, a.tolist(), strict=True)), dict(zip(qids, b.tolist(), strict=True))


def naive(a: list[float], b: list[float], resamples: int, seed: int = 0) -> int:
    """Count sign-flipped |mean| ≥ observed |mean|, one random sign per query per resample."""
    rnd = random.Random(seed)
    d = [x - y for x, y in zip(a, b, strict=True)]
    n = len(d)
    observed = abs(sum(d) / n)
    count = 0
    for _ in range(resamples):
        total = 0.0
        for x in d:
            total += x if rnd.random() < 0.5 else -x
        if abs(total / n) >= observed:
            count += 1
    return count


def timed(fn: Callable[[], Any], repeats: int = REPEATS) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def peak_bytes(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main() -> None:
    a, b = make_data()
    qids = sorted(a)
    xa = np.array([a[q] for q in qids])
    xb = np.array([b[q] for q in qids])
    rows: list[tuple[str, float, int | None, str]] = []

    def ours() -> Any:
        return randomization_test(a, b, resamples=RESAMPLES, seed=0)

    ours()  # warm caches and imports
    t_ours, res = timed(ours)
    mem_ours = peak_bytes(ours)
    rows.append(("rankproof randomization_test", t_ours, mem_ours, f"p = {res.p_value:.4f}"))

    la, lb = xa.tolist(), xb.tolist()
    t_part, _ = timed(lambda: naive(la, lb, NAIVE_RESAMPLES), repeats=1)
    t_naive = t_part * RESAMPLES / NAIVE_RESAMPLES
    mem_naive = peak_bytes(lambda: naive(la, lb, 10))
    rows.append((f"naive Python loop (timed {NAIVE_RESAMPLES}, ×{RESAMPLES // NAIVE_RESAMPLES})",
                 t_naive, mem_naive, "extrapolated"))

    ranx_note = ""
    try:
        from ranx.statistical_tests import fisher_randomization_test

        t0 = time.perf_counter()
        fisher_randomization_test(xa, xb, RESAMPLES, 0.05, 42)
        t_cold = time.perf_counter() - t0
        t_ranx, (p_ranx, _) = timed(
            lambda: fisher_randomization_test(xa, xb, RESAMPLES, 0.05, 42), repeats=RANX_REPEATS
        )
        # numba allocates outside Python's allocator, so tracemalloc cannot see it.
        rows.append(("ranx fisher_randomization_test (warm)", t_ranx, None,
                     f"p = {p_ranx:.4f}; memory not traceable (numba)"))
        rows.append(("ranx, first call (may JIT-compile)", t_cold, None, "once per process"))
    except ImportError as exc:  # ranx is a dev extra
        ranx_note = f"ranx not available: {exc}"

    print(f"Sign-flip randomization test: {RESAMPLES:,} resamples × {N_QUERIES:,} queries")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"median of {REPEATS} runs; peak = extra memory traced by tracemalloc; "
          f"{os.cpu_count()} CPUs, load average {load}\n")
    print(f"{'method':<46} {'seconds':>9} {'× ours':>8} {'peak MiB':>9}  note")
    print("-" * 92)
    for name, secs, mem, note in rows:
        mib = f"{mem / 2**20:9.1f}" if mem is not None else f"{'–':>9}"
        print(f"{name:<46} {secs:9.3f} {secs / t_ours:8.1f} {mib}  {note}")
    if ranx_note:
        print(ranx_note)
    print()
    checks = [
        (f"ours ≤ {TARGET_SECONDS} s", t_ours <= TARGET_SECONDS),
        (f"ours ≥ {TARGET_NAIVE_RATIO:.0f}× faster than naive",
         t_naive / t_ours >= TARGET_NAIVE_RATIO),
        ("ours peak ≤ 64 MiB", mem_ours <= MEMORY_LIMIT),
    ]
    if not ranx_note:
        checks.append(("ours faster than ranx (warm)", t_ours < t_ranx))
    for label, ok in checks:
        print(f"[{'ok' if ok else 'MISSED'}] {label}")


if __name__ == "__main__":
    main()
