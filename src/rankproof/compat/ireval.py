"""ir.eval's public functions (seed 004), spelled as ir.eval spells them, over rankproof.discovery.

Change ``from ir import eval as ev`` to ``from rankproof.compat import ireval as ev``
and the calls keep working: the same signatures, defaults and keywords, the
seed's mode names (``lexical``, ``dense``, ``hybrid``), mappings where the seed
documents dicts. Everything is computed by `rankproof.discovery` (which in turn
uses rankproof's measures engine and statistics); this module only translates.

* A **corpus** is a `rankproof.discovery.Catalog`, a path to one (a JSONL file
  of ``{id, title, text, tags}`` or a folder of ``.txt``/``.md`` files), a name
  given to `register_corpus`, or anything else `rankproof.discovery.as_searcher`
  takes (a searcher, a ``(query, k) -> [(id, score)]`` function).
* **Surfaces** are the parts of an item that are indexed: the seed's ``name``
  and ``description`` (``body`` too) are a catalogue item's ``title`` and
  ``text``; ``tags`` are ``tags``.
* **Search keywords** (``**search_kw``) are the ones rankproof's catalogue
  search has: ``rrf_k``, ``depth``, ``rerank`` (a cross-encoder),
  ``embedder`` (``"light"``: the hashing test double, stamped ``degraded``;
  ``"default"``: the bundled MiniLM; or an embedder object). Any other
  ``ir.retrieve.search`` keyword (``filter``, ``bm25``, ``surface_weights``, …)
  is refused with a `ConfigError` naming it, never silently ignored.

What differs from the seed, and why, is in ``docs/compat.md``.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rankproof._errors import ConfigError, InputError
from rankproof.discovery import (
    DFLT_CALIB_SENSITIVITY_WEIGHT,
    DFLT_DISTRACTOR_SIZES,
    DFLT_K_VALUES,
    DFLT_METRICS,
    DFLT_MODE,
    DFLT_SWEEP_MAX_K,
    DFLT_SWEEP_MIN_SCORE,
    DFLT_SWEEP_OBJECTIVE,
    DFLT_SWEEP_REL,
    LEVEL_GAINS,
    RELEVANCE_LEVELS,
    SWEEP_METRICS,
    Catalog,
    CatalogItem,
    DiscoveryCase,
    DiscoveryReport,
    DistractorCurve,
    MinScoreCalibration,
    NamedSetReport,
    NamedSets,
    PackageRelevanceCase,
    RetrievalReport,
    SearchSettings,
    SelectionGridPoint,
    SelectionReport,
    SelectionSweep,
    derive_named_sets,
    fp_rate_on_distractors,
    level_histogram,
    load_cases,
    load_catalog,
    load_package_cases,
    read_package_meta,
    recall_on_hard_positives,
    save_cases,
    save_package_cases,
)
from rankproof.discovery import ComparisonReport as _CoreComparisonReport
from rankproof.discovery import as_searcher as _as_searcher
from rankproof.discovery import calibrate_min_score as _calibrate_min_score
from rankproof.discovery import compare_indexings as _compare_indexings
from rankproof.discovery import distractor_robustness_curve as _curve
from rankproof.discovery import evaluate_discovery as _evaluate_discovery
from rankproof.discovery import evaluate_named_sets as _evaluate_named_sets
from rankproof.discovery import evaluate_selection as _evaluate_selection
from rankproof.discovery import load_calibration as _load_calibration
from rankproof.discovery import retrieval_report as _retrieval_report
from rankproof.discovery import retrieve as _retrieve
from rankproof.discovery import sweep_selector as _sweep_selector
from rankproof.discovery import to_graded_qrels as _to_graded_qrels
from rankproof.discovery import to_qrels as _to_qrels
from rankproof.discovery import validate_cases as _validate_cases
from rankproof.retrieval import CrossEncoder, Embedder, HashingEmbedder

__all__ = [
    "DFLT_CALIB_SENSITIVITY_WEIGHT",
    "DFLT_CURVE_MODE",
    "DFLT_DISTRACTOR_SIZES",
    "DFLT_K_VALUES",
    "DFLT_METRICS",
    "DFLT_MODE",
    "DFLT_SWEEP_MAX_K",
    "DFLT_SWEEP_MIN_SCORE",
    "DFLT_SWEEP_OBJECTIVE",
    "DFLT_SWEEP_REL",
    "LEVEL_GAINS",
    "MODES",
    "RELEVANCE_LEVELS",
    "SURFACE_ALIASES",
    "SWEEP_METRICS",
    "ComparisonReport",
    "CurveAccuracy",
    "DiscoveryCase",
    "DiscoveryReport",
    "MinScoreCalibration",
    "NamedSetReport",
    "NamedSets",
    "PackageRelevanceCase",
    "RetrievalReport",
    "SelectionGridPoint",
    "SelectionReport",
    "SelectionSweep",
    "as_doc_retriever",
    "calibrate_min_score",
    "compare_indexings",
    "corpus_artifact_ids",
    "derive_named_sets",
    "distractor_curve_from_cases",
    "distractor_robustness_curve",
    "evaluate_discovery",
    "evaluate_named_sets",
    "evaluate_selection",
    "fp_rate_on_distractors",
    "level_histogram",
    "load_calibration",
    "load_cases",
    "load_package_cases",
    "open_corpus",
    "read_package_meta",
    "recall_on_hard_positives",
    "register_corpus",
    "retrieval_report",
    "save_cases",
    "save_package_cases",
    "sweep_selector",
    "to_graded_qrels",
    "to_qrels",
    "validate_cases",
]

#: The seed's mode names and rankproof's: ``lexical`` is rankproof's ``bm25``.
MODES: dict[str, str] = {"lexical": "bm25", "dense": "dense", "hybrid": "hybrid",
                         "bm25": "bm25"}
#: The seed's curve default is dense search with its numpy-only ("light") embedder.
DFLT_CURVE_MODE = "dense"
#: The seed's surface kinds, as the parts of a catalogue item they are.
SURFACE_ALIASES: dict[str, str] = {"name": "title", "title": "title", "description": "text",
                                   "body": "text", "text": "text", "tags": "tags"}
_SETTING_KEYS = ("rrf_k", "depth")
_REGISTRY: dict[str, Catalog | str] = {}


# -- translation helpers --------------------------------------------------------------


def register_corpus(name: str, corpus: Catalog | str | os.PathLike[str]) -> None:
    """Make ``name`` stand for a catalogue (or its path) in every call of this module."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"a corpus name is a non-empty string, got {name!r}", field="name")
    if not isinstance(corpus, Catalog | str | os.PathLike):
        raise InputError(f"register a Catalog or a catalogue path, got "
                         f"{type(corpus).__name__}", field="corpus")
    _REGISTRY[name] = corpus if isinstance(corpus, Catalog) else os.fspath(corpus)


