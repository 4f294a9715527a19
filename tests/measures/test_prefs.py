"""trec_eval's preference measures and judgment-group averages (`rankproof.measures._prefs`).

trec_eval's own expected outputs are checked byte for byte in
tests/cli/test_trec_eval_dropin.py; here, small cases worked out by hand from
trec_eval's documentation of the prefs format, and the judgment-group
averages against the ordinary engine.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankproof._errors import InputError
from rankproof.data import PrefJudgment, load_qrels, load_run, read_qrels_jg
from rankproof.measures import evaluate, parse, prefs_values
from rankproof.measures._prefs import prefs_topic


def _prefs(*rows: tuple[str, str, str, float]) -> list[PrefJudgment]:
    return [PrefJudgment(jg, jsg, doc, level) for jg, jsg, doc, level in rows]


def test_one_subgroup_counts_fulfilled_possible_and_implied() -> None:
    # d1 > d2 > d3 (d3 not relevant). Ranking d2, d1; d3 not retrieved.
    judged = _prefs(("u", "s", "d1", 3.0), ("u", "s", "d2", 2.0), ("u", "s", "d3", 0.0))
    got = prefs_topic(judged, ["d2", "x", "d1"])
    assert got["prefs_num_prefs_poss"] == 3
    assert got["prefs_num_prefs_ful"] == 2  # d1>d3, d2>d3 (implied: d3 not retrieved)
    assert got["prefs_num_prefs_ful_ret"] == 0  # d1>d2 is the only retrieved pair: failed
    assert got["prefs_simp"] == pytest.approx(2 / 3)
    assert got["prefs_simp_ret"] == 0.0
    assert got["prefs_simp_imp"] == pytest.approx(2 / 3)
    assert got["prefs_pair"] == pytest.approx(2 / 3)
    assert got["prefs_avgjg"] == pytest.approx(2 / 3)


def test_subgroups_add_transitive_preferences() -> None:
    # trec_eval's README example: 1>2, 1>3, 2>3 (sub1) and 2>4 (sub2) imply 1>4: 5 prefs.
    judged = _prefs(("u", "s1", "d1", 3.0), ("u", "s1", "d2", 2.0), ("u", "s1", "d3", 1.0),
                    ("u", "s2", "d2", 5.0), ("u", "s2", "d4", 4.0))
    nothing = prefs_topic(judged, [])
    assert nothing["prefs_num_prefs_poss"] == 5
    assert nothing["prefs_num_prefs_ful"] == 0
    perfect = prefs_topic(judged, ["d1", "d2", "d3", "d4"])
    assert perfect["prefs_num_prefs_ful_ret"] == 5
    assert perfect["prefs_simp"] == 1.0
    # Reversed ranking fulfils none of the 5.
    assert prefs_topic(judged, ["d4", "d3", "d2", "d1"])["prefs_simp"] == 0.0


def test_judgment_groups_are_averaged_by_avgjg_and_pooled_by_simp() -> None:
    # Group a: 1 pref (d1>d2), fulfilled. Group b: 3 prefs, one fulfilled.
    judged = _prefs(("a", "s", "d1", 1.0), ("a", "s", "d2", 0.0),
                    ("b", "s", "d2", 2.0), ("b", "s", "d1", 1.0), ("b", "s", "d3", 1.0),
                    ("b", "s", "d4", 0.0))
    got = prefs_topic(judged, ["d1", "d2", "d3", "d4"])
    # b: d2>d1 no, d2>d3 yes, d2>d4 yes, d1>d4 yes, d3>d4 yes -> 4 of 5.
    assert got["prefs_num_prefs_poss"] == 6
    assert got["prefs_simp"] == pytest.approx(5 / 6)
    assert got["prefs_avgjg"] == pytest.approx((1.0 + 4 / 5) / 2)
    # The pair (d1, d2) has one preference each way: it scores 1/2.
    assert got["prefs_pair"] == pytest.approx((0.5 + 4) / 5)


def test_contradictions_within_a_group_are_refused() -> None:
    judged = _prefs(("u", "s1", "d1", 2.0), ("u", "s1", "d2", 1.0),
                    ("u", "s2", "d2", 2.0), ("u", "s2", "d1", 1.0))
    with pytest.raises(InputError, match="contradictory preferences"):
        prefs_topic(judged, ["d1", "d2"], "q1")
    same = _prefs(("u", "s", "d1", 2.0), ("u", "s", "d1", 1.0))
    with pytest.raises(InputError, match="two different levels"):
        prefs_topic(same, ["d1"], "q1")
    zero = _prefs(("u", "s1", "d1", 1.0), ("u", "s1", "d2", 0.0),
                  ("u", "s2", "d2", 3.0), ("u", "s2", "d3", 1.0))
    with pytest.raises(InputError, match=r"topic 'q1', judgment group 'u': document 'd2' has "
                                         "both level 0 and a non-zero level"):
        prefs_topic(zero, [], "q1")


def test_topics_missing_from_the_run_have_nothing_retrieved(shared_data: Path) -> None:
    from rankproof.data import read_prefs

    suite = shared_data / "trec_eval_tests"
    prefs = read_prefs(suite / "prefs.test")
    values = prefs_values(prefs, None, ["1.EC.AB"])
    assert values["1.EC.AB"]["prefs_num_prefs_poss"] == 1
    assert values["1.EC.AB"]["prefs_simp"] == 0.0  # the preference is possible, not fulfilled


def test_identical_judgment_groups_average_to_the_plain_measure(shared_data: Path,
                                                                tmp_path: Path) -> None:
    from rankproof.measures import jg_values

    suite = shared_data / "trec_eval_tests"
    lines = [line.split() for line in (suite / "qrels.test").read_text().splitlines()]
    two = tmp_path / "qrels.jg"
    two.write_text("".join(f"{q} {g} {d} {r}\n" for g in ("a", "b") for q, _, d, r in lines))
    run = load_run(suite / "results.test", format="trec")
    measures = [parse("map"), parse("P.10"), parse("Rprec_mult.0.6")]
    averaged = jg_values(read_qrels_jg(two), run, measures)
    plain = evaluate(load_qrels(suite / "qrels.test"), run, measures)
    assert averaged.qids == plain.qids
    np.testing.assert_allclose(averaged.values, plain.values, rtol=0, atol=1e-12)
