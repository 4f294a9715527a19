"""evalkit's and groundkit's last call shapes (issue 26, item 5).

Each test uses the seed's own spelling of the call, through the compat layer only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rankproof import ConfigError
from rankproof.compat import evalkit
from rankproof.compat.evalkit import (
    CheckError,
    CheckSpec,
    load_checks,
    load_corpus,
    load_qrels,
    load_queries,
    registered,
    run,
    run_gate,
)
from rankproof.measures import resolve


@dataclass(frozen=True)
class Query:
    id: str
    text: str


QUERIES = [Query(f"q{i}", f"question {i}") for i in range(4)]
QRELS = {q.id: {f"rel-{q.id}"} for q in QUERIES}


def search(q: Query) -> list[str]:
    return ["x", f"rel-{q.id}", "y"]


def test_registered_is_a_name_list_with_the_retrieval_measures() -> None:
    names = registered()
    assert isinstance(names, list) and all(isinstance(n, str) for n in names)
    assert "recall@10" in names and "ndcg@10" in names and "latency_p95" in names
    assert len(resolve(names)) >= len(names)  # every name resolves through the one parser


CHECKS = """\
checks:
  - id: recall_floor
    metric: recall@10
    op: ">="
    threshold: 0.5
  - id: controls_hold
    metric: ndcg@10
    scope: [q1, q3]
    op: ">="
    threshold: 0.5
"""


@pytest.fixture
def specs(tmp_path: Path) -> Iterator[evalkit.ChecksFile]:
    path = tmp_path / "checks.yaml"
    path.write_text(CHECKS)
    yield load_checks(path, known_case_ids=[q.id for q in QUERIES])


def test_a_checks_file_iterates_as_specs_with_select_and_coverage(
        specs: evalkit.ChecksFile) -> None:
    result = run("v1", search, QUERIES, QRELS, ["recall@10", "ndcg@10"])
    listed = [spec for spec in specs]
    assert [s.id for s in listed] == ["recall_floor", "controls_hold"]
    assert all(isinstance(s, CheckSpec) for s in listed) and len(specs) == 2
    floor, controls = listed
    assert len(floor.select(result.per_query)) == 4
    assert [r.query_id for r in controls.select(result.per_query)] == ["q1", "q3"]
    assert controls.coverage(result.per_query) == "2/2 cases"
    assert floor.coverage(result) == "4/4 cases"  # a RunResult's rows too
    survivors = [r for r in result.per_query if r.query_id != "q3"]
    assert controls.coverage(survivors) == "1/2 cases"
    with pytest.raises(CheckError, match=r"check 'controls_hold': scoped to 2 case\(s\) but 1 "
                                         r"produced no result: 'q3'"):
        controls.select(survivors)
    # still the gate's checks file: run_gate takes it unchanged
    verdict = run_gate(specs, result)
    assert verdict.passed and {c.id for c in verdict.checks} == {"recall_floor",
                                                                 "controls_hold"}


def test_select_refuses_what_is_not_rows(specs: evalkit.ChecksFile) -> None:
    with pytest.raises(ConfigError, match="rows must be a list of per-query rows"):
        next(iter(specs)).select("q1")


def _beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in (
        {"_id": "d1", "title": "Water", "text": "The plant makes 42 MLD."},
        {"_id": "d2", "title": "", "text": "Rain falls."})))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in (
        {"_id": "q1", "text": "how much water"}, {"_id": "q2", "text": "what falls"})))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n"
                                               "q2\td2\t2\n")
    return folder


def test_beir_loaders(tmp_path: Path) -> None:
    folder = _beir(tmp_path / "scifact")
    corpus = load_corpus(folder)
    assert corpus == {"d1": "Water\n\nThe plant makes 42 MLD.", "d2": "Rain falls."}
    queries = load_queries(folder)
    assert [(q.id, q.text) for q in queries] == [("q1", "how much water"),
                                                 ("q2", "what falls")]
    qrels = load_qrels(folder)
    assert qrels == {"q1": {"d1": 1}, "q2": {"d2": 2}}
    assert load_qrels(folder / "qrels" / "test.tsv") == qrels
    result = run("bm25", lambda q: ["d1", "d2"], queries, qrels, ["ndcg@10"])
    # q1: its one relevant document first (1); q2: grade 2 at rank 2 (1 / log2 3)
    assert result.mean("ndcg@10") == pytest.approx((1.0 + 1 / math.log2(3)) / 2)
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n{"_id": "q1", '
                                          '"text": "b"}\n')
    with pytest.raises(ValueError, match="duplicate query id 'q1'"):
        load_queries(folder)


# -- groundkit ---------------------------------------------------------------------------

def test_compare_report_stages_takes_mrr_and_refuses_a_non_report() -> None:
    from tests.harness._golden import golden_report

    from rankproof.compat.groundkit import EvalError, compare_report_stages, paired_bootstrap

    report = golden_report(300, seed=5)
    result = compare_report_stages(report, baseline="bm25", candidate="fusion", metric="mrr",
                                   resamples=500)
    stored = {stage: {q: v["RR@10"] for q, v in report.stage(stage).per_query.items()}
              for stage in ("bm25", "fusion")}
    assert result == paired_bootstrap(stored["bm25"], stored["fusion"], baseline_name="bm25",
                                      candidate_name="fusion", metric="mrr", resamples=500)
    for bad in ({"stages": []}, 42, None):
        with pytest.raises(EvalError, match="report must be an EvalReport .* got "
                                            f"{type(bad).__name__}"):
            compare_report_stages(bad, baseline="bm25",  # type: ignore[arg-type]
                                  candidate="fusion", metric="mrr")


def test_gate_errors_speak_the_compat_call(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text("checks:\n  - id: no_regression\n    metric: ndcg@10\n"
                    "    vs_baseline: no_significant_regression\n"
                    "  - id: later\n    metric: not_yet_registered\n    op: '>='\n"
                    "    threshold: 0\n")
    result = run("v1", search, QUERIES, QRELS, ["ndcg@10"])
    with pytest.raises(CheckError) as caught:
        run_gate(load_checks(path), result)
    text = str(caught.value)
    assert "--plugin" not in text and "--baseline" not in text
    assert "@register_metric(name, higher_is_better=...) before run_gate" in text
    path.write_text("checks:\n  - id: no_regression\n    metric: ndcg@10\n"
                    "    vs_baseline: no_significant_regression\n")
    with pytest.raises(CheckError, match=r"none was given \(run_gate\(specs, result, "
                                         r"baseline\)\)"):
        run_gate(load_checks(path), result)


def test_an_unjudged_query_id_is_validated_as_a_path_component(tmp_path: Path) -> None:
    """groundkit validates every query id before it can reach a path join, judged or not."""
    from rankproof.compat.groundkit import EvalError, adapt_beir_dataset

    src = tmp_path / "beir"
    (src / "qrels").mkdir(parents=True)
    (src / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": "Pumps."}) + "\n")
    (src / "queries.jsonl").write_text(
        json.dumps({"_id": "pumps", "text": "pumps?"}) + "\n"
        + json.dumps({"_id": "../escape", "text": "never judged"}) + "\n")
    (src / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\npumps\td1\t1\n")
    with pytest.raises(EvalError, match=r"line 2, field '_id': unjudged query id "
                                        r"'\.\./escape'"):
        adapt_beir_dataset(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written
