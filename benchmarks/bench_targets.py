"""Benchmark: 10,000 HTTP-target queries against a local test server, local vs Ray workers.

The server is a separate process (``python benchmarks/bench_targets.py
--serve``): a `ThreadingHTTPServer` on 127.0.0.1 that answers each POSTed
``{"query", "id"}`` with five ids after sleeping ``--delay-ms`` (2 ms by
default: a fast service; the sleep stands for the service's own work, so the
client's concurrency is what decides throughput). It counts the most requests
it had in flight at once, and every row below reads and resets that count: the
bound on concurrency is checked, not assumed.

Rows, all on the same server, the same 10,000 cases and the same
``max_concurrency`` k (8 by default), side by side in one run:

* ``unsharded``: ``rankproof.targets.run`` without an executor (today's path:
  one ``invoke_many`` with k threads);
* ``local-1``: sharded (``--shard-size``, 256), one local worker, checkpointed
  (the default): one shard at a time with k requests in flight;
* ``local-1 no ck``: the same with ``checkpoint=False`` (what checkpoints cost);
* ``local-2``: two worker threads, k/2 requests each;
* ``ray-2 cold`` / ``ray-2 warm``: ``RayExecutor(workers=2)`` on a local
  cluster it starts (2 CPUs; start-up timed apart); 2 × 2 tasks in flight,
  k/4 requests each, the target rebuilt in each task from its settings. The
  cold row includes starting Ray's worker processes and importing rankproof
  there; the warm row reuses them.

Every row's per-case values must equal the unsharded row's or the script
exits 1. Throughput is queries per second of the whole ``run`` call
(invocation, checkpoint writes, metrics); ratios are against ``local-1``.
The machine has 2 shared cores that the server, the client and Ray's
processes share, so the figures are throughput per worker on this machine
and its load (printed), not a property of the engines.

Writes ``bench-data/targets-results.json``.

Run: ``.venv/bin/python benchmarks/bench_targets.py`` (``--queries 2000`` for
a quick look; ``--no-ray`` without the ray extra).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# -- the server (a child process) ---------------------------------------------

def serve(delay_s: float) -> None:
    lock = threading.Lock()
    state = {"in_flight": 0, "max": 0, "hits": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two writes; with Nagle's algorithm on, the body waits
        # for the client's delayed ACK (40 ms on Linux). Real servers set TCP_NODELAY too.
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, obj: Any) -> None:
            data = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # /stats: read and reset the counters
            usage = resource.getrusage(resource.RUSAGE_SELF)
            with lock:
                out = {"max_in_flight": state["max"], "hits": state["hits"],
                       "cpu_s": usage.ru_utime + usage.ru_stime}
                state["max"] = 0
                state["hits"] = 0
            self._send(out)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                state["in_flight"] += 1
                state["hits"] += 1
                state["max"] = max(state["max"], state["in_flight"])
            try:
                time.sleep(delay_s)
                n = int(body["id"][1:])
            finally:
                with lock:
                    state["in_flight"] -= 1
            self._send({"ids": [f"d{(n * 7 + k) % 101}" for k in range(5)]})

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

        def handle_error(self, request: object, client_address: object) -> None:
            pass

    httpd = Server(("127.0.0.1", 0), Handler)
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()


# -- the client ---------------------------------------------------------------

def stats(url: str) -> dict[str, Any]:
    import httpx

    return dict(httpx.get(url.rsplit("/", 1)[0] + "/stats", timeout=5).json())


def cpu_s() -> float:
    """This process's CPU time (all its threads), in seconds."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--delay-ms", type=float, default=2.0)
    parser.add_argument("--max-concurrency", type=int, default=8)
    parser.add_argument("--shard-size", type=int, default=256)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--out-dir", type=Path, default=Path("bench-data"))
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.delay_ms / 1000.0)
        return 0

    import tempfile

    os.environ.setdefault("RANKPROOF_CACHE", tempfile.mkdtemp(prefix="bench-targets-cache-"))
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                "all_proxy"):
        os.environ.pop(var, None)  # 127.0.0.1 goes direct (Ray's workers inherit this)

    from rankproof.engine import Executor, LocalExecutor
    from rankproof.targets import Case, HttpTarget, RunResult, run, shard_plan

    server = subprocess.Popen([sys.executable, __file__, "--serve", "--delay-ms",
                               str(args.delay_ms)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/search"
        cases = [Case(id=f"q{i:06d}", query=f"query {i}", relevant=(f"d{i % 101}",))
                 for i in range(args.queries)]
        metrics = ["nDCG@10", "RR", "R@5"]
        k = args.max_concurrency
        rows: list[dict[str, Any]] = []
        reference: RunResult | None = None

        def record(label: str, executor: Executor | None, extra: dict[str, Any],
                   checkpoint: bool = True) -> None:
            nonlocal reference
            with HttpTarget(url, "bench", max_concurrency=k) as target:
                plan = shard_plan(target, executor) if executor is not None else None
                before = stats(url)
                kw: dict[str, Any] = {}
                if executor is not None:
                    kw = {"executor": executor, "shard_size": args.shard_size}
                    if not checkpoint:
                        kw["checkpoint"] = False
                cpu0 = cpu_s()
                seconds, result = timed(lambda: run("bench", target, cases, metrics, **kw))
                client_cpu = cpu_s() - cpu0
            seen = stats(url)
            if reference is None:
                reference = result
            elif [dict(r.values) for r in result.rows] != [dict(r.values) for r in
                                                            reference.rows]:
                raise SystemExit(f"{label}: per-case values differ from the unsharded run")
            row = {"label": label, "seconds": seconds, "queries_per_s": args.queries / seconds,
                   "requests": seen["hits"], "max_in_flight_seen": seen["max_in_flight"],
                   "planned_in_flight": plan.max_in_flight if plan else k,
                   "lanes": plan.lanes if plan else 1,
                   "per_shard": plan.per_shard if plan else k,
                   "server_cpu_ms_per_query": 1000 * (seen["cpu_s"] - before["cpu_s"])
                   / args.queries,
                   # In this process only: Ray's workers are other processes.
                   "driver_cpu_ms_per_query": 1000 * client_cpu / args.queries, **extra}
            if seen["max_in_flight"] > k:
                raise SystemExit(f"{label}: {seen['max_in_flight']} requests in flight, over "
                                 f"max_concurrency {k}")
            rows.append(row)
            print(f"  {label:<14} {seconds:7.2f} s  {row['queries_per_s']:8.0f} q/s  "
                  f"in flight ≤ {row['planned_in_flight']} (seen {seen['max_in_flight']}); "
                  f"CPU per query: server {row['server_cpu_ms_per_query']:.2f} ms, this "
                  f"process {row['driver_cpu_ms_per_query']:.2f} ms", flush=True)

        print(f"{args.queries:,} queries, {args.delay_ms:g} ms per request at the server, "
              f"max_concurrency {k}, shards of {args.shard_size}; load average "
              f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        record("unsharded", None, {"engine": "none", "workers": 1})
        record("local-1", LocalExecutor(1), {"engine": "local", "workers": 1})
        record("local-1 no ck", LocalExecutor(1), {"engine": "local", "workers": 1}, False)
        record("local-2", LocalExecutor(2), {"engine": "local", "workers": 2})
        ray_start = None
        if not args.no_ray:
            from rankproof.engine import RayExecutor

            ray_start, ray = timed(lambda: RayExecutor(workers=2))
            print(f"  (Ray local cluster started in {ray_start:.2f} s)")
            try:
                record("ray-2 cold", ray, {"engine": "ray", "workers": 2})
                record("ray-2 warm", ray, {"engine": "ray", "workers": 2})
            finally:
                ray.close()
    finally:
        server.terminate()
        server.wait(timeout=10)

    base = next(r for r in rows if r["label"] == "local-1")["queries_per_s"]
    print(f"\n{'row':<14} {'q/s':>8} {'vs local-1':>11} {'q/s per worker':>15} "
          f"{'in flight (plan/seen)':>22} {'server CPU ms/q':>16} {'driver CPU ms/q':>16}")
    for r in rows:
        r["ratio_vs_local_1"] = r["queries_per_s"] / base
        print(f"{r['label']:<14} {r['queries_per_s']:8.0f} {r['ratio_vs_local_1']:10.2f}× "
              f"{r['queries_per_s'] / r['workers']:15.0f} "
              f"{str(r['planned_in_flight']) + ' / ' + str(r['max_in_flight_seen']):>22} "
              f"{r['server_cpu_ms_per_query']:16.2f} {r['driver_cpu_ms_per_query']:16.2f}")
    from rankproof._manifest import provenance

    out = args.out_dir / "targets-results.json"
    args.out_dir.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": "targets", "queries": args.queries, "delay_ms": args.delay_ms,
              "max_concurrency": k, "shard_size": args.shard_size,
              "ray_start_seconds": ray_start, "load_average": os.getloadavg()[0],
              "cpus": os.cpu_count(), "rows": rows,
              "provenance": provenance(command=sys.argv)}
    out.write_text(json.dumps(result, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
