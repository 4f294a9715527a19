"""Fusion checked against ranx (0.3.21, the oracle) on real TREC DL 2019 runs, and pyserini's
interpolation by hand.

Runs: ../shared/data/rankllm_runs/{BM25,D_BERT_KD_TASB,SPLADE_P_P_ENSEMBLE_DISTIL}/
trec_results_dl19.txt (43 queries x 100 documents; SPLADE's integer scores tie often).
Each ranx call is ``ranx.fuse(runs, norm=..., method=..., params=...)`` with ranx's default
norm ("min-max") for score-based methods. ranx ranks a run by its stored order, and its own
sort breaks ties in no documented way, so the ranx runs are built (``Run.add_score``, which
keeps insertion order) in trec_eval's order — the order rankproof ranks by.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from rankproof import InputError, Run
from rankproof.cli import app
from rankproof.data import load_qrels, ranked_order, read_trec_run
from rankproof.measures import evaluate
from rankproof.retrieval import FusionRetriever, default_norm, fuse

ranx = pytest.importorskip("ranx")

RUNS = ("BM25", "D_BERT_KD_TASB", "SPLADE_P_P_ENSEMBLE_DISTIL")


@pytest.fixture(scope="module")
def dl19(shared_data: Path) -> dict[str, Path]:
    base = shared_data / "rankllm_runs"
    return {name: base / name / "trec_results_dl19.txt" for name in RUNS}


@pytest.fixture(scope="module")
def runs(dl19: dict[str, Path]) -> dict[str, Run]:
    return {name: read_trec_run(path, name=name) for name, path in dl19.items()}


@pytest.fixture(scope="module")
def qrels(shared_data: Path) -> Any:
    return load_qrels(str(shared_data / "trec_dl" / "qrels.dl19-passage.txt"))


def _to_ranx(run: Run) -> Any:
    """A ranx Run holding ``run`` in trec_eval's order (score desc, docid desc)."""
    out = ranx.Run(name=run.name)
    ro = ranked_order(run)
    rows = ro.row_ids(len(run))
    qids, docids = run.qids().to_pylist(), run.docids.to_pylist()
    for r in rows.tolist():
        out.add_score(qids[r], docids[r], float(run.scores[r]))
    return out


def _as_dict(fused: Any) -> dict[str, dict[str, float]]:
    if isinstance(fused, Run):
        return fused.to_dict()
    return {q: dict(docs) for q, docs in fused.to_dict().items()}


def _ndcg10(qrels: Any, scores: dict[str, dict[str, float]]) -> float:
    return float(evaluate(qrels, Run.from_dict(scores), ["nDCG@10"]).mean("nDCG@10"))


# rankproof method -> (ranx method, ranx params, rankproof kwargs)
CASES: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    ("rrf", "rrf", {}, {}),
    ("isr", "isr", {}, {}),
    ("log_isr", "log_isr", {}, {}),
    ("logn_isr", "logn_isr", {}, {}),
    ("logn_isr", "logn_isr", {"sigma": 0.2}, {"sigma": 0.2}),
    ("rbc", "rbc", {"phi": 0.8}, {}),  # ranx has no default phi; rankproof's is 0.8
    ("rbc", "rbc", {"phi": 0.95}, {"phi": 0.95}),
    ("borda", "bordafuse", {}, {}),
    ("combsum", "sum", {}, {}),
    ("combmnz", "mnz", {}, {}),
    ("combmax", "max", {}, {}),
    ("combmin", "min", {}, {}),
    ("combmed", "med", {}, {}),
    ("combanz", "anz", {}, {}),
    ("wsum", "wsum", {"weights": [1.0, 1.0, 1.0]}, {}),
    ("wmnz", "wmnz", {"weights": [1.0, 1.0, 1.0]}, {}),
]


@pytest.mark.parametrize("n_runs", [2, 3])
@pytest.mark.parametrize(("method", "ranx_method", "ranx_params", "kwargs"), CASES,
                         ids=[f"{c[0]}{c[3] or ''}" for c in CASES])
