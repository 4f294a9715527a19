"""Statistics: paired tests, intervals, multiple-comparison corrections, effect sizes, power.

Pure functions over per-query scores. Inputs are ``{qid: score}`` mappings
(paired by query id), :class:`~rankproof.measures.PerQuery` with a measure,
or equal-length arrays (positional). Every result is a frozen dataclass with
``to_dict()``/``to_json()``, and every random procedure takes a ``seed``
(recorded) and is independent of chunking and query order.

The default comparison is :func:`paired_test` with the sign-flip
:func:`randomization_test`; :func:`paired_t` is reported beside it;
:func:`paired_interval` gives the interval that agrees with the test (the
test inverted over shifts; :func:`bootstrap_ci` the percentile bootstrap
beside it); :func:`paired_tests` runs many such tests from one shared draw of sign
vectors (:func:`sign_flip_family`), with the same numbers; :func:`correct` adjusts a family of
p-values (Holm by default). The resampling loops report how far they have got
through an optional ``progress=`` :data:`ProgressCallback` (a :class:`Tally` adds up
several, and a result is the same with or without one). :func:`wilcoxon` and
:func:`sign_test` exist for comparison with other tools, never as defaults.
:func:`null_distribution` replays a test from stored per-query differences and its
recorded seed, so a report can draw the distribution the p-value came from without storing it.

Every resampling entry point first estimates what the request costs
(:class:`Cost`, :func:`paired_test_cost` and friends) and refuses, through
:func:`check_cost`, one that would exceed the memory or time bound of
``rankproof._limits`` — with the estimate in the message.

:class:`StatSettings` holds the settings of a comparison (test, alpha, correction,
resamples, seed, confidence level, pairs) as one frozen value validated once; the
comparison functions take it as ``stats=``. Each default is a named constant
(``DEFAULT_TEST``, ``DEFAULT_ALPHA``, …, in ``_defaults.py``), and ``TESTS``,
``CORRECTIONS`` and ``PAIRS`` are the valid choices (the tuples the CLI builds its
options from).
"""

from rankproof.stats._asymptotic import (
    ASYMPTOTIC_MIN_QUERIES,
    BERRY_ESSEEN_C,
    PROCEDURES,
    choose_procedure,
)
from rankproof.stats._bootstrap import BootstrapResult, bootstrap_ci
from rankproof.stats._correct import correct
from rankproof.stats._cost import (
    OPERATIONS_PER_SECOND,
    Cost,
    check_cost,
    paired_test_cost,
    tukey_cost,
)
from rankproof.stats._defaults import (
    CORRECTIONS,
    DEFAULT_ALPHA,
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_CORRECTION,
    DEFAULT_PAIRS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TEST,
    PAIRS,
    TESTS,
    Correction,
    PairsName,
    TestName,
)
from rankproof.stats._family import SignFlipFamily, sign_flip_family
from rankproof.stats._interval import (
    INTERVAL_LABELS,
    INTERVAL_METHODS,
    IntervalMethod,
    PairedInterval,
    paired_interval,
)
from rankproof.stats._null import NullDistribution, null_distribution
from rankproof.stats._paired import (
    BOOTSTRAP_P,
    TEST_INTERVALS,
    PairedResult,
    paired_test,
    paired_tests,
)
from rankproof.stats._parametric import (
    SignTestResult,
    TTestResult,
    WilcoxonResult,
    paired_t,
    sign,
    sign_test,
    wilcoxon,
)
from rankproof.stats._percentile import nearest_rank
from rankproof.stats._power import (
    DetectionTable,
    SimulatedPower,
    detection_table,
    power,
    queries_needed,
    simulated_power,
)
from rankproof.stats._progress import ProgressCallback, Tally
from rankproof.stats._randomization import RandomizationResult, randomization_test
from rankproof.stats._results import Result
from rankproof.stats._settings import StatSettings
from rankproof.stats._tukey import PairComparison, TukeyHSDResult, tukey_hsd_randomized
from rankproof.stats._validate import (
    PairedScores,
    check_choice,
    check_int,
    check_probability,
    paired_scores,
)

__all__ = [
    "ASYMPTOTIC_MIN_QUERIES",
    "BERRY_ESSEEN_C",
    "BOOTSTRAP_P",
    "CORRECTIONS",
    "DEFAULT_ALPHA",
    "DEFAULT_CONFIDENCE_LEVEL",
    "DEFAULT_CORRECTION",
    "DEFAULT_PAIRS",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "DEFAULT_TEST",
    "INTERVAL_LABELS",
    "INTERVAL_METHODS",
    "OPERATIONS_PER_SECOND",
    "PAIRS",
    "PROCEDURES",
    "TESTS",
    "TEST_INTERVALS",
    "BootstrapResult",
    "Correction",
    "Cost",
    "DetectionTable",
    "IntervalMethod",
    "NullDistribution",
    "PairComparison",
    "PairedInterval",
    "PairedResult",
    "PairedScores",
    "PairsName",
    "ProgressCallback",
    "RandomizationResult",
    "Result",
    "SignFlipFamily",
    "SignTestResult",
    "SimulatedPower",
    "StatSettings",
    "TTestResult",
    "Tally",
    "TestName",
    "TukeyHSDResult",
    "WilcoxonResult",
    "bootstrap_ci",
    "check_choice",
    "check_cost",
    "check_int",
    "check_probability",
    "choose_procedure",
    "correct",
    "detection_table",
    "nearest_rank",
    "null_distribution",
    "paired_interval",
    "paired_scores",
    "paired_t",
    "paired_test",
    "paired_test_cost",
    "paired_tests",
    "power",
    "queries_needed",
    "randomization_test",
    "sign",
    "sign_flip_family",
    "sign_test",
    "simulated_power",
    "tukey_cost",
    "tukey_hsd_randomized",
    "wilcoxon",
]
