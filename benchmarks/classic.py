"""BM25 on Cranfield, CISI and Vaswani: rankproof vs rank-bm25, against published figures.

Usage::

    .venv/bin/python benchmarks/classic.py                 # all three collections
    .venv/bin/python benchmarks/classic.py vaswani --out /tmp/bm25.json

For each collection it prints, side by side:

* **eval**: the bm25 stage of ``rankproof eval --collection NAME --granularity
  document`` (800-character chunks with 100 overlap, a document ranked at its
  best chunk, 100 documents per query) — the numbers in docs/collections.md;
* **doc**: plain document BM25 through rankproof (each document one unit),
  1,000 documents per query — the set-up published figures use (MAP = AP over
  1,000);
* **rank-bm25**: ``BM25Okapi(k1=0.9, b=0.4)`` on the same documents, tokens and
  depth (Robertson idf floored at 0.25 × mean idf; see the test module);
* **rank-bm25 (Lucene idf)**: the same with ``_calc_idf`` replaced by Lucene's
  ``ln(1 + (N - df + 0.5) / (df + 0.5))`` — only float32 vs float64 scoring
  and the empty documents then separate it from rankproof.

Every system gets rankproof's analyser (lower-case, ``\\w\\w+``, bm25s'
English stop words, Snowball English stemmer), so the differences are BM25's
alone. Measures are computed by rankproof's evaluator (trec_eval semantics,
``-c``; its agreement with pytrec_eval on these runs is tested in
tests/harness/test_collections.py). Times are wall clock, one repeat.
"""

from __future__ import annotations

# This file is named like the standard library's ``collections``; run as a script,
# its folder is sys.path[0] and would shadow it for every later import. Drop the
# folder first (``os`` and ``sys`` are loaded at start-up, before any shadowing).
import os
import sys

if sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.path.dirname(
        os.path.abspath(__file__)):
    del sys.path[0]

import argparse
import json
import math
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
NAMES = ("cranfield", "cisi", "vaswani")
MEASURES = ("AP", "nDCG@10", "R@100")
K1, B = 0.9, 0.4
DOC_DEPTH = 1000


def _evaluate(qrels: Any, run: Any) -> dict[str, float]:
    from rankproof.measures import evaluate

    pq = evaluate(qrels, run, MEASURES)
    return {m: float(pq.mean(m)) for m in MEASURES}


def eval_stage(name: str, root: Path) -> dict[str, Any]:
    """The bm25 stage exactly as ``rankproof eval --collection NAME --granularity document``."""
    from rankproof.harness import EvalConfig, collection_inputs, run_experiment

    t0 = time.perf_counter()
    inputs = collection_inputs(name, root, "document", 800, 100)
    config = EvalConfig(stages=("bm25",), measures=MEASURES, granularity="document")
    report, _ = run_experiment(inputs, config)
    return {**report.stage("bm25").means, "seconds": time.perf_counter() - t0,
            "units": len(inputs.corpus.chunks)}


def _run_from_scores(ids: list[str], per_query: dict[str, Any], k: int) -> Any:
    """Top ``k`` positive scores per query (ties: larger id first) as a rankproof Run."""
    import numpy as np

    from rankproof.data import Run

    keys = np.argsort(np.argsort(np.array(ids, dtype=object)))  # rank of each id
    q_col: list[str] = []
    d_col: list[str] = []
    s_col: list[float] = []
    for qid, scores in per_query.items():
        pos = np.flatnonzero(scores > 0)
        order = pos[np.lexsort((-keys[pos], -scores[pos]))][:k]
        q_col += [qid] * len(order)
        d_col += [ids[i] for i in order]
        s_col += scores[order].tolist()
    return Run.from_columns(q_col, d_col, np.array(s_col, dtype=np.float64), name="rank-bm25")


def document_bm25(name: str, root: Path) -> dict[str, dict[str, Any]]:
    """rankproof and rank-bm25 (both idfs) on whole documents, 1,000 per query."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    from rankproof.corpus import load_collection
    from rankproof.retrieval import BM25Retriever
    from rankproof.retrieval._bm25 import Analyzer

    collection = load_collection(name, root)
    docs = [(d.id, d.text) for d in collection.documents if d.text]
    out: dict[str, dict[str, Any]] = {}

    t0 = time.perf_counter()
    r = BM25Retriever(k1=K1, b=B)
    r.index(docs)
    run = r.search(collection.queries, k=DOC_DEPTH).run
    out["doc"] = {**_evaluate(collection.qrels, run), "seconds": time.perf_counter() - t0,
                  "units": len(docs)}

    class LuceneIdf(BM25Okapi):  # type: ignore[misc]
        def _calc_idf(self, nd: dict[str, int]) -> None:
            n = self.corpus_size
            self.idf = {w: math.log(1 + (n - df + 0.5) / (df + 0.5)) for w, df in nd.items()}

    analyzer = Analyzer()
    ids = [d for d, _ in docs]
    for label, cls in (("rank-bm25", BM25Okapi), ("rank-bm25 (Lucene idf)", LuceneIdf)):
        t0 = time.perf_counter()
        model = cls([analyzer(t) for _, t in docs], k1=K1, b=B)
        scores = {q: np.asarray(model.get_scores(analyzer(t)), dtype=np.float64)
                  for q, t in collection.queries}
        run = _run_from_scores(ids, scores, DOC_DEPTH)
        out[label] = {**_evaluate(collection.qrels, run), "seconds": time.perf_counter() - t0,
                      "units": len(docs)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"collections (default: {' '.join(NAMES)})")
    parser.add_argument("--data-root", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, help="write the results here as JSON")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(NAMES))
    if unknown:
        parser.error(f"unknown collection(s) {unknown}; choose from {', '.join(NAMES)}")
    results: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "loadavg": os.getloadavg()},
        "k1": K1, "b": B, "collections": {},
    }
    print(f"{'collection':<10} {'system':<24} {'units':>6} "
          + " ".join(f"{m:>8}" for m in MEASURES) + f" {'seconds':>8}")
    for name in args.names or NAMES:
        rows = {"eval: 800-char chunks": eval_stage(name, args.data_root),
                **document_bm25(name, args.data_root)}
        results["collections"][name] = rows
        for label, row in rows.items():
            print(f"{name:<10} {label:<24.24} {row['units']:>6} "
                  + " ".join(f"{row[m]:>8.4f}" for m in MEASURES) + f" {row['seconds']:>8.2f}")
        doc, okapi = rows["doc"]["AP"], rows["rank-bm25"]["AP"]
        print(f"{name:<10} AP rankproof - rank-bm25 (documents, depth {DOC_DEPTH}): "
              f"{doc - okapi:+.4f}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=args.out.parent, delete=False,
                                         suffix=".tmp") as fh:
            json.dump(results, fh, indent=2)
            fh.write("\n")
        os.replace(fh.name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
