"""Approximate dense search with FAISS (the ``faiss`` extra), and what it cost in recall.

An approximate index answers faster by not scoring every document, so it
may miss some of the exact top ``k``. rankproof never assumes how many: a
stage searching one (`DenseRetriever` with ``index="faiss-hnsw"`` or
``"faiss-ivf"``) also runs the exact block search on the same queries (all
of them, or a seeded sample) and reports recall@k against it. ``faiss-flat``
scores every document too, but with FAISS's own float32 kernels and tie
order, so it is measured the same way (its recall is 1 up to ties).

Indexes (inner product; the vectors are unit length, so it is cosine):

* ``faiss-flat`` — ``IndexFlatIP``: exhaustive.
* ``faiss-hnsw`` — ``IndexHNSWFlat`` (``m`` links per node, ``ef_construction``,
  ``ef_search`` raised to at least ``k``). The graph is built on one thread,
  so the same vectors always give the same graph (FAISS's parallel insertion
  is not deterministic).
* ``faiss-ivf`` — ``IndexIVFFlat`` over ``nlist`` k-means cells (trained on
  at most 256 vectors per cell, a sample drawn with ``seed``), ``nprobe``
  cells searched.

FAISS keeps every vector in memory: use the exact block search for corpora
past memory.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from importlib.util import find_spec
from typing import Any

import numpy as np
import numpy.typing as npt

from rankproof._errors import ConfigError, MissingExtraError

INDEXES = ("exact", "faiss-flat", "faiss-hnsw", "faiss-ivf")
"""The dense stage's search: exact blocks (the default) or a FAISS index."""
FAISS_EXTRA_HINT = "pip install 'rankproof[faiss]'"
_PARAMS: dict[str, tuple[str, ...]] = {
    "faiss-flat": (),
    "faiss-hnsw": ("m", "ef_construction", "ef_search"),
    "faiss-ivf": ("nlist", "nprobe", "seed"),
}


def faiss_problem(index: str) -> str | None:
    """Why ``index`` cannot be used here (unknown, or FAISS missing), or None."""
    if index not in INDEXES:
        return f"unknown dense index {index!r}; choose one of {', '.join(INDEXES)}"
    if index != "exact" and find_spec("faiss") is None:
        return (f"the dense index {index!r} needs FAISS (the 'faiss' extra), which is not "
                f"installed: {FAISS_EXTRA_HINT}")
    return None


def check_index(index: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate the index name and its parameters (names, positive integers)."""
    if index not in INDEXES:
        raise ConfigError(f"unknown dense index {index!r}; choose one of {', '.join(INDEXES)}")
    given = dict(params or {})
    allowed = _PARAMS.get(index, ())
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise ConfigError(f"dense index {index!r} takes no parameter(s) {unknown}"
                          + (f"; it takes {', '.join(allowed)}" if allowed else ""))
    for name, value in given.items():
        low = 0 if name == "seed" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(f"dense index parameter {name!r} must be an integer >= {low}, "
                              f"got {value!r}")
    return given


def _faiss() -> Any:
    try:
        import faiss
    except ImportError:
        raise MissingExtraError(f"an approximate dense index needs FAISS: "
                                f"{FAISS_EXTRA_HINT}") from None
    return faiss


class FaissIndex:
    """One FAISS index over a corpus, built from its blocks (see the module docstring)."""

    def __init__(self, kind: str, dim: int, n: int, params: Mapping[str, Any] | None = None
                 ) -> None:
        self.kind = kind
        self.faiss = _faiss()
        p = check_index(kind, params)
        if kind == "faiss-hnsw":
            p = {"m": 32, "ef_construction": 200, "ef_search": 128, **p}
        elif kind == "faiss-ivf":
            nlist = p.get("nlist") or max(1, min(int(4 * math.sqrt(n)), n // 39 or 1))
            p = {"nlist": nlist, "nprobe": min(nlist, max(1, nlist // 8)), "seed": 0, **p}
        self.params = p
        self.dim = dim
        self.n = n
        f = self.faiss
        if kind == "faiss-flat":
            self.index = f.IndexFlatIP(dim)
        elif kind == "faiss-hnsw":
            self.index = f.IndexHNSWFlat(dim, p["m"], f.METRIC_INNER_PRODUCT)
            self.index.hnsw.efConstruction = p["ef_construction"]
        elif kind == "faiss-ivf":
            self.quantizer = f.IndexFlatIP(dim)
            self.index = f.IndexIVFFlat(self.quantizer, dim, p["nlist"], f.METRIC_INNER_PRODUCT)
            self.index.cp.seed = p["seed"]
        else:
            raise ConfigError(f"{kind!r} is not a FAISS index")

    def build(self, blocks: Iterable[tuple[int, npt.NDArray[np.float32]]],
              sample: Any = None) -> None:
        """Add the corpus block by block (``sample(rows)``: training rows for IVF)."""
        if self.kind == "faiss-ivf":
            rng = np.random.default_rng(self.params["seed"])
            size = min(self.n, 256 * self.params["nlist"])
            rows = np.sort(rng.choice(self.n, size=size, replace=False))
            self.index.train(np.ascontiguousarray(sample(rows), dtype=np.float32))
        threads = self.faiss.omp_get_max_threads()
        if self.kind == "faiss-hnsw":
            self.faiss.omp_set_num_threads(1)  # a deterministic graph
        try:
            for _, rows_ in blocks:
                self.index.add(np.ascontiguousarray(rows_, dtype=np.float32))
        finally:
            self.faiss.omp_set_num_threads(threads)

    def search(self, queries: npt.NDArray[np.float32], k: int
               ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """FAISS's ``(ids, scores)`` per query row; ``-1`` ids where it found fewer than k."""
        if self.kind == "faiss-hnsw":
            self.index.hnsw.efSearch = max(self.params["ef_search"], k)
        elif self.kind == "faiss-ivf":
            self.index.nprobe = self.params["nprobe"]
        scores, ids = self.index.search(np.ascontiguousarray(queries, dtype=np.float32),
                                        min(k, self.n))
        return ids.astype(np.int64), scores.astype(np.float32)

    def describe(self, k: int) -> dict[str, Any]:
        """The index and the parameters a search with ``k`` used."""
        params = dict(self.params)
        if self.kind == "faiss-hnsw":
            params["ef_search"] = max(params["ef_search"], k)
        return {"index": self.kind, **params}
