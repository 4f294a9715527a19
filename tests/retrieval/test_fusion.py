"""Fusion: pyserini's fixtures reproduced byte for byte, and every documented rule checked by hand.

Fixtures (../shared/data/pyserini_test_fixtures, see its PROVENANCE.md), each made by pyserini
from simple_trec_run_fusion_1.txt + simple_trec_run_fusion_2.txt, and the call that reproduces it:

* simple_trec_run_rrf_verify.txt: RRF k=60 on the files' rank column (pyserini without --resort)
  = fuse(runs, "rrf", order="rank")
* simple_fusion_normalize_verify.txt: min-max per run, then summed
  = fuse(runs, "combsum", norm="minmax")
* simple_trec_run_average_verify.txt: mean of raw scores
  = fuse(runs, "combsum", norm=None, weights=[.5, .5])
* simple_trec_run_interpolation_verify.txt: 0.4 * run 1 + 0.6 * run 2
  = fuse(runs, "interpolate", alpha=0.4) = fuse(runs, "combsum", norm=None, weights=[0.4, 0.6])
* simple_trec_run_normalize_verify.txt: min-max of run 1 alone
  = fuse([run1], "combsum", norm="minmax")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.retrieval._helpers import DOCS, QUERIES

from rankproof import InputError, Run
from rankproof.data import ranked_order, read_trec_run, write_trec_run
from rankproof.retrieval import (
    BM25Retriever,
    DenseRetriever,
    FusionRetriever,
    HashingEmbedder,
    fuse,
)


def _runs(fixtures_dir: Path) -> list[Run]:
    return [read_trec_run(fixtures_dir / "simple_trec_run_fusion_1.txt"),
            read_trec_run(fixtures_dir / "simple_trec_run_fusion_2.txt")]


@pytest.mark.parametrize(("expected", "n_runs", "kwargs", "tag"), [
    ("simple_trec_run_rrf_verify.txt", 2, {"method": "rrf", "k": 60, "order": "rank"}, "test"),
    ("simple_fusion_normalize_verify.txt", 2, {"method": "combsum", "norm": "minmax"}, "test"),
    ("simple_trec_run_average_verify.txt", 2,
     {"method": "combsum", "norm": None, "weights": [0.5, 0.5]}, "test"),
    ("simple_trec_run_interpolation_verify.txt", 2,
     {"method": "combsum", "norm": None, "weights": [0.4, 0.6]}, "test"),
    ("simple_trec_run_interpolation_verify.txt", 2,
     {"method": "interpolate", "alpha": 0.4}, "test"),
    ("simple_trec_run_normalize_verify.txt", 1, {"method": "combsum", "norm": "minmax"},
     "reciprocal_rank_fusion_k=60"),
])
def test_pyserini_fixture_reproduced_byte_for_byte(
    fixtures_dir: Path, tmp_path: Path, expected: str, n_runs: int, kwargs: dict[str, Any],
    tag: str,
) -> None:
    fused = fuse(_runs(fixtures_dir)[:n_runs], depth=1000, limit=1000, name="test", **kwargs)
    out = tmp_path / "fused.txt"
    write_trec_run(fused, out, tag=tag)
    assert out.read_text() == (fixtures_dir / expected).read_text()


def test_rrf_fixture_needs_the_rank_column(fixtures_dir: Path) -> None:
    # By trec_eval's order 2054tkb7 is 2nd in run 2 (1/62), not 3rd as its rank column says.
    fused = fuse(_runs(fixtures_dir), "rrf")
    assert fused.to_dict()["1"]["2054tkb7"] == pytest.approx(1 / 62 + 1 / 62, abs=0)
    expected = read_trec_run(fixtures_dir / "simple_trec_run_rrf_verify.txt")
    assert expected.to_dict()["1"]["2054tkb7"] == 1 / 62 + 1 / 63


def test_rrf_by_hand_with_ties_and_missing_documents() -> None:
    a = Run.from_dict({"q": {"x": 3.0, "y": 3.0, "z": 1.0}})  # x, y tie: y ranks first
    b = Run.from_dict({"q": {"z": 5.0, "w": 4.0}, "r": {"x": 1.0}})
    fused = fuse([a, b], "rrf", k=10).to_dict()
    assert fused["q"] == {"y": 1 / 11, "x": 1 / 12, "z": 1 / 13 + 1 / 11, "w": 1 / 12}
    assert fused["r"] == {"x": 1 / 11}  # a query in one run only is kept


def test_output_order_and_ranks_follow_trec_eval() -> None:
    a = Run.from_dict({"q": {"m": 1.0, "n": 2.0}})
    b = Run.from_dict({"q": {"n": 1.0, "m": 2.0}})
    fused = fuse([a, b], "rrf")
    # m and n tie exactly; trec_eval puts the larger docid first.
    assert [d for _, d, _ in fused.iter_rows()] == ["n", "m"]
    assert fused.ranks is not None and fused.ranks.tolist() == [1, 2]
    assert ranked_order(fused).resorted is False


def test_combsum_combmnz_minmax_by_hand() -> None:
    a = Run.from_dict({"q": {"x": 10.0, "y": 5.0, "z": 0.0}})
    b = Run.from_dict({"q": {"y": 4.0, "w": 2.0}})
    s = fuse([a, b], "combsum", norm="minmax").to_dict()["q"]
    assert s == {"x": 1.0, "y": 0.5 + 1.0, "z": 0.0, "w": 0.0}
    m = fuse([a, b], "combmnz", norm="minmax").to_dict()["q"]
    assert m == {"x": 1.0, "y": (0.5 + 1.0) * 2, "z": 0.0, "w": 0.0}
    raw = fuse([a, b], "combsum", norm=None).to_dict()["q"]
    assert raw == {"x": 10.0, "y": 9.0, "z": 0.0, "w": 2.0}


def test_zscore_by_hand() -> None:
    a = Run.from_dict({"q": {"x": 3.0, "y": 1.0}, "r": {"u": 7.0, "v": 7.0}})
    z = fuse([a], "combsum", norm="zscore").to_dict()
    assert z["q"] == {"x": 1.0, "y": -1.0}  # mean 2, population sd 1
    assert z["r"] == {"u": 0.0, "v": 0.0}  # all equal: 0
    m = fuse([a], "combsum", norm="minmax").to_dict()
    assert m["r"] == {"u": 1.0, "v": 1.0}  # all equal: 1 (pyserini)


def test_depth_cuts_inputs_and_normalisation_uses_only_kept_rows() -> None:
    a = Run.from_dict({"q": {"x": 9.0, "y": 8.0, "z": 1.0}})
    b = Run.from_dict({"q": {"z": 9.0}})
    fused = fuse([a, b], "combsum", norm="minmax", depth=2).to_dict()["q"]
    # a keeps x, y (min 8, max 9); z comes from b only.
    assert fused == {"x": 1.0, "y": 0.0, "z": 1.0}
    rrf = fuse([a, b], "rrf", k=0, depth=1).to_dict()["q"]
    assert rrf == {"x": 1.0, "z": 1.0}


def test_limit_truncates_in_output_order() -> None:
    a = Run.from_dict({"q": {"a": 1.0, "b": 2.0, "c": 3.0}})
    fused = fuse([a], "combsum", limit=2)
    assert [d for _, d, _ in fused.iter_rows()] == ["c", "b"]


def test_weights_scale_each_runs_contribution() -> None:
    a = Run.from_dict({"q": {"x": 1.0}})
    b = Run.from_dict({"q": {"y": 1.0}})
    fused = fuse([a, b], "rrf", k=0, weights=[2.0, 0.5]).to_dict()["q"]
    assert fused == {"x": 2.0, "y": 0.5}


def test_fusion_is_deterministic_and_order_of_rows_irrelevant() -> None:
    a = Run.from_dict({"q": {"x": 3.0, "y": 2.0, "z": 1.0}, "p": {"x": 1.0}})
    shuffled = Run.from_columns(["q", "p", "q", "q"], ["z", "x", "x", "y"], [1.0, 1.0, 3.0, 2.0])
    b = Run.from_dict({"q": {"z": 0.5, "w": 0.2}})
    one = fuse([a, b], "combmnz", norm="zscore")
    two = fuse([shuffled, b], "combmnz", norm="zscore")
    assert sorted(one.iter_rows()) == sorted(two.iter_rows())
    assert list(fuse([a, b], "rrf").iter_rows()) == list(fuse([a, b], "rrf").iter_rows())


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"method": "condorcet"}, ValueError, "method must be one of rrf, isr, log_isr, logn_isr, "
                                          "rbc, borda, combsum, combmnz, combmax"),
    ({"method": "rrf", "norm": "minmax"}, ValueError, "norm applies to score-based methods; rrf"),
    ({"method": "combsum", "norm": "l2"}, ValueError,
     "norm must be None, 'auto' or one of minmax-ranx, minmax, zscore"),
    ({"k": -1}, ValueError, "k must be a finite number >= 0"),
    ({"depth": 0}, ValueError, "depth must be a positive integer"),
    ({"limit": 0}, ValueError, "limit must be None or a positive integer"),
    ({"weights": [1.0]}, ValueError, "weights has 1 entries for 2 runs"),
    ({"weights": [1.0, float("nan")]}, ValueError, "weights must be finite numbers"),
    ({"order": "file"}, ValueError, "order must be 'score' or 'rank'"),
    ({"order": "rank"}, InputError, "order='rank' needs a rank column"),
])
def test_bad_arguments_are_refused(kwargs: dict[str, Any], error: type[Exception],
                                   message: str) -> None:
    a = Run.from_dict({"q": {"x": 1.0}})
    with pytest.raises(error, match=message):
        fuse([a, a], **kwargs)


def test_bad_run_sequences_are_refused() -> None:
    a = Run.from_dict({"q": {"x": 1.0}})
    with pytest.raises(ValueError, match="at least one run"):
        fuse([])
    with pytest.raises(TypeError, match="runs must be a sequence of Run"):
        fuse(a)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="runs\\[1\\] must be a Run"):
        fuse([a, {"q": {"x": 1.0}}])  # type: ignore[list-item]
    ranked_from_zero = Run.from_columns(["q"], ["x"], [1.0], [0])
    with pytest.raises(InputError, match="rank 0 makes k \\+ rank <= 0 with k=0"):
        fuse([ranked_from_zero], "rrf", k=0, order="rank")


def test_fusion_stage_fuses_bm25_and_dense() -> None:
    bm25 = BM25Retriever()
    dense = DenseRetriever(HashingEmbedder(dim=64))
    stage = FusionRetriever([bm25, dense], "rrf", depth=8)
    stage.index(DOCS)
    out = stage.search(QUERIES, k=3)
    bm = bm25.search(QUERIES, k=8)
    de = dense.search(QUERIES, k=8)
    expected = fuse([bm.run, de.run], "rrf", depth=8, limit=3, name="fusion")
    assert list(out.run.iter_rows()) == list(expected.iter_rows())
    assert out.run.name == "fusion"
    assert set(out.latency_ms) == {q for q, _ in QUERIES}
    assert all(v > 0 for v in out.latency_ms.values())
    # Caveats of the inputs are carried: the hashing test double and BM25's empty query.
    assert any("test-double embedder" in n for n in out.notes)
    assert any("retrieved nothing" in n for n in out.notes)
    assert out.config["inputs"] == ["bm25", "dense"]
    assert out.config["method"] == "rrf" and out.config["rrf_k"] == 60
    again = FusionRetriever([BM25Retriever(), DenseRetriever(HashingEmbedder(dim=64))], "rrf",
                            depth=8)
    again.index(DOCS)
    assert list(again.search(QUERIES, k=3).run.iter_rows()) == list(out.run.iter_rows())


def test_fusion_stage_combmnz_zscore_config() -> None:
    stage = FusionRetriever([BM25Retriever(), DenseRetriever(HashingEmbedder(dim=32))],
                            "combmnz", norm="zscore", depth=5, weights=[1.0, 2.0])
    stage.index(DOCS)
    out = stage.search(QUERIES[:2], k=4)
    assert out.config["norm"] == "zscore" and out.config["weights"] == [1.0, 2.0]
    assert out.config["rrf_k"] is None
    assert len(out.config["input_configs"]) == 2


def test_fusion_stage_refuses_bad_setup() -> None:
    with pytest.raises(ValueError, match="non-empty sequence of stages"):
        FusionRetriever([])
    with pytest.raises(ValueError, match="distinct names"):
        FusionRetriever([BM25Retriever(), BM25Retriever()])
    with pytest.raises(ValueError, match="norm applies to score-based methods"):
        FusionRetriever([BM25Retriever()], "rrf", norm="minmax")
