"""``eval --synthesis``: answers generated from the best stage's passages on the golden corpus,
scored, judged, echo-checked, and shown in every rendering of the report.

The chat server is the scripted **test double** of tests/providers/_servers.py (a real HTTP
server on 127.0.0.1): it answers a synthesis prompt with the first sentence of passage [1]
and a ``[1]`` citation, an echo-check prompt with the planted code and the number of the
passage holding it, and a judge prompt with a valid verdict. It says nothing about any model;
it checks the plumbing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.providers._servers import (
    Reply,
    Served,
    chat_body,
    json_reply,
    refused_url,
    scripted_server,
)
from typer.testing import CliRunner

from rankproof._errors import ConfigError, InputError
from rankproof.cli import app
from rankproof.rag import DEFAULT_PROMPT, SynthesisSettings
from rankproof.rag._answers import Context
from rankproof.rag._synthesis import prompt_digest, render_prompt

runner = CliRunner()
EVAL = ["eval", "--stages", "bm25", "--resamples", "200", "--quiet"]


def _passages(prompt: str) -> dict[int, str]:
    """``{n: text}`` of the ``[n] text`` passages the default prompt lays out."""
    block = prompt.split("Passages:\n", 1)[1].rsplit("\n\nQuestion:", 1)[0]
    parts = re.split(r"^\[(\d+)\] ", block, flags=re.M)
    return {int(n): text for n, text in zip(parts[1::2], parts[2::2], strict=True)}


def _verdict(body: Any) -> bool:
    return "response_format" in body  # only the judge asks for structured output here


def scripted(path: str, body: Any) -> Reply:
    """The test double's answers (module docstring)."""
    prompt = body["messages"][-1]["content"]
    if _verdict(body):
        return json_reply(chat_body(json.dumps({"score": 4, "reason": "cited"})))
    code = re.search(r"ECHO-[0-9A-F]{6}", prompt)
    passages = _passages(prompt) if "Passages:\n" in prompt else {1: prompt}
    if code is not None:
        n = next(k for k, v in passages.items() if code.group(0) in v)
        return json_reply(chat_body(f"The certificate code is {code.group(0)} [{n}]."))
    first = " ".join(passages.get(1, "").split()).split(". ")[0]
    return json_reply(chat_body(f"{first} [1]."))


def _provider(tmp: Path, url: str, name: str = "tiny") -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(f"name: {name}\nbase_url: {url}\nmodel: tiny-chat\nmax_retries: 0\n"
                    "timeout: 5\ncache_dir: provider-cache\n", encoding="utf-8")
    return path


