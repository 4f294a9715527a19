"""Benchmark: the results history at scale (issue 27, item 5): 10,000 stored results of
7,000 queries each, ``history trend`` and ``history since`` on SQLite and PostgreSQL.

The store is filled through its own tables and encodings (`rankproof.history`'s schema,
one compressed float64 array per result and one shared qid list), not through 10,000 real
documents: generating and hashing 10,000 × 7,000-query JSON documents would take longer
than everything measured, and neither query reads the document column (each result's
document here is a small measure-JSON stub naming its run and commit). The values are
metric-like (eleven levels, as nDCG@10 of shallow judgments takes), each result changing a
few queries of the one before; query ``q-417`` is lost at result 6,000.

Timed, each once after one warm-up call (the randomization trend without one: its cost is
computing) (a shared machine: read the numbers as orders of
magnitude): ``trend`` of the newest 50 results (the CLI's default ``--last``) with the
paired t-test and with the default randomization test (10,000 resamples; its 49 steps are
tested as one family from one shared draw of sign vectors, `rankproof.stats.paired_tests`),
and ``since`` over all 10,000 results; plus the whole CLI (``rankproof history since``,
start-up included). The generated stores stay in ``--data`` (default ``/tmp/rankproof-bench-
history``) and are reused by the next run.

Run: ``.venv/bin/python benchmarks/bench_history.py [--db sqlite|postgresql|both]``; a short
run: ``--results 500`` (or ``$RANKPROOF_BENCH_HISTORY_RESULTS``; the lost query then falls at
result ``--results × 0.6``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LOST_QID = "q-417"
RESULTS = int(os.environ.get("RANKPROOF_BENCH_HISTORY_RESULTS", "10000"))
START = datetime(2026, 1, 1, tzinfo=UTC)


def _lost_at(results: int) -> int:
    """The result at which ``LOST_QID`` is lost (6,000 of 10,000)."""
    return max(2, results * 3 // 5)


def _fill(url: str, results: int, queries: int, seed: int = 0) -> None:
    from sqlalchemy import func, select

    from rankproof.history import open_store
    from rankproof.history._extract import encode_qids, encode_values
    from rankproof.history._schema import per_query, qid_lists
    from rankproof.history._schema import results as results_table

    store = open_store(url)
    with store.engine.connect() as conn:
        have = conn.execute(select(func.count()).select_from(results_table)).scalar_one()
    if have == results:
        store.close()
        return
    if have:
        raise SystemExit(f"{store.where} holds {have} results, not {results}: remove it")
    rng = np.random.default_rng(seed)
    qids = sorted(f"q-{i}" for i in range(queries))
    digest, blob = encode_qids(qids)
    lost = qids.index(LOST_QID)
    levels = np.linspace(0.0, 1.0, 11)
    values = rng.choice(levels, queries)
    values[lost] = 1.0
    t0 = time.perf_counter()
    with store.engine.begin() as conn:
        conn.execute(qid_lists.insert().values(digest=digest, n=queries, data=blob))
    batch_r: list[dict[str, Any]] = []
    batch_q: list[dict[str, Any]] = []
    for i in range(1, results + 1):
        changed = rng.integers(0, queries, 20)
        values = values.copy()
        values[changed] = rng.choice(levels, len(changed))
        values[lost] = 1.0 if i < _lost_at(results) else 0.0
        commit = hashlib.sha1(f"commit {i}".encode()).hexdigest()
        doc = {"schema_version": 1, "tool": {"name": "rankproof"}, "runs": [{"run": "sys"}],
               "provenance": {"git_commit": commit}}
        raw = json.dumps(doc, sort_keys=True).encode()
        created = (START + timedelta(minutes=i)).isoformat(timespec="seconds")
        batch_r.append({"seq": i, "id": "sha256:" + hashlib.sha256(raw + bytes(str(i), "ascii")
                                                                   ).hexdigest(),
                        "kind": "rankproof.measure", "schema_version": 1,
                        "created_at": created, "added_at": created,
                        "git_commit": commit, "git_branch": "main", "git_dirty": False,
                        "tool_version": "bench", "runs": '["sys"]', "measures": '["nDCG@10"]',
                        "document": zlib.compress(raw)})
        batch_q.append({"result_seq": i, "system": "sys", "measure": "nDCG@10", "n": queries,
                        "mean": float(values.mean()), "qids_digest": digest,
                        "data": encode_values(values)})
        if len(batch_r) == 500 or i == results:
            with store.engine.begin() as conn:
                conn.execute(results_table.insert(), batch_r)
                conn.execute(per_query.insert(), batch_q)
            batch_r, batch_q = [], []
    if store.engine.dialect.name == "postgresql":
        from sqlalchemy import text

        with store.engine.begin() as conn:  # the identity column continues after our seqs
            conn.execute(text("SELECT setval(pg_get_serial_sequence('results', 'seq'), "
                              f"{results})"))
            conn.execute(text("ANALYZE"))
    store.close()
    print(f"  filled {results:,} results × {queries:,} queries in "
          f"{time.perf_counter() - t0:.1f} s")


def _timed(fn: Callable[[], Any], warm: bool = True) -> tuple[float, Any]:
    if warm:
        fn()  # warm-up: connection pool, qid-list cache, page cache
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _measure(url: str, results: int, randomization: bool = True) -> dict[str, float]:
    from rankproof.history import open_store, since, trend

    out: dict[str, float] = {}
    with open_store(url) as store:
        out["trend_t_s"], t = _timed(lambda: trend(store, "nDCG@10", run="sys", branch="main",
                                                   test="t"))
        assert len(t.points) == 50
        if randomization:
            out["trend_randomization_s"], _ = _timed(
                lambda: trend(store, "nDCG@10", run="sys", branch="main"), warm=False)
        out["since_s"], s = _timed(lambda: since(store, LOST_QID, "nDCG@10", run="sys"))
        assert s.found and s.index == _lost_at(results), s
    t0 = time.perf_counter()
    proc = subprocess.run([str(Path(sys.executable).with_name("rankproof")), "history",
                           "since", LOST_QID, "-m", "nDCG@10", "--run", "sys", "--history",
                           url], capture_output=True, text=True, check=True)
    out["cli_since_s"] = time.perf_counter() - t0
    assert f"#{_lost_at(results)}" in proc.stdout, proc.stdout
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--results", type=int, default=RESULTS)
    parser.add_argument("--queries", type=int, default=7_000)
    parser.add_argument("--no-randomization", action="store_true",
                        help="Skip the randomization-test trend.")
    parser.add_argument("--data", type=Path, default=Path("/tmp/rankproof-bench-history"))
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    report: dict[str, dict[str, float]] = {}
    if args.db in ("sqlite", "both"):
        url = str(args.data / f"history-{args.results}x{args.queries}.db")
        print(f"SQLite: {url}")
        _fill(url, args.results, args.queries)
        report["sqlite"] = _measure(url, args.results, not args.no_randomization)
        print("  " + json.dumps(report["sqlite"]))
    if args.db in ("postgresql", "both"):
        sys.path.insert(0, str(ROOT))
        from tests.history._postgres import postgres_cluster

        cluster_gen = postgres_cluster()
        cluster = next(cluster_gen)
        try:
            url = cluster.create()
            print("PostgreSQL: a throwaway cluster")
            _fill(url, args.results, args.queries)
            report["postgresql"] = _measure(url, args.results, not args.no_randomization)
            print("  " + json.dumps(report["postgresql"]))
        finally:
            cluster_gen.close()
    (args.data / f"results-{args.results}x{args.queries}.json").write_text(
        json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
