"""Rank fusion as ranx and pyserini define it, and the stage that fuses prior stages.

Each run ``i`` (weight ``w_i``, 1 by default) gives each document ``d`` it
retrieved for a query a contribution ``c_i(d)``; documents it did not
retrieve get nothing (Borda aside). ``r_i(d)`` is the 1-based rank,
``s_i(d)`` the score after normalisation, ``n(d)`` the number of runs that
retrieved ``d``. The name in brackets is ranx's ``fuse(method=...)``.

Rank-based (scores only order each run):

* **rrf** [rrf] (Cormack, Clarke & Büttcher, SIGIR 2009):
  ``sum_i w_i / (k + r_i(d))``, ``k`` = 60.
* **isr** [isr] (Mourão et al., 2014): ``n(d) * sum_i w_i / r_i(d)^2``.
* **log_isr** [log_isr]: ``ln(n(d)) * sum_i w_i / r_i(d)^2`` (a document
  retrieved by one run scores 0, as in ranx).
* **logn_isr** [logn_isr]: ``ln(n(d) + sigma) * sum_i w_i / r_i(d)^2``, ``sigma`` = 0.01.
* **rbc** [rbc] (rank-biased centroids, Bailey et al., SIGIR 2017):
  ``sum_i w_i (1 - phi) phi^(r_i(d) - 1)``, ``phi`` = 0.8 (ranx has no default).
* **borda** [bordafuse; weighted_bordafuse with weights] (Aslam & Montague,
  SIGIR 2001): with ``N`` the number of distinct documents any run retrieved
  for the query and ``L_i`` run ``i``'s list length, run ``i`` gives
  ``N - r_i(d) + 1`` to a document it retrieved and ``(N - L_i + 1) / 2`` to
  one it did not; the fused score is the weighted sum.

Score-based (``s_i`` normalised per run and query, see below):

* **combsum** [sum] (Fox & Shaw, TREC-2 1994) and **wsum** [wsum]:
  ``sum_i w_i s_i(d)`` (wsum is ranx's name for weighted CombSUM; the same).
* **combmnz** [mnz]: ``n(d) * sum_i w_i s_i(d)``.
* **wmnz** [wmnz]: ``(sum_i s_i(d)) * (sum of w_i over the runs that retrieved d)``.
* **combmax** [max], **combmin** [min], **combmed** [med]: max, min, median
  of ``w_i s_i(d)`` over the runs that retrieved ``d``.
* **combanz** [anz]: ``sum_i w_i s_i(d) / n(d)``.
* **interpolate** (pyserini's ``--method interpolation``): exactly two runs,
  ``alpha * s_1(d) + (1 - alpha) * s_2(d)``, ``alpha`` = 0.5; takes no weights.

**Normalisation** (score-based methods; per run and query, over the
documents kept): ``norm="auto"`` (the default) is ``"minmax-ranx"`` for every
score-based method but ``interpolate``, which sums raw scores as pyserini does
(`default_norm`). ``"minmax-ranx"``: ``(s - min) / max(max - min, 1e-9)``,
an all-equal list maps to 0 — exactly ranx's ``min-max``, ``ranx.fuse``'s
default; ``"minmax"``: ``(s - min) / (max - min)``, an all-equal list maps to 1
(pyserini's ``normalize``; rankproof's meaning of ``minmax`` before ranx's was
added, kept so recorded configurations keep their numbers); ``"zscore"``:
``(s - mean) / sd`` (population sd), an all-equal list maps to 0; ``None``: raw
scores. Summing raw scores of runs whose scales differ stamps a note on the
fused run (`fuse`'s ``notes``): a run's scale is the median over queries of its
per-query score range, and the note is given when the largest scale exceeds 10
times the smallest.

Which rank a document holds in an input run (``order``):

* ``"score"`` (default) — trec_eval's ordering of that run: score
  descending, ties broken by docid descending, byte-wise
  (`rankproof.data.ranked_order`); ``rank`` = 1-based position. The
  run's rank column is ignored, as everywhere in rankproof by default.
  ranx ranks by its stored order, whose ties its own sort breaks in no
  documented way: ranx equals rankproof when given the runs in this order.
* ``"rank"`` — the run's rank column **as written** decides the order and
  its values are the ranks. This is pyserini's fusion without ``--resort``
  (its fixtures depend on it: a document written at rank 3 of a
  two-document list contributes 1/(k+3)).

``depth`` keeps each run's first ``depth`` documents per query under that
order; normalisation statistics and Borda's ``N`` are taken over those
documents only (ranx reads whole runs: the same when ``depth`` covers them).

**Missing queries**: a query present in only some runs is fused from those
runs alone (ranx refuses runs whose query sets differ). Contributions are
added run by run in the order the runs are given, so the floating-point
result is reproducible (and equals pyserini's and ranx's).

**Output**: one `Run` whose rows are in trec_eval's order of the fused score
(ties broken by docid descending; pyserini breaks them ascending, which only
matters for exactly tied fused scores) with a rank column 1..n; ``limit``
truncates each query to that many documents in that order. Queries appear in
first-seen order across the input runs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
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
from rankproof.retrieval._fusion_methods import (
    METHODS,
    NORMS,
    RANK_METHODS,
    FusionMethod,
    Norm,
    combine,
    default_norm,
    median_range,
    normalise,
    rank_contribution,
    scale_warning,
)

Order = Literal["score", "rank"]
NormArg = Norm | Literal["auto"] | None

_PARAMETERS = {"alpha": ("interpolate", 0.5), "phi": ("rbc", 0.8), "sigma": ("logn_isr", 0.01)}
"""Each method parameter: the method it belongs to and its default (ranx's or pyserini's)."""


def _number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) \
        and bool(np.isfinite(value))


def _check_fuse_args(runs: Sequence[Run], method: str, norm: object, k: float, depth: int,
                     weights: Sequence[float] | None, order: str, limit: int | None,
                     params: dict[str, float | None]) -> None:
    if isinstance(runs, Run) or not isinstance(runs, Sequence):
        raise TypeError(f"runs must be a sequence of Run, got {type(runs).__name__}")
    if len(runs) < 1:
        raise InputError("fuse needs at least one run, got none")
    for i, run in enumerate(runs):
        if not isinstance(run, Run):
            raise TypeError(f"runs[{i}] must be a Run, got {type(run).__name__}")
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}",
                         field="method")
    if norm not in (None, "auto") and norm not in NORMS:
        raise InputError(f"norm must be None, 'auto' or one of {', '.join(NORMS)}, got {norm!r}",
                         field="norm")
    if norm not in (None, "auto") and method in RANK_METHODS:
        raise InputError(f"norm applies to score-based methods; {method} uses ranks, not scores",
                         field="norm")
    if not _number(k) or k < 0:
        raise InputError(f"k must be a finite number >= 0, got {k!r}", field="k")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise InputError(f"depth must be a positive integer, got {depth!r}", field="depth")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InputError(f"limit must be None or a positive integer, got {limit!r}",
                         field="limit")
    if order not in ("score", "rank"):
        raise InputError(f"order must be 'score' or 'rank', got {order!r}", field="order")
    if weights is not None:
        if method == "interpolate":
            raise InputError("weights do not apply to interpolate: alpha weighs its two runs",
                             field="weights")
        if len(weights) != len(runs):
            raise InputError(f"weights has {len(weights)} entries for {len(runs)} runs",
                             field="weights")
        for w in weights:
            if not _number(w):
                raise InputError(f"weights must be finite numbers, got {w!r}", field="weights")
    for name, value in params.items():
        owner = _PARAMETERS[name][0]
        if value is None:
            continue
        if method != owner:
            raise InputError(f"{name} applies to {owner} only, not {method}", field=name)
        if not _number(value):
            raise InputError(f"{name} must be a finite number, got {value!r}", field=name)
    alpha, phi, sigma = params["alpha"], params["phi"], params["sigma"]
    if alpha is not None and not 0.0 <= alpha <= 1.0:
        raise InputError(f"alpha must be between 0 and 1, got {alpha!r}", field="alpha")
    if phi is not None and not 0.0 < phi < 1.0:
        raise InputError(f"phi must be strictly between 0 and 1, got {phi!r}", field="phi")
    if sigma is not None and not 0.0 <= sigma <= 1.0:
        raise InputError(f"sigma must be between 0 and 1, got {sigma!r}", field="sigma")
    if method == "interpolate" and len(runs) != 2:
        raise InputError(f"interpolate fuses exactly two runs, got {len(runs)}",
                         field="method")


def _resolve_norm(method: str, norm: NormArg) -> Norm | None:
    return default_norm(method) if norm == "auto" else norm


def fuse(
    runs: Sequence[Run],
    method: FusionMethod = "rrf",
    *,
    norm: NormArg = "auto",
    k: float = 60,
    depth: int = 1000,
    weights: Sequence[float] | None = None,
    alpha: float | None = None,
    phi: float | None = None,
    sigma: float | None = None,
    order: Order = "score",
    limit: int | None = None,
    name: str = "fusion",
) -> Run:
    """Fuse ``runs`` into one run; the module docstring defines every method and choice.

    ``norm="auto"`` picks the method's default (`default_norm`); ``None`` sums raw
    scores. ``alpha`` (interpolate), ``phi`` (rbc) and ``sigma`` (logn_isr) default
    to 0.5, 0.8 and 0.01 and are refused for other methods. The fused run's
    ``notes`` carry the input runs' notes and, for raw scores on different scales,
    a warning.

    >>> a = Run.from_dict({"q": {"x": 3.0, "y": 2.0}})
    >>> b = Run.from_dict({"q": {"y": 0.9, "z": 0.1}})
    >>> fused = fuse([a, b], "rrf", k=60)
    >>> [(d, round(s, 6)) for _, d, s in fused.iter_rows()]
    [('y', 0.032522), ('x', 0.016393), ('z', 0.016129)]
    >>> [(d, s) for _, d, s in fuse([a, b], "combsum").iter_rows()]  # min-max, as ranx
    [('y', 1.0), ('x', 1.0), ('z', 0.0)]
    """
    params = {"alpha": alpha, "phi": phi, "sigma": sigma}
    _check_fuse_args(runs, method, norm, k, depth, weights, order, limit, params)
    resolved = _resolve_norm(method, norm)
    if method == "interpolate":
        a = _PARAMETERS["alpha"][1] if alpha is None else float(alpha)
        w = [a, 1.0 - a]
    else:
        w = [1.0] * len(runs) if weights is None else [float(x) for x in weights]
    prepared = prepare(runs, method, resolved, k=k, depth=depth, order=order,
                       phi=_PARAMETERS["phi"][1] if phi is None else float(phi))
    total = prepared.combine(w, sigma=_PARAMETERS["sigma"][1] if sigma is None
                             else float(sigma))
    qids, docids, ranges = prepared.qids, prepared.docids, prepared.ranges
    fused = Run.from_columns(qids, docids, total, name=name)
    ro = ranked_order(fused)
    rows = ro.row_ids(len(fused))
    positions = ro.positions
    if limit is not None:
        keep = positions < limit
        rows, positions = rows[keep], positions[keep]
    take = pa.array(rows)
    warning = scale_warning([r.name for r in runs], ranges) if resolved is None else None
    notes = merge_notes(*(r.notes for r in runs), (warning,) if warning else ())
    return Run.from_columns(
        fused.qids().take(take), fused.docids.take(take), fused.scores[rows], positions + 1,
        name=name, notes=notes,
    )


@dataclass(frozen=True)
class Prepared:
    """The runs' contributions to a fusion, before weighting: every (query, document) pair
    any run kept (``qids``, ``docids``, qid-major), each run's pair indices (``groups``) and
    unweighted contributions (``values``; Borda's ``absent`` too), and the raw-score ranges
    (`median_range`, for the scale warning). `combine` weighs them: the weight search of
    `rankproof.retrieval.optimize_fusion` prepares once and combines per candidate."""

    method: str
    qids: pa.Array
    docids: pa.Array
    groups: list[npt.NDArray[np.int64]]
    values: list[npt.NDArray[np.float64]]
    absent: list[npt.NDArray[np.float64]] | None
    ranges: list[float]
    n_pairs: int

    def combine(self, weights: Sequence[float], *, sigma: float) -> npt.NDArray[np.float64]:
        """The fused score of every pair with one weight per run (`combine`)."""
        return combine(self.method, self.groups, self.values, weights, self.n_pairs,
                       sigma=sigma, absent=self.absent)


def prepare(runs: Sequence[Run], method: str, norm: Norm | None, *, k: float, depth: int,
            order: Order, phi: float) -> Prepared:
    """Each run's kept rows and their contributions (arguments checked by the caller)."""
    qid_parts: list[pa.Array] = []
    doc_parts: list[pa.Array] = []
    values: list[npt.NDArray[np.float64]] = []
    ranks_of: list[npt.NDArray[np.float64]] = []
    ranges: list[float] = []
    for i, run in enumerate(runs):
        ro = ranked_order(run, order, strict=False)  # ranks as written (pyserini)
        rows = ro.row_ids(len(run))
        keep = ro.positions < depth
        rows = rows[keep]
        qcodes = run.qid_codes[rows]
        if method in RANK_METHODS:
            if order == "rank":
                assert run.ranks is not None  # ranked_order checked it
                ranks = run.ranks[rows].astype(np.float64)
            else:
                ranks = ro.positions[keep].astype(np.float64) + 1.0
            if method == "rrf" and np.any(k + ranks <= 0):
                bad = int(ranks[k + ranks <= 0][0])
                raise InputError(f"runs[{i}] ({run.name}): rank {bad} makes k + rank <= 0 "
                                 f"with k={k}", path=run.source, field="rank")
            if method != "rrf" and np.any(ranks < 1):
                bad = int(ranks[ranks < 1][0])
                raise InputError(f"runs[{i}] ({run.name}): rank {bad} < 1; {method} needs "
                                 "ranks from 1", path=run.source, field="rank")
            ranks_of.append(ranks)
            contrib = rank_contribution(method, ranks, k=k, phi=phi)
        else:
            contrib = run.scores[rows]
            if norm is None:
                ranges.append(median_range(contrib, qcodes))
            else:
                contrib = normalise(contrib, qcodes, norm)
        qid_parts.append(run.qid_vocab.take(pa.array(qcodes)))
        doc_parts.append(run.docids.take(pa.array(rows)))
        values.append(contrib)
    # One key per (query, document) across all runs.
    qenc = pc.dictionary_encode(pa.chunked_array(qid_parts).combine_chunks())
    denc = pc.dictionary_encode(pa.chunked_array(doc_parts).combine_chunks())
    qc = to_numpy(qenc.indices).astype(np.int64)
    dc = to_numpy(denc.indices).astype(np.int64)
    width = max(len(denc.dictionary), 1)
    pair = qc * width + dc  # qid-major: groups sort by query
    uniq, group = np.unique(pair, return_inverse=True)
    bounds = np.cumsum([0] + [len(v) for v in values])
    groups = [group[bounds[i]:bounds[i + 1]] for i in range(len(values))]
    absent = None
    if method == "borda":
        values, absent = _borda(uniq // width, [qc[bounds[i]:bounds[i + 1]]
                                                for i in range(len(values))],
                                groups, ranks_of, len(qenc.dictionary))
    qids = qenc.dictionary.take(pa.array(uniq // width))
    docids = denc.dictionary.take(pa.array(uniq % width))
    return Prepared(method, qids, docids, groups, values, absent, ranges, len(uniq))


def _borda(pair_query: npt.NDArray[np.int64], row_queries: list[npt.NDArray[np.int64]],
           groups: list[npt.NDArray[np.int64]], ranks: list[npt.NDArray[np.float64]],
           n_queries: int) -> tuple[list[npt.NDArray[np.float64]],
                                    list[npt.NDArray[np.float64]]]:
    """Borda points of each run's retrieved rows, and what it gives each pair it missed."""
    candidates = np.bincount(pair_query, minlength=n_queries).astype(np.float64)
    points, missed = [], []
    for q, g, r in zip(row_queries, groups, ranks, strict=True):
        length = np.bincount(q, minlength=n_queries).astype(np.float64)
        per_query = np.where(length > 0, (candidates - length + 1.0) / 2.0, 0.0)
        missed.append(per_query[pair_query])
        points.append(candidates[pair_query[g]] - r + 1.0)
    return points, missed


class FusionRetriever:
    """A stage that runs prior stages and fuses their runs with :func:`fuse`.

    Each input stage is searched to ``depth`` documents per query; the fused
    list is cut to the ``k`` asked of ``search``. ``latency_ms`` per query is
    the sum of the input stages' latencies for that query (they run one after
    the other) plus the fusion time spread evenly over the queries (fusion is
    vectorised over the whole batch). Notes of the input stages are carried,
    with fusion's own (a raw-score scale warning). ``norm="auto"`` (the default)
    is the method's default (`default_norm`); ``config`` records the norm used.
    """

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        method: FusionMethod = "rrf",
        *,
        norm: NormArg = "auto",
        rrf_k: float = 60,
        depth: int = 100,
        weights: Sequence[float] | None = None,
        alpha: float | None = None,
        phi: float | None = None,
        sigma: float | None = None,
        name: str = "fusion",
    ) -> None:
        if isinstance(retrievers, str) or not isinstance(retrievers, Sequence) or not retrievers:
            raise InputError("retrievers must be a non-empty sequence of stages")
        names = [r.name for r in retrievers]
        if len(set(names)) != len(names):
            raise InputError(f"fused stages need distinct names, got {names}")
        # Validate the fusion parameters once, up front, against placeholder runs.
        placeholder = [Run.from_dict({"q": {"d": 1.0}}) for _ in retrievers]
        params = {"alpha": alpha, "phi": phi, "sigma": sigma}
        _check_fuse_args(placeholder, method, norm, rrf_k, depth, weights, "score", None, params)
        self.name = name
        self.retrievers = tuple(retrievers)
        self.method: FusionMethod = method
        self.norm: Norm | None = _resolve_norm(method, norm)
        self.params = {p: (_PARAMETERS[p][1] if v is None else float(v))
                       for p, v in params.items() if _PARAMETERS[p][0] == method}
        self.rrf_k = rrf_k
        self.depth = depth
        self.weights = None if weights is None else tuple(float(w) for w in weights)

    @property
    def config(self) -> dict[str, Any]:
        return {"stage": "fusion", "name": self.name, "method": self.method, "norm": self.norm,
                "rrf_k": self.rrf_k if self.method == "rrf" else None, "depth": self.depth,
                "weights": list(self.weights) if self.weights is not None else None,
                **self.params, "order": "score", "inputs": [r.name for r in self.retrievers]}

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
                   depth=self.depth, weights=weights, limit=k, name=self.name,
                   alpha=self.params.get("alpha"), phi=self.params.get("phi"),
                   sigma=self.params.get("sigma"))
        share = (time.perf_counter() - start) * 1000.0 / len(qids)
        latency = {q: sum(float(o.latency_ms[q]) for o in outputs) + share for q in qids}
        notes = merge_notes(*(o.notes for o in outputs), run.notes)
        run = Run.from_columns(run.qids(), run.docids, run.scores, run.ranks, name=self.name,
                               notes=notes)
        config = {**self.config, "k": int(k),
                  "input_configs": [dict(o.config) for o in outputs]}
        return StageOutput(run=run, latency_ms=latency, notes=notes, config=config)
