"""Fusion optimisation with cross-validation over topics: the out-of-fold score beside the
in-sample best, reproducible choices, the planted overfit it exposes, and the CLI's
``fuse --optimize`` on two TREC DL 2019 runs (../shared/data/rankllm_runs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankproof import evaluate, load_qrels, load_run
from rankproof._errors import InputError
from rankproof.cli import app
from rankproof.data import Qrels, Run
from rankproof.retrieval import FusionSearch, fuse, optimize_fusion

runner = CliRunner()


@pytest.fixture(scope="module")
def dl19(shared_data: Path) -> tuple[Path, Path, Path]:
    runs = shared_data / "rankllm_runs"
    return (runs / "BM25" / "trec_results_dl19.txt",
            runs / "D_BERT_KD_TASB" / "trec_results_dl19.txt",
            shared_data / "trec_dl" / "qrels.dl19-passage.txt")


@pytest.fixture(scope="module")
def loaded(dl19: tuple[Path, Path, Path]) -> tuple[list[Run], Qrels]:
    a, b, q = dl19
    return [load_run(str(a)), load_run(str(b))], load_qrels(str(q))


@pytest.mark.parametrize("method", ["wsum", "rrf"])
def test_dl19_reports_out_of_fold_beside_in_sample(method: str,
                                                   loaded: tuple[list[Run], Qrels]) -> None:
    runs, qrels = loaded
    search = FusionSearch(method, "nDCG@10", folds=5, seed=7)
    result = optimize_fusion(runs, qrels, search)
    assert result.n_topics == 43 and len(result.folds) == 5
    assert sorted(q for f in result.folds for q in f.topics) == sorted(qrels.topics)
    assert result.candidates == (11 * 2 if method == "wsum" else 11 * 6)
    # The written run is the fusion with the parameters chosen on all topics, and its
    # score is the in-sample best.
    again = fuse(runs, method, **result.chosen.fuse_kwargs(method))  # type: ignore[arg-type]
    assert list(again.iter_rows()) == list(result.run.iter_rows())
    mean = float(evaluate(qrels, result.run, ["nDCG@10"]).column("nDCG@10").mean())
    assert result.in_sample == pytest.approx(mean, abs=1e-12)
    # Tuned on all topics, the best candidate beats BM25 + TAS-B fused with defaults, and
    # the out-of-fold estimate is no better than the in-sample best.
    assert result.in_sample >= result.default
    assert result.out_of_fold <= result.in_sample
    assert 0.6 < result.out_of_fold < 0.8
    oof = np.mean([f.test for f in result.folds for _ in f.topics])
    assert result.out_of_fold == pytest.approx(float(oof), abs=1e-12)


def test_the_same_seed_gives_the_same_parameters(loaded: tuple[list[Run], Qrels]) -> None:
    runs, qrels = loaded
    search = FusionSearch("rrf", "nDCG@10", folds=4, seed=11, ks=(20, 60))
    first, second = optimize_fusion(runs, qrels, search), optimize_fusion(runs, qrels, search)
    assert first.to_dict() == second.to_dict()
    other = optimize_fusion(runs, qrels, FusionSearch("rrf", "nDCG@10", folds=4, seed=12,
                                                      ks=(20, 60)))
    assert [f.topics for f in other.folds] != [f.topics for f in first.folds]
    assert other.in_sample == first.in_sample and other.chosen == first.chosen


def test_fold_assignment_ignores_input_order(loaded: tuple[list[Run], Qrels]) -> None:
    runs, qrels = loaded
    search = FusionSearch("wsum", "RR@10", folds=3, seed=0, step=0.25)
    base = optimize_fusion(runs, qrels, search)
    shuffled = [Run.from_dict(dict(reversed(list(r.to_dict().items())))) for r in runs]
    q = Qrels.from_dict(dict(reversed(list(qrels.to_dict().items()))))
    assert optimize_fusion(shuffled, q, search).to_dict() == base.to_dict()


def _noise(n_runs: int, n_topics: int, seed: int) -> tuple[list[Run], Qrels]:
    """Runs of random scores over the same 30 documents per topic, three relevant each: no
    weighting of them is better than another on new topics."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(30)]
    qrels = {f"t{t}": {d: 1 for d in rng.choice(docs, 3, replace=False).tolist()}
             for t in range(n_topics)}
    runs = [Run.from_dict({t: {d: float(s) for d, s in zip(docs, rng.random(30), strict=True)}
                           for t in qrels}, name=f"noise{i}") for i in range(n_runs)]
    return runs, Qrels.from_dict(qrels)


