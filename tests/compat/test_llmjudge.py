"""Seed 001's ``LLMJudge(rubric, model, scale=5, cache_path=...)``: 1..5, registrable as a
metric, cached in the given path; the model behind a real server on 127.0.0.1 (the scripted
test double of tests/providers/_servers.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.providers._servers import Reply, Served, chat_body, json_reply, scripted_server

from rankproof import ConfigError, InputError
from rankproof.compat.evalkit import GoldenCase, LLMJudge, TargetResponse, register_metric, run
from rankproof.measures._registry import _unregister
from rankproof.providers import ProviderConfig

RUBRIC = "Score 5 if the answer is correct and complete, 1 if it is wrong."


@dataclass(frozen=True)
class Query:
    id: str
    text: str


def _grade(path: str, body: Any) -> Reply:
    prompt = body["messages"][-1]["content"]
    answer = prompt.split("Answer to grade:\n", 1)[1].split("\n", 1)[0]
    score = 5 if "good" in answer else (9 if "off-scale" in answer else 1)
    return json_reply(chat_body(json.dumps({"score": score, "reason": "scripted"})))


@pytest.fixture
def served() -> Iterator[Served]:
    with scripted_server(_grade) as server:
        yield server


def _judge(served: Served, tmp_path: Path, **extra: Any) -> LLMJudge:
    provider = ProviderConfig(base_url=served.base_url, model="ignored", max_retries=0)
    return LLMJudge(RUBRIC, "claude-haiku-4-5", cache_path=tmp_path / "judge-cache",
                    provider=provider, **extra)


def test_scale_5_means_1_to_5_and_scores_a_response(served: Served, tmp_path: Path) -> None:
    judge = _judge(served, tmp_path, scale=5)
    assert judge.scale == (1, 2, 3, 4, 5)
    case = GoldenCase(id="q1", query="what?")
    assert judge(TargetResponse(ranked_ids=(), text="a good answer"), case) == 5.0
    assert judge(TargetResponse(ranked_ids=(), text="a bad answer"), case) == 1.0
    body = served.requests[0][1]
    assert body["model"] == "claude-haiku-4-5"  # the judge's model, part of its identity
    assert "Allowed scores, in order: [1, 2, 3, 4, 5]" in body["messages"][0]["content"]
    schema = body["response_format"]["json_schema"]["schema"]  # structured output, on the scale
    assert schema["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert schema["required"] == ["score", "reason"]


def test_the_cache_lives_in_the_given_path(served: Served, tmp_path: Path) -> None:
    case = GoldenCase(id="q1", query="what?")
    response = TargetResponse(ranked_ids=(), text="a good answer")
    assert _judge(served, tmp_path)(response, case) == 5.0
    assert list((tmp_path / "judge-cache").rglob("*.json"))
    assert _judge(served, tmp_path)(response, case) == 5.0  # a new judge, the same cache
    assert len(served.requests) == 1


def test_it_registers_as_a_metric_and_runs(served: Served, tmp_path: Path) -> None:
    judge = _judge(served, tmp_path)
    register_metric("helpfulness_test", higher_is_better=True)(judge)
    try:
        queries = [Query("q1", "first"), Query("q2", "second")]
        ids = {"q1": ["good-doc"], "q2": ["bad-doc"]}
        result = run("v1", lambda q: ids[q.id], queries,
                     {"q1": {"good-doc"}, "q2": {"x"}}, ["helpfulness_test"])
        assert [r.metrics["helpfulness_test"] for r in result.per_query] == [5.0, 1.0]
    finally:
        _unregister("helpfulness_test")


def test_an_off_scale_verdict_is_an_error_naming_the_case(served: Served,
                                                         tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"case 'q9'.*not one of the scale"):
        _judge(served, tmp_path)(TargetResponse(ranked_ids=(), text="off-scale"),
                                 GoldenCase(id="q9", query="?"))


def test_bad_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="scale=1 gives fewer than two labels"):
        LLMJudge(RUBRIC, "m", scale=1, call=lambda p, model: "{}")
    with pytest.raises(InputError, match="model is required"):
        LLMJudge(RUBRIC, "", call=lambda p, model: "{}")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        LLMJudge(RUBRIC, "m")
