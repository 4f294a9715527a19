"""Judge failures you can see: counted by reason in the JSON and on standard error, an
all-fail run exits 2 naming the endpoint and the reason, and ``--repeat`` shows the pooled
mean beside the per-repeat means. The judge's server is the scripted test double of
tests/providers/_servers.py (a real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.providers._servers import Reply, chat_body, json_reply, refused_url, scripted_server
from typer.testing import CliRunner

from rankproof.cli import app

EX = Path(__file__).resolve().parents[2] / "src" / "rankproof" / "rag" / "example"
REFS, FAITHFUL = EX / "references.jsonl", EX / "answers_faithful.jsonl"
CASES = sum(1 for line in FAITHFUL.read_text(encoding="utf-8").splitlines()[1:] if line.strip())
runner = CliRunner()


def _config(tmp_path: Path, url: str) -> Path:
    config = tmp_path / "judge.yaml"
    config.write_text("name: faithfulness\nmodel: tiny-judge\nrubric: Are the claims cited?\n"
                      "scale: [1, 2, 3, 4, 5]\n"
                      f"endpoint: {{base_url: '{url}', max_retries: 0, timeout: 5}}\n"
                      "cache_dir: cache\n", encoding="utf-8")
    return config


def _score(tmp_path: Path, config: Path, *extra: str) -> Any:
    return runner.invoke(app, ["rag", "score", str(FAITHFUL), "--references", str(REFS),
                               "--judge", str(config), "-o", str(tmp_path / "rag.json"),
                               *extra])


def test_a_judge_nobody_listens_to_exits_2_naming_endpoint_and_reason(tmp_path: Path) -> None:
    url = refused_url()
    result = _score(tmp_path, _config(tmp_path, url))
    assert result.exit_code == 2
    assert (f"the judge 'faithfulness' at {url} could not be reached: connection refused "
            f"({CASES} of {CASES} calls)") in result.output
    assert not (tmp_path / "rag.json").exists()


def test_a_judge_that_always_answers_500_exits_2_naming_the_status(tmp_path: Path) -> None:
    with scripted_server(lambda p, b: json_reply({"error": "down"}, 500)) as served:
        result = _score(tmp_path, _config(tmp_path, served.base_url))
    assert result.exit_code == 2
    assert f"failed every call: HTTP 500 ({CASES} of {CASES} calls)" in result.output


def _some_fail(path: str, body: Any) -> Reply:
    question = body["messages"][-1]["content"].split("Question:\n", 1)[1].split("\n", 1)[0]
    if "flocculation time" in question:
        return json_reply({"error": "overloaded"}, 503)
    if "zebra mussels" in question:
        return json_reply(chat_body("I think it is fine."))  # not JSON
    return json_reply(chat_body(json.dumps({"score": 4, "reason": "ok"})))


def test_partial_failures_are_counted_by_reason_with_the_share_of_cases(tmp_path: Path) -> None:
    with scripted_server(_some_fail) as served:
        result = _score(tmp_path, _config(tmp_path, served.base_url))
    assert result.exit_code == 0, result.output
    judge = json.loads((tmp_path / "rag.json").read_text(encoding="utf-8"))["judge"]
    failures = judge["failures"]
    assert set(failures) == {"HTTP 503", "invalid JSON"} and all(failures.values())
    n = sum(failures.values())
    assert judge["n_errors"] == n and judge["cases"] == CASES and judge["cases_affected"] == n
    assert judge["endpoint"] == served.base_url
    line = re.search(r"judge at \S+: (\d+) of (\d+) verdict\(s\) failed \((.*?)\); (\d+) of "
                     r"(\d+) case\(s\) affected", result.stderr.replace("\n", " "))
    assert line is not None, result.stderr
    assert (int(line[1]), int(line[2]), int(line[4]), int(line[5])) == (n, CASES, n, CASES)
    assert f"HTTP 503 {failures['HTTP 503']}" in line[3]


def test_repeat_reports_the_pooled_mean_and_each_repeat(tmp_path: Path) -> None:
    seen: dict[str, int] = {}

    def alternating(path: str, body: Any) -> Reply:
        prompt = body["messages"][-1]["content"]
        seen[prompt] = seen.get(prompt, 0) + 1
        return json_reply(chat_body(json.dumps({"score": 5 if seen[prompt] == 1 else 3,
                                                "reason": "ok"})))

    with scripted_server(alternating) as served:
        result = _score(tmp_path, _config(tmp_path, served.base_url), "--repeat", "2")
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "rag.json").read_text(encoding="utf-8"))
    judge = doc["judge"]
    assert judge["repeat_means"] == [5.0, 3.0] and judge["mean"] == 4.0
    assert judge["mean_definition"].startswith("pooled over repeats")
    assert doc["means"]["judge_score"] == 4.0  # the table's mean is the same pooled mean
    assert "(pooled over 2 repeats; per repeat: 5.0000, 3.0000)" in result.stderr


def test_calibrating_a_judge_nobody_listens_to_exits_2(tmp_path: Path) -> None:
    url = refused_url()
    labels = tmp_path / "labels.jsonl"
    ids = [json.loads(line)["query_id"] for line in FAITHFUL.read_text().splitlines()[1:3]]
    labels.write_text("".join(json.dumps({"query_id": q, "label": 5}) + "\n" for q in ids))
    result = runner.invoke(app, ["rag", "calibrate-judge", "--judge",
                                 str(_config(tmp_path, url)), "--answers", str(FAITHFUL),
                                 "--labels", str(labels), "-o", str(tmp_path / "cal.json")])
    assert result.exit_code == 2
    assert f"at {url} could not be reached: connection refused" in result.output
    assert not (tmp_path / "cal.json").exists()
