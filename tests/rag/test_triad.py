"""The RAG triad per dimension, and the registered grounding/citation/triad metrics.

Hand values: the query "When does the river flood?" has content tokens
river, flood (when, does: stop words; the: article). D1's tokens are
"river floods in spring said mayor" plus stop words — "floods" is not "flood".
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from rankproof._errors import InputError
from rankproof.data import Qrels
from rankproof.measures import lookup
from rankproof.rag._answers import AnswerRow, Context
from rankproof.rag._text import content_tokens, tokens
from rankproof.rag._triad import (
    PROXY_METHODS,
    TRIAD_DIMENSIONS,
    answer_relevance,
    context_relevance,
    groundedness,
    triad,
    triads,
)
from rankproof.targets import Case, TargetResponse

QUERY = "When does the river flood?"
D1 = Context("d1", "The river floods in spring, said the mayor.")
D2 = Context("d2", "Dry summers follow wet springs.")
D3 = Context("d3", "Nothing here.")
SHOWN = (D1, D2, D3)
ANSWER = "The river floods in spring."  # tokens: river floods in spring
QRELS = {"q1": {"d2": 2, "d1": 0, "dz": 1}}


class Containment:
    name = "containment"

    def entailment(self, premise: str, hypothesis: str) -> float:
        wanted = content_tokens(hypothesis)
        shown = set(tokens(premise))
        return sum(t in shown for t in wanted) / len(wanted) if wanted else 0.0


def row(**kw: Any) -> AnswerRow:
    base: dict[str, Any] = {"query_id": "q1", "answer": ANSWER, "contexts": SHOWN,
                            "query": QUERY}
    base.update(kw)
    return AnswerRow(**base)


# ---------------------------------------------------------------- context relevance


def test_context_relevance_with_qrels() -> None:
    # d2 has label 2 >= 1 -> 1.0; one relevant of three shown; dz is relevant but not shown
    d = context_relevance(SHOWN, judgments=QRELS["q1"])
    assert (d.value, d.method, d.proxy) == (1.0, "qrels", False)
    assert d.detail["relevant_shown"] == ["d2"]
    assert d.detail["relevant_share"] == pytest.approx(1 / 3)
    assert context_relevance(SHOWN, judgments=QRELS["q1"], rel_level=3).value == 0.0
    assert context_relevance((D1, D3), judgments=QRELS["q1"]).value == 0.0
    assert context_relevance((), judgments=QRELS["q1"]).detail["relevant_share"] == 0.0


def test_context_relevance_proxy_without_qrels() -> None:
    # river in D1, flood not (floods) -> 1/2, labelled as a proxy
    d = context_relevance(SHOWN, query=QUERY)
    assert (d.value, d.method, d.proxy) == (0.5, "query_context_overlap", True)
    assert d.detail == {"matched": 1, "total": 2}
    assert context_relevance(SHOWN).value is None
    assert context_relevance(SHOWN, query="Why is it?").reason == \
        "the query has no content tokens"


@pytest.mark.parametrize("level", [0, True, 1.0])
def test_rel_level_is_validated(level: object) -> None:
    with pytest.raises(InputError, match="rel_level must be an integer >= 1"):
        context_relevance(SHOWN, judgments={}, rel_level=level)  # type: ignore[arg-type]


# ---------------------------------------------------------------- groundedness


def test_groundedness_lexical_and_nli() -> None:
    # content: river floods spring -> all in D1
    lex = groundedness("The river floods in spring and Paris.", SHOWN)
    # river floods spring paris: 3/4
    assert (lex.value, lex.method, lex.proxy) == (0.75, "lexical_grounding", False)
    assert lex.detail["unsupported"] == ["paris"]
    nli = groundedness("The river floods in spring. Paris burns.", SHOWN, scorer=Containment())
    # S1 river floods spring -> 1.0 on D1; S2 paris burns -> 0 everywhere -> 1/2
    assert (nli.value, nli.method) == (0.5, "nli")
    assert nli.detail["plumbing_only"] is False and nli.detail["scorer"] == "containment"
    assert groundedness("", SHOWN).value is None


# ---------------------------------------------------------------- answer relevance


def test_answer_relevance_token_f1() -> None:
    # answer tokens river floods in spring (4). "in spring": 2 common, P 1/2, R 1 -> 2/3.
    # "spring": 1 common, P 1/4, R 1 -> 2*(1/4)/(5/4) = 0.4. Best: 2/3 (reference 0).
    d = answer_relevance(ANSWER, query=QUERY, references=["in spring", "spring"])
    assert d.value == pytest.approx(2 / 3)
    assert (d.method, d.proxy, d.detail["best_reference"]) == ("token_f1", False, 0)
    assert answer_relevance(ANSWER, references=["spring", "in spring"]).detail[
        "best_reference"] == 1


def test_answer_relevance_proxy_and_judge() -> None:
    # query content river, flood; answer has river only -> 1/2
    d = answer_relevance(ANSWER, query=QUERY)
    assert (d.value, d.method, d.proxy) == (0.5, "query_answer_overlap", True)
    # an empty reference list (a no-answer question) cannot be F1-scored: the proxy is used
    assert answer_relevance(ANSWER, query=QUERY, references=[]).method == "query_answer_overlap"
    j = answer_relevance(ANSWER, query=QUERY, references=["spring"], judge_score=0.8)
    assert (j.value, j.method, j.proxy) == (0.8, "judge", False)
    assert answer_relevance(ANSWER).value is None


@pytest.mark.parametrize("bad", [math.nan, math.inf, "0.5", True])
def test_judge_score_is_validated(bad: object) -> None:
    with pytest.raises(InputError, match="a judge score must be a finite number"):
        answer_relevance(ANSWER, judge_score=bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the triad


def test_triad_reads_each_dimension_with_its_method() -> None:
    t = triad(row(), references=["in spring"], qrels=QRELS)
    assert [d.name for d in t.dimensions()] == list(TRIAD_DIMENSIONS)
    assert (t.context_relevance.value, t.context_relevance.method) == (1.0, "qrels")
    assert (t.groundedness.value, t.groundedness.method) == (1.0, "lexical_grounding")
    assert t.answer_relevance.value == pytest.approx(2 / 3)
    d = t.to_dict()
    # never blended: the three dimensions, the id, and nothing that combines them
    assert set(d) == {"query_id", *TRIAD_DIMENSIONS}
    assert all(set(d[n]) == {"value", "method", "proxy", "detail", "reason"}
               for n in TRIAD_DIMENSIONS)


def test_triad_without_qrels_or_references_uses_labelled_proxies() -> None:
    t = triad(row())
    assert t.context_relevance.method in PROXY_METHODS and t.context_relevance.proxy
    assert t.answer_relevance.method in PROXY_METHODS and t.answer_relevance.proxy
    assert not t.groundedness.proxy
    assert (t.context_relevance.value, t.answer_relevance.value) == (0.5, 0.5)


def test_triad_query_missing_from_qrels_is_not_scored() -> None:
    t = triad(row(query_id="q9"), qrels=QRELS)
    assert t.context_relevance.value is None
    assert t.context_relevance.reason == "query 'q9' has no qrels"


def test_triads_accept_a_qrels_object_and_judge_scores() -> None:
    qrels = Qrels.from_dict(QRELS)
    out = triads([row(), row(query_id="q2", contexts=(D1,))], qrels=qrels,
                 references={"q1": ["in spring"]}, judge_scores={"q2": 0.25},
                 queries={"q2": QUERY}, scorer=Containment())
    assert [t.query_id for t in out] == ["q1", "q2"]
    assert out[0].context_relevance.value == 1.0 and out[1].context_relevance.value is None
    assert out[0].answer_relevance.method == "token_f1"
    assert (out[1].answer_relevance.value, out[1].answer_relevance.method) == (0.25, "judge")
    assert out[0].groundedness.method == "nli" and out[0].groundedness.value == 1.0


def test_triad_refuses_other_qrels_types() -> None:
    with pytest.raises(TypeError, match="qrels must be a Qrels"):
        triad(row(), qrels=[("q1", "d1", 1)])  # type: ignore[arg-type]


# ---------------------------------------------------------------- registered metrics

POLARITY = {"grounding": True, "grounding_2gram": True, "grounding_3gram": True,
            "grounding_4gram": True, "citations_dangling": False, "quotes_unsupported": False,
            "context_relevance": True, "answer_relevance": True}


def _score(name: str, response: TargetResponse, case: Case) -> float:
    d = lookup(name)
    assert d.fn is not None
    return d.fn(response, case)


def _response(text: str, citations: list[Any] | None = None) -> TargetResponse:
    meta: dict[str, Any] = {"contexts": [{"id": c.id, "text": c.text} for c in SHOWN]}
    if citations is not None:
        meta["citations"] = citations
    return TargetResponse(ranked_ids=(), text=text, meta=meta)


def test_metrics_are_registered_with_polarity() -> None:
    for name, higher in POLARITY.items():
        d = lookup(name)
        assert (d.kind, d.higher_is_better) == ("case", higher), name


def test_registered_metric_values() -> None:
    case = Case(id="q1", query=QUERY, relevance={"d2": 1},
                meta={"references": ["in spring", "spring"]})
    text = 'The river "floods in spring" [1] and "Dry summers follow" [1][7].'
    response = _response(text)
    # markers removed first; content: river floods spring dry summers follow -> all shown
    assert _score("grounding", response, case) == 1.0
    # tokens: river floods in spring and dry summers follow (8; "the" dropped).
    # 2-grams (7): river floods, floods in, in spring (D1); spring and (no); and dry (no);
    # dry summers, summers follow (D2) -> 5/7
    assert _score("grounding_2gram", response, case) == pytest.approx(5 / 7)
    # 3-grams (6): river floods in, floods in spring, dry summers follow -> 3/6
    assert _score("grounding_3gram", response, case) == pytest.approx(0.5)
    # 4-grams (5): river floods in spring -> 1/5
    assert _score("grounding_4gram", response, case) == pytest.approx(0.2)
    # markers 1, 1, 7 -> citations 1 and 7; 7 dangles
    assert _score("citations_dangling", response, case) == 1.0
    # "floods in spring" in cited D1; "Dry summers follow" only in uncited D2 (D1 cited)
    assert _score("quotes_unsupported", response, case) == 1.0
    # judged case: d2 relevant and shown -> 1.0
    assert _score("context_relevance", response, case) == 1.0
    # tokens river floods in spring and dry summers follow (8) vs "in spring" -> P 2/8, R 1
    # F1 = 2 * 0.25 / 1.25 = 0.4; vs "spring": P 1/8, R 1 -> 2/9. Best 0.4
    assert _score("answer_relevance", response, case) == pytest.approx(0.4)


def test_registered_metrics_with_declared_citations_and_proxies() -> None:
    case = Case(id="q1", query=QUERY)  # unjudged, no references
    response = _response('"Dry summers follow" [1]', citations=["d2", "d9"])
    assert _score("citations_dangling", response, case) == 1.0  # d9
    assert _score("quotes_unsupported", response, case) == 0.0  # in cited d2
    assert _score("context_relevance", response, case) == 0.5  # proxy: river, not flood
    assert _score("answer_relevance", response, case) == 0.0  # proxy: no river/flood in answer


def test_nothing_to_check_scores_zero_in_the_registry() -> None:
    case = Case(id="q1", query=QUERY)
    response = _response("No.")
    assert _score("grounding", response, case) == 0.0
    empty = TargetResponse(ranked_ids=(), text="", meta={"contexts": []})
    assert _score("grounding_3gram", empty, case) == 0.0
    assert _score("citations_dangling", empty, case) == 0.0
