"""Fusion parameters chosen by cross-validation over topics, with the optimism reported.

Tuning fusion weights on the topics a score is then reported on overfits them: the best
of many candidates on a set of topics is, on those topics, better than it will be on new
ones. ranx's ``optimize_fusion`` reports exactly that in-sample best. `optimize_fusion`
reports it **beside** an honest estimate:

1. **Candidates.** Weights on the simplex in steps of ``step`` (``w_i = c_i / m`` with
   ``m = 1/step`` and non-negative integers ``c_i`` summing to ``m``: for two runs and
   step 0.1, the 11 pairs (0, 1), (0.1, 0.9), …, (1, 0); a zero weight drops a run), times
   the RRF constants ``ks`` (rrf only), times the normalisations ``norms`` (score-based
   methods; ``interpolate`` reads its ``alpha`` from the first weight). Candidates are
   enumerated normalisation first, then k, then weights in lexicographic order of ``c``;
   ties in a choice go to the first.
2. **Scores.** Every candidate is scored on every topic with rankproof's vectorised
   evaluator: the runs are read once per (normalisation, k) (`prepare`), each candidate's
   fused scores are one numpy combination of those contributions, and each fused run is
   evaluated whole — no Python loop over topics. The result is a candidates × topics
   matrix of the measure.
3. **Folds.** The qrels topics, sorted, are permuted by ``numpy.random.default_rng(seed)``
   and dealt into ``folds`` folds (sizes differ by at most one). For each fold, the
   candidate with the best mean on the *other* folds is chosen, and scored on the fold.
   Each topic is thus scored by parameters chosen without it; their mean is the
   **out-of-fold** score.
4. **Reported.** The parameters chosen on **all** topics (these fuse the run that is
   written) and their **in-sample** mean, the out-of-fold mean, the gap between them (the
   *optimism*: how much the in-sample figure flatters the tuning), the default
   parameters' score for reference, and each fold's choice and scores.

The same inputs and seed give the same folds, choices and bytes; the fold assignment
does not depend on the order of the runs' rows or of the qrels.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankproof._errors import InputError
from rankproof.data import Qrels, Run, ranked_order
from rankproof.retrieval._fusion import _PARAMETERS, Order, _check_fuse_args, fuse, prepare
from rankproof.retrieval._fusion_methods import METHODS, NORMS, RANK_METHODS

__all__ = ["DEFAULT_KS", "FoldChoice", "FusionOptimization", "FusionParams", "FusionSearch",
           "optimize_fusion"]

DEFAULT_KS: tuple[float, ...] = (10.0, 20.0, 40.0, 60.0, 80.0, 100.0)
"""RRF constants tried by default (60 is Cormack et al.'s)."""
DEFAULT_NORMS: tuple[str, ...] = ("minmax-ranx", "zscore")
"""Normalisations tried by default for score-based methods."""
MAX_CANDIDATES = 20_000
"""Most candidates one search scores (a finer grid is refused before any work)."""


def _count(n_runs: int, m: int) -> int:
    return math.comb(m + n_runs - 1, n_runs - 1)


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Non-negative integer ``parts``-tuples summing to ``total``, lexicographically."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


@dataclass(frozen=True)
class FusionSearch:
    """What `optimize_fusion` searches, and how it cross-validates; validated once.

    ``method``: any fusion method (`rankproof.retrieval.fuse`); ``measure``: the measure
    maximised (minimised when lower is better), in rankproof's grammar; ``folds``: k of
    k-fold cross-validation over topics (2 up to the number of topics); ``seed``: the fold
    assignment's seed; ``step``: the weight grid's step on the simplex (1/step an
    integer); ``ks``: RRF constants (rrf only; None: `DEFAULT_KS`); ``norms``: the
    normalisations tried by score-based methods (``"none"`` for raw scores; None:
    `DEFAULT_NORMS`, or pyserini's raw scores only for interpolate).
    """

    method: str = "wsum"
    measure: str = "nDCG@10"
    folds: int = 5
    seed: int = 0
    step: float = 0.1
    ks: tuple[float, ...] | None = None
    norms: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        from rankproof.measures import parse

        if self.method not in METHODS:
            raise InputError(f"method must be one of {', '.join(METHODS)}, got "
                             f"{self.method!r}", field="method")
        try:
            canonical = str(parse(self.measure))
        except ValueError as exc:
            raise InputError(f"measure: {exc}", field="measure") from None
        object.__setattr__(self, "measure", canonical)
        if isinstance(self.folds, bool) or not isinstance(self.folds, int) or self.folds < 2:
            raise InputError(f"folds must be an integer >= 2, got {self.folds!r}",
                             field="folds")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise InputError(f"seed must be an integer, got {self.seed!r}", field="seed")
        step = self.step
        if isinstance(step, bool) or not isinstance(step, int | float) \
                or not 0.0 < step <= 1.0 or abs(1.0 / step - round(1.0 / step)) > 1e-6:
            raise InputError(f"step must be in (0, 1] with 1/step an integer (0.1, 0.05, "
                             f"0.25, …), got {step!r}", field="step")
        if self.ks is not None:
            if self.method != "rrf":
                raise InputError(f"ks (RRF constants) apply to rrf only, not {self.method}",
                                 field="ks")
            ks = tuple(self.ks)
            if not ks or any(isinstance(k, bool) or not isinstance(k, int | float)
                             or not math.isfinite(k) or k < 0 for k in ks):
                raise InputError(f"ks must be finite numbers >= 0, got {list(ks)!r}",
                                 field="ks")
            object.__setattr__(self, "ks", tuple(dict.fromkeys(float(k) for k in ks)))
        if self.norms is not None:
            if self.method in RANK_METHODS:
                raise InputError(f"norms apply to score-based methods; {self.method} uses "
                                 "ranks", field="norms")
            norms = tuple(self.norms)
            bad = [n for n in norms if n not in (*NORMS, "none")]
            if not norms or bad:
                raise InputError(f"norms must be among {', '.join((*NORMS, 'none'))}, got "
                                 f"{list(norms)!r}", field="norms")
            object.__setattr__(self, "norms", tuple(dict.fromkeys(norms)))

    @property
    def divisions(self) -> int:
        """``1/step``: the weight grid's number of steps."""
        return round(1.0 / self.step)

    def k_grid(self) -> tuple[float | None, ...]:
        if self.method != "rrf":
            return (None,)
        return DEFAULT_KS if self.ks is None else self.ks

    def norm_grid(self) -> tuple[str | None, ...]:
        if self.method in RANK_METHODS:
            return (None,)
        if self.norms is None:
            return (None,) if self.method == "interpolate" else DEFAULT_NORMS
        return tuple(None if n == "none" else n for n in self.norms)

    def size(self, n_runs: int) -> int:
        """How many candidates a search over ``n_runs`` runs scores."""
        return _count(n_runs, self.divisions) * len(self.k_grid()) * len(self.norm_grid())

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "measure": self.measure, "folds": self.folds,
                "seed": self.seed, "step": self.step,
                "ks": list(self.k_grid()) if self.method == "rrf" else None,
                "norms": None if self.method in RANK_METHODS
                else ["none" if n is None else n for n in self.norm_grid()]}