def _judge(tmp: Path, url: str) -> Path:
    path = tmp / "judge.yaml"
    path.write_text("name: faithfulness\nmodel: tiny-judge\nrubric: Is every claim cited?\n"
                    "scale: [1, 2, 3, 4, 5]\n"
                    f"endpoint: {{base_url: '{url}', max_retries: 0, timeout: 5}}\n"
                    "cache_dir: judge-cache\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with scripted_server(scripted) as server:
        yield server


@pytest.fixture(scope="module")
def run(served: Served, tmp_path_factory: pytest.TempPathFactory
        ) -> dict[str, Any]:
    """One ``eval --synthesis --judge --echo-check`` per format on the golden corpus."""
    root = tmp_path_factory.mktemp("synthesis")
    provider, judge = _provider(root, served.base_url), _judge(root, served.base_url)
    out: dict[str, Any] = {"root": root}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        for fmt in ("json", "table", "md"):
            before = len(served.requests)
            html = ["--html", str(root / "eval.html")] if fmt == "json" else []
            result = runner.invoke(app, [*EVAL, "-f", fmt, "-o", str(root / f"{fmt}.json"),
                                         "--synthesis", str(provider), "--judge", str(judge),
                                         "--echo-check", *html])
            assert result.exit_code == 0, result.output
            out[fmt] = result
            out[f"{fmt}_requests"] = served.requests[before:]
    out["report"] = json.loads((root / "json.json").read_text(encoding="utf-8"))
    return out


def test_the_json_report_holds_every_answer_with_its_passages_scores_and_calls(
        run: dict[str, Any]) -> None:
    report = run["report"]
    s = report["synthesis"]
    answerable = report["inputs"]["scored_queries"]
    assert s["kind"] == "rankproof.synthesis" and s["stage"] == "bm25" and s["k"] == 5
    assert s["queries"] == s["answered"] == answerable == len(s["cases"]) == 78
    assert s["failed"] == 0 and s["failures"] == {}
    assert not set(report["inputs"]["no_answer_queries"]) & {c["query_id"] for c in s["cases"]}
    assert s["prompt_template_digest"] == prompt_digest(DEFAULT_PROMPT)
    assert s["prompt_source"] == "default"
    # One chat call per answer plus the echo check's, each with the server's usage counted.
    assert s["calls"] == answerable + 1 and s["cache_hits"] == 0
    assert s["prompt_tokens"] == 11 * (answerable + 1)
    first = s["cases"][0]
    evidence = report["evidence"]["top"]["bm25"][first["query_id"]][:5]
    assert [c["id"] for c in first["contexts"]] == evidence
    assert first["answer"].endswith("[1].") and first["cited"] == [1]
    assert first["answer"].split(" [1]")[0] in " ".join(first["contexts"][0]["text"].split())
    assert first["scores"]["grounding_cited"] == 1.0 and first["scores"]["judge_score"] == 4.0
    assert {"grounding", "grounding_cited", "citations_dangling", "judge_score"} <= set(
        s["metrics"])
    assert "token_f1" not in s["metrics"]  # the golden corpus has no reference answers
    assert s["means"]["judge_score"] == 4.0 and s["judge"]["n_errors"] == 0
    assert any("judge_score" in c and "advisory" in c for c in report["caveats"])


def test_each_answer_prompt_numbers_the_passages_it_was_given(run: dict[str, Any]) -> None:
    s = run["report"]["synthesis"]
    prompts = [b["messages"][-1]["content"] for p, b in run["json_requests"]
               if p == "/v1/chat/completions" and not _verdict(b)]
    by_query = {c["query"]: c for c in s["cases"]}
    answered = [p for p in prompts if "ECHO-" not in p]
    assert len(answered) == len(s["cases"])
    for prompt in answered:
        query = prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0]
        shown = _passages(prompt)
        assert [shown[n].strip() for n in sorted(shown)] == [
            c["text"].strip() for c in by_query[query]["contexts"]]


def test_the_echo_check_ran_first_and_wrote_its_own_artifact(run: dict[str, Any]) -> None:
    echo = run["report"]["synthesis"]["echo_check"]
    assert echo["passed"] and echo["cites_planted"] and echo["echoes_marker"]
    first = next(b for p, b in run["json_requests"] if p == "/v1/chat/completions")
    assert echo["marker"] in first["messages"][-1]["content"]
    artifact = json.loads((run["root"] / echo["artifact"]).read_text(encoding="utf-8"))
    assert artifact["kind"] == "rankproof.rag.echo" and artifact["passed"] is True


def test_a_rerun_reads_the_provider_cache(run: dict[str, Any]) -> None:
    table = json.loads((run["root"] / "table.json").read_text(encoding="utf-8"))["synthesis"]
    assert table["cache_hits"] == 78 and table["calls"] == 1  # only the fresh echo marker
    answers = [b for p, b in run["table_requests"] if not _verdict(b)]
    assert len(answers) == 1 and "ECHO-" in answers[0]["messages"][-1]["content"]


def test_the_terminal_shows_the_synthesis(run: dict[str, Any]) -> None:
    text = run["table"].output
    assert "synthesis: 78 answers from stage bm25" in text
    assert "synthesis means" in text and "grounding_cited" in text
    assert re.search(r"echo check\s+passed", text)
    assert re.search(r"judge\s+tiny-judge at http://127\.0\.0\.1:\d+/v1", text)
    assert "78 from the cache" in text


def test_markdown_shows_the_synthesis_with_every_answer(run: dict[str, Any]) -> None:
    text = run["md"].output
    assert "## synthesis: 78 answers from stage bm25" in text and "## synthesis means" in text
    assert "## synthesis: the answers" in text
    s = json.loads((run["root"] / "md.json").read_text(encoding="utf-8"))["synthesis"]
    assert all(f"| {c['query_id']} |" in text for c in s["cases"])


def test_eval_html_shows_the_synthesis(run: dict[str, Any]) -> None:
    html = (run["root"] / "eval.html").read_text(encoding="utf-8")
    for key in ("synthesis", "synthesis-means", "synthesis-cases"):
        assert f'id="table-{key}"' in html
    assert "synthesis: 78 answers from stage bm25" in html


