"""`Case`, `TargetResponse`, `CallableTarget` and `RetrieverTarget`; the public names."""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import rankproof.targets
from rankproof import InputError, Run, TargetError
from rankproof.targets import CallableTarget, Case, RetrieverTarget, Target, TargetResponse


def test_public_names_are_pinned_and_sorted() -> None:
    assert rankproof.targets.__all__ == sorted(rankproof.targets.__all__)
    assert set(rankproof.targets.__all__) == {
        "CallableTarget", "Case", "CaseRow", "GoldenSet", "HttpTarget", "RetrieverTarget",
        "RunProvenance",
        "RunResult", "ShardPlan", "Target", "TargetResponse", "as_cases", "compute_aggregate",
        "default_build_payload", "default_extract", "judgments_digest", "load_goldens",
        "register_loader", "run", "shard_plan",
    }
    for name in rankproof.targets.__all__:
        assert hasattr(rankproof.targets, name), name


# -- Case ------------------------------------------------------------------------


def test_case_binary_judgments_derive_grades() -> None:
    case = Case(id="q1", query="x", relevant=["a", "b"])  # type: ignore[arg-type]
    assert case.relevant == ("a", "b")
    assert dict(case.relevance or {}) == {"a": 1, "b": 1}
    assert case.judged


def test_case_graded_judgments_derive_relevant() -> None:
    case = Case(id="q1", query="x", relevance={"a": 2, "b": 0, "c": -1, "d": 1})
    assert case.relevant == ("a", "d")
    assert case.judged


def test_case_without_judgments_is_unjudged() -> None:
    case = Case(id="q1", query="x")
    assert not case.judged
    assert case.relevant == () and case.relevance is None


def test_case_judged_with_nothing_relevant() -> None:
    case = Case(id="q1", query="x", relevance={})
    assert case.judged and case.relevant == ()