def open_corpus(name: str) -> Catalog:
    """The registered corpus ``name`` as a `Catalog` (the seed's ``ir.open_corpus``)."""
    found = _REGISTRY.get(name)
    if found is None:
        known = ", ".join(sorted(_REGISTRY)) or "none yet (register_corpus)"
        raise ConfigError(f"no corpus registered as {name!r}; registered: {known}")
    return found if isinstance(found, Catalog) else load_catalog(found, name=name)


def _corpus(corpus: Any) -> Any:
    """A registered name becomes its catalogue; a mapping ``{id: raw}`` a catalogue too."""
    if isinstance(corpus, str) and corpus in _REGISTRY:
        return open_corpus(corpus)
    if isinstance(corpus, str | os.PathLike):
        if not Path(corpus).exists():
            known = ", ".join(sorted(_REGISTRY)) or "none"
            raise ConfigError(f"corpus {os.fspath(corpus)!r} is neither a catalogue path nor a "
                              f"registered name (registered: {known})")
        return load_catalog(corpus)
    if isinstance(corpus, Mapping):
        return _scope_catalog(corpus)
    return corpus


def _scope_catalog(scope: Mapping[str, Any]) -> Catalog:
    """The seed's ``{artifact_id: raw}`` pool as a catalogue (raw: text or a mapping)."""
    items = []
    for item_id, raw in scope.items():
        if isinstance(raw, CatalogItem):
            items.append(dataclasses.replace(raw, id=str(item_id)))
        elif isinstance(raw, str):
            items.append(CatalogItem(str(item_id), text=raw))
        elif isinstance(raw, Mapping):
            tags = raw.get("tags", ())
            items.append(CatalogItem(
                str(item_id), title=str(raw.get("name", raw.get("title", "")) or ""),
                text=str(raw.get("description", raw.get("text", "")) or ""),
                tags=tuple(str(t) for t in (tags if isinstance(tags, list | tuple) else ()))))
        else:
            raise InputError(f"scope item {item_id!r} is a {type(raw).__name__}; give its "
                             "text or a mapping with name/description/tags", field="scope")
    return Catalog(tuple(items), name="scope")


