"""Two runs and one qrels at the shape of query logs: many topics, few documents each.

Usage::

    .venv/bin/python benchmarks/gen_million.py --out-dir /tmp/rp-million   # 1,000,000 x 10

Writes ``qrels.txt`` (one relevant document per topic) and ``a.trec`` / ``b.trec``
(``--depth`` documents per topic, the same topics, scores strictly decreasing within a
topic). Run B differs from A on about a tenth of the topics, where the relevant document
moves up or down a few ranks: a small, real difference, as two versions of one system
have. Files are written atomically and kept (keyed on their parameters in the folder
name), never inside the repository.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == _HERE:
    sys.path.append(sys.path.pop(0))

import argparse  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

from _common import MSMARCO_DOCS, _distinct_rows, _ids, _write_lines  # noqa: E402


@dataclass(frozen=True)
class MillionPaths:
    qrels: Path
    a: Path
    b: Path


def million_paths(out_dir: Path, topics: int, depth: int, seed: int) -> MillionPaths:
    folder = out_dir / f"t{topics}-d{depth}-s{seed}"
    return MillionPaths(qrels=folder / "qrels.txt", a=folder / "a.trec", b=folder / "b.trec")


def write_million(out_dir: Path, topics: int = 1_000_000, depth: int = 10,
                  seed: int = 0) -> MillionPaths:
    """Write (unless present) the qrels and the two runs; return their paths."""
    paths = million_paths(out_dir, topics, depth, seed)
    if paths.qrels.exists() and paths.a.exists() and paths.b.exists():
        return paths
    import numpy as np
    import pyarrow.compute as pc

    rng = np.random.default_rng(seed)
    qids = rng.choice(10 * topics, size=topics, replace=False).astype(np.int64)
    docids = _distinct_rows(rng, (topics, depth), MSMARCO_DOCS)
    # The relevant document: at a geometric rank for most topics, absent for a fifth.
    rel_rank = np.minimum(rng.geometric(0.3, size=topics) - 1, depth - 1)
    retrieved = rng.random(topics) < 0.8
    rel_doc = np.where(retrieved, docids[np.arange(topics), rel_rank],
                       rng.integers(0, MSMARCO_DOCS, size=topics, dtype=np.int64))
    qrel_lines = pc.binary_join_element_wise(_ids(qids), "0", _ids(rel_doc), "1\n", " ")
    _write_lines(paths.qrels, qrel_lines)

    rank = _ids(np.tile(np.arange(1, depth + 1, dtype=np.int64), topics))
    qid_col = _ids(np.repeat(qids, depth))
    for path, moved in ((paths.a, None), (paths.b, rng.random(topics) < 0.1)):
        order = docids.copy()
        if moved is not None:
            # B: on a tenth of the topics, the relevant document swaps with a neighbour
            # (up slightly more often than down).
            rows = np.flatnonzero(moved & retrieved)
            step = np.where(rng.random(len(rows)) < 0.55, -1, 1)
            src = rel_rank[rows]
            dst = np.clip(src + step, 0, depth - 1)
            a_vals, b_vals = order[rows, src].copy(), order[rows, dst].copy()
            order[rows, src], order[rows, dst] = b_vals, a_vals
        gaps = rng.integers(1, 40_000, size=(topics, depth), dtype=np.int64)
        units = 30_000_000 - np.cumsum(gaps, axis=1)
        whole = _ids((units // 1_000_000).ravel())
        frac = pc.utf8_lpad(_ids((units % 1_000_000).ravel()), 6, "0")
        score = pc.binary_join_element_wise(whole, frac, ".")
        lines = pc.binary_join_element_wise(qid_col, "Q0", _ids(order.ravel()), rank, score,
                                            path.stem + "\n", " ")
        _write_lines(path, lines)
    return paths


def add_million_arguments(ap: argparse.ArgumentParser, out_dir: Path) -> None:
    """``--out-dir``, ``--topics`` and ``--depth``: where `write_million` writes, and the shape
    (the scripts that generate this data take the same three)."""
    ap.add_argument("--out-dir", type=Path, default=out_dir)
    ap.add_argument("--topics", type=int, default=1_000_000)
    ap.add_argument("--depth", type=int, default=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_million_arguments(ap, Path("/tmp/rankproof-million"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    paths = write_million(args.out_dir, args.topics, args.depth, args.seed)
    print(paths.qrels, paths.a, paths.b)


if __name__ == "__main__":
    main()