@dataclass(frozen=True)
class FusionParams:
    """One candidate: a weight per run (``interpolate``: ``alpha`` = the first), the RRF
    ``k`` (rrf only) and the normalisation (score-based methods; None: raw scores)."""

    weights: tuple[float, ...]
    k: float | None = None
    norm: str | None = None

    def fuse_kwargs(self, method: str) -> dict[str, Any]:
        """`rankproof.retrieval.fuse`'s keywords for these parameters."""
        out: dict[str, Any] = {}
        if method == "interpolate":
            out["alpha"] = self.weights[0]
        else:
            out["weights"] = list(self.weights)
        if self.k is not None:
            out["k"] = self.k
        if method not in RANK_METHODS:
            out["norm"] = self.norm
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"weights": list(self.weights), "k": self.k, "norm": self.norm}

    def describe(self, method: str) -> str:
        """One line for the terminal: ``weights 0.3, 0.7; norm zscore``."""
        if method == "interpolate":
            parts = [f"alpha {self.weights[0]:g}"]
        else:
            parts = ["weights " + ", ".join(f"{w:g}" for w in self.weights)]
        if self.k is not None:
            parts.append(f"k {self.k:g}")
        if method not in RANK_METHODS:
            parts.append(f"norm {self.norm or 'none'}")
        return "; ".join(parts)