def test_every_method_equals_ranx_on_real_runs(
    runs: dict[str, Run], qrels: Any, n_runs: int, method: str, ranx_method: str,
    ranx_params: dict[str, Any], kwargs: dict[str, Any],
) -> None:
    chosen = [runs[n] for n in RUNS[:n_runs]]
    params = dict(ranx_params)
    if "weights" in params:
        params["weights"] = params["weights"][:n_runs]
    expected = _as_dict(ranx.fuse([_to_ranx(r) for r in chosen], norm="min-max",
                                  method=ranx_method, params=params))
    ours = fuse(chosen, method, **kwargs).to_dict()  # type: ignore[arg-type]
    assert ours.keys() == expected.keys()
    for q in expected:
        assert ours[q].keys() == expected[q].keys(), q
        got = np.array([ours[q][d] for d in expected[q]])
        want = np.array(list(expected[q].values()))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9, err_msg=q)
    assert _ndcg10(qrels, ours) == _ndcg10(qrels, expected)


@pytest.mark.parametrize(("method", "ranx_method", "weights"), [
    ("wsum", "wsum", [0.7, 0.2, 0.1]), ("combsum", "wsum", [0.3, 1.5, 0.2]),
    ("wmnz", "wmnz", [0.7, 0.2, 0.1]), ("borda", "w_bordafuse", [2.0, 1.0, 0.5]),
])
def test_weights_equal_ranx_weighted_methods(runs: dict[str, Run], qrels: Any, method: str,
                                             ranx_method: str, weights: list[float]) -> None:
    chosen = [runs[n] for n in RUNS]
    expected = _as_dict(ranx.fuse([_to_ranx(r) for r in chosen], norm="min-max",
                                  method=ranx_method, params={"weights": weights}))
    ours = fuse(chosen, method, weights=weights).to_dict()  # type: ignore[arg-type]
    for q in expected:
        assert ours[q] == pytest.approx(expected[q], abs=1e-9, rel=0)
    assert _ndcg10(qrels, ours) == _ndcg10(qrels, expected)


def test_minmax_ranx_equals_ranx_normalisation_and_zero_span(runs: dict[str, Run]) -> None:
    bm25 = runs["BM25"]
    expected = _as_dict(ranx.normalization.min_max_norm(_to_ranx(bm25)))
    ours = fuse([bm25], "combsum", norm="minmax-ranx").to_dict()
    for q in expected:
        assert ours[q] == pytest.approx(expected[q], abs=1e-12, rel=0)
    # A constant list: ranx maps it to 0 (span floored at 1e-9); pyserini's minmax to 1.
    flat = Run.from_dict({"q": {"a": 3.0, "b": 3.0}})
    assert _as_dict(ranx.normalization.min_max_norm(ranx.Run({"q": {"a": 3.0, "b": 3.0}}))) \
        == {"q": {"a": 0.0, "b": 0.0}}
    assert fuse([flat], "combsum").to_dict() == {"q": {"a": 0.0, "b": 0.0}}
    assert fuse([flat], "combsum", norm="minmax").to_dict() == {"q": {"a": 1.0, "b": 1.0}}


def test_default_norm_per_method() -> None:
    assert default_norm("combsum") == default_norm("wmnz") == "minmax-ranx"
    assert default_norm("interpolate") is None and default_norm("rrf") is None
    a = Run.from_dict({"q": {"x": 10.0, "y": 0.0}})
    b = Run.from_dict({"q": {"x": 0.0, "y": 0.5}})
    assert fuse([a, b], "combsum").to_dict()["q"] == {"x": 1.0, "y": 1.0}  # min-max
    assert fuse([a, b], "combsum", norm=None).to_dict()["q"] == {"x": 10.0, "y": 0.5}


