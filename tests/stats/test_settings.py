"""`StatSettings`: the seven settings of a comparison, validated once (issue 22)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import rankproof as rp
from rankproof import InputError
from rankproof.comparison import Pairing, compare_pairs, compare_scores
from rankproof.stats import StatSettings


def test_defaults_are_the_named_constants() -> None:
    s = StatSettings()
    assert s.to_dict() == {"test": rp.stats.DEFAULT_TEST, "alpha": rp.stats.DEFAULT_ALPHA,
                           "correction": rp.stats.DEFAULT_CORRECTION,
                           "resamples": rp.stats.DEFAULT_RESAMPLES,
                           "seed": rp.stats.DEFAULT_SEED,
                           "confidence_level": rp.stats.DEFAULT_CONFIDENCE_LEVEL,
                           "pairs": rp.stats.DEFAULT_PAIRS}


def test_frozen_and_slotted() -> None:
    s = StatSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.alpha = 0.1  # type: ignore[misc]
    assert not hasattr(s, "__dict__")


@pytest.mark.parametrize(("field", "value", "message"), [
    ("test", "ttest", "test must be one of 'randomization', 't', 'bootstrap', 'wilcoxon', "
                      "'sign'; got 'ttest'"),
    ("alpha", 1.5, "alpha must be strictly between 0 and 1; got 1.5"),
    ("alpha", "0.05", "alpha must be a number strictly between 0 and 1; got '0.05'"),
    ("correction", "fdr", "correction must be one of 'holm', 'bh', 'bonferroni', 'none'; "
                          "got 'fdr'"),
    ("resamples", 0, "resamples must be at least 1; got 0"),
    ("resamples", 2.5, "resamples must be an integer; got 2.5"),
    ("seed", -1, "seed must be at least 0; got -1"),
    ("seed", True, "seed must be an integer; got True"),
    ("confidence_level", 0.0, "confidence_level must be strictly between 0 and 1; got 0.0"),
    ("pairs", "every", "pairs must be one of 'baseline', 'all'; got 'every'"),
])
def test_each_field_is_checked_with_a_message_naming_it(field: str, value: object,
                                                        message: str) -> None:
    with pytest.raises(InputError) as err:
        StatSettings(**{field: value})  # type: ignore[arg-type]
    assert str(err.value) == message
    assert err.value.field == field


def test_values_are_normalised() -> None:
    s = StatSettings(alpha=1 / 20, resamples=np.int64(500), seed=np.int32(3))  # type: ignore[arg-type]
    assert type(s.resamples) is int and type(s.seed) is int and type(s.alpha) is float


def test_replace_validates_again() -> None:
    s = StatSettings(resamples=500)
    assert s.replace(test="t") == StatSettings(test="t", resamples=500)
    with pytest.raises(InputError, match="correction must be one of"):
        s.replace(correction="fdr")
    with pytest.raises(TypeError):
        s.replace(resample=5)


def test_the_engine_trusts_the_settings_and_gives_the_same_numbers() -> None:
    """The same settings reach every row; a changed seed changes the draws, nothing else."""
    rng = np.random.default_rng(5)
    a = {f"q{i}": float(v) for i, v in enumerate(rng.random(30))}
    b = {f"q{i}": float(v) + 0.05 for i, v in enumerate(rng.random(30))}
    scores = {"base": {"m": a}, "cand": {"m": b}}
    one = compare_scores(scores, higher_is_better={"m": True},
                         stats=StatSettings(resamples=400, seed=1))
    again = compare_scores(scores, higher_is_better={"m": True},
                           stats=StatSettings(resamples=400, seed=1))
    assert one.rows == again.rows
    assert (one.resamples, one.seed, one.test, one.correction) == (400, 1, "randomization",
                                                                   "holm")
    t = compare_scores(scores, higher_is_better={"m": True}, stats=StatSettings(test="t"))
    assert t.test == "t" and t.rows[0].result.test == "t"


def test_p_corrected_needs_the_name_of_its_procedure() -> None:
    p = Pairing(candidate="c", baseline="b", measure="m", candidate_scores={"q": 1.0, "r": 0.0},
                baseline_scores={"q": 0.0, "r": 0.5}, higher_is_better=True)
    with pytest.raises(InputError, match="corrected_by"):
        compare_pairs([p], p_corrected=[0.5])
    row, = compare_pairs([p], stats=StatSettings(resamples=100), p_corrected=[0.5],
                         corrected_by="tukey-hsd", intervals=[(-1.0, 1.0, 0.05, "tukey")])
    assert row.correction == "tukey-hsd" and row.p_corrected == 0.5


def test_top_level_compare_takes_the_settings_object() -> None:
    qrels = rp.Qrels.from_dict({f"q{i}": {f"d{i}": 1} for i in range(8)})
    a = rp.Run.from_dict({f"q{i}": {f"d{i}": 2.0, "x": 1.0} for i in range(8)}, name="a")
    b = rp.Run.from_dict({f"q{i}": {"x": 2.0, f"d{i}": 1.0} for i in range(8)}, name="b")
    c = rp.compare(qrels, [a, b], "RR", stats=rp.StatSettings(test="sign", alpha=0.1))
    assert (c.test, c.alpha) == ("sign", 0.1)
    with pytest.raises(TypeError):
        rp.compare(qrels, [a, b], "RR", resamples=100)  # type: ignore[call-arg]