@dataclass(frozen=True)
class FoldChoice:
    """One fold: its held-out topics, the parameters chosen on the other folds, their mean
    there (``train``) and on the held-out topics (``test``)."""

    fold: int
    topics: tuple[str, ...]
    params: FusionParams
    train: float
    test: float

    def to_dict(self) -> dict[str, Any]:
        return {"fold": self.fold, "n_topics": len(self.topics), "topics": list(self.topics),
                "params": self.params.to_dict(), "train": self.train, "test": self.test}


@dataclass(frozen=True)
class FusionOptimization:
    """The result of `optimize_fusion` (module docstring): the chosen parameters and the
    fused run, the in-sample best, the out-of-fold score and each fold's choice."""

    search: FusionSearch
    n_runs: int
    n_topics: int
    candidates: int
    higher_is_better: bool
    chosen: FusionParams
    in_sample: float
    out_of_fold: float
    default: float
    folds: tuple[FoldChoice, ...]
    run: Run = field(repr=False, compare=False)

    @property
    def optimism(self) -> float:
        """How much better the in-sample best looks than the out-of-fold score (in the
        measure's good direction; positive is the usual, overfitted, case)."""
        gap = self.in_sample - self.out_of_fold
        return gap if self.higher_is_better else -gap

    def to_dict(self) -> dict[str, Any]:
        return {"search": self.search.to_dict(), "n_runs": self.n_runs,
                "n_topics": self.n_topics, "candidates": self.candidates,
                "higher_is_better": self.higher_is_better, "chosen": self.chosen.to_dict(),
                "in_sample": self.in_sample, "out_of_fold": self.out_of_fold,
                "optimism": self.optimism, "default": self.default,
                "folds": [f.to_dict() for f in self.folds]}

    def summary_lines(self) -> list[str]:
        """What the terminal shows: the scores side by side and every choice."""
        s = self.search
        lines = [f"{s.method} on {s.measure}: {self.candidates} candidates, {self.n_runs} runs, "
                 f"{self.n_topics} topics, {s.folds}-fold cross-validation (seed {s.seed})",
                 f"  out-of-fold {self.out_of_fold:.4f}   in-sample best {self.in_sample:.4f}"
                 f"   optimism {self.optimism:+.4f}   default parameters {self.default:.4f}",
                 f"  chosen on all topics: {self.chosen.describe(s.method)}"]
        for f in self.folds:
            lines.append(f"  fold {f.fold + 1} ({len(f.topics)} topics): "
                         f"{f.params.describe(s.method)} — train {f.train:.4f}, "
                         f"held out {f.test:.4f}")
        return lines


def _check_runs(runs: Sequence[Run], qrels: Qrels) -> None:
    if isinstance(runs, Run) or not isinstance(runs, Sequence) or len(runs) < 2:
        raise InputError("optimize_fusion needs a sequence of at least two runs")
    for i, r in enumerate(runs):
        if not isinstance(r, Run):
            raise TypeError(f"runs[{i}] must be a Run, got {type(r).__name__}")
    if not isinstance(qrels, Qrels):
        raise TypeError(f"qrels must be a Qrels, got {type(qrels).__name__}")


def _scores(runs: Sequence[Run], qrels: Qrels, search: FusionSearch, depth: int,
            limit: int | None, order: Order, rel_level: int
            ) -> tuple[list[FusionParams], npt.NDArray[np.float64], tuple[str, ...]]:
    """Every candidate's per-topic score: (candidates, matrix candidates × topics, topics)."""
    from rankproof.measures import evaluate

    params: list[FusionParams] = []
    rows: list[npt.NDArray[np.float64]] = []
    qids: tuple[str, ...] = ()
    weights = [tuple(c / search.divisions for c in comp)
               for comp in _compositions(search.divisions, len(runs))]
    sigma = float(_PARAMETERS["sigma"][1])
    phi = float(_PARAMETERS["phi"][1])
    for norm in search.norm_grid():
        for k in search.k_grid():
            prepared = prepare(runs, search.method, norm,  # type: ignore[arg-type]
                               k=60.0 if k is None else k, depth=depth, order=order, phi=phi)
            for w in weights:
                combined = prepared.combine(list(w), sigma=sigma)
                fused = Run.from_columns(prepared.qids, prepared.docids, combined,
                                         name="candidate")
                if limit is not None:
                    ro = ranked_order(fused)
                    keep = ro.row_ids(len(fused))[ro.positions < limit]
                    take = pa.array(keep)
                    fused = Run.from_columns(fused.qids().take(take), fused.docids.take(take),
                                             fused.scores[keep], name="candidate")
                pq = evaluate(qrels, fused, [search.measure], rel_level=rel_level)
                qids = tuple(pq.qids)
                rows.append(pq.column(search.measure))
                params.append(FusionParams(w, k, norm))
    return params, np.vstack(rows), qids