def test_interpolate_is_pyserinis_alpha_a_plus_one_minus_alpha_b(runs: dict[str, Run]) -> None:
    bm25, tasb = runs["BM25"], runs["D_BERT_KD_TASB"]
    fused = fuse([bm25, tasb], "interpolate", alpha=0.3).to_dict()
    a, b = bm25.to_dict(), tasb.to_dict()
    for q in fused:
        docs = a.get(q, {}).keys() | b.get(q, {}).keys()
        by_hand = {d: 0.3 * a[q].get(d, 0.0) + (1 - 0.3) * b[q].get(d, 0.0) for d in docs}
        assert fused[q] == pytest.approx(by_hand, abs=1e-12, rel=0)
    small = fuse([Run.from_dict({"q": {"x": 2.0, "y": 1.0}}),
                  Run.from_dict({"q": {"y": 4.0}})], "interpolate", alpha=0.25).to_dict()
    assert small == {"q": {"x": 0.5, "y": 0.25 + 3.0}}
    half = fuse([bm25, tasb], "interpolate").to_dict()  # alpha 0.5 = the mean (pyserini average)
    mean = fuse([bm25, tasb], "combsum", norm=None, weights=[0.5, 0.5]).to_dict()
    assert half == mean


def test_raw_scores_on_different_scales_are_stamped(runs: dict[str, Run]) -> None:
    raw = fuse([runs["BM25"], runs["SPLADE_P_P_ENSEMBLE_DISTIL"]], "combsum", norm=None)
    warned = [n for n in raw.notes if n.startswith("fusion: raw scores on different scales")]
    assert len(warned) == 1 and "BM25" in warned[0] and "SPLADE_P_P_ENSEMBLE_DISTIL" in warned[0]
    normalised = fuse([runs["BM25"], runs["SPLADE_P_P_ENSEMBLE_DISTIL"]], "combsum")
    assert not any(n.startswith("fusion:") for n in normalised.notes)
    # BM25 and TAS-B score ranges are within 10x of each other: no warning.
    similar = fuse([runs["BM25"], runs["D_BERT_KD_TASB"]], "interpolate")
    assert not any(n.startswith("fusion:") for n in similar.notes)
    flat = fuse([Run.from_dict({"q": {"a": 1.0, "b": 1.0}}),
                 Run.from_dict({"q": {"a": 1.0, "b": 2.0}})], "combsum", norm=None)
    assert any("flat vs varying" in n for n in flat.notes)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "interpolate", "alpha": -0.1}, "alpha must be between 0 and 1"),
    ({"method": "interpolate", "weights": [1.0, 1.0]}, "weights do not apply to interpolate"),
    ({"method": "combsum", "alpha": 0.5}, "alpha applies to interpolate only"),
    ({"method": "rbc", "phi": 1.0}, "phi must be strictly between 0 and 1"),
    ({"method": "logn_isr", "sigma": 2.0}, "sigma must be between 0 and 1"),
    ({"method": "borda", "norm": "minmax-ranx"}, "norm applies to score-based methods"),
    ({"method": "combsum", "norm": "l2"}, "norm must be None, 'auto' or one of"),
])
def test_bad_parameters_are_refused(kwargs: dict[str, Any], message: str) -> None:
    a = Run.from_dict({"q": {"x": 1.0}})
    with pytest.raises(InputError, match=message):
        fuse([a, a], **kwargs)
    with pytest.raises(InputError, match="interpolate fuses exactly two runs"):
        fuse([a, a, a], "interpolate")


def test_fusion_stage_records_the_norm_it_used() -> None:
    from rankproof.retrieval import BM25Retriever

    auto = FusionRetriever([BM25Retriever(name="a"), BM25Retriever(name="b")], "combsum")
    assert auto.config["norm"] == "minmax-ranx"
    raw = FusionRetriever([BM25Retriever(name="a"), BM25Retriever(name="b")], "combsum",
                          norm=None)
    assert raw.config["norm"] is None  # what rankproof eval passes (fusion_norm: null)
    rbc = FusionRetriever([BM25Retriever(name="a"), BM25Retriever(name="b")], "rbc")
    assert rbc.config["phi"] == 0.8 and rbc.config["norm"] is None