def test_a_judge_nobody_listens_to_exits_2_naming_it(tmp_path: Path, served: Served,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    url = refused_url()
    result = _eval(tmp_path, "--synthesis", str(_provider(tmp_path, served.base_url)),
                   "--judge", str(_judge(tmp_path, url)))
    assert result.exit_code == 2
    assert (f"the judge 'faithfulness' at {url} could not be reached: connection refused "
            "(78 of 78 calls)") in " ".join(result.output.split())
    assert not (tmp_path / "out.json").exists()


def test_rankproof_report_renders_the_synthesis_in_html_and_markdown(
        run: dict[str, Any]) -> None:
    root = run["root"]
    result = runner.invoke(app, ["report", str(root / "json.json"), "--html",
                                 str(root / "r.html"), "--md", str(root / "r.md")])
    assert result.exit_code == 0, result.output
    html = (root / "r.html").read_text(encoding="utf-8")
    for key in ("synthesis", "synthesis-means", "synthesis-cases"):
        assert f'id="table-{key}"' in html
    first = run["report"]["synthesis"]["cases"][0]
    assert f"<td>{first['query_id']}</td>" in html
    md = (root / "r.md").read_text(encoding="utf-8")
    assert "## synthesis: 78 answers from stage bm25" in md and "## synthesis means" in md


def _eval(tmp_path: Path, *extra: str) -> Any:
    return runner.invoke(app, [*EVAL, "-o", str(tmp_path / "out.json"), *extra])


def test_the_prompt_digest_follows_the_prompt_file(tmp_path: Path, served: Served,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    prompt = tmp_path / "prompt.txt"
    custom = "Be brief; cite passages as [n].\n\nPassages:\n{passages}\n\nQuestion: {query}\n"
    prompt.write_text(custom, encoding="utf-8")
    before = len(served.requests)
    result = _eval(tmp_path, "--synthesis", str(_provider(tmp_path, served.base_url)),
                   "--synthesis-prompt", str(prompt), "--synthesis-k", "3")
    assert result.exit_code == 0, result.output
    s = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["synthesis"]
    assert s["prompt_template_digest"] == prompt_digest(custom) != prompt_digest(DEFAULT_PROMPT)
    assert s["prompt_source"] == str(prompt) and s["k"] == 3
    assert all(len(c["contexts"]) == 3 for c in s["cases"])
    sent = [b["messages"][-1]["content"] for _, b in served.requests[before:]]
    assert sent and all(p.startswith("Be brief; cite passages as [n].") for p in sent)


def test_a_prompt_without_the_passages_placeholder_is_refused_naming_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Answer {query}.", encoding="utf-8")
    result = _eval(tmp_path, "--synthesis", str(_provider(tmp_path, refused_url())),
                   "--synthesis-prompt", str(prompt))
    assert result.exit_code == 2
    assert str(prompt) in result.output and "{passages}" in result.output
    assert not (tmp_path / "out.json").exists()


def _no_echo(path: str, body: Any) -> Reply:
    return json_reply(chat_body("The passages do not say [1]."))


def test_a_provider_that_fails_the_echo_check_is_refused(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with scripted_server(_no_echo) as server:
        result = _eval(tmp_path, "--synthesis", str(_provider(tmp_path, server.base_url)),
                       "--echo-check")
        calls = len(server.requests)
    assert result.exit_code == 2
    flat = " ".join(result.output.split())
    assert f"the synthesis provider 'tiny' at {server.base_url} failed the citation-echo check" \
        in flat
    assert "does not repeat the planted code" in flat
    assert calls == 1  # refused before a single answer was asked for
    artifact = json.loads((tmp_path / "evals/results/echo-latest.json").read_text("utf-8"))
    assert artifact["passed"] is False and artifact["cited"] == [1]
    assert not (tmp_path / "out.json").exists()
    assert not (tmp_path / "evals/results/latest.json").exists()


def test_a_provider_nobody_listens_to_exits_2_naming_endpoint_and_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    url = refused_url()
    result = _eval(tmp_path, "--synthesis", str(_provider(tmp_path, url)))
    assert result.exit_code == 2
    assert (f"the synthesis provider 'tiny' at {url} could not be reached: connection refused "
            "(78 of 78 calls)") in " ".join(result.output.split())
    assert not (tmp_path / "out.json").exists()


def test_a_provider_that_always_answers_500_exits_2_naming_the_status(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with scripted_server(lambda p, b: json_reply({"error": "down"}, 500)) as server:
        result = _eval(tmp_path, "--synthesis", str(_provider(tmp_path, server.base_url)))
    assert result.exit_code == 2
    assert "failed every call: HTTP 500 (78 of 78 calls)" in " ".join(result.output.split())


def _some_fail(fail: Callable[[str], bool]) -> Callable[[str, Any], Reply]:
    def script(path: str, body: Any) -> Reply:
        query = body["messages"][-1]["content"].rsplit("Question: ", 1)[1]
        if not _verdict(body) and fail(query):
            return json_reply({"error": "overloaded"}, 503)
        return scripted(path, body)

    return script


def test_partial_failures_are_counted_by_reason_and_left_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with scripted_server(_some_fail(lambda q: "chlorine" in q.lower())) as server:
        result = _eval(tmp_path, "--synthesis", str(_provider(tmp_path, server.base_url)))
    assert result.exit_code == 0, result.output
    s = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["synthesis"]
    failed = [c for c in s["cases"] if c["answer"] is None]
    assert failed and all(c["error"] == "HTTP 503" and "chlorine" in c["query"].lower()
                          for c in failed)
    assert s["failures"] == {"HTTP 503": len(failed)} and s["failed"] == len(failed)
    assert s["answered"] == 78 - len(failed)
    assert all(len(c["scores"]) for c in s["cases"] if c["answer"] is not None)
    assert (f"synthesis: {len(failed)} of 78 answer(s) failed (HTTP 503 {len(failed)})"
            in " ".join(result.output.split()))


@pytest.mark.parametrize("flag", [["--judge", "judge.yaml"], ["--echo-check"],
                                  ["--synthesis-prompt", "p.txt"]])
def test_synthesis_options_need_synthesis(tmp_path: Path, flag: list[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _eval(tmp_path, *flag)
    assert result.exit_code == 2 and "needs --synthesis" in result.output


def test_k_beyond_the_kept_evidence_is_refused(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _eval(tmp_path, "--synthesis", str(_provider(tmp_path, refused_url())),
                   "--synthesis-k", "5", "--evidence-depth", "3")
    assert result.exit_code == 2
    assert "give --evidence-depth 5 or more" in " ".join(result.output.split())


def test_settings_are_validated() -> None:
    with pytest.raises(ConfigError, match=r"1\.\.50"):
        SynthesisSettings(k=0)
    with pytest.raises(InputError, match=r"\{query\}"):
        SynthesisSettings(prompt="only {passages}")
    with pytest.raises(InputError, match="cannot read the synthesis prompt"):
        SynthesisSettings.from_options(prompt_file="/nonexistent/prompt.txt")


def test_the_prompt_numbers_passages_and_leaves_other_braces_alone() -> None:
    text = render_prompt("{x} Q={query}\n{passages}", "why?",
                         [Context("a", "first"), Context("b", "second")])
    assert text == "{x} Q=why?\n[1] first\n[2] second"


def test_reference_answers_add_the_answer_metrics(run: dict[str, Any], tmp_path: Path,
                                                  served: Served,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cases = run["report"]["synthesis"]["cases"]
    refs = tmp_path / "refs.jsonl"
    # The reference is what the scripted server will answer, so every answer metric is 1.
    refs.write_text("".join(json.dumps({"query_id": c["query_id"], "answers": [
        c["answer"].removesuffix(" [1].")]}) + "\n" for c in cases), encoding="utf-8")
    provider = _provider(run["root"], served.base_url)  # its cache: no answer call is made
    result = _eval(tmp_path, "--synthesis", str(provider), "--synthesis-references", str(refs))
    assert result.exit_code == 0, result.output
    s = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["synthesis"]
    assert {"exact_match", "token_f1", "rouge_l", "bleu"} <= set(s["metrics"])
    assert s["means"]["exact_match"] == s["means"]["token_f1"] == 1.0
    assert not any("no reference answers" in c for c in s["caveats"])
    short = tmp_path / "short.jsonl"
    short.write_text("".join(refs.read_text(encoding="utf-8").splitlines(True)[1:]),
                     encoding="utf-8")
    refused = _eval(tmp_path, "--synthesis", str(provider), "--synthesis-references",
                    str(short))
    assert refused.exit_code == 2
    assert f"1 answered query has no reference in {short}" in " ".join(refused.output.split())
    assert repr(cases[0]["query_id"]) in refused.output
