"""The distractor curve: how often the right item still comes out on top as the catalogue grows.

For each catalogue size ``N`` and each probe (a query with one gold id),
a sub-catalogue of the gold item plus ``N - 1`` distractors drawn at random
from the rest of the catalogue is indexed and searched; a probe *hits* when
its gold id is in the top ``k``. Accuracy at ``N`` is the hit rate over
probes and ``trials`` random draws. ``N = 1`` is 1.0 by construction (the
gold alone) and is not searched. A steep fall as ``N`` grows is the
signature of retrieval that does not discriminate (the needle-in-a-haystack
view of capability discovery: a tool that is found among eight candidates
may be lost among a hundred).

**Draws.** Trial ``t`` at size ``N`` shuffles the catalogue with
``numpy.random.default_rng([seed, N, t])``; a probe's distractors are the
first ``N - 1`` ids of that order other than its gold, a uniform random
draw from the other items. A probe's sub-catalogue therefore depends only on
``(seed, N, t, gold)``: never on the other probes, their order, the sizes
asked for, or how searches are batched. Probes whose sub-catalogues
coincide (same gold, or golds among the first ``N`` shuffled ids) are
searched together, which changes nothing but the time. A size that takes the
whole catalogue has nothing to draw and runs one trial.

**Interval.** Per size, a percentile bootstrap (`rankproof.stats.bootstrap_ci`)
over **probes**: each probe's hit rate across the trials is one unit, so
the trials of one probe (which share its query) are never counted as
independent evidence. Seeded with ``seed``, recorded.

Dense and hybrid curves encode every catalogue item and probe once and reuse
the vectors for every sub-catalogue, which is what makes them affordable;
the throwaway sub-catalogue indexes are never written to the embedding cache.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError
from rankproof.discovery._cases import DiscoveryCase
from rankproof.discovery._defaults import DFLT_CURVE_MODE, DFLT_DISTRACTOR_SIZES
from rankproof.discovery._source import Catalog, CatalogSearcher, SearchSettings, load_catalog
from rankproof.engine import Executor
from rankproof.retrieval import (
    CrossEncoder,
    Embedder,
)
from rankproof.stats import (
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Cost,
    Result,
    bootstrap_ci,
    check_cost,
    check_int,
    check_probability,
)

#: What the curve's interval resamples, in words (recorded on every curve).
CURVE_INTERVAL = "percentile bootstrap over probes (each probe's hit rate across trials)"


@dataclass(frozen=True)
class CurvePoint(Result):
    """Accuracy at one catalogue size.

    ``accuracy`` = ``hits / attempts`` (attempts = probes × ``trials``);
    ``ci_low``/``ci_high`` its bootstrap interval over probes.
    ``by_construction``: ``N = 1``, not searched. ``searches``: sub-catalogues
    actually indexed and searched. ``seconds_per_trial``: mean wall time of
    one trial (every probe at this size: indexing and searching), measured
    for benchmarks and never asserted; ``None`` when nothing was searched.
    """

    size: int
    accuracy: float
    ci_low: float
    ci_high: float
    trials: int
    hits: int
    attempts: int
    searches: int
    seconds_per_trial: float | None
    by_construction: bool = False


@dataclass(frozen=True)
class DistractorCurve(Result):
    """The outcome of `distractor_robustness_curve`: one `CurvePoint` per catalogue size built.

    ``sizes`` are the sizes built (the requested ones capped at the
    catalogue's size, de-duplicated, ascending); ``requested_sizes`` what was
    asked and ``capped`` the requested sizes above the catalogue's size.
    ``seed`` drives both the draws and the bootstrap. ``mode``, ``identity``
    (of the searcher over the whole catalogue), ``degraded`` and ``notes``
    say what searched.
    """

    points: tuple[CurvePoint, ...]
    sizes: tuple[int, ...]
    requested_sizes: tuple[int, ...]
    capped: tuple[int, ...]
    catalog_size: int
    n_probes: int
    trials: int
    seed: int
    k: int
    mode: str
    identity: dict[str, Any]
    interval: str = CURVE_INTERVAL
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL
    resamples: int = DEFAULT_RESAMPLES
    degraded: bool = False
    notes: tuple[str, ...] = ()
    seconds: float = 0.0

    def accuracy(self) -> dict[int, float]:
        """``{N: accuracy}`` (the seed's return shape)."""
        return {p.size: p.accuracy for p in self.points}

    def point(self, size: int) -> CurvePoint:
        for p in self.points:
            if p.size == size:
                return p
        raise KeyError(f"no point at N = {size}; sizes built: {list(self.sizes)}")

    def rows(self) -> list[dict[str, Any]]:
        """One plain dict per size (the per-size table as data)."""
        return [p.to_dict() for p in self.points]

    def table(self) -> str:
        """The per-size table as text: N, accuracy, interval, trials, time per trial."""
        level = f"{self.confidence_level:.0%}"
        lines = [f"distractor curve: top-{self.k} accuracy, mode {self.mode}, "
                 f"{self.n_probes} probe(s), seed {self.seed}; {level} interval: "
                 f"{self.interval}",
                 f"{'N':>5}  {'accuracy':>8}  {level + ' interval':>17}  {'trials':>6}  "
                 f"{'s/trial':>8}"]
        for p in self.points:
            secs = "-" if p.seconds_per_trial is None else f"{p.seconds_per_trial:.3f}"
            note = "  (by construction)" if p.by_construction else ""
            lines.append(f"{p.size:>5}  {p.accuracy:>8.3f}  [{p.ci_low:6.3f}, {p.ci_high:6.3f}]"
                         f"  {p.trials:>6}  {secs:>8}{note}")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


class _MemoEmbedder:
    """Wraps an embedder so each distinct text is encoded once for the whole curve.

    Catalogue texts are encoded up front in one call, so a document's vector
    is the same in every sub-catalogue whatever the batching. ``model_id``,
    ``dim`` and ``notes`` are the wrapped embedder's.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.notes = tuple(getattr(inner, "notes", ()))
        self._memo: dict[str, npt.NDArray[np.float32]] = {}

    def __getstate__(self) -> dict[str, Any]:
        """What a worker needs: the vectors, not the model (`distractor_robustness_curve`
        encodes every text a point searches before it hands the points to an engine)."""
        state = dict(self.__dict__)
        state["inner"] = None
        return state

    def warm(self, texts: Sequence[str]) -> None:
        new = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if new:
            vectors = np.asarray(self.inner.encode(new), dtype=np.float32)
            for text, vec in zip(new, vectors, strict=True):
                self._memo[text] = vec

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
        for text in texts:  # a text not warmed (a query) is encoded on its own, once
            if text not in self._memo:
                self.warm([text])
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}", field=name)
    return value


def _probes(probes: Any, catalog: Catalog) -> list[tuple[str, str]]:
    """``(query, gold)`` pairs from single-gold cases or pairs; every gold in the catalogue."""
    if isinstance(probes, str | bytes) or not isinstance(probes, Sequence):
        raise InputError("probes must be a list of single-gold DiscoveryCases or "
                         "(query, gold_id) pairs", field="probes")
    known = set(catalog.ids)
    out = []
    for i, probe in enumerate(probes):
        if isinstance(probe, DiscoveryCase):
            if len(probe.gold) != 1:
                raise InputError(f"probe {i} ({probe.query[:60]!r}) has {len(probe.gold)} gold "
                                 "ids; a distractor probe has exactly one (see "
                                 "distractor_curve_from_cases)", field="gold")
            pair = (probe.query, probe.gold[0])
        elif isinstance(probe, tuple | list) and len(probe) == 2 \
                and all(isinstance(x, str) and x for x in probe):
            pair = (probe[0], probe[1])
        else:
            raise InputError(f"probe {i} is {probe!r}; expected a DiscoveryCase or a "
                             "(query, gold_id) pair of strings", field="probes")
        if pair[1] not in known:
            raise InputError(f"probe {i} ({pair[0][:60]!r}): gold id {pair[1]!r} is not in "
                             f"catalogue {catalog.name!r}", field="gold")
        out.append(pair)
    if not out:
        raise InputError("no probes: the curve needs at least one (query, gold) probe",
                         field="probes")
    return out


def _sizes(sizes: Any, n_items: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    if isinstance(sizes, str | bytes) or not isinstance(sizes, Sequence) or not sizes:
        raise InputError(f"sizes must be a non-empty list of positive integers, got {sizes!r}",
                         field="sizes")
    requested = tuple(_positive_int(s, "sizes") for s in sizes)
    capped = tuple(sorted({s for s in requested if s > n_items}))
    built = tuple(sorted({min(s, n_items) for s in requested}))
    return requested, capped, built


def distractor_robustness_curve(
    catalog: Any,
    probes: Sequence[Any],
    *,
    mode: str = DFLT_CURVE_MODE,
    sizes: Sequence[int] = DFLT_DISTRACTOR_SIZES,
    trials: int = 20,
    seed: int = DEFAULT_SEED,
    k: int = 1,
    embedder: Embedder | None = None,
    rerank: CrossEncoder | None = None,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    resamples: int = DEFAULT_RESAMPLES,
    executor: Executor | None = None,
    search: SearchSettings | Mapping[str, Any] | None = None,
) -> DistractorCurve:
    """Top-``k`` accuracy as the catalogue grows from 1 to ``max(sizes)`` items (module notes).

    ``executor`` (`rankproof.engine`; None: this process) computes the sizes, one task
    each; every text is encoded here first (each probe's query on its own, as a
    point would), so a worker needs the vectors, never the model, and the points are
    the same whichever engine computed them.

    ``catalog`` is a `Catalog`, a path to one, or a `CatalogSearcher` (whose
    mode, embedder and reranker are then used). ``probes`` are single-gold
    `DiscoveryCase`\\ s or ``(query, gold_id)`` pairs. Sizes above the
    catalogue's size are capped at it (and listed in ``capped``). A mode that
    needs the ``dense`` extra when it is missing raises `MissingExtraError`
    with the install hint before anything is searched.

    ``search`` is the indexing and search strategy every sub-catalogue is
    built with (`SearchSettings`: which ``surfaces`` of an item are indexed,
    the fusion's ``rrf_k``); a `CatalogSearcher` brings its own.
    """
    settings = SearchSettings.of(search)
    if isinstance(catalog, CatalogSearcher):
        mode, embedder, rerank = catalog.mode, catalog.embedder, catalog.rerank
        settings = catalog.settings
        catalog = catalog.catalog
    elif isinstance(catalog, str | Path):
        catalog = load_catalog(catalog)
    elif not isinstance(catalog, Catalog):
        raise InputError(f"the distractor curve draws sub-catalogues, so it needs a catalogue "
                         f"(a Catalog, its path or a CatalogSearcher), got "
                         f"{type(catalog).__name__}", field="catalog")
    pairs = _probes(probes, catalog)
    trials = _positive_int(trials, "trials")
    k = _positive_int(k, "k")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}", field="seed")
    confidence_level = check_probability(confidence_level, "confidence_level")
    resamples = check_int(resamples, "resamples", 1)
    requested, capped, built = _sizes(sizes, len(catalog))
    curve_cost(len(pairs), len(catalog), built, trials)  # before anything is indexed
    # The searcher over the whole catalogue: refuses a missing extra or a bad mode now, and
    # is the identity the curve is recorded under.
    base = CatalogSearcher(catalog, mode=mode, embedder=embedder, rerank=rerank,
                           rrf_k=settings.rrf_k, depth=settings.depth,
                           surfaces=settings.surfaces)
    memo = None
    if base.embedder is not None and mode != "bm25":
        memo = _MemoEmbedder(base.embedder)
        memo.warm([text for _, text in catalog.docs(settings.surfaces)])
    notes = list(base.notes)
    if memo is not None:
        notes.extend(x for x in memo.notes if x not in notes)
    if capped:
        notes.append(f"size(s) {', '.join(map(str, capped))} exceed the catalogue's "
                     f"{len(catalog)} items: capped at {len(catalog)}")
    if built[0] == 1:
        notes.append("N = 1 is 1.0 by construction (the gold alone), not searched")
    if built[-1] == len(catalog) and len(catalog) > 1 and trials > 1:
        notes.append(f"N = {len(catalog)} is the whole catalogue: nothing to draw, one trial")
    started = time.perf_counter()
    if memo is not None and executor is not None:
        for query, _ in pairs:  # each on its own, as `_MemoEmbedder.encode` would
            memo.encode([query])
    items = [(catalog, pairs, size, trials, seed, k, mode, memo, rerank, confidence_level,
              resamples, settings) for size in built]
    points = []
    for point, sub_notes in (executor.map(_point_task, items) if executor is not None
                             else map(_point_task, items)):
        points.append(point)
        notes.extend(n for n in sub_notes if n not in notes)
    return DistractorCurve(
        points=tuple(points), sizes=built, requested_sizes=requested, capped=capped,
        catalog_size=len(catalog), n_probes=len(pairs), trials=trials, seed=seed, k=k,
        mode=base.mode, identity=base.identity, confidence_level=confidence_level,
        resamples=resamples, degraded=base.degraded, notes=tuple(notes),
        seconds=time.perf_counter() - started)


SEARCH_OPERATIONS = 10_000
"""Element operations one sub-catalogue search counts as in `curve_cost`: a lower
bound (building the sub-catalogue's index and searching it takes far longer)."""


def curve_cost(probes: int, items: int, sizes: Sequence[int], trials: int) -> Cost:
    """The curve's cost, refused (`InputError`, field ``trials``) before it starts when over
    the bounds of `rankproof.stats.check_cost` (``--trials 1000000000`` used to allocate
    73.6 GiB of hit flags). Each size above 1 draws ``trials`` orders of the catalogue
    (one for the whole catalogue) and searches at most one sub-catalogue per probe;
    the ``probes x trials`` hit flags of a size are held at once."""
    operations = memory = 0.0
    for size in sizes:
        if size == 1:
            continue
        runs = 1 if size == items else trials
        operations += float(runs) * (items + float(probes) * (size + SEARCH_OPERATIONS))
        memory = max(memory, float(probes) * runs)
    return check_cost(Cost(operations, memory),
                      f"the distractor curve with {trials} trial(s) per size over {probes} "
                      f"probe(s) and sizes up to {max(sizes, default=0)}", knobs="--trials",
                      field="trials")


def _draw_order(seed: int, size: int, trial: int, n_items: int) -> npt.NDArray[np.intp]:
    return np.random.default_rng([seed, size, trial]).permutation(n_items)


def _pick(ids: Sequence[str], order: npt.NDArray[np.intp], gold: str, size: int
          ) -> tuple[str, ...]:
    head = [ids[i] for i in order[:size]]
    picked = [x for x in head if x != gold][:size - 1]
    return tuple(sorted([gold, *picked]))


def sub_catalogue_ids(ids: Sequence[str], gold: str, size: int, seed: int, trial: int
                      ) -> tuple[str, ...]:
    """The ids (sorted) of one probe's sub-catalogue at ``size`` in ``trial``: gold + distractors.

    ``ids`` is the catalogue's (sorted) id list. Exposed so that a test, or
    the reader of a surprising number, can see exactly what was searched.
    """
    return _pick(ids, _draw_order(seed, size, trial, len(ids)), gold, size)


def _point_task(item: tuple[Any, ...]) -> tuple[CurvePoint, list[str]]:
    """One size of the curve (an engine task: module-level, so workers import it)."""
    return _point(*item)


def _point(catalog: Catalog, pairs: list[tuple[str, str]], size: int, trials: int, seed: int,
           k: int, mode: str, memo: _MemoEmbedder | None, rerank: CrossEncoder | None,
           confidence_level: float, resamples: int,
           settings: SearchSettings | None = None) -> tuple[CurvePoint, list[str]]:
    settings = settings or SearchSettings()
    n = len(pairs)
    if size == 1:
        return CurvePoint(size=1, accuracy=1.0, ci_low=1.0, ci_high=1.0, trials=0, hits=n,
                          attempts=n, searches=0, seconds_per_trial=None,
                          by_construction=True), []
    ids = catalog.ids
    runs = 1 if size == len(ids) else trials
    hits = np.zeros((n, runs), dtype=bool)
    searches = empty = 0
    elapsed = 0.0
    for t in range(runs):
        t0 = time.perf_counter()
        order = _draw_order(seed, size, t, len(ids))
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, (_, gold) in enumerate(pairs):
            groups.setdefault(_pick(ids, order, gold, size), []).append(i)
        for sub_ids in sorted(groups):
            members = groups[sub_ids]
            searcher = CatalogSearcher(catalog.subset(sub_ids), mode=mode, embedder=memo,
                                       rerank=rerank, cache=False, rrf_k=settings.rrf_k,
                                       depth=settings.depth, surfaces=settings.surfaces)
            rankings = searcher.search_many([pairs[i][0] for i in members], k)
            searches += 1
            for i, ranking in zip(members, rankings, strict=True):
                hits[i, t] = any(doc == pairs[i][1] for doc, _ in ranking[:k])
                empty += not ranking
        elapsed += time.perf_counter() - t0
    ci = bootstrap_ci(hits.mean(axis=1), np.zeros(n), confidence_level=confidence_level,
                      resamples=resamples, seed=seed)
    notes = [f"N = {size}: {empty} of {hits.size} probe searches retrieved nothing "
             "(counted as misses)"] if empty else []
    return CurvePoint(size=size, accuracy=float(hits.mean()), ci_low=ci.ci_low,
                      ci_high=ci.ci_high, trials=runs, hits=int(hits.sum()),
                      attempts=int(hits.size), searches=searches,
                      seconds_per_trial=elapsed / runs), notes


def distractor_curve_from_cases(catalog: Any, cases: Sequence[DiscoveryCase], **kwargs: Any
                                ) -> DistractorCurve:
    """`distractor_robustness_curve` with the single-gold cases of a case set as probes.

    Abstention and multi-gold cases are left out (a probe needs exactly one
    right answer) and the curve's notes say how many.
    """
    single = [c for c in cases if len(c.gold) == 1]
    if not single:
        raise InputError(f"none of the {len(cases)} case(s) has exactly one gold id: no "
                         "probes for the distractor curve", field="gold")
    curve = distractor_robustness_curve(catalog, single, **kwargs)
    skipped = len(cases) - len(single)
    if not skipped:
        return curve
    note = (f"{skipped} case(s) without exactly one gold id (abstention or multi-gold) "
            "are not probes")
    return dataclasses.replace(curve, notes=(*curve.notes, note))