def test_case_is_frozen_and_replace_keeps_it_valid() -> None:
    case = Case(id="q1", query="x", relevance={"a": 2}, tags=("t",), meta={"k": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.query = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        case.meta["k"] = 2  # type: ignore[index]
    other = dataclasses.replace(case, query="y")
    assert other.relevant == ("a",) and other.query == "y"
    assert other == dataclasses.replace(other)


@pytest.mark.parametrize(("kwargs", "field", "message"), [
    ({"id": ""}, "id", "case id must be a non-empty string"),
    ({"id": 7}, "id", "found int 7 (quote it)"),
    ({"query": ""}, "query", "query must be a non-empty string"),
    ({"relevant": "d1"}, "relevant", "expected a list of strings, found str"),
    ({"relevant": ("d1", "d1")}, "relevant", "'d1' is listed twice"),
    ({"relevant": ("d1", 2)}, "relevant", "item 2 must be a string, found int 2"),
    ({"relevance": {"d1": "high"}}, "relevance", "grade of 'd1' must be an integer"),
    ({"relevance": {"d1": True}}, "relevance", "grade of 'd1' must be an integer"),
    ({"relevance": {"d1": 2}, "relevant": ("d2",)}, "relevant", "disagrees"),
    ({"tags": "smoke"}, "tags", "expected a list of strings"),
    ({"meta": []}, "meta", "meta must be a mapping"),
])
def test_case_validation(kwargs: dict[str, Any], field: str, message: str) -> None:
    args: dict[str, Any] = {"id": "q1", "query": "x", **kwargs}
    with pytest.raises(InputError, match=re.escape(message)) as err:
        Case(**args)
    assert err.value.field == field


def test_case_from_dict_refuses_unknown_and_double_keys() -> None:
    with pytest.raises(InputError, match="unknown key 'relevent'") as err:
        Case.from_dict({"id": "q", "query": "x", "relevent": ["a"]})
    assert err.value.field == "relevent"
    with pytest.raises(InputError, match="not both"):
        Case.from_dict({"id": "q", "query": "x", "relevant": ["a"], "relevance": {"a": 1}})
    with pytest.raises(InputError, match="missing required key 'query'"):
        Case.from_dict({"id": "q"})
    with pytest.raises(InputError, match="mapping of document id to grade"):
        Case.from_dict({"id": "q", "query": "x", "relevance": ["a"]})


def test_case_from_dict_empty_relevant_list_means_judged() -> None:
    assert Case.from_dict({"id": "q", "query": "x", "relevant": []}).judged
    assert not Case.from_dict({"id": "q", "query": "x"}).judged
    assert Case.from_dict({"id": "q", "query": "x", "relevance": {"a": 2.0}}).relevance == {
        "a": 2}


def test_target_response_validation() -> None:
    r = TargetResponse(ranked_ids=["a", "b"], latency_ms=3)  # type: ignore[arg-type]
    assert r.ranked_ids == ("a", "b") and r.latency_ms == 3.0 and r.text is None
    with pytest.raises(ValueError, match="latency_ms"):
        TargetResponse(ranked_ids=(), latency_ms=-1.0)
    with pytest.raises(ValueError, match="latency_ms"):
        TargetResponse(ranked_ids=(), latency_ms=float("nan"))
    with pytest.raises(InputError, match="expected a list of strings"):
        TargetResponse(ranked_ids="abc")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text"):
        TargetResponse(ranked_ids=(), text=3)  # type: ignore[arg-type]


# -- CallableTarget --------------------------------------------------------------

CASE = Case(id="q-7", query="pump alarm", relevant=("d1",))


def test_callable_returning_ids_is_timed_around_the_call() -> None:
    def fn(case: Case) -> list[str]:
        time.sleep(0.05)
        return ["d1", "d2"]

    target = CallableTarget(fn, "fn")
    assert isinstance(target, Target)
    response = target.invoke(CASE)
    assert response.ranked_ids == ("d1", "d2")
    assert response.latency_ms >= 50.0


def test_callable_returning_mapping_or_response() -> None:
    mapping = CallableTarget(lambda c: {"ids": ("d2",), "text": "t", "meta": {"m": 1}}, "map")
    r = mapping.invoke(CASE)
    assert (r.ranked_ids, r.text, dict(r.meta)) == (("d2",), "t", {"m": 1})
    own = CallableTarget(lambda c: TargetResponse(("d3",), "t", latency_ms=1e6, meta={"x": 1}),
                         "own")
    r = own.invoke(CASE)
    assert r.ranked_ids == ("d3",) and r.latency_ms < 1e6 and dict(r.meta) == {"x": 1}


@pytest.mark.parametrize(("value", "message"), [
    ("d1", "expected a sequence of document ids, got str"),
    ([1], "item 1 is int"),
    ({"idz": ["a"]}, "unknown key 'idz'"),
    ({"text": "only text"}, "has no 'ids'"),
    ({"ids": ["a"], "text": 5}, "'text' must be a string"),
    (None, "expected a sequence of document ids, got NoneType"),
])
def test_callable_bad_return_values(value: Any, message: str) -> None:
    with pytest.raises(TargetError, match=message) as err:
        CallableTarget(lambda c: value, "fn").invoke(CASE)
    assert "'q-7'" in str(err.value)


def test_callable_exception_becomes_target_error_naming_the_case() -> None:
    def fn(case: Case) -> list[str]:
        raise ConnectionError("index offline")

    with pytest.raises(TargetError, match=r"case 'q-7'.*ConnectionError: index offline") as err:
        CallableTarget(fn, "fn").invoke(CASE)
    assert isinstance(err.value.__cause__, ConnectionError)


def test_callable_invoke_many_in_order_and_name_required() -> None:
    target = CallableTarget(lambda c: [c.id], "echo")
    cases = [Case(id=f"q{i}", query="x") for i in range(5)]
    assert [r.ranked_ids for r in target.invoke_many(cases)] == [(c.id,) for c in cases]
    with pytest.raises(ValueError, match="non-empty name"):
        CallableTarget(lambda c: [], "")
    with pytest.raises(TypeError, match="callable"):
        CallableTarget("nope", "x")  # type: ignore[arg-type]


# -- RetrieverTarget -------------------------------------------------------------


@dataclass(frozen=True)
class _Output:
    run: Run
    latency_ms: Mapping[str, float]
    notes: tuple[str, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)


class FakeRetriever:
    """Scores each document by shared words; ties left for the target to break."""

    name = "fake"

    def __init__(self) -> None:
        self.docs: list[tuple[str, str]] = []
        self.calls: list[int] = []

    def index(self, docs: Sequence[tuple[str, str]]) -> None:
        self.docs = list(docs)

    def search(self, queries: Sequence[tuple[str, str]], k: int) -> _Output:
        self.calls.append(len(queries))
        q, d, s = [], [], []
        for qid, text in queries:
            words = set(text.split())
            for doc_id, doc_text in self.docs:
                score = len(words & set(doc_text.split()))
                if score:
                    q.append(qid)
                    d.append(doc_id)
                    s.append(float(score))
        if not q:  # a run needs a row; a query that matched nothing is simply absent
            q, d, s = ["__none__"], ["__none__"], [0.0]
        run = Run.from_columns(q, d, np.array(s), name=self.name)
        return _Output(run=run, latency_ms={qid: 1.5 for qid, _ in queries},
                       notes=("a test double",), config={"k": k})


DOCS = [("a", "water pump alarm"), ("b", "pump alarm"), ("c", "pump alarm"), ("d", "billing")]


def test_retriever_target_orders_by_trec_eval_rule_and_cuts_at_k() -> None:
    retriever = FakeRetriever()
    target = RetrieverTarget(retriever, k=2, docs=DOCS)
    assert target.name == "fake"
    r = target.invoke(Case(id="q", query="water pump alarm"))
    # a scores 3; b and c tie at 2 and tie-break by docid descending: c before b.
    assert r.ranked_ids == ("a", "c")
    assert r.latency_ms == 1.5
    assert r.meta["notes"] == ("a test double",) and r.meta["config"] == {"k": 2}


def test_retriever_target_no_match_and_batch() -> None:
    retriever = FakeRetriever()
    target = RetrieverTarget(retriever, "bm25-ish", k=10, docs=DOCS, warmup=0)
    cases = [Case(id="q2", query="billing"), Case(id="q1", query="nothing here"),
             Case(id="q3", query="alarm")]
    responses = target.invoke_many(cases)
    assert retriever.calls == [3]  # one batched search
    assert [r.ranked_ids for r in responses] == [("d",), (), ("c", "b", "a")]
    with pytest.raises(ValueError, match="'q2' is repeated"):
        target.invoke_many([cases[0], cases[0]])


def test_retriever_target_warms_up_once_and_records_how_it_timed() -> None:
    """As `rankproof eval` times a stage: the first call searches the first queries untimed
    (results discarded), later calls do not; the answers are those of an unwarmed target."""
    cases = [Case(id=f"q{i}", query=q) for i, q in
             enumerate(["billing", "alarm", "water pump", "nothing here"])]
    cold = RetrieverTarget(FakeRetriever(), k=10, docs=DOCS, warmup=0).invoke_many(cases)
    retriever = FakeRetriever()
    target = RetrieverTarget(retriever, k=10, docs=DOCS, warmup=2, threads=None)
    warm = target.invoke_many(cases)
    assert retriever.calls == [2, 4]  # the warm-up (first 2 queries), then the timed batch
    assert [r.ranked_ids for r in warm] == [r.ranked_ids for r in cold]
    timing = warm[0].meta["timing"]
    assert timing["warmup_queries"] == 2 and timing["warmup_ms"] >= 0
    assert timing["threads_set"] is False  # threads=None: torch's own setting, not touched
    target.invoke(cases[0])
    assert retriever.calls == [2, 4, 1]  # warmed once: no second warm-up
    with pytest.raises(ValueError, match="warmup must be an integer >= 0"):
        RetrieverTarget(FakeRetriever(), warmup=-1)


def test_retriever_target_wraps_search_errors() -> None:
    class Broken(FakeRetriever):
        def search(self, queries: Sequence[tuple[str, str]], k: int) -> _Output:
            raise InputError("queries is empty")

    with pytest.raises(TargetError, match=r"case 'q'.*search raised InputError"):
        RetrieverTarget(Broken()).invoke(Case(id="q", query="x"))
    with pytest.raises(ValueError, match="k must be a positive integer"):
        RetrieverTarget(FakeRetriever(), k=0)


def test_retriever_target_with_the_bm25_stage() -> None:
    retrieval = pytest.importorskip("rankproof.retrieval")
    target = RetrieverTarget(retrieval.BM25Retriever(), "bm25", k=3, docs=[
        ("boil", "boil water advisory: boil tap water for one minute"),
        ("bill", "residential billing rates and meter charges"),
        ("pump", "pump station alarm response procedure"),
    ])
    r = target.invoke(Case(id="q", query="boil water advisory"))
    assert r.ranked_ids[0] == "boil"
    assert r.latency_ms >= 0


def test_target_errors_name_case_and_target_as_attributes() -> None:
    case = Case("q-7", "anything", relevant=("d1",))

    def broken(c: Case) -> list[str]:
        raise OSError("index offline")

    for fn, fragment in ((broken, "the function raised OSError"),
                         (lambda c: "d1", "expected a sequence of document ids"),
                         (lambda c: {"ids": ["d1"], "score": 1}, "unknown key 'score'")):
        with pytest.raises(TargetError, match=fragment) as err:
            CallableTarget(fn, "svc").invoke(case)
        e = err.value
        assert (e.case_id, e.target, e.status, e.attempts) == ("q-7", "svc", None, None)
    plain = TargetError("no case")
    assert (plain.case_id, plain.target, plain.status, plain.attempts) == (None,) * 4
    assert str(plain) == "no case"


def test_bad_target_parameters_are_input_errors() -> None:
    from rankproof.retrieval import BM25Retriever
    from rankproof.targets import HttpTarget

    with pytest.raises(InputError, match="a target needs a non-empty name") as err:
        CallableTarget(lambda c: [], " ")
    assert err.value.field == "name"
    with pytest.raises(InputError, match="url must be an absolute") as err:
        HttpTarget("ftp://x/y", "svc")
    assert err.value.field == "url"
    with pytest.raises(InputError, match="k must be a positive integer"):
        RetrieverTarget(BM25Retriever(), "r", k=0)
    with pytest.raises(InputError, match="latency_ms must be a finite number"):
        TargetResponse(ranked_ids=("a",), latency_ms=-1.0)
    with pytest.raises(InputError, match="a run needs a non-empty name"):
        rankproof.targets.run("", CallableTarget(lambda c: [], "t"), [], ["RR"])
