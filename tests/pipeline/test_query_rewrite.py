"""``query_transform`` with ``method: rewrite``: the queries rewritten by a provider's chat
endpoint, against the scripted chat server of the provider tests (a labelled test double on
127.0.0.1), through the provider layer's cache; an unreachable provider refuses the stage."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.providers._servers import Reply, chat_body, json_reply, refused_url, scripted_server

from rankproof.pipeline import load_experiment, run
from rankproof.providers import ProviderError

PROMPT = "Rewrite for search: <<{query}>>"


def _rewrite(path: str, body: Any) -> Reply:
    text = re.fullmatch(r"Rewrite for search: <<(.*)>>", body["messages"][0]["content"],
                        re.S)
    assert text is not None
    return json_reply(chat_body(json.dumps({"query": text.group(1).lower() + " rewritten"})))


def _experiment(tmp_path: Path, base_url: str, out: str) -> Path:
    (tmp_path / "chat.yaml").write_text(
        f"name: scripted\nbase_url: {base_url}\nmodel: rewriter\nmax_retries: 0\n"
        "cache_dir: provider-cache\n", encoding="utf-8")
    exp = tmp_path / "exp.yaml"
    exp.write_text(f"""
name: t
output: {out}
stages:
  - {{id: q, kind: query_transform, method: rewrite, provider: chat.yaml,
      prompt: "{PROMPT}"}}
  - {{id: bm25, kind: retrieve, method: bm25, queries: q}}
""", encoding="utf-8")
    return exp


def test_rewrite_is_deterministic_and_a_rerun_is_served_from_the_cache(tmp_path: Path) -> None:
    with scripted_server(_rewrite) as served:
        exp = load_experiment(_experiment(tmp_path, served.base_url, "out1"))
        first = run(exp)
        assert first.passed and {s.status for s in first.stages} == {"run"}
        n_calls = len(served.requests)
        summary = json.loads((exp.output / "q" / "stage.json").read_text("utf-8"))["summary"]
        assert summary["queries"] == n_calls > 0
        assert summary["changed"] == n_calls and summary["calls"] == n_calls
        assert summary["cache_hits"] == 0 and summary["failed"] == 0
        assert summary["provider"] == {"name": "scripted", "base_url": served.base_url,
                                       "model": "rewriter", "temperature": 0.0}
        rows = [json.loads(line) for line in
                (exp.output / "q" / "queries.jsonl").read_text("utf-8").splitlines()]
        assert all(r["query"].endswith(" rewritten") and r["query"] == r["query"].lower()
                   for r in rows)
        assert all(b["response_format"]["type"] == "json_schema" for _, b in served.requests)

        again = run(dataclasses.replace(exp, output=tmp_path / "out2"))  # stage runs again
        assert again.passed and len(served.requests) == n_calls  # no new call
        summary2 = json.loads((tmp_path / "out2" / "q" / "stage.json").read_text("utf-8")
                              )["summary"]
        assert summary2["cache_hits"] == n_calls and summary2["calls"] == 0
        assert summary2["config_hash"] == summary["config_hash"]
        assert (tmp_path / "out2" / "q" / "queries.jsonl").read_bytes() == \
            (exp.output / "q" / "queries.jsonl").read_bytes()
        assert {s.status for s in run(exp).stages} == {"cached"}


def test_an_unreachable_provider_refuses_the_stage_naming_the_endpoint(tmp_path: Path) -> None:
    url = refused_url()
    exp = load_experiment(_experiment(tmp_path, url, "out"))
    with pytest.raises(ProviderError, match="every call failed") as info:
        run(exp)
    assert info.value.reason == "connection refused"
    assert info.value.endpoint == url + "/chat/completions"
    assert url in str(info.value)


def test_rewrite_fields_are_checked(tmp_path: Path) -> None:
    from rankproof.pipeline import parse_experiment

    for stage, message in [("{id: q, kind: query_transform, method: rewrite}", "needs provider"),
                           ("{id: q, kind: query_transform, method: none, provider: x.yaml}",
                            "are for method rewrite")]:
        with pytest.raises(Exception, match=message):
            parse_experiment(f"name: t\nstages:\n  - {stage}\n", tmp_path / "exp.yaml")
