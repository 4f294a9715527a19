"""Seed 001 (paired-evalkit): its quickstart and README examples, run through the compat layer.

Every number is either computed by hand here or checked to be exactly what
rankproof's own API gives for the same inputs (the layer is thin: it must
not compute anything itself).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from rankproof import ConfigError, InputError, PairingError, TargetError
from rankproof.compat import evalkit
from rankproof.compat.evalkit import (
    CallableTarget,
    CheckError,
    GoldenSet,
    HttpTarget,
    QueryResult,
    RunResult,
    load_checks,
    load_goldens,
    paired_bootstrap,
    polarity,
    register_aggregate,
    register_loader,
    register_metric,
    registered,
    run,
    run_gate,
)
from rankproof.measures import lookup
from rankproof.measures._registry import _unregister
from rankproof.stats import paired_test
from rankproof.targets import RunResult as CoreRunResult

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "custom_client"
B = 10_000


@dataclass(frozen=True)
class Query:
    """A caller's own query type: evalkit asks only for ``.id``."""

    id: str
    text: str


@dataclass(frozen=True)
class BareQuery:
    id: str


QUERIES = [Query(f"q{i}", f"question {i}") for i in range(12)]
QRELS: dict[str, set[str]] = {q.id: {f"rel-{q.id}"} for q in QUERIES}


def at_rank(rank: int) -> Callable[[Query], list[str]]:
    """A retriever that puts the query's one relevant document at ``rank`` (1-based)."""
    def retrieve(q: Query) -> list[str]:
        return [*(f"junk-{q.id}-{i}" for i in range(rank - 1)), f"rel-{q.id}", "tail"]
    return retrieve


def search_v1(q: Query) -> list[str]:
    """The relevant document at rank 3 for even queries, rank 1 for odd ones."""
    return at_rank(3 if int(q.id[1:]) % 2 == 0 else 1)(q)


def search_v2(q: Query) -> list[str]:
    """Rank 1 everywhere except q0 and q5, which it misses."""
    return ["miss"] if q.id in ("q0", "q5") else at_rank(1)(q)


def _ndcg_one_relevant(rank: int | None) -> float:
    return 0.0 if rank is None or rank > 10 else 1.0 / math.log2(rank + 1)


@pytest.fixture
def fresh_names() -> Iterator[list[str]]:
    """Names registered by a test are removed afterwards (the registry is global)."""
    names: list[str] = []
    yield names
    for n in names:
        _unregister(n)


# -- the quickstart ------------------------------------------------------------------------


def test_the_quickstart_runs_and_its_numbers_are_the_hand_computed_ones() -> None:
    baseline = run("baseline", search_v1, QUERIES, QRELS, ["recall@10", "ndcg@10"])
    candidate = run("candidate", search_v2, QUERIES, QRELS, ["recall@10", "ndcg@10"])

    v = paired_bootstrap(candidate, baseline, "ndcg@10")
    line = (f"{v.observed:+.4f}  95% CI [{v.ci_low:+.4f}, {v.ci_high:+.4f}]  "
            f"p={v.p_value:.4f}")
    assert line.startswith("+")

    # By hand: v1 scores 1/log2(4) = 0.5 on the 6 even queries and 1 on the 6 odd ones;
    # v2 scores 1 on 10 queries and 0 on q0 and q5.
    base = {q.id: _ndcg_one_relevant(3 if i % 2 == 0 else 1) for i, q in enumerate(QUERIES)}
    cand = {q.id: 0.0 if q.id in ("q0", "q5") else 1.0 for q in QUERIES}
    assert baseline.mean("ndcg@10") == pytest.approx(0.75)
    assert candidate.mean("ndcg@10") == pytest.approx(10 / 12)
    assert v.observed == pytest.approx(10 / 12 - 0.75)
    assert (v.metric, v.name_a, v.name_b, v.n_queries, v.n_resamples, v.seed) == (
        "ndcg@10", "candidate", "baseline", 12, B, 42)
    # Thin: exactly rankproof's bootstrap test with the percentile interval and the
    # centred-null p-value, at evalkit's defaults.
    core = paired_test(cand, base, "bootstrap", ci_method="percentile",
                       bootstrap_p="centred", resamples=B, seed=42)
    assert (v.ci_low, v.ci_high, v.p_value) == pytest.approx(
        (core.ci_low, core.ci_high, core.p_value), rel=1e-12, abs=1e-15)
    assert v.significant == (v.ci_low > 0 or v.ci_high < 0)
    assert 1 / (B + 1) <= v.p_value <= 1.0


