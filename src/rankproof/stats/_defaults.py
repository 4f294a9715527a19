"""The statistics settings' defaults and choices, each written once.

Every function, Typer option, checks-file field and experiment-file field that
takes one of these settings reads its default from here (`StatSettings` holds
them together), so "how many resamples by default" has one answer in the whole
project. ``tests/stats/test_defaults.py`` scans ``src/`` and fails on a resamples
or alpha default written as a literal anywhere else.

Why these values: the sign-flip randomization test is exact in the limit and makes
no distributional assumption (Smucker, Allan & Carterette 2007 recommend it for IR);
``B = 10,000`` resamples keep the Monte-Carlo error of a p near 0.05 around ±0.002;
Holm controls the family-wise error rate under any dependence between the rows.
"""

from __future__ import annotations

from typing import Literal

TestName = Literal["randomization", "t", "bootstrap", "wilcoxon", "sign"]
Correction = Literal["holm", "bh", "bonferroni", "none"]
PairsName = Literal["baseline", "all"]

#: The valid ``test=`` choices (the CLI's ``--test`` lists them).
TESTS: tuple[str, ...] = ("randomization", "t", "bootstrap", "wilcoxon", "sign")
#: The valid ``correction=`` choices (the CLI's ``--correction`` lists them).
CORRECTIONS: tuple[str, ...] = ("holm", "bh", "bonferroni", "none")
#: The valid ``pairs=`` choices: each candidate against the baseline, or every pair.
PAIRS: tuple[str, ...] = ("baseline", "all")

DEFAULT_TEST: TestName = "randomization"
DEFAULT_ALPHA: float = 0.05
DEFAULT_CORRECTION: Correction = "holm"
DEFAULT_RESAMPLES: int = 10_000
DEFAULT_SEED: int = 0
DEFAULT_CONFIDENCE_LEVEL: float = 0.95
DEFAULT_PAIRS: PairsName = "baseline"
