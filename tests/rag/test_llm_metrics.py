"""``rag score --llm-metrics``: the RAGAS-style metrics through a provider, against the
scripted chat/embeddings server of tests/providers/_servers.py (a test double on 127.0.0.1)
whose structured replies make every score computable by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.providers._servers import Reply, chat_body, json_reply, refused_url, scripted_server
from typer.testing import CliRunner

from rankproof.cli import app

EX = Path(__file__).resolve().parents[2] / "src" / "rankproof" / "rag" / "example"
REFS, FAITHFUL = EX / "references.jsonl", EX / "answers_faithful.jsonl"
ROWS = [json.loads(line) for line in FAITHFUL.read_text(encoding="utf-8").splitlines()[1:]
        if line.strip()]
ALL = "faithfulness,answer_relevancy,context_precision,context_recall"
runner = CliRunner()


def _script(bad_question: str | None = None) -> Any:
    def script(path: str, body: Any) -> Reply:
        if path == "/v1/embeddings":  # every text the same direction: cosine 1
            return json_reply({"data": [{"index": i, "embedding": [1.0, 0.0]}
                                        for i, _ in enumerate(body["input"])]})
        prompt = body["messages"][-1]["content"]
        assert body["response_format"]["type"] == "json_schema"
        if bad_question and bad_question in prompt and prompt.startswith("Split the answer"):
            return json_reply(chat_body('{"statements": "all good"}'))  # off the schema
        if prompt.startswith("Split the answer"):
            reply: dict[str, Any] = {"statements": [
                {"statement": "a", "supported": True}, {"statement": "b", "supported": False}]}
        elif prompt.startswith("Write 3"):
            reply = {"questions": ["q1", "q2", "q3"], "noncommittal": False}
        elif prompt.startswith("For each numbered passage"):
            shown = prompt.split("Passages:\n", 1)[1]
            n = sum(1 for line in shown.splitlines() if line.startswith("["))
            reply = {"verdicts": [{"index": i, "useful": i == 2 or n == 1}
                                  for i in range(1, n + 1)]}
        else:
            reply = {"sentences": [{"sentence": s, "attributed": s != "d"} for s in "abcd"]}
        return json_reply(chat_body(json.dumps(reply), 100, 20))

    return script


def _provider(tmp_path: Path, url: str, kinds: str = "[chat, embeddings]") -> Path:
    path = tmp_path / "provider.yaml"
    path.write_text(f"base_url: {url}\nmodel: scripted-1\nkinds: {kinds}\nmax_retries: 0\n"
                    "cache_dir: cache\nprices: {input_per_1k_tokens: 1.0, "
                    "output_per_1k_tokens: 2.0}\n", encoding="utf-8")
    return path


def _score(tmp_path: Path, provider: Path, metrics: str = ALL, *extra: str) -> Any:
    return runner.invoke(app, ["rag", "score", str(FAITHFUL), "--llm-metrics", metrics,
                               "--provider", str(provider), "-o", str(tmp_path / "rag.json"),
                               *extra])


def _precision(n: int) -> float:
    return 1.0 if n == 1 else (0.5 if n >= 2 else 0.0)


def test_every_llm_metric_is_scored_per_case_with_an_interval(tmp_path: Path) -> None:
    with scripted_server(_script()) as served:
        provider = _provider(tmp_path, served.base_url)
        result = _score(tmp_path, provider, ALL, "--references", str(REFS))
        assert result.exit_code == 0, result.output
        calls = len(served.requests)
        doc = json.loads((tmp_path / "rag.json").read_text(encoding="utf-8"))
        again = _score(tmp_path, provider, ALL, "--references", str(REFS), "--force")
        assert again.exit_code == 0 and len(served.requests) == calls  # all cached
    rerun = json.loads((tmp_path / "rag.json").read_text(encoding="utf-8"))["llm_metrics"]
    assert rerun["usage"]["calls"] == 0 and rerun["usage"]["cache_hits"] > 0
    values = {m: {r["case_id"]: r["values"][m] for r in doc["run"]["rows"]}
              for m in ALL.split(",")}
    assert set(values["faithfulness"].values()) == {0.5}
    assert set(values["answer_relevancy"].values()) == {1.0}
    assert set(values["context_recall"].values()) == {0.75}
    for row in ROWS:
        assert values["context_precision"][row["query_id"]] == _precision(
            len(row.get("contexts", [])))
    summary = doc["llm_metrics"]
    faith = summary["metrics"]["faithfulness"]
    assert faith["mean"] == 0.5 and faith["n"] == len(ROWS) and faith["failures"] == {}
    assert faith["interval"]["low"] == faith["interval"]["high"] == 0.5
    assert faith["interval"]["method"] == "percentile bootstrap"
    assert faith["prompt_digest"].startswith("sha256:") and faith["schema"] == "Statements"
    assert summary["usage"]["prompt_tokens"] > 0 and summary["usage"]["cost"] > 0
    assert doc["means"]["context_recall"] == 0.75
    assert any("advisory until calibrated" in c for c in doc["caveats"])


def test_a_reply_off_the_schema_is_counted_and_left_out(tmp_path: Path) -> None:
    bad = ROWS[0].get("query")
    if bad is None:
        refs = {json.loads(line)["query_id"]: json.loads(line)
                for line in REFS.read_text(encoding="utf-8").splitlines()}
        bad = refs[ROWS[0]["query_id"]]["query"]
    with scripted_server(_script(bad)) as served:
        result = _score(tmp_path, _provider(tmp_path, served.base_url), "faithfulness",
                        "--references", str(REFS))
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "rag.json").read_text(encoding="utf-8"))
    faith = doc["llm_metrics"]["metrics"]["faithfulness"]
    assert faith["failures"] == {"schema violation": 1} and faith["n"] == len(ROWS) - 1
    assert doc["unscored"]["faithfulness"] == [ROWS[0]["query_id"]]
    assert f"faithfulness: 1 of {len(ROWS)} case(s) failed" in result.stderr
    assert "schema violation 1" in result.stderr


def test_an_unreachable_provider_exits_2_naming_it(tmp_path: Path) -> None:
    url = refused_url()
    result = _score(tmp_path, _provider(tmp_path, url), "faithfulness")
    assert result.exit_code == 2
    assert f"provider at {url} failed every call: connection refused" in result.output
    assert not (tmp_path / "rag.json").exists()


@pytest.mark.parametrize(("metrics", "kinds", "message"), [
    ("context_recall", "[chat, embeddings]", "give --references"),
    ("answer_relevancy", "[chat]", "must allow embeddings"),
    ("helpfulness", "[chat]", "unknown LLM metric"),
])
def test_what_a_metric_needs_is_checked_first(tmp_path: Path, metrics: str, kinds: str,
                                              message: str) -> None:
    result = _score(tmp_path, _provider(tmp_path, refused_url(), kinds), metrics)
    assert result.exit_code == 2 and message in result.output


def test_human_labels_give_each_labelled_metric_a_ppi_mean(tmp_path: Path) -> None:
    from rankproof.rag import ppi_mean

    qids = [r["query_id"] for r in ROWS]
    human = {q: (1.0 if i % 2 else 0.0) for i, q in enumerate(qids[:6])}
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"query_id": q, "metric": "context_precision",
                                          "label": v}) + "\n" for q, v in human.items()),
                      encoding="utf-8")
    with scripted_server(_script()) as served:
        result = _score(tmp_path, _provider(tmp_path, served.base_url),
                        "faithfulness,context_precision", "--references", str(REFS),
                        "--llm-labels", str(labels))
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "rag.json").read_text(encoding="utf-8"))
    metrics = doc["llm_metrics"]["metrics"]
    assert metrics["faithfulness"]["ppi"] is None  # no labels for it
    got = metrics["context_precision"]["ppi"]
    scores = {r["case_id"]: r["values"]["context_precision"] for r in doc["run"]["rows"]}
    want = ppi_mean(list(scores.values()), [scores[q] for q in human], list(human.values()))
    assert got["estimate"] == pytest.approx(want.estimate) and got["labelled"] == len(human)
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((want.ci_low, want.ci_high))
    assert "llm_labels" in doc["provenance"]["inputs"]  # the labels' digest is provenance


@pytest.mark.parametrize(("row", "field"), [
    ({"query_id": "q1", "metric": "faithfulness", "label": 1.5}, "label"),
    ({"query_id": "q1", "metric": "judge_score", "label": 1}, "metric"),
    ({"query_id": "q1", "metric": "faithfulness", "label": 1, "note": "x"}, "note"),
])
def test_a_bad_label_row_is_refused_by_its_line(tmp_path: Path, row: dict[str, Any],
                                                field: str) -> None:
    from rankproof import InputError
    from rankproof.rag import load_metric_labels

    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"query_id": "q0", "metric": "faithfulness", "label": 0})
                    + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as got:
        load_metric_labels(path)
    assert got.value.line == 2 and got.value.field == field


def test_llm_labels_without_llm_metrics_is_refused(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("", encoding="utf-8")
    result = runner.invoke(app, ["rag", "score", str(FAITHFUL), "--llm-labels", str(labels)])
    assert result.exit_code == 2 and "--llm-labels needs --llm-metrics" in result.output
