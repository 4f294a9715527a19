"""Defaults and vocabularies of capability discovery (seed 004's names and values).

Kept in one small module so every part of `rankproof.discovery` (and the CLI)
reads the same numbers.
"""

from __future__ import annotations

#: Rank cutoffs reported by default.
DFLT_K_VALUES: tuple[int, ...] = (1, 5, 10)
#: Metrics reported by default, by the seed's names; `METRIC_FAMILIES` maps them to
#: rankproof's measure families (no second metric table: the measures engine computes them).
DFLT_METRICS: tuple[str, ...] = ("ndcg", "recall", "precision", "mrr", "map")
METRIC_FAMILIES: dict[str, str] = {"ndcg": "nDCG", "recall": "R", "precision": "P",
                                   "mrr": "RR", "map": "AP"}
#: Default ranking mode for discovery (fusion of bm25 and dense: the strongest).
DFLT_MODE = "hybrid"
#: Catalogue sizes of the distractor curve.
DFLT_DISTRACTOR_SIZES: tuple[int, ...] = (1, 4, 8, 16, 32, 64, 128)
#: The curve's default mode. The seed's default is dense with a hashing embedder, which
#: rankproof treats as a labelled test double; bm25 is the honest fast default.
DFLT_CURVE_MODE = "bm25"
#: Selector sweep grid: commit-size cap, relative-to-top keep band, absolute floors.
DFLT_SWEEP_MAX_K: tuple[int, ...] = (1, 2, 3, 5, 8)
DFLT_SWEEP_REL: tuple[float, ...] = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
DFLT_SWEEP_MIN_SCORE: tuple[float | None, ...] = (None,)
DFLT_SWEEP_OBJECTIVE = "selection_f1"
#: The scalar selection metrics a sweep can optimise or rank by.
SWEEP_METRICS: tuple[str, ...] = ("selection_f1", "selection_precision", "selection_recall",
                                  "conditional_commit_rate", "abstention_accuracy",
                                  "mean_selected_size")
#: Weight on sensitivity (vs specificity) when calibrating the abstention floor.
DFLT_CALIB_SENSITIVITY_WEIGHT = 0.5
#: Graded relevance levels of the package-relevance harness, weakest first, and their gains.
RELEVANCE_LEVELS: tuple[str, ...] = ("none", "tangential", "uses-tools", "strong", "core")
LEVEL_GAINS: dict[str, float] = {"none": 0.0, "tangential": 0.0, "uses-tools": 1.0,
                                 "strong": 2.0, "core": 3.0}
