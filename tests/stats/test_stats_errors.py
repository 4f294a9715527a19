"""Every error message of rankproof.stats: what was expected, what was found, and where."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from rankproof import InputError, PairingError
from rankproof.measures import PerQuery, parse
from rankproof.stats import (
    bootstrap_ci,
    correct,
    detection_table,
    paired_scores,
    paired_t,
    paired_test,
    power,
    queries_needed,
    randomization_test,
    sign_test,
    simulated_power,
    tukey_hsd_randomized,
    wilcoxon,
)

PAIRED: list[Callable[..., Any]] = [
    randomization_test, paired_t, bootstrap_ci, wilcoxon, sign_test, paired_test, paired_scores
]
A = {"q1": 0.5, "q2": 0.3, "q3": 0.0}
B = {"q1": 0.4, "q2": 0.3, "q3": 0.1}


@pytest.mark.parametrize("fn", PAIRED)
def test_pairing_error_lists_both_sides(fn: Callable[..., Any]) -> None:
    a = {"q1": 0.1, "q2": 0.2, "q3": 0.3, "only-a": 0.4}
    b = {"q1": 0.1, "q2": 0.2, "q3": 0.3, "only-b1": 0.4, "only-b2": 0.5}
    with pytest.raises(PairingError) as info:
        fn(a, b)
    err = info.value
    assert err.only_left == ("only-a",)
    assert err.only_right == ("only-b1", "only-b2")
    msg = str(err)
    assert "1 only in a ('only-a')" in msg
    assert "2 only in b ('only-b1', 'only-b2')" in msg
    assert isinstance(err, ValueError)


def test_pairing_error_with_one_side_complete_says_none() -> None:
    with pytest.raises(PairingError, match=r"0 only in a \(none\); 1 only in b \('q4'\)"):
        paired_scores(A, {**B, "q4": 1.0})


def test_pairing_error_truncates_long_lists_but_keeps_all_ids() -> None:
    a = {f"q{i:02d}": 0.1 for i in range(30)}
    with pytest.raises(PairingError, match=r"30 only in a \(.*… \(20 more\)\)") as info:
        paired_scores(a, {"x": 0.1})
    assert len(info.value.only_left) == 30


@pytest.mark.parametrize("fn", PAIRED)
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_score_names_the_query(fn: Callable[..., Any], bad: float) -> None:
    with pytest.raises(InputError, match=rf"field 'b': score for query 'q2' is {bad}; "
                                         "expected a finite number") as info:
        fn(A, {**B, "q2": bad})
    assert info.value.field == "b"


def test_non_finite_in_array_names_the_position() -> None:
    with pytest.raises(InputError, match=r"field 'a': score at position 1 is nan; expected a "
                                         r"finite number \(1 non-finite in all\)"):
        randomization_test([0.1, np.nan, 0.3], [0.1, 0.2, 0.3])


def test_non_number_score_and_non_string_qid() -> None:
    with pytest.raises(InputError, match=r"score for query 'q1' is '0.5' \(str\); expected a real"):
        paired_scores({"q1": "0.5"}, {"q1": 0.5})
    with pytest.raises(InputError, match=r"field 'a': query id 1 is a int; expected str"):
        paired_scores({1: 0.5}, {"1": 0.5})
    with pytest.raises(InputError, match="cannot read scores as numbers"):
        paired_scores(["x", "y"], [0.1, 0.2])


@pytest.mark.parametrize("fn", PAIRED)
def test_empty_inputs(fn: Callable[..., Any]) -> None:
    with pytest.raises(InputError, match="no queries to compare: both sides are empty"):
        fn({}, {})
    with pytest.raises(InputError, match="no queries to compare: both sides are empty"):
        fn(np.array([]), np.array([]))


@pytest.mark.parametrize("fn", PAIRED)
def test_length_mismatch(fn: Callable[..., Any]) -> None:
    with pytest.raises(InputError, match="a has 3 scores and b has 2; positional arrays must "
                                         "have equal length"):
        fn([0.1, 0.2, 0.3], [0.1, 0.2])


def test_shape_and_kind_errors() -> None:
    with pytest.raises(InputError, match=r"expected a 1-D array of scores, got shape \(2, 2\)"):
        paired_scores(np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(InputError, match="a is a mapping and b is a array; both sides must be "
                                         "the same kind"):
        paired_scores(A, [0.1, 0.2, 0.3])


def test_measure_errors() -> None:
    m = parse("AP")
    pq = PerQuery(("q1", "q2"), (m,), np.array([[0.1], [0.2]]))
    with pytest.raises(ValueError,
                       match=re.escape("PerQuery inputs need measure=, e.g. measure='nDCG@10'")):
        paired_scores(pq, pq)
    with pytest.raises(ValueError,
                       match=re.escape("measure='AP' is only meaningful for PerQuery inputs")):
        paired_scores(A, B, "AP")
    with pytest.raises(KeyError, match="nDCG@10 was not computed"):
        paired_scores(pq, pq, "nDCG@10")


@pytest.mark.parametrize("fn", [randomization_test, paired_t, wilcoxon, sign_test, paired_test])
def test_bad_alternative(fn: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="alternative must be one of 'two-sided', 'greater', "
                                         "'less'; got 'bigger'"):
        fn(A, B, alternative="bigger")


def test_bad_method_names() -> None:
    with pytest.raises(ValueError, match="method must be one of 'percentile', 'studentized'; "
                                         "got 'bca'"):
        bootstrap_ci(A, B, method="bca")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="method must be one of 'holm', 'bh', 'bonferroni', "
                                         "'none'; got 'fdr_bh'"):
        correct([0.1], "fdr_bh")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="test must be one of 'randomization', 't', 'bootstrap', "
                                         "'wilcoxon', 'sign'; got 'mannwhitney'"):
        paired_test(A, B, "mannwhitney")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ci_method must be one of 'randomization', 't', "
                                         "'percentile', 'studentized', 'wilcoxon', 'sign'; "
                                         "got 'bca'"):
        paired_test(A, B, ci_method="bca")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="zero_method must be one of 'wilcox', 'pratt', "
                                         "'zsplit'; got 'drop'"):
        wilcoxon(A, B, zero_method="drop")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="test must be one of 't', 'randomization'; got 'z'"):
        simulated_power([0.1, 0.2], 0.1, 10, test="z")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="method must be one of 'normal', 'simulated'; got 'x'"):
        detection_table(0.1, method="x")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"resamples": 0}, "resamples must be at least 1; got 0"),
        ({"resamples": 10.5}, "resamples must be an integer; got 10.5"),
        ({"resamples": True}, "resamples must be an integer; got True"),
        ({"seed": -1}, "seed must be at least 0; got -1"),
        ({"seed": None}, "seed must be an integer; got None"),
        ({"batch": 0}, "batch must be at least 1; got 0"),
    ],
)
@pytest.mark.parametrize("fn", [randomization_test, bootstrap_ci, paired_test])
def test_bad_resampling_options(
    fn: Callable[..., Any], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        fn(A, B, **kwargs)


@pytest.mark.parametrize("level", [0, 1, 1.5, "0.95", True])
@pytest.mark.parametrize("fn", [paired_t, bootstrap_ci, paired_test])
def test_bad_confidence_level(fn: Callable[..., Any], level: Any) -> None:
    with pytest.raises(ValueError, match="confidence_level must be"):
        fn(A, B, confidence_level=level)


def test_too_few_queries() -> None:
    one_a, one_b = {"q1": 0.5}, {"q1": 0.4}
    with pytest.raises(InputError, match="the t-test needs at least 2 queries; got 1"):
        paired_t(one_a, one_b)
    with pytest.raises(InputError, match="the studentized bootstrap needs at least 2 queries"):
        bootstrap_ci(one_a, one_b, method="studentized")
    with pytest.raises(InputError, match="t/studentized intervals need at least 2 queries; got 1"):
        paired_test(one_a, one_b, "t")
    # The randomization test itself is defined for a single query (p = 1).
    assert randomization_test(one_a, one_b).p_value == 1.0


def test_correct_input_errors() -> None:
    with pytest.raises(InputError, match=r"p-value at position 1 is 1.5; expected a number in "
                                         r"\[0, 1\]"):
        correct([0.1, 1.5])
    with pytest.raises(InputError, match="p-value at position 0 is nan"):
        correct([np.nan])
    with pytest.raises(InputError, match=r"expected a 1-D sequence of p-values, got shape"):
        correct([[0.1, 0.2]])
    with pytest.raises(InputError, match="cannot read p-values as numbers"):
        correct(["a"])


def test_power_errors() -> None:
    with pytest.raises(ValueError, match="sd must be greater than 0; got 0"):
        power(0.02, 0, 100)
    with pytest.raises(ValueError, match="n must be at least 1; got 0"):
        power(0.02, 0.1, 0)
    with pytest.raises(ValueError, match="alpha must be strictly between 0 and 1; got 0"):
        power(0.02, 0.1, 10, alpha=0)
    with pytest.raises(ValueError, match="effect must be a finite number; got nan"):
        power(float("nan"), 0.1, 10)
    with pytest.raises(ValueError, match="effect must be non-zero"):
        queries_needed(0.0, 0.1)
    with pytest.raises(ValueError,
                       match=re.escape("effect -0.02 points away from alternative='greater'")):
        queries_needed(-0.02, 0.1, alternative="greater")
    with pytest.raises(ValueError, match="power must be strictly between 0 and 1; got 1"):
        queries_needed(0.02, 0.1, power=1)
    with pytest.raises(ValueError, match="is too small relative to sd"):
        queries_needed(1e-300, 1.0)


def test_simulated_power_and_table_errors() -> None:
    with pytest.raises(InputError, match="need at least 2 pilot differences; got 1"):
        simulated_power([0.1], 0.02, 50)
    with pytest.raises(InputError, match="difference at position 0 is inf"):
        simulated_power([np.inf, 0.1], 0.02, 50)
    with pytest.raises(ValueError, match="n must be at least 2; got 1"):
        simulated_power([0.1, 0.2], 0.02, 1)
    with pytest.raises(ValueError, match="simulations must be at least 1; got 0"):
        simulated_power([0.1, 0.2], 0.02, 10, simulations=0)
    with pytest.raises(ValueError, match="method='simulated' needs pilot differences"):
        detection_table(0.1, method="simulated")
    with pytest.raises(ValueError, match="effects must be non-zero"):
        detection_table(0.1, effects=(0.0, 0.1))
    with pytest.raises(ValueError, match="effects must not be empty"):
        detection_table(0.1, effects=())
    with pytest.raises(ValueError, match="ns must be a sequence; got 100"):
        detection_table(0.1, ns=100)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape("sd must be greater than 0; got -0.1")):
        detection_table(-0.1)
    with pytest.raises(InputError, match="pilot differences are all equal; their SD is 0"):
        detection_table([0.1, 0.1, 0.1])


def test_tukey_errors() -> None:
    with pytest.raises(InputError, match="need at least 2 systems to compare; got 1"):
        tukey_hsd_randomized({"s": A})
    with pytest.raises(InputError, match="scores must be a mapping"):
        tukey_hsd_randomized([A, B])  # type: ignore[arg-type]
    with pytest.raises(PairingError, match=r"the systems cover different queries: "
                                           r"s2 lacks 1 \('q3'\); s3 lacks 1 \('q1'\)") as info:
        tukey_hsd_randomized({"s1": A, "s2": {"q1": 0.1, "q2": 0.2},
                              "s3": {"q2": 0.1, "q3": 0.2}})
    assert info.value.only_left == ("q3",) and info.value.only_right == ()
    with pytest.raises(InputError, match="no queries to compare: every system is empty"):
        tukey_hsd_randomized({"s1": {}, "s2": {}})
    with pytest.raises(InputError, match="field 's2': score for query 'q1' is nan"):
        tukey_hsd_randomized({"s1": A, "s2": {**B, "q1": float("nan")}})
    with pytest.raises(InputError, match="scores of system 's2' must be a"):
        tukey_hsd_randomized({"s1": A, "s2": [0.1]})  # type: ignore[dict-item]
    with pytest.raises(KeyError, match="no comparison of 's1' with 'zz'"):
        tukey_hsd_randomized({"s1": A, "s2": B}, resamples=10).p_value("s1", "zz")


def test_significant_validates_alpha() -> None:
    with pytest.raises(ValueError, match="alpha must be strictly between 0 and 1"):
        paired_test(A, B, "t").significant(alpha=5)
