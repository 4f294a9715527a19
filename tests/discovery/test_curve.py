"""The distractor curve: N = 1 by construction, seeded draws, capping, intervals, hand counts."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from rankproof._errors import InputError, MissingExtraError
from rankproof.discovery._cases import DiscoveryCase
from rankproof.discovery._curve import (
    DistractorCurve,
    distractor_curve_from_cases,
    distractor_robustness_curve,
    sub_catalogue_ids,
)
from rankproof.discovery._source import CallableSearcher, Catalog, CatalogItem, CatalogSearcher
from rankproof.retrieval import HashingEmbedder

FILLER = ["alpha bravo", "charlie delta", "echo foxtrot", "golf hotel", "india juliet",
          "kilo lima", "mike november", "oscar papa"]
CATALOG = Catalog((
    CatalogItem("gold", "kafka topic admin", "create and list kafka topics"),
    CatalogItem("decoy", "kafka connector", "kafka connector for sinks"),
    CatalogItem("cron", "cron scheduler", "run jobs on a cron schedule"),
    *(CatalogItem(f"f{i}", words, words) for i, words in enumerate(FILLER)),
))  # 11 items
# Hits whenever its gold is searched (the only item sharing a word with the query).
EASY = DiscoveryCase("cron schedule", ("cron",))
# The decoy (two matching words) outranks the gold (one): a top-1 hit only without the decoy.
HARD = DiscoveryCase("kafka connector", ("gold",))


def strip_time(curve: DistractorCurve) -> dict[str, Any]:
    d = curve.to_dict()
    d.pop("seconds")
    for p in d["points"]:
        p.pop("seconds_per_trial")
    return d


def test_n_1_is_one_by_construction_and_not_searched() -> None:
    never = DiscoveryCase("zebra unicorn", ("gold",))  # shares no word with anything
    curve = distractor_robustness_curve(CATALOG, [never], sizes=(1, 4), trials=3)
    one = curve.point(1)
    assert one.accuracy == 1.0 and one.by_construction and one.searches == 0
    assert (one.ci_low, one.ci_high, one.trials, one.seconds_per_trial) == (1.0, 1.0, 0, None)
    assert curve.point(4).accuracy == 0.0  # bm25 never retrieves it once searched
    assert any("N = 1 is 1.0 by construction" in n for n in curve.notes)
    assert any("retrieved nothing" in n for n in curve.notes)


def test_hand_counted_accuracy_on_a_tiny_catalogue() -> None:
    trials, seed = 6, 3
    curve = distractor_robustness_curve(CATALOG, [EASY, HARD], sizes=(3, 5, 11), trials=trials,
                                        seed=seed)
    for size in (3, 5):
        decoy_drawn = sum("decoy" in sub_catalogue_ids(CATALOG.ids, "gold", size, seed, t)
                          for t in range(trials))
        assert 0 < decoy_drawn < trials  # the count below is not trivially 0 or all
        point = curve.point(size)
        assert point.trials == trials and point.attempts == 2 * trials
        assert point.hits == trials + (trials - decoy_drawn)  # EASY always, HARD sans decoy
        assert point.accuracy == point.hits / (2 * trials)
    whole = curve.point(11)  # the whole catalogue: one trial, decoy present
    assert (whole.trials, whole.hits, whole.accuracy, whole.searches) == (1, 1, 0.5, 1)
    # With k = 2 the gold is second behind the decoy at worst: always a hit.
    assert distractor_robustness_curve(CATALOG, [HARD], sizes=(5, 11), trials=4,
                                       k=2).accuracy() == {5: 1.0, 11: 1.0}


def test_a_sub_catalogue_is_the_gold_plus_uniform_distractors() -> None:
    ids = CATALOG.ids
    for t in range(20):
        sub = sub_catalogue_ids(ids, "gold", 4, 0, t)
        assert len(sub) == 4 and "gold" in sub and set(sub) <= set(ids)
    assert sub_catalogue_ids(ids, "gold", 11, 0, 0) == tuple(sorted(ids))
    draws = {sub_catalogue_ids(ids, "gold", 4, s, 0) for s in range(10)}
    assert len(draws) > 1  # the seed matters


def test_a_seed_gives_the_same_curve_whatever_the_order_and_batching() -> None:
    probes = [EASY, HARD, DiscoveryCase("kafka topics", ("gold",))]
    a = distractor_robustness_curve(CATALOG, probes, sizes=(1, 3, 6), trials=5, seed=7)
    b = distractor_robustness_curve(CATALOG, probes[::-1], sizes=(6, 3, 1, 3), trials=5,
                                    seed=7)
    assert strip_time(a)["points"] == strip_time(b)["points"]
    assert strip_time(a) == strip_time(distractor_robustness_curve(
        CATALOG, probes, sizes=(1, 3, 6), trials=5, seed=7))
    # Each probe alone: the hits add up (a probe's draws never depend on the others).
    alone = [distractor_robustness_curve(CATALOG, [p], sizes=(3, 6), trials=5, seed=7)
             for p in probes]
    for size in (3, 6):
        assert a.point(size).hits == sum(c.point(size).hits for c in alone)
    assert a.seed == 7


def test_sizes_above_the_catalogue_are_capped_and_said_so() -> None:
    curve = distractor_robustness_curve(CATALOG, [EASY], sizes=(1, 4, 8, 16, 32), trials=2)
    assert curve.sizes == (1, 4, 8, 11) and curve.capped == (16, 32)
    assert curve.requested_sizes == (1, 4, 8, 16, 32) and curve.catalog_size == 11
    assert any("16, 32 exceed the catalogue's 11 items" in n for n in curve.notes)
    assert curve.point(11).trials == 1
    assert list(curve.accuracy()) == [1, 4, 8, 11]


def test_the_interval_contains_the_mean_and_the_result_is_json() -> None:
    probes = [EASY, HARD, DiscoveryCase("kafka topics admin", ("gold",)),
              DiscoveryCase("connector sinks", ("decoy",))]
    curve = distractor_robustness_curve(CATALOG, probes, sizes=(1, 3, 6, 11), trials=8)
    for p in curve.points:
        assert p.ci_low <= p.accuracy <= p.ci_high
        assert p.ci_low >= 0.0 and p.ci_high <= 1.0
    assert curve.interval.startswith("percentile bootstrap over probes")
    text = json.dumps(curve.to_dict(), allow_nan=False)
    assert '"seconds_per_trial"' in text
    assert all(p.seconds_per_trial is not None and p.seconds_per_trial >= 0
               for p in curve.points[1:])
    assert [r["size"] for r in curve.rows()] == [1, 3, 6, 11]
    table = curve.table()
    assert "by construction" in table and "s/trial" in table and "bootstrap" in table


def test_dense_and_hybrid_modes_record_the_test_double() -> None:
    curve = distractor_robustness_curve(CATALOG, [EASY, HARD], mode="hybrid",
                                        embedder=HashingEmbedder(), sizes=(1, 4), trials=3)
    assert curve.mode == "hybrid" and curve.degraded
    assert curve.identity["embedder"].startswith("rankproof-hashing")
    assert any("hashing" in n for n in curve.notes)
    dense = distractor_robustness_curve(CatalogSearcher(CATALOG, mode="dense",
                                                        embedder=HashingEmbedder()),
                                        [EASY], sizes=(4,), trials=2)
    assert dense.mode == "dense" and dense.degraded


class _NoExtraEmbedder:
    """Stands in for an embedder whose model lives in the missing ``dense`` extra."""

    model_id = "needs-the-extra"
    dim = 8

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
        raise MissingExtraError("dense embedder needs the 'dense' extra: pip install "
                                "'rankproof[dense]'")


def test_a_missing_extra_is_refused_never_swallowed() -> None:
    with pytest.raises(MissingExtraError, match=r"rankproof\[dense\]"):
        distractor_robustness_curve(CATALOG, [EASY], mode="dense", embedder=_NoExtraEmbedder(),
                                    sizes=(1, 4), trials=2)


def test_dense_without_the_extra_is_refused_with_the_install_hint(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed
    with pytest.raises(MissingExtraError, match="dense"):
        distractor_robustness_curve(CATALOG, [EASY], mode="dense", sizes=(1, 4), trials=2)


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is not None,
                    reason="the dense extra is installed here")
def test_dense_without_an_embedder_needs_the_extra_when_it_is_absent() -> None:
    with pytest.raises(MissingExtraError):
        CatalogSearcher(CATALOG, mode="dense")


def test_bad_input_is_refused() -> None:
    with pytest.raises(InputError, match="2 gold ids"):
        distractor_robustness_curve(CATALOG, [DiscoveryCase("q", ("gold", "cron"))])
    with pytest.raises(InputError, match="not in catalogue"):
        distractor_robustness_curve(CATALOG, [("q", "missing")])
    with pytest.raises(InputError, match="no probes"):
        distractor_robustness_curve(CATALOG, [])
    with pytest.raises(InputError, match="needs a catalogue"):
        distractor_robustness_curve(CallableSearcher(lambda q, k: []), [EASY])
    for kwargs in ({"trials": 0}, {"k": 0}, {"seed": -1}, {"sizes": ()}, {"sizes": (0, 4)},
                   {"confidence_level": 1.0}, {"resamples": 0}):
        with pytest.raises(InputError):
            distractor_robustness_curve(CATALOG, [EASY], **kwargs)  # type: ignore[arg-type]


def test_from_cases_uses_the_single_gold_cases() -> None:
    cases = [EASY, DiscoveryCase("nothing applies here"),
             DiscoveryCase("kafka things", ("gold", "decoy")), HARD]
    curve = distractor_curve_from_cases(CATALOG, cases, sizes=(1, 4), trials=3, seed=1)
    assert curve.n_probes == 2
    assert any("2 case(s) without exactly one gold id" in n for n in curve.notes)
    direct = distractor_robustness_curve(CATALOG, [EASY, HARD], sizes=(1, 4), trials=3, seed=1)
    assert curve.accuracy() == direct.accuracy()
    with pytest.raises(InputError, match="exactly one gold"):
        distractor_curve_from_cases(CATALOG, [DiscoveryCase("nothing applies here")])