def _mode(mode: Any) -> str:
    if mode not in MODES:
        raise ConfigError(f"mode must be one of lexical, dense, hybrid, got {mode!r}")
    return MODES[mode]


def _surfaces(surfaces: Iterable[str] | None) -> tuple[str, ...] | None:
    if surfaces is None:
        return None
    if isinstance(surfaces, str):
        surfaces = [surfaces]
    out = []
    for s in surfaces:
        if s not in SURFACE_ALIASES:
            raise ConfigError(f"unknown surface {s!r}; the surfaces are "
                              f"{', '.join(SURFACE_ALIASES)}")
        out.append(SURFACE_ALIASES[s])
    return tuple(dict.fromkeys(out))


def _embedder(spec: Any) -> Embedder | None:
    if spec is None or spec == "default":
        return None
    if spec == "light":
        return HashingEmbedder()
    if isinstance(spec, str):
        raise ConfigError(f"embedder must be 'light', 'default' or an embedder object, got "
                          f"{spec!r}")
    if not callable(getattr(spec, "encode", None)):
        raise ConfigError(f"embedder {spec!r} has no encode(texts) method")
    return spec  # type: ignore[no-any-return]


@dataclasses.dataclass(frozen=True)
class _Search:
    settings: SearchSettings
    embedder: Embedder | None
    rerank: CrossEncoder | None

    def kw(self) -> dict[str, Any]:
        return {"search": self.settings, "embedder": self.embedder, "rerank": self.rerank}


def _settings_of(search_kw: Mapping[str, Any], surfaces: Iterable[str] | None = None,
                 *, where: str = "search keyword") -> dict[str, Any]:
    unknown = sorted(k for k in search_kw if k not in (*_SETTING_KEYS, "rerank", "embedder"))
    if unknown:
        raise ConfigError(f"unsupported {where}(s) {', '.join(unknown)}: rankproof's catalogue "
                          f"search takes surfaces, {', '.join(_SETTING_KEYS)}, rerank and "
                          "embedder")
    out = {k: search_kw[k] for k in _SETTING_KEYS if k in search_kw}
    chosen = _surfaces(surfaces)
    if chosen is not None:
        out["surfaces"] = chosen
    return out


def _search(surfaces: Iterable[str] | None, search_kw: Mapping[str, Any]) -> _Search:
    settings = SearchSettings.of(_settings_of(search_kw, surfaces))
    rerank = search_kw.get("rerank")
    if rerank is not None and rerank is not False and not callable(getattr(rerank, "score",
                                                                           None)):
        raise ConfigError(f"rerank must be a cross-encoder object (with score()), got {rerank!r}")
    return _Search(settings, _embedder(search_kw.get("embedder")),
                   None if rerank is False else rerank)


# -- retrieval ------------------------------------------------------------------------


def as_doc_retriever(corpus: Any, *, mode: str = DFLT_MODE,
                     surfaces: Iterable[str] | None = None, **search_kw: Any
                     ) -> Callable[..., list[str]]:
    """``retriever(query, *, limit=10) -> [artifact_id, ...]``, best first, one per artifact."""
    s = _search(surfaces, search_kw)
    searcher = _as_searcher(_corpus(corpus), mode=_mode(mode), **s.kw())

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        return [doc for doc, _ in _retrieve(searcher, [query], limit)[0]]

    return retriever