def test_a_planted_overfit_shows_out_of_fold_below_in_sample() -> None:
    runs, qrels = _noise(n_runs=6, n_topics=12, seed=3)
    result = optimize_fusion(runs, qrels, FusionSearch("wsum", "nDCG@10", folds=4, seed=0,
                                                       step=0.25, norms=("minmax-ranx",)))
    assert result.candidates == 126  # C(4 + 5, 5) weight vectors
    assert result.out_of_fold < result.in_sample
    assert result.optimism > 0.05
    # The in-sample best is the best of 126 noisy means: far above their average.
    assert result.in_sample > result.default


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"folds": 1}, "folds must be an integer >= 2, got 1"),
    ({"step": 0.3}, "step must be in (0, 1] with 1/step an integer"),
    ({"ks": (10,)}, "ks (RRF constants) apply to rrf only, not wsum"),
    ({"method": "rrf", "norms": ("zscore",)}, "norms apply to score-based methods; rrf uses"),
    ({"norms": ("l2",)}, "norms must be among minmax-ranx, minmax, zscore, none"),
    ({"method": "blend"}, "method must be one of rrf"),
    ({"measure": "nDCG@@"}, "measure:"),
])
def test_search_settings_are_validated(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        FusionSearch(**kwargs)  # type: ignore[arg-type]


def test_too_many_topics_per_fold_and_too_many_candidates_are_refused() -> None:
    runs, qrels = _noise(n_runs=2, n_topics=3, seed=0)
    with pytest.raises(InputError, match="5 folds need at least 5 topics; the qrels have 3"):
        optimize_fusion(runs, qrels, FusionSearch("wsum", folds=5))
    many, _ = _noise(n_runs=8, n_topics=3, seed=0)
    with pytest.raises(InputError, match=r"would score .* candidates .* at most 20,000"):
        optimize_fusion(many, qrels, FusionSearch("wsum", step=0.05))


def test_cli_reports_both_scores_and_writes_them_to_the_sidecar(
        dl19: tuple[Path, Path, Path], tmp_path: Path) -> None:
    a, b, q = dl19
    out = tmp_path / "fused.trec"
    args = ["fuse", str(a), str(b), "--optimize", "wsum", "--qrels", str(q), "--measure",
            "nDCG@10", "--folds", "5", "--seed", "5", "-o", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    err = result.stderr
    assert "wsum on nDCG@10: 22 candidates, 2 runs, 43 topics, 5-fold" in err
    assert "out-of-fold" in err and "in-sample best" in err and "optimism" in err
    side = json.loads((tmp_path / "fused.trec.provenance.json").read_text(encoding="utf-8"))
    opt = side["optimization"]
    assert opt["search"]["seed"] == 5 and len(opt["folds"]) == 5
    assert opt["out_of_fold"] <= opt["in_sample"]
    assert opt["optimism"] == pytest.approx(opt["in_sample"] - opt["out_of_fold"])
    assert side["parameters"]["weights"] == opt["chosen"]["weights"]
    assert side["parameters"]["norm"] == opt["chosen"]["norm"]
    assert side["provenance"]["inputs"]["qrels"]["path"].endswith("qrels.dl19-passage.txt")
    fused = load_run(str(out))
    mean = float(evaluate(load_qrels(str(q)), fused, ["nDCG@10"]).column("nDCG@10").mean())
    assert mean == pytest.approx(opt["in_sample"], abs=1e-4)  # TREC files keep 6 decimals
    # The same seed again: the same parameters and bytes.
    second = tmp_path / "again.trec"
    assert runner.invoke(app, [*args[:-1], str(second)]).exit_code == 0
    assert second.read_bytes() == out.read_bytes()
    side2 = json.loads((tmp_path / "again.trec.provenance.json").read_text(encoding="utf-8"))
    assert side2["optimization"] == opt


@pytest.mark.parametrize(("extra", "message"), [
    (["--optimize", "wsum", "--weights", "1,2"], "--optimize chooses the parameters itself; "
                                                 "drop --weights"),
    (["--optimize", "rrf"], "--optimize needs --qrels"),
    (["--qrels", "QRELS"], "--qrels is read by --optimize only"),
    (["--optimize", "wsum", "--qrels", "QRELS", "--grid", "0.3"], "--grid: step must be"),
    (["--optimize", "wsum", "--qrels", "QRELS", "--ks", "10"], "--ks: ks (RRF constants) "
                                                               "apply to rrf only"),
    (["--optimize", "rrf", "--qrels", "QRELS", "--ks", "ten"], "--ks: 'ten' is not a number"),
])
def test_cli_refusals(extra: list[str], message: str, dl19: tuple[Path, Path, Path],
                      tmp_path: Path) -> None:
    a, b, q = dl19
    out = tmp_path / "fused.trec"
    extra = [str(q) if e == "QRELS" else e for e in extra]
    result = runner.invoke(app, ["fuse", str(a), str(b), *extra, "-o", str(out)])
    assert result.exit_code == 2, result.stderr
    assert message in " ".join(result.stderr.split())
    assert not out.exists()


def _experiment(folder: Path, dl19: tuple[Path, Path, Path], fuse_stage: str) -> Path:
    a, b, q = dl19
    exp = folder / "exp.yaml"
    exp.write_text(f"""\
name: tuned
output: out
inputs:
  qrels: {q}
stages:
  - id: bm25
    kind: run_file
    path: {a}
  - id: tasb
    kind: run_file
    path: {b}
  - id: hybrid
    kind: fuse
    runs: [bm25, tasb]
{fuse_stage}""", encoding="utf-8")
    return exp


def test_an_experiment_file_fuse_stage_optimizes(dl19: tuple[Path, Path, Path],
                                                 loaded: tuple[list[Run], Qrels],
                                                 tmp_path: Path) -> None:
    exp = _experiment(tmp_path, dl19, "    method: rrf\n    optimize: {measure: nDCG@10, "
                                      "folds: 3, seed: 2, ks: [20, 60]}\n")
    result = runner.invoke(app, ["run", str(exp)])
    assert result.exit_code == 0, result.stderr
    record = json.loads((tmp_path / "out" / "hybrid" / "stage.json").read_text("utf-8"))
    opt = record["summary"]["optimization"]
    runs, qrels = loaded
    direct = optimize_fusion(runs, qrels, FusionSearch("rrf", "nDCG@10", folds=3, seed=2,
                                                       ks=(20, 60)))
    assert opt == json.loads(json.dumps(direct.to_dict()))
    assert any(f"out-of-fold {direct.out_of_fold:.4f}" in n for n in record["notes"])


@pytest.mark.parametrize(("stage", "message"), [
    ("    optimize: {folds: 1}\n", "folds"),
    ("    k: 30\n    optimize: {measure: AP}\n", "optimize chooses norm and k itself"),
    ("    optimize: {ks: [10], norms: [zscore]}\n", "norms apply to score-based methods"),
])
def test_an_experiment_file_optimize_is_checked_when_read(
        stage: str, message: str, dl19: tuple[Path, Path, Path], tmp_path: Path) -> None:
    exp = _experiment(tmp_path, dl19, stage)
    result = runner.invoke(app, ["run", str(exp)])
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("method", ["rrf", "isr", "log_isr", "logn_isr", "rbc", "borda",
                                    "combsum", "combmnz", "combmax", "combmin", "combmed",
                                    "combanz", "wsum", "wmnz", "interpolate"])
def test_every_method_scores_candidates_as_fuse_does(method: str,
                                                     loaded: tuple[list[Run], Qrels]) -> None:
    """The search's fast path (runs prepared once, one combination per candidate) scores the
    chosen candidate exactly as evaluating `fuse`'s run with those parameters does."""
    runs, qrels = loaded
    result = optimize_fusion(runs, qrels, FusionSearch(method, "AP", folds=2, step=0.5,
                                                       ks=(30,) if method == "rrf" else None),
                             limit=50)
    kwargs = result.chosen.fuse_kwargs(method)
    again = fuse(runs, method, limit=50, **kwargs)  # type: ignore[arg-type]
    mean = float(evaluate(qrels, again, ["AP"]).column("AP").mean())
    assert result.in_sample == pytest.approx(mean, abs=1e-12)
    assert list(again.iter_rows()) == list(result.run.iter_rows())
    assert ("alpha" in kwargs) == (method == "interpolate")