def optimize_fusion(
    runs: Sequence[Run],
    qrels: Qrels,
    search: FusionSearch | None = None,
    *,
    depth: int = 1000,
    limit: int | None = None,
    order: Order = "score",
    rel_level: int = 1,
    name: str = "fusion",
) -> FusionOptimization:
    """Choose fusion parameters by cross-validation over topics (module docstring) and
    fuse ``runs`` with the parameters chosen on all topics.

    ``depth``, ``limit`` and ``order`` are `fuse`'s; ``rel_level`` the evaluator's. The
    returned run is exactly ``fuse(runs, search.method, **chosen.fuse_kwargs(method), …)``.

    >>> from rankproof.data import Qrels
    >>> a = Run.from_dict({"q1": {"x": 2.0, "y": 1.0}, "q2": {"u": 2.0, "v": 1.0}})
    >>> b = Run.from_dict({"q1": {"y": 2.0, "x": 1.0}, "q2": {"v": 2.0, "u": 1.0}})
    >>> qrels = Qrels.from_dict({"q1": {"y": 1}, "q2": {"v": 1}})
    >>> result = optimize_fusion([a, b], qrels, FusionSearch("wsum", "RR", folds=2, step=0.5))
    >>> result.chosen.weights, result.in_sample, result.out_of_fold
    ((0.0, 1.0), 1.0, 1.0)
    """
    search = FusionSearch() if search is None else search
    if not isinstance(search, FusionSearch):
        raise TypeError(f"search must be a FusionSearch, got {type(search).__name__}")
    _check_runs(runs, qrels)
    _check_fuse_args(runs, search.method, "auto", 60, depth, None, order, limit,
                     {"alpha": None, "phi": None, "sigma": None})
    size = search.size(len(runs))
    if size > MAX_CANDIDATES:
        raise InputError(f"the search would score {size:,} candidates ({len(runs)} runs, "
                         f"step {search.step:g}); at most {MAX_CANDIDATES:,}: use a coarser "
                         "step or fewer ks/norms", field="step")
    from rankproof.measures import evaluate, parse

    higher = parse(search.measure).higher_is_better
    params, matrix, qids = _scores(runs, qrels, search, depth, limit, order, rel_level)
    n = len(qids)
    if n < search.folds:
        raise InputError(f"{search.folds} folds need at least {search.folds} topics; the "
                         f"qrels have {n}", field="folds")
    sign = 1.0 if higher else -1.0
    means = matrix.mean(axis=1)
    best = int(np.argmax(sign * means))
    # Fold assignment: over the topics sorted, so it does not depend on any input order.
    order_of = np.argsort(np.array(qids, dtype=object), kind="stable")
    perm = np.random.default_rng(search.seed).permutation(n)
    fold_of = np.empty(n, dtype=np.int64)
    fold_of[order_of[perm]] = np.arange(n) % search.folds
    oof = np.empty(n, dtype=np.float64)
    folds = []
    for f in range(search.folds):
        test = fold_of == f
        train_means = matrix[:, ~test].mean(axis=1)
        pick = int(np.argmax(sign * train_means))
        oof[test] = matrix[pick, test]
        held = tuple(sorted(q for q, t in zip(qids, test, strict=True) if t))
        folds.append(FoldChoice(f, held, params[pick], float(train_means[pick]),
                                float(matrix[pick, test].mean())))
    chosen = params[best]
    method = search.method
    run = fuse(runs, method, depth=depth, limit=limit, order=order,  # type: ignore[arg-type]
               name=name, **chosen.fuse_kwargs(method))
    default_run = fuse(runs, method, depth=depth,  # type: ignore[arg-type]
                       limit=limit, order=order)
    default = float(evaluate(qrels, default_run, [search.measure], rel_level=rel_level)
                    .column(search.measure).mean())
    return FusionOptimization(search=search, n_runs=len(runs), n_topics=n,
                              candidates=len(params), higher_is_better=higher, chosen=chosen,
                              in_sample=float(means[best]), out_of_fold=float(oof.mean()),
                              default=default, folds=tuple(folds), run=run)