def corpus_artifact_ids(corpus: Any) -> set[str]:
    """The ids in a corpus (a catalogue, its path or a registered name)."""
    searcher = _as_searcher(_corpus(corpus), mode="bm25")
    ids = searcher.ids
    if ids is None:
        raise InputError("this corpus (a function or a target) does not list its ids")
    return set(ids)


def validate_cases(corpus: Any, cases: Sequence[DiscoveryCase]) -> dict[int, list[str]]:
    """``{case index: [gold ids absent from the corpus]}`` (empty: the cases fit)."""
    return _validate_cases(corpus_artifact_ids(corpus), cases)


def to_qrels(cases: Sequence[DiscoveryCase], *, grade: float = 1.0
             ) -> tuple[dict[str, str], dict[str, dict[str, float]]]:
    """``(queries, qrels)`` of the gold cases, qrels as ``{qid: {artifact_id: grade}}``."""
    if isinstance(grade, bool) or not isinstance(grade, int | float) or grade != int(grade) \
            or grade <= 0:
        raise ConfigError(f"grade must be a positive whole number (rankproof's judgments are "
                          f"integers), got {grade!r}")
    queries, qrels = _to_qrels(cases, grade=int(grade))
    return queries, {q: {d: float(v) for d, v in docs.items()}
                     for q, docs in qrels.to_dict().items()}


def to_graded_qrels(cases: Sequence[PackageRelevanceCase], theme: str, *,
                    probe: str | None = None, gains: Mapping[str, float] = LEVEL_GAINS,
                    query_id: str | None = None
                    ) -> tuple[dict[str, str], dict[str, dict[str, float]]]:
    """One theme's ``(queries, {qid: {artifact_id: gain}})`` (positive gains only)."""
    queries, qrels = _to_graded_qrels(cases, theme, probe=probe, gains=gains,
                                      query_id=query_id)
    return queries, {q: {d: float(v) for d, v in docs.items()}
                     for q, docs in qrels.to_dict().items()}


def evaluate_discovery(corpus: Any, cases: Sequence[DiscoveryCase], *,
                       k_values: Sequence[int] = DFLT_K_VALUES, primary_k: int = 10,
                       metrics: Sequence[str] = DFLT_METRICS, mode: str = DFLT_MODE,
                       surfaces: Iterable[str] | None = None,
                       abstain_threshold: float | None = None,
                       **search_kw: Any) -> DiscoveryReport:
    """Metrics, failure taxonomy and abstention of ``cases`` (`rankproof.discovery`)."""
    return _evaluate_discovery(_corpus(corpus), cases, k_values=k_values, primary_k=primary_k,
                               metrics=metrics, mode=_mode(mode),
                               abstain_threshold=abstain_threshold,
                               **_search(surfaces, search_kw).kw())


def retrieval_report(corpus: Any, cases: Sequence[DiscoveryCase], *,
                     k_values: Sequence[int] = DFLT_K_VALUES,
                     metrics: Sequence[str] = DFLT_METRICS, mode: str = DFLT_MODE,
                     surfaces: Iterable[str] | None = None, limit: int | None = None,
                     **search_kw: Any) -> RetrievalReport:
    """The retrieval measures only (``.primary``: mean nDCG@10); refuses an all-abstention set."""
    return _retrieval_report(_corpus(corpus), cases, k_values=k_values, primary_k=10,
                             metrics=metrics, mode=_mode(mode), limit=limit,
                             **_search(surfaces, search_kw).kw())


def evaluate_selection(corpus: Any, cases: Sequence[DiscoveryCase], *,
                       strategy: str = "conservative", mode: str = DFLT_MODE, k: int = 10,
                       surfaces: Iterable[str] | None = None, max_k: int = 3,
                       rel: float = 0.9, gap_ratio: float = 0.5,
                       min_score: float | None = None, **search_kw: Any) -> SelectionReport:
    """Selection quality on the same ``k`` candidates (`rankproof.discovery.evaluate_selection`)."""
    return _evaluate_selection(_corpus(corpus), cases, strategy=strategy, mode=_mode(mode),
                               k=k, max_k=max_k, rel=rel, gap_ratio=gap_ratio,
                               min_score=min_score, **_search(surfaces, search_kw).kw())


