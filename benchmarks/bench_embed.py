"""Embedding throughput with the sharded cache cold and warm; exact block search vs FAISS.

Usage::

    .venv/bin/python benchmarks/bench_embed.py                       # everything
    .venv/bin/python benchmarks/bench_embed.py --hashing-chunks 20000 --minilm-chunks 500
    .venv/bin/python benchmarks/bench_embed.py --no-minilm --no-ray --no-search

**Embedding** (`DenseRetriever.index` over a fresh cache folder, then again over
the same folder): chunks per second with the cache **cold** (every chunk
embedded, in shards of ``--shard-size``, each written as it finishes) and
**warm** (every chunk found: content keys hashed, shard files checked —
checksum included, the per-process memo of checked shards cleared first, as
in a new process — and gathered in corpus order). Two embedders:

* the hashing test double on a synthetic corpus of ``--hashing-chunks``
  chunks (40 Zipf-drawn words each); a fresh embedder per run, so no run
  inherits another's token cache;
* all-MiniLM-L6-v2 on the first ``--minilm-chunks`` Vaswani abstracts, in
  shards of ``--minilm-shard-size`` (so that two workers get several each).

Each through ``local`` with 1 worker (in this process), ``local`` with 2
workers (spawned processes: their start-up and, for MiniLM, the model load
are part of the cold time) and, for the hashing double, ``ray`` with 2 workers
on a local cluster (its start-up excluded, timed apart). The vectors of every
engine are compared with the 1-worker ones (bit for bit for hashing; max
absolute difference for MiniLM).

**Search** over ``--search-docs`` clustered random unit vectors (``--dim``; a
document is one of 1,000 random centres plus Gaussian noise) with
``--queries`` queries, top ``--k``: the exact block search for the batch
(`block_search`, `exact_search`'s query blocks), the exact search one query at
a time (what the dense stage does per timed query), the same from memory-mapped
shard files (the stage's past-memory path), and FAISS flat, HNSW and IVF one
query at a time; queries per second and recall@k against the exact top k.

Results go to ``--out`` (JSON, atomically). The machine is shared: the load
average before and after is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
VASWANI = REPO.parent / "shared" / "data" / "vaswani"
sys.path.insert(0, str(REPO / "src"))


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def synthetic_corpus(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    words = rng.zipf(1.3, size=(n, 40)) % 50_000
    return [(f"c{i:07d}", " ".join(f"w{w}" for w in row)) for i, row in enumerate(words)]


def vaswani_chunks(n: int) -> list[tuple[str, str]]:
    text = (VASWANI / "doc-text.trec").read_text(encoding="utf-8")
    docs = [(m.group(1).strip(), " ".join(m.group(2).split())) for m in re.finditer(
        r"<DOC>\s*<DOCNO>(.*?)</DOCNO>(.*?)</DOC>", text, re.S)]
    return docs[:n]


def _executor(engine: str, workers: int) -> Any:
    from rankproof.engine import LocalExecutor, RayExecutor

    if engine == "local":
        return None if workers == 1 else LocalExecutor(workers=workers)
    return RayExecutor(workers=workers)


def embed_round(make_embedder: Any, docs: list[tuple[str, str]], engine: str, workers: int,
                shard_size: int, batch_size: int) -> dict[str, Any]:
    """Cold then warm indexing of ``docs`` in a fresh cache folder; chunks/s and vectors."""
    import rankproof.retrieval._shards as shards
    from rankproof.retrieval import DenseRetriever

    t0 = time.perf_counter()
    executor = _executor(engine, workers)
    start_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as tmp:
        try:
            cold = DenseRetriever(make_embedder(), cache_dir=tmp, shard_size=shard_size,
                                  batch_size=batch_size, executor=executor)
            t = time.perf_counter()
            cold.index(docs)
            cold_s = time.perf_counter() - t
        finally:
            if executor is not None:
                executor.close()
        shards._VERIFIED.clear()  # a new process has checked nothing yet
        warm = DenseRetriever(make_embedder(), cache_dir=tmp, shard_size=shard_size,
                              batch_size=batch_size)
        t = time.perf_counter()
        warm.index(docs)
        warm_s = time.perf_counter() - t
        assert warm.cache_hit is True
        vectors = cold.vectors.copy()
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*.npy"))
    stats = cold.embed_stats
    return {"engine": engine, "workers": workers, "chunks": len(docs),
            "engine_start_s": round(start_s, 3) if engine == "ray" else 0.0,
            "cold_s": round(cold_s, 3), "warm_s": round(warm_s, 3),
            "cold_chunks_per_s": round(len(docs) / cold_s, 1),
            "warm_chunks_per_s": round(len(docs) / warm_s, 1),
            "shards": stats.shards_written if stats else None, "cache_bytes": size,
            "_vectors": vectors}


def embedding(args: argparse.Namespace) -> list[dict[str, Any]]:
    from rankproof.retrieval import HashingEmbedder

    rows: list[dict[str, Any]] = []
    plans: list[tuple[str, Any, list[tuple[str, str]], list[tuple[str, int]]]] = []
    if args.hashing_chunks:
        engines = [("local", 1), ("local", 2)] + ([("ray", 2)] if args.ray else [])
        plans.append(("hashing", HashingEmbedder, synthetic_corpus(args.hashing_chunks),
                      engines))
    if args.minilm_chunks:
        from rankproof.retrieval import SentenceTransformerEmbedder

        model = SentenceTransformerEmbedder()  # loaded once; reused by the in-process runs

        plans.append(("minilm", lambda: model, vaswani_chunks(args.minilm_chunks),
                      [("local", 1), ("local", 2)]))
    for name, make, docs, engines in plans:
        shard_size = args.shard_size if name == "hashing" else args.minilm_shard_size
        base: np.ndarray | None = None
        for engine, workers in engines:
            print(f"embedding: {name}, {len(docs):,} chunks, {engine} x{workers} ...",
                  file=sys.stderr, flush=True)
            row = embed_round(make, docs, engine, workers, shard_size, args.batch_size)
            row["shard_size"] = shard_size
            vecs = row.pop("_vectors")
            if base is None:
                base = vecs
            row["embedder"] = name
            row["identical_to_1_worker"] = bool(np.array_equal(vecs, base))
            row["max_abs_diff_vs_1_worker"] = float(np.abs(vecs - base).max())
            rows.append(row)
    return rows


def search(args: argparse.Namespace) -> list[dict[str, Any]]:
    from rankproof.data import tie_keys
    from rankproof.retrieval import block_search, exact_search
    from rankproof.retrieval._faiss import FaissIndex
    from rankproof.retrieval._search import matrix_blocks, recall_against
    from rankproof.retrieval._shards import CorpusVectors, ShardStore

    rng = np.random.default_rng(1)
    n, dim, k = args.search_docs, args.dim, args.k
    # Clustered, as embeddings are (uniform random vectors are every index's worst case):
    # 1,000 topic centres, each document near one of them.
    centres = rng.normal(size=(1000, dim))
    docs = (centres[rng.integers(0, 1000, size=n)] + rng.normal(size=(n, dim))).astype(
        np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = docs[rng.integers(0, n, size=args.queries)] + 0.5 * rng.normal(
        size=(args.queries, dim)).astype(np.float32) / np.sqrt(dim)
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    keys = tie_keys([f"d{i:08d}" for i in range(n)])
    rows: list[dict[str, Any]] = []

    def add(method: str, seconds: float, ids: list[np.ndarray], exact_ids: list[np.ndarray],
            build_s: float = 0.0, **extra: Any) -> None:
        rows.append({"method": method, "docs": n, "dim": dim, "queries": len(queries), "k": k,
                     "build_s": round(build_s, 3), "search_s": round(seconds, 3),
                     "queries_per_s": round(len(queries) / seconds, 1),
                     "recall_at_k": round(recall_against(ids, exact_ids), 4), **extra})
        print(f"search: {method}: {len(queries) / seconds:,.1f} q/s", file=sys.stderr, flush=True)

    t = time.perf_counter()
    batch = block_search(queries, matrix_blocks(docs, 16384), n, k, keys)
    exact_ids = [i for i, _ in batch]
    add("exact blocks, batch (memory)", time.perf_counter() - t, exact_ids, exact_ids)
    t = time.perf_counter()
    single = [exact_search(queries[i:i + 1], docs, k, keys)[0][0] for i in range(len(queries))]
    add("exact, one query at a time (memory)", time.perf_counter() - t, single, exact_ids)
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        store = ShardStore(Path(tmp), dim)
        key_arr = np.array([i.to_bytes(16, "little") for i in range(n)], dtype="S16")
        for s in range(0, n, 4096):
            store.add(key_arr[s:s + 4096], docs[s:s + 4096])
        store.rescan()
        where = store.lookup(key_arr)
        store.verify(np.unique(where[:, 0]).tolist())
        corpus = CorpusVectors(n, dim, store=store, where=where)
        t = time.perf_counter()
        disk = block_search(queries, corpus.blocks(16384), n, k, keys, queries_per_product=1)
        add("exact blocks from shard files, one pass (mmap)", time.perf_counter() - t,
            [i for i, _ in disk], exact_ids)
        del corpus, store
    for kind, params in (("faiss-flat", {}), ("faiss-hnsw", {}), ("faiss-ivf", {})):
        t = time.perf_counter()
        index = FaissIndex(kind, dim, n, params)
        index.build(matrix_blocks(docs, 16384), sample=lambda r: docs[r])
        build_s = time.perf_counter() - t
        t = time.perf_counter()
        found = []
        for i in range(len(queries)):
            ids, _ = index.search(queries[i:i + 1], k)
            found.append(ids[0][ids[0] >= 0])
        add(f"{kind}, one query at a time", time.perf_counter() - t, found, exact_ids,
            build_s=build_s, params=index.describe(k))
    return rows


def _table(rows: list[dict[str, Any]], cols: list[str]) -> str:
    widths = [max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))]
    lines += ["  ".join(str(r.get(c, "")).ljust(w) for c, w in zip(cols, widths, strict=True))
              for r in rows]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hashing-chunks", type=int, default=50_000)
    p.add_argument("--minilm-chunks", type=int, default=2_000)
    p.add_argument("--shard-size", type=int, default=4096)
    p.add_argument("--minilm-shard-size", type=int, default=250,
                   help="MiniLM's shards: small enough that 2 workers get several each")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--search-docs", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--no-minilm", dest="minilm", action="store_false")
    p.add_argument("--no-ray", dest="ray", action="store_false")
    p.add_argument("--no-search", dest="search", action="store_false")
    p.add_argument("--out", type=Path, default=REPO / "bench-data" / "embed-results.json")
    args = p.parse_args()
    if not args.minilm:
        args.minilm_chunks = 0
    if args.ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            args.ray = False
    load_before = _load()
    started = time.perf_counter()
    embed_rows = embedding(args)
    search_rows = search(args) if args.search else []
    result = {
        "benchmark": "embed", "python": platform.python_version(),
        "machine": platform.machine(), "cpus": os.cpu_count(),
        "load_before": load_before, "load_after": _load(),
        "wall_s": round(time.perf_counter() - started, 1), "args": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "embedding": embed_rows, "search": search_rows,
    }
    for r in embed_rows:
        base = next(b for b in embed_rows if b["embedder"] == r["embedder"]
                    and b["workers"] == 1)
        r["cold_speedup_vs_1_worker"] = round(r["cold_chunks_per_s"]
                                              / base["cold_chunks_per_s"], 2)
        r["warm_over_cold"] = round(r["warm_chunks_per_s"] / r["cold_chunks_per_s"], 1)
    if search_rows:
        exact = search_rows[0]["queries_per_s"]
        for r in search_rows:
            r["speed_vs_exact_batch"] = round(r["queries_per_s"] / exact, 2)
    print(_table(embed_rows, ["embedder", "engine", "workers", "chunks", "cold_chunks_per_s",
                              "warm_chunks_per_s", "warm_over_cold", "cold_speedup_vs_1_worker",
                              "engine_start_s", "identical_to_1_worker",
                              "max_abs_diff_vs_1_worker"]))
    if search_rows:
        print()
        print(_table(search_rows, ["method", "docs", "queries", "k", "build_s",
                                   "queries_per_s", "speed_vs_exact_batch", "recall_at_k"]))
    print(f"\nload average before {load_before}, after {result['load_after']} "
          f"({os.cpu_count()} CPUs)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=args.out.parent, prefix=f".{args.out.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(result, fh, indent=2)
    os.replace(tmp, args.out)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