def test_run_result_keeps_every_query_under_the_callers_metric_names() -> None:
    r = run("v1", search_v1, QUERIES, QRELS, ["recall@1", "ndcg@10", "mrr"])
    assert isinstance(r, RunResult) and isinstance(r, CoreRunResult)
    assert r.metrics == ("R@1", "nDCG@10", "RR")  # rankproof's canonical names underneath
    rows = r.per_query
    assert [row.query_id for row in rows] == [q.id for q in QUERIES]
    assert rows[0] == QueryResult(
        query_id="q0", retrieved=["junk-q0-0", "junk-q0-1", "rel-q0", "tail"],
        metrics={"recall@1": 0.0, "ndcg@10": 0.5, "mrr": pytest.approx(1 / 3)})
    assert rows[1].metrics == {"recall@1": 1.0, "ndcg@10": 1.0, "mrr": 1.0}
    # Aggregates are derived from the rows, under either spelling.
    assert r.mean("mrr") == r.mean("RR") == pytest.approx(np.mean(
        [row.metrics["mrr"] for row in rows]))


def test_queries_need_only_an_id_and_the_retriever_gets_the_callers_object() -> None:
    seen: list[object] = []

    def retriever(q: BareQuery) -> list[str]:
        seen.append(q)
        return [f"rel-{q.id}"]

    queries = [BareQuery(q.id) for q in QUERIES]
    r = run("bare", retriever, queries, QRELS, ["ndcg@10"])
    assert seen == queries
    assert r.mean("ndcg@10") == 1.0


def test_alignment_is_by_query_id_so_shuffling_one_systems_rows_changes_nothing() -> None:
    baseline = run("baseline", search_v1, QUERIES, QRELS, ["ndcg@10"])
    candidate = run("candidate", search_v2, QUERIES, QRELS, ["ndcg@10"])
    shuffled = run("candidate", search_v2, QUERIES[::-1], QRELS, ["ndcg@10"])
    assert [q.query_id for q in shuffled.per_query] != [q.query_id for q in candidate.per_query]
    assert paired_bootstrap(shuffled, baseline, "ndcg@10") == \
        paired_bootstrap(candidate, baseline, "ndcg@10")


# -- the deterministic cases ---------------------------------------------------------------


def test_better_by_the_same_amount_on_every_query_gives_a_point_interval() -> None:
    """Rank 2 → rank 1 on every query: every delta is c = 1 − 1/log2(3)."""
    c = 1.0 - 1.0 / math.log2(3)
    baseline = run("rank2", at_rank(2), QUERIES, QRELS, ["ndcg@10"])
    candidate = run("rank1", at_rank(1), QUERIES, QRELS, ["ndcg@10"])
    v = paired_bootstrap(candidate, baseline, "ndcg@10")
    assert v.observed == pytest.approx(c, rel=1e-12)
    assert (v.ci_low, v.ci_high) == pytest.approx((c, c), rel=1e-12)
    # Centred null: every resampled mean equals the observed one, so no deviation is as
    # extreme as the observed difference: p = (0 + 1)/(B + 1), the floor.
    assert v.p_value == 1 / (B + 1)
    assert v.significant