def sweep_selector(corpus: Any, cases: Sequence[DiscoveryCase], *,
                   strategy: str = "conservative", mode: str = DFLT_MODE, k: int = 10,
                   surfaces: Iterable[str] | None = None,
                   max_k_grid: Sequence[int] = DFLT_SWEEP_MAX_K,
                   rel_grid: Sequence[float] = DFLT_SWEEP_REL,
                   min_score_grid: Sequence[float | None] = DFLT_SWEEP_MIN_SCORE,
                   gap_ratio: float = 0.5, objective: str = DFLT_SWEEP_OBJECTIVE,
                   **search_kw: Any) -> SelectionSweep:
    """The selector's knobs swept over one retrieval pass."""
    return _sweep_selector(_corpus(corpus), cases, strategy=strategy, mode=_mode(mode), k=k,
                           max_k_grid=max_k_grid, rel_grid=rel_grid,
                           min_score_grid=min_score_grid, gap_ratio=gap_ratio,
                           objective=objective, **_search(surfaces, search_kw).kw())


def calibrate_min_score(corpus: Any, cases: Sequence[DiscoveryCase], *,
                        mode: str = DFLT_MODE, k: int = 10,
                        surfaces: Iterable[str] | None = None,
                        sensitivity_weight: float = DFLT_CALIB_SENSITIVITY_WEIGHT,
                        floor_grid: Sequence[float] | None = None, persist: bool = False,
                        **search_kw: Any) -> MinScoreCalibration:
    """The abstention floor for ``(corpus, mode)``; ``persist`` stores it beside the catalogue."""
    return _calibrate_min_score(_corpus(corpus), cases, mode=_mode(mode), k=k,
                                sensitivity_weight=sensitivity_weight, floor_grid=floor_grid,
                                persist=persist, **_search(surfaces, search_kw).kw())


def load_calibration(corpus: Any, mode: str, *, rerank: CrossEncoder | None = None,
                     rerank_text: str = "surface", rerank_max_chars: int = 2000
                     ) -> MinScoreCalibration | None:
    """The stored floor for ``(corpus, mode)``, or None when none was stored.

    A catalogue held only in memory has nowhere a floor could have been stored,
    so it is None too. rankproof's rerank reads the indexed text whole:
    ``rerank_text`` and ``rerank_max_chars`` take only their defaults.
    """
    if rerank_text != "surface" or rerank_max_chars != 2000:
        raise ConfigError("rankproof's cross-encoder reranks the indexed text as it is; "
                          "rerank_text and rerank_max_chars take only their defaults")
    source = _corpus(corpus)
    if isinstance(source, Catalog) and source.path is None:
        return None
    return _load_calibration(source, mode=_mode(mode), rerank=rerank)


def evaluate_named_sets(corpus: Any, named_sets: NamedSets, theme: str | None = None, *,
                        probe: str, mode: str = DFLT_MODE, k: int = 10,
                        surfaces: Iterable[str] | None = None, **search_kw: Any
                        ) -> NamedSetReport:
    """One theme's distractor false-positive rate and hard-positive recall at ``k``."""
    return _evaluate_named_sets(_corpus(corpus), named_sets, theme, probe=probe,
                                mode=_mode(mode), k=k, **_search(surfaces, search_kw).kw())


# -- indexing comparisons ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ComparisonReport(_CoreComparisonReport):
    """`rankproof.discovery.ComparisonReport` whose `regressions` are dicts, as the seed's."""

    def regressions(self, threshold: float = 0,  # type: ignore[override]
                    baseline: str | None = None) -> list[dict[str, Any]]:
        """One dict per regressing ``(theme, id, label)``: ``artifact_id``, ``role``, ranks."""
        return [r.to_dict() for r in super().regressions(threshold, baseline)]


