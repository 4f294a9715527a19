"""Rank fusion: RRF, CombSUM and CombMNZ over runs, and the stage that fuses prior stages.

Definitions (per query; ``w_i`` = weight of run ``i``, 1 by default):

* **RRF** (Cormack, Clarke & Büttcher, SIGIR 2009):
  ``score(d) = sum_i w_i / (k + rank_i(d))`` over the runs that retrieved
  ``d`` within their first ``depth`` ranks; ``rank_i`` is 1-based.
* **CombSUM** (Fox & Shaw, TREC-2 1994): ``score(d) = sum_i w_i * s_i(d)``
  where ``s_i`` is run ``i``'s score after the optional normalisation.
* **CombMNZ**: CombSUM times the number of runs that retrieved ``d``.

Which rank a document holds in an input run (``order``):

* ``"score"`` (default) — trec_eval's ordering of that run: score
  descending, ties broken by docid descending, byte-wise
  (`rankproof.data.ranked_order`); ``rank`` = 1-based position. The
  run's rank column is ignored, as everywhere in rankproof by default.
* ``"rank"`` — the run's rank column **as written** decides the order and
  its values are the RRF ranks. This is pyserini's fusion without
  ``--resort`` (its fixtures depend on it: a document written at rank 3 of a
  two-document list contributes 1/(k+3)).

``depth`` keeps each run's first ``depth`` documents per query under that
order; normalisation statistics are taken over those documents only.
Normalisation (CombSUM/CombMNZ only; per run and query): ``"minmax"`` maps
to ``(s - min) / (max - min)``, and a list whose scores are all equal to 1.0
(pyserini's choice); ``"zscore"`` maps to ``(s - mean) / sd`` (population
sd), and an all-equal list to 0.0.

**Missing documents** contribute nothing: a document absent from a run (or
beyond its ``depth``) adds 0 to the sum and does not count towards CombMNZ's
multiplier. **Missing queries**: a query present in only some runs is fused
from those runs alone. Contributions are added run by run in the order the
runs are given, so the floating-point result is reproducible (and equals
pyserini's on its fixtures).

**Output**: one `Run` whose rows are in trec_eval's order of the fused score
(ties broken by docid descending; pyserini breaks them ascending, which only
matters for exactly tied fused scores) with a rank column 1..n; ``limit``
truncates each query to that many documents in that order. Queries appear in
first-seen order across the input runs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rankproof._errors import InputError
from rankproof.data import Run, ranked_order, to_numpy
from rankproof.retrieval._base import (
    Docs,
    Queries,
    Retriever,
    StageOutput,
    check_queries,
    merge_notes,
    nothing_retrieved,
    retrieved_nothing,
)

FusionMethod = Literal["rrf", "combsum", "combmnz"]
Norm = Literal["minmax", "zscore"]
Order = Literal["score", "rank"]

_METHODS = ("rrf", "combsum", "combmnz")
_NORMS = ("minmax", "zscore")


def _check_fuse_args(runs: Sequence[Run], method: str, norm: str | None, k: float, depth: int,
                     weights: Sequence[float] | None, order: str, limit: int | None) -> None:
    if isinstance(runs, Run) or not isinstance(runs, Sequence):
        raise TypeError(f"runs must be a sequence of Run, got {type(runs).__name__}")
    if len(runs) < 1:
        raise InputError("fuse needs at least one run, got none")
    for i, run in enumerate(runs):
        if not isinstance(run, Run):
            raise TypeError(f"runs[{i}] must be a Run, got {type(run).__name__}")
    if method not in _METHODS:
        raise InputError(f"method must be one of {', '.join(_METHODS)}, got {method!r}")
    if norm is not None and norm not in _NORMS:
        raise InputError(f"norm must be None, 'minmax' or 'zscore', got {norm!r}")
    if norm is not None and method == "rrf":
        raise InputError("norm applies to combsum and combmnz; rrf uses ranks, not scores")
    if isinstance(k, bool) or not isinstance(k, int | float) or not np.isfinite(k) or k < 0:
        raise InputError(f"k must be a finite number >= 0, got {k!r}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise InputError(f"depth must be a positive integer, got {depth!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InputError(f"limit must be None or a positive integer, got {limit!r}")
    if order not in ("score", "rank"):
        raise InputError(f"order must be 'score' or 'rank', got {order!r}")
    if weights is not None:
        if len(weights) != len(runs):
            raise InputError(f"weights has {len(weights)} entries for {len(runs)} runs")
        for w in weights:
            if isinstance(w, bool) or not isinstance(w, int | float) or not np.isfinite(w):
                raise InputError(f"weights must be finite numbers, got {w!r}")


def _segments(qcodes: npt.NDArray[np.int32]) -> tuple[npt.NDArray[np.int64],
                                                       npt.NDArray[np.int64]]:
    """Start index and length of each run of equal values in a grouped array."""
    n = len(qcodes)
    starts = np.concatenate(([0], np.flatnonzero(qcodes[1:] != qcodes[:-1]) + 1)).astype(np.int64)
    lengths = np.diff(np.concatenate((starts, [n]))).astype(np.int64)
    return starts, lengths


def _normalise(scores: npt.NDArray[np.float64], qcodes: npt.NDArray[np.int32],
               norm: str) -> npt.NDArray[np.float64]:
    """Per-query min-max or z-score of ``scores`` (rows grouped by query)."""
    starts, lengths = _segments(qcodes)
    if norm == "minmax":
        lo = np.repeat(np.minimum.reduceat(scores, starts), lengths)
        hi = np.repeat(np.maximum.reduceat(scores, starts), lengths)
        span = hi - lo
        flat = span == 0
        return np.where(flat, 1.0, (scores - lo) / np.where(flat, 1.0, span))
    mean = np.repeat(np.add.reduceat(scores, starts) / lengths, lengths)
    dev = scores - mean
    sd = np.sqrt(np.repeat(np.add.reduceat(dev * dev, starts) / lengths, lengths))
    flat = sd == 0
    return np.where(flat, 0.0, dev / np.where(flat, 1.0, sd))


def fuse(
    runs: Sequence[Run],
    method: FusionMethod = "rrf",
    *,
    norm: Norm | None = None,
    k: float = 60,
    depth: int = 1000,
    weights: Sequence[float] | None = None,
    order: Order = "score",
    limit: int | None = None,
    name: str = "fusion",
) -> Run:
    """Fuse ``runs`` into one run; the module docstring defines every choice.

    >>> a = Run.from_dict({"q": {"x": 3.0, "y": 2.0}})
    >>> b = Run.from_dict({"q": {"y": 0.9, "z": 0.1}})
    >>> fused = fuse([a, b], "rrf", k=60)
    >>> [(d, round(s, 6)) for _, d, s in fused.iter_rows()]
    [('y', 0.032522), ('x', 0.016393), ('z', 0.016129)]
    """
    _check_fuse_args(runs, method, norm, k, depth, weights, order, limit)
    w = [1.0] * len(runs) if weights is None else [float(x) for x in weights]
    qid_parts: list[pa.Array] = []
    doc_parts: list[pa.Array] = []
    values: list[npt.NDArray[np.float64]] = []
    for i, run in enumerate(runs):
        ro = ranked_order(run, order, strict=False)  # ranks as written (pyserini)
        rows = ro.row_ids(len(run))
        keep = ro.positions < depth
        rows = rows[keep]
        qcodes = run.qid_codes[rows]
        if method == "rrf":
            if order == "rank":
                assert run.ranks is not None  # ranked_order checked it
                ranks = run.ranks[rows].astype(np.float64)
            else:
                ranks = ro.positions[keep].astype(np.float64) + 1.0
            if np.any(k + ranks <= 0):
                bad = int(ranks[k + ranks <= 0][0])
                raise InputError(f"runs[{i}] ({run.name}): rank {bad} makes k + rank <= 0 "
                                 f"with k={k}", path=run.source, field="rank")
            contrib = 1.0 / (k + ranks)
        else:
            contrib = run.scores[rows]
            if norm is not None:
                contrib = _normalise(contrib, qcodes, norm)
        if w[i] != 1.0:
            contrib = w[i] * contrib
        take = pa.array(rows)
        qid_parts.append(run.qid_vocab.take(pa.array(qcodes)))
        doc_parts.append(run.docids.take(take))
        values.append(contrib)
    # One key per (query, document) across all runs.
    qenc = pc.dictionary_encode(pa.chunked_array(qid_parts).combine_chunks())
    denc = pc.dictionary_encode(pa.chunked_array(doc_parts).combine_chunks())
    qc = to_numpy(qenc.indices).astype(np.int64)
    dc = to_numpy(denc.indices).astype(np.int64)
    pair = qc * max(len(denc.dictionary), 1) + dc  # qid-major: groups sort by query
    uniq, group = np.unique(pair, return_inverse=True)
    total = np.zeros(len(uniq), dtype=np.float64)
    hits = np.zeros(len(uniq), dtype=np.int64)
    start = 0
    for contrib in values:  # run by run: each pair occurs at most once per run
        g = group[start:start + len(contrib)]
        total[g] += contrib
        hits[g] += 1
        start += len(contrib)
    if method == "combmnz":
        total = total * hits
    width = max(len(denc.dictionary), 1)
    qids = qenc.dictionary.take(pa.array(uniq // width))
    docids = denc.dictionary.take(pa.array(uniq % width))
    fused = Run.from_columns(qids, docids, total, name=name)
    ro = ranked_order(fused)
    rows = ro.row_ids(len(fused))
    positions = ro.positions
    if limit is not None:
        keep = positions < limit
        rows, positions = rows[keep], positions[keep]
    take = pa.array(rows)
    notes = merge_notes(*(r.notes for r in runs))
    return Run.from_columns(
        fused.qids().take(take), fused.docids.take(take), fused.scores[rows], positions + 1,
        name=name, notes=notes,
    )


class FusionRetriever:
    """A stage that runs prior stages and fuses their runs with :func:`fuse`.

    Each input stage is searched to ``depth`` documents per query; the fused
    list is cut to the ``k`` asked of ``search``. ``latency_ms`` per query is
    the sum of the input stages' latencies for that query (they run one after
    the other) plus the fusion time spread evenly over the queries (fusion is
    vectorised over the whole batch). Notes of the input stages are carried.
    """

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        method: FusionMethod = "rrf",
        *,
        norm: Norm | None = None,
        rrf_k: float = 60,
        depth: int = 100,
        weights: Sequence[float] | None = None,
        name: str = "fusion",
    ) -> None:
        if isinstance(retrievers, str) or not isinstance(retrievers, Sequence) or not retrievers:
            raise InputError("retrievers must be a non-empty sequence of stages")
        names = [r.name for r in retrievers]
        if len(set(names)) != len(names):
            raise InputError(f"fused stages need distinct names, got {names}")
        # Validate the fusion parameters once, up front, against placeholder runs.
        placeholder = [Run.from_dict({"q": {"d": 1.0}}) for _ in retrievers]
        _check_fuse_args(placeholder, method, norm, rrf_k, depth, weights, "score", None)
        self.name = name
        self.retrievers = tuple(retrievers)
        self.method: FusionMethod = method
        self.norm: Norm | None = norm
        self.rrf_k = rrf_k
        self.depth = depth
        self.weights = None if weights is None else tuple(float(w) for w in weights)

    @property
    def config(self) -> dict[str, Any]:
        return {"stage": "fusion", "name": self.name, "method": self.method, "norm": self.norm,
                "rrf_k": self.rrf_k if self.method == "rrf" else None, "depth": self.depth,
                "weights": list(self.weights) if self.weights is not None else None,
                "order": "score", "inputs": [r.name for r in self.retrievers]}

    def index(self, docs: Docs) -> None:
        """Index every input stage (each skips documents it already holds)."""
        for r in self.retrievers:
            r.index(docs)

    def search(self, queries: Queries, k: int) -> StageOutput:
        qids, _ = check_queries(queries, k)
        outputs = []
        kept = []
        for i, r in enumerate(self.retrievers):
            try:
                outputs.append(r.search(queries, self.depth))
            except InputError as exc:
                # An input that found nothing for the whole batch adds nothing to the fusion.
                if not retrieved_nothing(exc):
                    raise
                continue
            kept.append(i)
        if not outputs:
            raise nothing_retrieved(self.name, len(qids))
        weights = None if self.weights is None else tuple(self.weights[i] for i in kept)
        start = time.perf_counter()
        run = fuse([o.run for o in outputs], self.method, norm=self.norm, k=self.rrf_k,
                   depth=self.depth, weights=weights, limit=k, name=self.name)
        share = (time.perf_counter() - start) * 1000.0 / len(qids)
        latency = {q: sum(float(o.latency_ms[q]) for o in outputs) + share for q in qids}
        notes = merge_notes(*(o.notes for o in outputs))
        run = Run.from_columns(run.qids(), run.docids, run.scores, run.ranks, name=self.name,
                               notes=notes)
        config = {**self.config, "k": int(k),
                  "input_configs": [dict(o.config) for o in outputs]}
        return StageOutput(run=run, latency_ms=latency, notes=notes, config=config)