# -- the command line ---------------------------------------------------------------------

def _cli(*args: object) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_cli_weights_method_and_norm(dl19: dict[str, Path], runs: dict[str, Run],
                                     tmp_path: Path) -> None:
    out = tmp_path / "fused.run"
    r = _cli("fuse", dl19["BM25"], dl19["D_BERT_KD_TASB"], "--method", "wsum",
             "--weights", "0.7,0.3", "-o", out)
    assert r.exit_code == 0, r.output
    expected = fuse([runs["BM25"], runs["D_BERT_KD_TASB"]], "wsum", weights=[0.7, 0.3])
    got = read_trec_run(out).to_dict()
    for q, docs in expected.to_dict().items():
        assert got[q] == pytest.approx(docs, rel=1e-12)
    side = json.loads((tmp_path / "fused.run.provenance.json").read_text())
    assert side["parameters"]["method"] == "wsum"
    assert side["parameters"]["norm"] == "minmax-ranx"
    assert side["parameters"]["weights"] == [0.7, 0.3]
    assert side["parameters"]["warnings"] == []


def test_cli_norm_none_warns_and_stamps_the_sidecar(dl19: dict[str, Path],
                                                    tmp_path: Path) -> None:
    out = tmp_path / "raw.run"
    r = _cli("fuse", dl19["BM25"], dl19["SPLADE_P_P_ENSEMBLE_DISTIL"], "--method", "combmnz",
             "--norm", "none", "-o", out)
    assert r.exit_code == 0, r.output
    assert "warning: fusion: raw scores on different scales" in r.stderr
    side = json.loads((tmp_path / "raw.run.provenance.json").read_text())
    assert side["parameters"]["norm"] is None
    assert side["parameters"]["warnings"][0].startswith("fusion: raw scores on different scales")


def test_cli_interpolate_with_alpha(dl19: dict[str, Path], runs: dict[str, Run],
                                    tmp_path: Path) -> None:
    out = tmp_path / "interp.run"
    r = _cli("fuse", dl19["BM25"], dl19["D_BERT_KD_TASB"], "--method", "interpolate",
             "--alpha", "0.2", "-o", out)
    assert r.exit_code == 0, r.output
    expected = fuse([runs["BM25"], runs["D_BERT_KD_TASB"]], "interpolate", alpha=0.2)
    got = read_trec_run(out).to_dict()
    for q, docs in expected.to_dict().items():
        assert got[q] == pytest.approx(docs, rel=1e-12)
    side = json.loads((tmp_path / "interp.run.provenance.json").read_text())
    assert side["parameters"]["alpha"] == 0.2 and side["parameters"]["norm"] is None


@pytest.mark.parametrize(("extra", "option", "message"), [
    (["--weights", "1"], "--weights", "1 value for 2 runs"),
    (["--weights", "1,x"], "--weights", "not a number"),
    (["--method", "interpolate", "--alpha", "-0.5"], "--alpha", "between 0 and 1"),
    (["--method", "rbc", "--phi", "1.5"], "--phi", "strictly between 0 and 1"),
    (["--method", "rrf", "--norm", "minmax"], "--norm", "score-based methods"),
])
def test_cli_bad_input_exits_2_naming_the_option(dl19: dict[str, Path], tmp_path: Path,
                                                 extra: list[str], option: str,
                                                 message: str) -> None:
    out = tmp_path / "never.run"
    r = _cli("fuse", dl19["BM25"], dl19["D_BERT_KD_TASB"], *extra, "-o", out)
    assert r.exit_code == 2, r.output
    assert option in r.stderr and message in r.stderr
    assert not out.exists() and not (tmp_path / "never.run.provenance.json").exists()