def compare_indexings(corpora: Mapping[str, Any], cases: Iterable[PackageRelevanceCase], *,
                      themes: Sequence[str], probes: Mapping[str, str], k: int = 20,
                      named_sets: Mapping[str, NamedSets] | Sequence[NamedSets] | None = None,
                      mode: str = DFLT_MODE, rank_depth: int = 1000,
                      gains: Mapping[str, float] = LEVEL_GAINS,
                      surfaces: Iterable[str] | None = None,
                      search_kw_by_label: Mapping[str, Mapping[str, Any]] | None = None,
                      **search_kw: Any) -> ComparisonReport:
    """N-way comparison of labelled corpora (the first the baseline), per theme and named id.

    ``search_kw_by_label`` overrides the shared search settings per label
    (``surfaces`` and ``rrf_k``/``depth``; not ``k``: the depth is ``rank_depth``).
    """
    s = _search(surfaces, search_kw)
    by_label: dict[str, dict[str, Any]] = {}
    for label, kw in (search_kw_by_label or {}).items():
        if not isinstance(kw, Mapping):
            raise ConfigError(f"search_kw_by_label[{label!r}] must be a mapping of search "
                              f"keywords, got {type(kw).__name__}")
        kw = dict(kw)
        by_label[label] = _settings_of({k: v for k, v in kw.items() if k != "surfaces"},
                                       kw.get("surfaces"),
                                       where=f"search_kw_by_label[{label!r}] keyword")
    report = _compare_indexings({label: _corpus(c) for label, c in corpora.items()}, cases,
                                themes=themes, probes=probes, k=k, named_sets=named_sets,
                                mode=_mode(mode), rank_depth=rank_depth, gains=gains,
                                search_by_label=by_label, **s.kw())
    return ComparisonReport(**{f.name: getattr(report, f.name)
                               for f in dataclasses.fields(report)})


# -- the distractor curve -----------------------------------------------------------------


class CurveAccuracy(dict[int, float]):
    """``{N: accuracy}`` as the seed returns it, with the full curve in ``.curve``.

    ``.curve`` (a `rankproof.discovery.DistractorCurve`) holds the intervals,
    trials, notes and the ``degraded`` stamp a bare mapping cannot carry.
    """

    curve: DistractorCurve


def _strategy(strategy: Any) -> SearchSettings:
    if strategy is None or strategy in ("whole_text", "WholeText"):
        return SearchSettings()
    if isinstance(strategy, SearchSettings):
        return strategy
    if isinstance(strategy, Mapping):
        kw = dict(strategy)
        return SearchSettings.of(_settings_of({k: v for k, v in kw.items() if k != "surfaces"},
                                              kw.get("surfaces"), where="strategy key"))
    if isinstance(strategy, Iterable) and not isinstance(strategy, str):
        return SearchSettings(surfaces=_surfaces(strategy))
    raise ConfigError(f"strategy must be None (the whole text), a list of surfaces, a mapping "
                      f"of search settings or a SearchSettings, got {strategy!r}")


def distractor_robustness_curve(scope: Any, probes: Sequence[Any], *, strategy: Any = None,
                                embedder: Any = "light", mode: str = DFLT_CURVE_MODE,
                                sizes: Sequence[int] = DFLT_DISTRACTOR_SIZES,
                                trials: int = 20, seed: int = 0, k: int = 1) -> CurveAccuracy:
    """``{N: top-k accuracy}`` as the catalogue grows (`rankproof.discovery`'s curve).

    The default ``embedder="light"`` is the hashing embedder: fast and offline,
    but a test double; the curve is then stamped ``degraded`` (and a warning
    says so). Pass ``embedder="default"`` for the bundled MiniLM.
    """
    curve = _curve(_corpus(scope), probes, mode=_mode(mode), sizes=sizes, trials=trials,
                   seed=seed, k=k, embedder=_embedder(embedder) if _mode(mode) != "bm25"
                   else None, search=_strategy(strategy))
    if curve.degraded:
        warnings.warn("distractor curve: " + "; ".join(curve.notes[:1]), stacklevel=2)
    out = CurveAccuracy(curve.accuracy())
    out.curve = curve
    return out


def distractor_curve_from_cases(source: Any, cases: Sequence[DiscoveryCase], **kwargs: Any
                                ) -> CurveAccuracy:
    """The curve with the single-gold cases as probes (others are left out, and noted)."""
    single = [c for c in cases if len(c.gold) == 1]
    if not single:
        raise InputError(f"none of the {len(cases)} case(s) has exactly one gold id: no "
                         "probes for the distractor curve", field="gold")
    return distractor_robustness_curve(source, single, **kwargs)
