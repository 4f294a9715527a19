"""The public names of `rankproof.discovery`, pinned (seed 004's names where it has one)."""

from __future__ import annotations

import rankproof.discovery as discovery

SEED_004_NAMES = {
    "DFLT_CALIB_SENSITIVITY_WEIGHT", "DFLT_CURVE_MODE", "DFLT_DISTRACTOR_SIZES",
    "DFLT_K_VALUES", "DFLT_METRICS", "DFLT_MODE", "DFLT_SWEEP_MAX_K", "DFLT_SWEEP_MIN_SCORE",
    "DFLT_SWEEP_OBJECTIVE", "DFLT_SWEEP_REL", "LEVEL_GAINS", "RELEVANCE_LEVELS",
    "SWEEP_METRICS", "ComparisonReport", "DiscoveryCase", "DiscoveryReport",
    "MinScoreCalibration", "NamedSetReport", "NamedSets", "PackageRelevanceCase",
    "SelectionGridPoint", "SelectionReport", "SelectionSweep", "calibrate_min_score",
    "compare_indexings", "derive_named_sets", "distractor_curve_from_cases",
    "distractor_robustness_curve", "evaluate_discovery", "evaluate_named_sets",
    "evaluate_selection", "fp_rate_on_distractors", "level_histogram", "load_calibration",
    "load_cases", "load_package_cases", "read_package_meta", "recall_on_hard_positives",
    "retrieval_report", "save_cases", "save_package_cases", "sweep_selector",
    "to_graded_qrels", "to_qrels", "validate_cases",
}


def test_seed_004_names_are_all_public() -> None:
    assert set(discovery.__all__) >= SEED_004_NAMES


def test_seed_004_defaults() -> None:
    assert discovery.DFLT_K_VALUES == (1, 5, 10)
    assert discovery.DFLT_METRICS == ("ndcg", "recall", "precision", "mrr", "map")
    assert discovery.DFLT_MODE == "hybrid"
    assert discovery.DFLT_DISTRACTOR_SIZES == (1, 4, 8, 16, 32, 64, 128)
    assert discovery.DFLT_CURVE_MODE == "bm25"  # the seed's dense + hashing is a test double here
    assert discovery.DFLT_SWEEP_MAX_K == (1, 2, 3, 5, 8)
    assert discovery.DFLT_SWEEP_REL == (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    assert discovery.DFLT_SWEEP_MIN_SCORE == (None,)
    assert discovery.DFLT_SWEEP_OBJECTIVE == "selection_f1"
    assert discovery.DFLT_CALIB_SENSITIVITY_WEIGHT == 0.5
    assert discovery.RELEVANCE_LEVELS == ("none", "tangential", "uses-tools", "strong", "core")
    assert discovery.LEVEL_GAINS == {"none": 0.0, "tangential": 0.0, "uses-tools": 1.0,
                                     "strong": 2.0, "core": 3.0}
    assert discovery.SWEEP_METRICS == ("selection_f1", "selection_precision",
                                       "selection_recall", "conditional_commit_rate",
                                       "abstention_accuracy", "mean_selected_size")


def test_the_bundled_example_meets_its_promises() -> None:
    catalog = discovery.load_catalog(discovery.EXAMPLE_CATALOG)
    cases = discovery.load_cases(discovery.EXAMPLE_CASES)
    assert len(catalog) >= 128 and len(cases) >= 80
    assert sum(c.gold_is_none for c in cases) >= 15
    assert discovery.validate_cases(catalog.ids, cases) == {}
    labels = discovery.load_package_cases(discovery.EXAMPLE_THEMES)
    themes = discovery.read_package_meta(discovery.EXAMPLE_THEMES)["themes"]
    assert len(themes) >= 3
    for theme in themes:
        named = discovery.derive_named_sets(labels, theme, observed_floor=1e300)
        assert len(named.hard_positives) >= 2 and len(named.distractors) >= 3, theme
