"""Capability discovery: did the right item come first, low, or not at all — and does the
system say "nothing applies" when nothing does?

Seed 004's evaluator (ir.eval) on rankproof's own layers: its measures engine
computes every retrieval number (no second metric table), its statistics
decide "better", its retrieval stages search a catalogue. What is searched is
a `Searcher`: a `Catalog` in a mode (``bm25``, ``dense``, ``hybrid``, with an
optional cross-encoder rerank) or your own ``(query, k) -> [(id, score)]``
function. Every evaluator retrieves once and scores what came back.
"""

from rankproof.discovery._cases import (
    META_KEY,
    DiscoveryCase,
    case_id,
    check_cases,
    load_cases,
    read_meta,
    save_cases,
    to_qrels,
    validate_cases,
)
from rankproof.discovery._defaults import (
    DFLT_CALIB_SENSITIVITY_WEIGHT,
    DFLT_CURVE_MODE,
    DFLT_DISTRACTOR_SIZES,
    DFLT_K_VALUES,
    DFLT_METRICS,
    DFLT_MODE,
    DFLT_SWEEP_MAX_K,
    DFLT_SWEEP_MIN_SCORE,
    DFLT_SWEEP_OBJECTIVE,
    DFLT_SWEEP_REL,
    LEVEL_GAINS,
    METRIC_FAMILIES,
    RELEVANCE_LEVELS,
    SWEEP_METRICS,
)
from rankproof.discovery._source import (
    MODES,
    CallableSearcher,
    Catalog,
    CatalogItem,
    CatalogSearcher,
    Ranking,
    Searcher,
    as_searcher,
    callable_name,
    import_callable,
    load_catalog,
    retrieve,
)

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
    "META_KEY",
    "METRIC_FAMILIES",
    "MODES",
    "RELEVANCE_LEVELS",
    "SWEEP_METRICS",
    "CallableSearcher",
    "Catalog",
    "CatalogItem",
    "CatalogSearcher",
    "DiscoveryCase",
    "Ranking",
    "Searcher",
    "as_searcher",
    "callable_name",
    "case_id",
    "check_cases",
    "import_callable",
    "load_cases",
    "load_catalog",
    "read_meta",
    "retrieve",
    "save_cases",
    "to_qrels",
    "validate_cases",
]