def test_identical_systems_give_p_one_and_are_not_significant() -> None:
    a = run("a", search_v1, QUERIES, QRELS, ["ndcg@10"])
    b = run("b", search_v1, QUERIES, QRELS, ["ndcg@10"])
    v = paired_bootstrap(a, b, "ndcg@10", n_resamples=2000, seed=3)
    assert (v.observed, v.ci_low, v.ci_high, v.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert not v.significant
    assert (v.n_resamples, v.seed) == (2000, 3)


# -- what raises ---------------------------------------------------------------------------


def test_a_query_missing_from_qrels_raises_instead_of_scoring_zero() -> None:
    with pytest.raises(InputError, match="query 'q99' has no entry in qrels"):
        run("x", search_v1, [*QUERIES, Query("q99", "unjudged")], QRELS, ["ndcg@10"])


def test_an_empty_qrels_entry_means_nothing_is_relevant() -> None:
    r = run("x", search_v1, QUERIES[:2], {"q0": set(), "q1": {"rel-q1"}}, ["ndcg@10"])
    assert [q.metrics["ndcg@10"] for q in r.per_query] == [0.0, 1.0]


@pytest.mark.parametrize(("queries", "qrels", "error", "message"), [
    ([object()], QRELS, InputError, "query 1 \\(object\\) has no .id"),
    ([BareQuery("q0"), BareQuery("q0")], QRELS, InputError, "'q0' appears twice"),
    ([], QRELS, InputError, "no cases"),
    (QUERIES[:1], {"q0": "rel-q0"}, InputError, "must be a set of relevant ids"),
    (QUERIES[:1], [("q0", "rel-q0")], InputError, "qrels must be a mapping"),
])
def test_bad_inputs_raise_naming_the_problem(queries: list[object], qrels: object,
                                             error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        run("x", search_v1, queries, qrels, ["ndcg@10"])  # type: ignore[arg-type]


def test_a_failing_retriever_raises_naming_the_query() -> None:
    def broken(q: Query) -> list[str]:
        raise RuntimeError("index offline")

    with pytest.raises(TargetError, match=r"case 'q0'.*index offline"):
        run("x", broken, QUERIES, QRELS, ["ndcg@10"])


def test_unknown_metric_and_mismatched_runs_raise() -> None:
    with pytest.raises(InputError, match="unknown metric 'ndcg@ten'"):
        run("x", search_v1, QUERIES, QRELS, ["ndcg@ten"])
    a = run("a", search_v1, QUERIES, QRELS, ["ndcg@10"])
    b = run("b", search_v1, QUERIES[:10], QRELS, ["ndcg@10"])
    with pytest.raises(PairingError, match="2 only in a"):
        paired_bootstrap(a, b, "ndcg@10")
    with pytest.raises(InputError, match="was not computed"):
        paired_bootstrap(a, a, "recall@10")
    with pytest.raises(TypeError, match="must be a RunResult"):
        paired_bootstrap(a, {"q0": 1.0}, "ndcg@10")  # type: ignore[arg-type]


# -- extension points ----------------------------------------------------------------------


def test_the_readme_extension_points_register_into_the_one_registry(
        fresh_names: list[str]) -> None:
    fresh_names += ["precision", "unsupported_claims", "cost_per_query"]

    @register_metric("precision", higher_is_better=True)
    def precision(response: evalkit.TargetResponse, case: evalkit.GoldenCase) -> float:
        hits = sum(1 for i in response.ranked_ids[:3] if i in case.relevant)
        return hits / 3

    @register_metric("unsupported_claims", higher_is_better=False)
    def unsupported_claims(response: evalkit.TargetResponse, case: evalkit.GoldenCase) -> float:
        return float((response.text or "").count("[unsupported]"))

    @register_aggregate("cost_per_query", higher_is_better=False)
    def cost_per_query(rows: list[evalkit.CaseResult]) -> float:
        return sum(r.response.meta.get("cost_usd", 0.0) for r in rows  # type: ignore[union-attr]
                   ) / len(rows)

    # The bare word is the registered metric; the family keeps every name with a cutoff.
    assert lookup("precision").kind == "case"
    assert str(lookup("precision@10").name) == "P@10"
    assert polarity("unsupported_claims") is False and polarity("precision") is True
    assert {"precision", "unsupported_claims", "cost_per_query"} <= set(registered())

    r = run("v1", search_v1, QUERIES, QRELS, ["precision", "precision@3", "cost_per_query"])
    q0 = r.per_query[0]  # the relevant document at rank 3 of 4 returned
    assert q0.metrics == {"precision": pytest.approx(1 / 3), "precision@3": pytest.approx(1 / 3)}
    assert r.aggregates["cost_per_query"] == 0.0

    with pytest.raises(InputError, match="already registered"):
        register_metric("precision", higher_is_better=True)(precision)
    with pytest.raises(InputError, match="already registered"):
        register_aggregate("unsupported_claims", higher_is_better=False)(cost_per_query)
    with pytest.raises(TypeError, match="higher_is_better"):
        register_metric("no_polarity")(precision)  # type: ignore[call-overload]


def test_the_built_in_metrics_of_the_seed_resolve_with_their_polarity() -> None:
    for name in ("recall@1", "recall@3", "recall@5", "recall@10", "recall@20", "ndcg@10",
                 "entropy"):
        assert polarity(name) is True, name
    for name in ("latency_p50", "latency_p95", "latency_p99", "latency_mean",
                 "max_item_share", "max_item_share@1", "max_item_share@3",
                 "max_item_share@10"):
        assert polarity(name) is False, name
    with pytest.raises(InputError, match="unknown metric"):
        polarity("recal@10")


# -- goldens, targets, checks ---------------------------------------------------------------


def test_golden_sets_look_cases_up_by_id() -> None:
    goldens = load_goldens(EXAMPLE / "goldens.jsonl")
    assert isinstance(goldens, GoldenSet) and isinstance(goldens, tuple)
    assert goldens.ids()[:2] == ("renew-loans", "late-fees")
    assert len(goldens.ids()) == len(goldens) == 28
    case = goldens.get("late-fees")
    assert (case.id, case.query, case.relevant) == ("late-fees", "fees charged for late books",
                                                    ("fines",))
    with pytest.raises(InputError, match="no case 'late-feez'"):
        goldens.get("late-feez")


def test_the_targets_example_runs_against_the_example_service() -> None:
    spec = importlib.util.spec_from_file_location("evalkit_example_service",
                                                  EXAMPLE / "service.py")
    assert spec is not None and spec.loader is not None
    service = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = service
    try:
        spec.loader.exec_module(service)
        goldens = load_goldens(EXAMPLE / "goldens.jsonl")
        local = CallableTarget(lambda case: ["fines", "renewals"], name="local")
        assert local.invoke(goldens.get("late-fees")).ranked_ids == ("fines", "renewals")
        with service.serve(max_seconds=60) as url, HttpTarget(
                url=f"{url}/baseline/search", name="prod",
                build_payload=lambda case: {"query": case.query},
                extract=lambda body: body["ids"]) as remote:
            response = remote.invoke(goldens.get("late-fees"))
        assert response.ranked_ids and response.ranked_ids[0] == "fines"
    finally:
        sys.modules.pop(spec.name, None)


CHECKS = """\
checks:
  - id: recall_floor
    metric: recall@10
    op: ">="
    threshold: 0.60
  - id: p95_ceiling
    metric: latency_p95
    op: "<="
    threshold: 800
    level: warn
  - id: no_ndcg_regression
    metric: ndcg@10
    vs_baseline: no_significant_regression
    alpha: 0.05
  - id: controls_hold
    metric: precision
    scope: [q1, q3]
    op: ">="
    threshold: 0.3
"""


def test_checks_name_metrics_registered_later_and_the_gate_runs_on_run_results(
        tmp_path: Path, fresh_names: list[str]) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(CHECKS)
    specs = load_checks(path, known_case_ids=[q.id for q in QUERIES])  # 'precision': unknown yet
    fresh_names.append("precision")

    @register_metric("precision", higher_is_better=True)
    def precision(response: evalkit.TargetResponse, case: evalkit.GoldenCase) -> float:
        return sum(1 for i in response.ranked_ids[:3] if i in case.relevant) / 3

    metrics = ["recall@10", "ndcg@10", "latency_p95", "precision"]
    baseline = run("baseline", search_v1, QUERIES, QRELS, metrics)
    candidate = run("candidate", search_v2, QUERIES, QRELS, metrics)
    verdict = run_gate(specs, candidate, baseline)
    by_id = {c.id: c for c in verdict.checks}
    assert by_id["recall_floor"].passed and by_id["recall_floor"].value == pytest.approx(10 / 12)
    assert by_id["no_ndcg_regression"].passed  # the candidate is better, not worse
    assert by_id["controls_hold"].passed and by_id["controls_hold"].covered == 2
    assert verdict.passed


def test_a_scope_naming_an_unknown_case_is_a_check_error_at_load(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(CHECKS.replace("[q1, q3]", "[q1, q33]"))
    goldens = load_goldens(EXAMPLE / "goldens.jsonl")
    with pytest.raises(CheckError, match="q33"):
        load_checks(path, known_case_ids=[q.id for q in QUERIES])
    with pytest.raises(ValueError, match=r"'q1', 'q33'"):
        load_checks(path, known_case_ids=goldens.ids())
    assert CheckError is ConfigError and issubclass(CheckError, ValueError)


def test_the_llm_judge_is_offered() -> None:
    assert "LLMJudge" in evalkit.__all__  # tests/compat/test_llmjudge.py exercises it
    assert "LLMJudge" in (evalkit.__doc__ or "")


def test_nothing_in_rankproof_imports_the_compat_layer() -> None:
    """compat is a leaf: the library never depends on a migration layer."""
    import ast

    src = REPO / "src" / "rankproof"
    importers = []
    for path in sorted(src.rglob("*.py")):
        if "compat" in path.relative_to(src).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.startswith("rankproof.compat") for n in names):
                importers.append(str(path.relative_to(src)))
    assert importers == []


def test_a_registered_loader_gives_a_golden_set_too(tmp_path: Path) -> None:
    from rankproof.targets._goldens import _unregister_loader

    @register_loader("qlist")  # evalkit's spelling: the suffix without its dot
    def load_qlist(path: Path) -> list[dict[str, object]]:
        rows = path.read_text(encoding="utf-8").split()
        return [{"id": r, "query": f"about {r}", "relevant": [f"rel-{r}"]} for r in rows]

    try:
        path = tmp_path / "cases.qlist"
        path.write_text("q1 q2\n")
        goldens = load_goldens(path)
        assert isinstance(goldens, GoldenSet)
        assert goldens.ids() == ("q1", "q2") and goldens.get("q2").relevant == ("rel-q2",)
    finally:
        _unregister_loader("qlist")


def test_a_trec_eval_set_name_stands_for_its_members() -> None:
    r = run("v1", search_v1, QUERIES, QRELS, ["official", "mrr"])
    row = r.per_query[0].metrics
    assert row["mrr"] == pytest.approx(1 / 3) and row["P@5"] == pytest.approx(1 / 5)
    assert "official" not in row and len(r.metrics) > 10 and "AP" in row
