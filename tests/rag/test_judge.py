"""The LLM judge: cache proven by counting calls, error rows, κ, calibration, gating,
and the OpenAI-compatible adapter against a real server on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from tests._jsonserver import QuietServer, running

from rankproof._errors import InputError, TargetError
from rankproof.rag._answers import AnswerRow, Context
from rankproof.rag._judge import (
    PROMPT_TEMPLATE_DIGEST,
    Judge,
    JudgeCalibration,
    OpenAICompatible,
    calibrate,
    cohen_kappa,
    parse_verdict,
)

SCALE = [1, 2, 3, 4, 5]
RUBRIC = "5 if the answer is correct and grounded in the passages, 1 if wrong."


class Counting:
    """A scripted judge model: replies by the answer text, and counts its calls."""

    def __init__(self, replies: dict[str, str] | None = None, default: int = 4) -> None:
        self.calls = 0
        self.prompts: list[str] = []
        self.models: list[str] = []
        self.replies = replies or {}
        self.default = default

    def __call__(self, prompt: str, *, model: str) -> str:
        self.calls += 1
        self.prompts.append(prompt)
        self.models.append(model)
        for key, reply in self.replies.items():
            if key in prompt:
                return reply
        return json.dumps({"score": self.default, "reason": "fine"})


def _rows(n: int = 5) -> list[AnswerRow]:
    return [AnswerRow(f"q{i}", f"answer number {i}", (Context(f"d{i}", f"passage {i}"),),
                      query=f"question {i}") for i in range(n)]


def _judge(call: Counting, tmp_path: Path, **kw: Any) -> Judge:
    kw.setdefault("model", "m-1")
    return Judge(kw.pop("rubric", RUBRIC), kw.pop("model"), kw.pop("scale", SCALE), call,
                 cache_dir=tmp_path / "cache", **kw)


def test_cache_counts_calls(tmp_path: Path) -> None:
    call = Counting()
    rows = _rows(5)
    first = _judge(call, tmp_path).judge(rows)
    assert call.calls == 5 and first.calls == 5
    assert first.mean == 4.0 and first.n_errors == 0
    again = _judge(call, tmp_path).judge(rows)  # a fresh Judge: the cache is on disk
    assert call.calls == 5 and again.calls == 0
    assert all(v.cached for v in again.verdicts)
    twice = _judge(call, tmp_path).judge(rows, repeat=2)  # repeat index 1 is new
    assert call.calls == 10 and twice.calls == 5
    assert twice.self_agreement == 1.0
    assert set(call.models) == {"m-1"}


def test_model_rubric_and_scale_are_in_the_key(tmp_path: Path) -> None:
    call = Counting()
    rows = _rows(3)
    _judge(call, tmp_path).judge(rows)
    _judge(call, tmp_path, model="m-2").judge(rows)
    _judge(call, tmp_path, rubric=RUBRIC + " Be strict.").judge(rows)
    _judge(call, tmp_path, scale=[1, 2, 3, 4, 5, 6]).judge(rows)
    assert call.calls == 12
    changed = [*rows[:2], AnswerRow("q2", "a different answer", rows[2].contexts)]
    _judge(call, tmp_path).judge(changed)
    assert call.calls == 13


def test_prompt_holds_rubric_query_answer_and_contexts(tmp_path: Path) -> None:
    call = Counting()
    judge = _judge(call, tmp_path)
    judge.judge([AnswerRow("q", "Paris.", (Context("d1", "Paris is the capital."),))],
                queries={"q": "Capital of France?"})
    prompt = call.prompts[0]
    for part in (RUBRIC, "Capital of France?", "Paris.", "[1] (d1) Paris is the capital.",
                 "[1, 2, 3, 4, 5]"):
        assert part in prompt
    assert judge.identity.prompt_template_digest == PROMPT_TEMPLATE_DIGEST


@pytest.mark.parametrize(("reply", "error"), [
    ("Score: 5", "not a JSON object"),
    ('```json\n{"score": 5, "reason": "x"}\n```', "not a JSON object"),
    ('{"score": 7, "reason": "x"}', "score 7 is not one of the scale"),
    ('{"score": NaN, "reason": "x"}', "NaN is not valid JSON"),
    ('{"score": 1e999, "reason": "x"}', "score inf is not finite"),
    ('{"score": 4.0, "reason": "x"}', "score 4.0 is not one of the scale"),
    ('{"score": "5", "reason": "x"}', "score '5' is not one of the scale"),
    ('{"score": true, "reason": "x"}', "does not match the schema: score"),
    ('{"score": 5, "reason": "x", "confidence": 0.9}', "confidence: Extra inputs"),
    ('{"score": 5}', "reason: Field required"),
    ('[5, "x"]', "not a JSON object: got list"),
])
def test_invalid_verdicts_are_error_rows_never_averaged(tmp_path: Path, reply: str,
                                                        error: str) -> None:
    call = Counting({"answer number 1": reply}, default=2)
    result = _judge(call, tmp_path).judge(_rows(3))
    assert result.n_errors == 1
    bad = [v for v in result.verdicts if not v.ok]
    assert bad[0].query_id == "q1" and bad[0].score is None and bad[0].raw == reply
    assert error in (bad[0].error or "")
    assert result.mean == 2.0  # the two valid verdicts only
    assert "q1" not in result.scores()


def test_a_failing_call_is_an_error_row_and_not_cached(tmp_path: Path) -> None:
    fail = {"on": True}
    calls = []

    def call(prompt: str, *, model: str) -> str:
        calls.append(prompt)
        if fail["on"]:
            raise TargetError("boom")
        return '{"score": 3, "reason": "ok"}'

    judge = Judge(RUBRIC, "m", SCALE, call, cache_dir=tmp_path)
    assert judge.judge(_rows(2)).n_errors == 2
    fail["on"] = False
    assert judge.judge(_rows(2)).mean == 3.0 and len(calls) == 4


def test_corrupt_cache_entry_is_a_miss(tmp_path: Path) -> None:
    call = Counting()
    judge = _judge(call, tmp_path)
    judge.judge(_rows(1))
    (entry,) = (tmp_path / "cache").rglob("*.json")
    entry.write_text("{not json")
    judge.judge(_rows(1))
    assert call.calls == 2


def test_nominal_scale_has_no_mean(tmp_path: Path) -> None:
    call = Counting({"": json.dumps({"score": "yes", "reason": "r"})})
    result = _judge(call, tmp_path, scale=["yes", "no"]).judge(_rows(2), repeat=2)
    assert result.mean is None and result.self_agreement == 1.0
    assert result.repeat_kappa is None  # every rating the same label: κ undefined


def test_repeat_disagreement_and_kappa(tmp_path: Path) -> None:
    state = {"n": 0}

    def call(prompt: str, *, model: str) -> str:
        state["n"] += 1
        score = 1 + state["n"] % 5
        return json.dumps({"score": score, "reason": "r"})

    result = Judge(RUBRIC, "m", SCALE, call, cache_dir=tmp_path).judge(_rows(6), repeat=2)
    sklearn = pytest.importorskip("sklearn.metrics")
    first, second = result.scores(0), result.scores(1)
    ids = sorted(first)
    expect = sklearn.cohen_kappa_score([first[i] for i in ids], [second[i] for i in ids],
                                       labels=SCALE, weights="quadratic")
    assert result.repeat_kappa == pytest.approx(expect, abs=1e-12)
    assert result.self_agreement == 0.0


@pytest.mark.parametrize("bad", [{"rubric": ""}, {"model": ""}, {"model": None},
                                 {"scale": [1]}, {"scale": [1, 1]}, {"scale": [1, "a"]},
                                 {"scale": "12345"}, {"scale": [True, False]}])
def test_constructor_refuses(tmp_path: Path, bad: dict[str, Any]) -> None:
    with pytest.raises(InputError):
        _judge(Counting(), tmp_path, **bad)
    with pytest.raises(InputError, match="repeat must be a positive integer"):
        _judge(Counting(), tmp_path).judge(_rows(1), repeat=0)
    with pytest.raises(TypeError, match="call must be callable"):
        Judge(RUBRIC, "m", SCALE, "not callable")  # type: ignore[arg-type]


def test_parse_verdict_accepts_the_schema() -> None:
    assert parse_verdict('{"reason": "r", "score": 3}', SCALE) == (3, "r")
    assert parse_verdict('{"score": "no", "reason": ""}', ["yes", "no"]) == ("no", "")


# -- κ against sklearn ----------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_kappa_agrees_with_sklearn(seed: int) -> None:
    sklearn = pytest.importorskip("sklearn.metrics")
    import random

    rnd = random.Random(seed)
    a = [rnd.choice(SCALE) for _ in range(40)]
    b = [min(5, max(1, x + rnd.choice([-1, 0, 0, 1]))) for x in a]
    assert cohen_kappa(a, b, SCALE) == pytest.approx(
        sklearn.cohen_kappa_score(a, b, labels=SCALE, weights="quadratic"), abs=1e-12)
    nominal = ["yes", "no", "maybe"]
    c = [rnd.choice(nominal) for _ in range(30)]
    d = [x if rnd.random() < 0.6 else rnd.choice(nominal) for x in c]
    assert cohen_kappa(c, d, nominal) == pytest.approx(
        sklearn.cohen_kappa_score(c, d, labels=nominal), abs=1e-12)


def test_kappa_hand_computed() -> None:
    # 2x2 nominal: agree on 3 of 4; p_o = .75, p_e = .5 -> κ = 0.5
    assert cohen_kappa(["y", "y", "n", "n"], ["y", "y", "n", "y"], ["y", "n"]) == \
        pytest.approx(0.5)
    assert cohen_kappa([1, 1], [1, 1], [1, 2]) is None


# -- calibration ------------------------------------------------------------------------------

def _calibrated(tmp_path: Path, judge: Judge) -> JudgeCalibration:
    human = {f"q{i}": 1 + i % 5 for i in range(20)}
    scores = {q: min(5, v + (1 if i % 4 == 0 else 0)) for i, (q, v) in enumerate(human.items())}
    scores.pop("q19")
    return calibrate(scores, human, scale=SCALE, judge=judge)


def test_calibrate_reports_kappa_accuracy_confusion(tmp_path: Path) -> None:
    sklearn = pytest.importorskip("sklearn.metrics")
    judge = _judge(Counting(), tmp_path)
    cal = _calibrated(tmp_path, judge)
    human = {f"q{i}": 1 + i % 5 for i in range(19)}
    scores = {q: min(5, v + (1 if i % 4 == 0 else 0)) for i, (q, v) in enumerate(human.items())}
    ids = sorted(human)
    assert cal.kappa == pytest.approx(sklearn.cohen_kappa_score(
        [human[i] for i in ids], [scores[i] for i in ids], labels=SCALE, weights="quadratic"))
    assert cal.n == 19 and cal.unscored == ("q19",)
    assert cal.accuracy == pytest.approx(sum(human[i] == scores[i] for i in ids) / 19)
    assert sum(map(sum, cal.confusion)) == 19 and cal.weighting == "quadratic"
    assert (cal.model, cal.rubric_digest) == (judge.model, judge.identity.rubric_digest)


def test_calibrate_from_a_judge_result(tmp_path: Path) -> None:
    judge = _judge(Counting({"answer number 0": '{"score": 2, "reason": "r"}'}), tmp_path)
    result = judge.judge(_rows(4))
    cal = calibrate(result, {"q0": 2, "q1": 4, "q2": 4, "q3": 3}, scale=SCALE)
    assert cal.n == 4 and cal.accuracy == 0.75 and cal.model == "m-1"


@pytest.mark.parametrize(("scores", "human", "message"), [
    ({"a": 9}, {"a": 1}, "judge_scores['a']"),
    ({"a": 1}, {"a": "1"}, "label '1' is not one of the scale"),
    ({"a": 1}, {"b": 1}, "none of the 1 labelled cases has a valid judge score"),
])
def test_calibrate_refuses(scores: dict[str, Any], human: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as info:
        calibrate(scores, human, scale=SCALE)
    assert message in str(info.value)


def test_save_load_and_blocking_rules(tmp_path: Path) -> None:
    judge = _judge(Counting(), tmp_path)
    cal = _calibrated(tmp_path, judge)
    path = tmp_path / "cal.json"
    cal.save(path)
    loaded = JudgeCalibration.load(path)
    assert loaded == cal
    assert json.loads(path.read_text())["schema_version"] == 1
    kappa = cal.kappa or 0.0
    ok = loaded.allows_blocking(kappa - 0.01, judge)
    assert ok and ok.reason.startswith("calibrated")
    low = loaded.allows_blocking(min(1.0, kappa + 0.01), judge)
    assert not low and "below the floor" in low.reason and low.reason.startswith("advisory")
    for other, word in ((_judge(Counting(), tmp_path, model="m-2"), "model"),
                        (_judge(Counting(), tmp_path, rubric="other"), "rubric"),
                        (_judge(Counting(), tmp_path, scale=[1, 2, 3]), "scale")):
        stale = loaded.allows_blocking(0.0, other)
        assert not stale and "another judge" in stale.reason and word in stale.reason
    unstamped = calibrate({"a": 1, "b": 2}, {"a": 1, "b": 2}, scale=SCALE)
    assert "not stamped" in unstamped.allows_blocking(0.0, judge).reason
    with pytest.raises(InputError, match="kappa_floor must be a number in"):
        loaded.allows_blocking(2.0, judge)


def test_undefined_kappa_is_advisory(tmp_path: Path) -> None:
    judge = _judge(Counting(), tmp_path)
    cal = calibrate({"a": 3, "b": 3}, {"a": 3, "b": 3}, scale=SCALE, judge=judge)
    assert cal.kappa is None and "undefined" in cal.allows_blocking(0.0, judge).reason


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not a judge calibration file"),
    ('{"schema_version": 1}', "field 'model'"),
])
def test_load_refuses(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        JudgeCalibration.load(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_load_refuses_a_future_schema(tmp_path: Path) -> None:
    cal = _calibrated(tmp_path, _judge(Counting(), tmp_path))
    data = {**cal.to_dict(), "schema_version": 2}
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="schema_version 2 is not supported"):
        JudgeCalibration.load(path)


# -- the OpenAI-compatible adapter against a real local server ------------------------------

class _Server:
    def __init__(self) -> None:
        self.replies: list[tuple[int, bytes, dict[str, str]]] = []
        self.bodies: list[Any] = []
        self.headers: list[dict[str, str]] = []
        self.url = ""
        self.stop = threading.Event()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Server]:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    state = _Server()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 5

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            state.bodies.append(json.loads(raw))
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            state.path = self.path  # type: ignore[attr-defined]
            status, body, extra = state.replies.pop(0) if state.replies else (599, b"{}", {})
            extra = dict(extra)
            delay = float(extra.pop("X-Delay", "0"))
            unsized = extra.pop("X-Unsized", None) is not None
            if delay:
                state.stop.wait(delay)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for k, v in extra.items():
                self.send_header(k, v)
            if unsized:  # no Content-Length: the body runs until the connection closes
                self.send_header("Connection", "close")
                self.close_connection = True
            elif "Content-Length" not in extra:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for i in range(0, len(body), 1024):
                    self.wfile.write(body[i:i + 1024])
                    self.wfile.flush()
            except OSError:  # the client stopped reading (a refused oversize body)
                pass

    with running(QuietServer(("127.0.0.1", 0), Handler), on_stop=state.stop.set) as base:
        state.url = base + "/v1"
        yield state


def _completion(content: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant",
                                                "content": content}}]}).encode()


def test_adapter_posts_a_chat_completion(server: _Server, tmp_path: Path) -> None:
    server.replies.append((200, _completion('{"score": 5, "reason": "grounded"}'), {}))
    with OpenAICompatible(server.url, api_key="sk-test", timeout=5) as client:
        judge = Judge(RUBRIC, "tiny-judge", SCALE, client, cache_dir=tmp_path)
        result = judge.judge(_rows(1))
        assert result.mean == 5.0 and result.calls == 1
        assert judge.judge(_rows(1)).calls == 0  # the server is not asked again
    body = server.bodies[0]
    assert body["model"] == "tiny-judge" and body["temperature"] == 0
    assert body["messages"][0]["role"] == "user" and RUBRIC in body["messages"][0]["content"]
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    assert server.path == "/v1/chat/completions"  # type: ignore[attr-defined]
    assert len(server.bodies) == 1


@pytest.mark.parametrize(("reply", "message", "status"), [
    ((500, b'{"error": "overloaded"}', {}), "HTTP 500: {\"error\": \"overloaded\"}", 500),
    ((404, b"no such model", {}), "HTTP 404: no such model", 404),
    ((200, b"<html>not json</html>", {}), "not an OpenAI chat completion", 200),
    ((200, b'{"choices": []}', {}), "not an OpenAI chat completion", 200),
    ((200, json.dumps({"choices": [{"message": {"content": 5}}]}).encode(), {}),
     "content is not a string", 200),
    ((200, b"x" * 5000, {"X-Unsized": "1"}), "body exceeds max_body_bytes=1000", 200),
    ((200, b"x" * 5000, {"Content-Length": "5000"}), "5000 bytes exceeds max_body_bytes", 200),
])
def test_adapter_errors(server: _Server, reply: tuple[int, bytes, dict[str, str]],
                        message: str, status: int) -> None:
    server.replies.append(reply)
    with (OpenAICompatible(server.url, timeout=5, max_body_bytes=1000) as client,
          pytest.raises(TargetError) as info):
        client("prompt", model="m")
    assert message in str(info.value) and info.value.status == status
    assert server.url in str(info.value)


def test_adapter_error_is_an_error_row_in_a_run(server: _Server, tmp_path: Path) -> None:
    server.replies.append((500, b"down", {}))
    server.replies.append((200, _completion('{"score": 3, "reason": "r"}'), {}))
    with OpenAICompatible(server.url, timeout=5) as client:
        result = Judge(RUBRIC, "m", SCALE, client, cache_dir=tmp_path).judge(_rows(2))
    assert result.n_errors == 1 and result.mean == 3.0
    assert "HTTP 500" in (result.verdicts[0].error or "")


def test_adapter_unreachable_and_bad_arguments() -> None:
    with (OpenAICompatible("http://127.0.0.1:9/v1", timeout=2) as client,
          pytest.raises(TargetError, match="ConnectError")):
        client("p", model="m")
    with pytest.raises(InputError, match="base_url must be an http"):
        OpenAICompatible("ftp://x")
    with pytest.raises(InputError, match="timeout must be a positive number"):
        OpenAICompatible("http://x", timeout=0)


def test_adapter_timeout_is_a_target_error(server: _Server) -> None:
    server.replies.append((200, _completion("{}"), {"X-Delay": "3"}))
    with (OpenAICompatible(server.url, timeout=0.3) as client,
          pytest.raises(TargetError, match="ReadTimeout")):
        client("p", model="m")


def test_nominal_calibration_is_unweighted(tmp_path: Path) -> None:
    sklearn = pytest.importorskip("sklearn.metrics")
    scale = ["yes", "no"]
    judge = _judge(Counting(), tmp_path, scale=scale)
    human = {"a": "yes", "b": "yes", "c": "no", "d": "no", "e": "yes"}
    scores = {"a": "yes", "b": "no", "c": "no", "d": "no", "e": "yes"}
    cal = calibrate(scores, human, scale=scale, judge=judge)
    ids = sorted(human)
    assert cal.weighting == "none" and cal.accuracy == 0.8
    assert cal.kappa == pytest.approx(sklearn.cohen_kappa_score(
        [human[i] for i in ids], [scores[i] for i in ids], labels=scale))
    assert cal.confusion == ((2, 1), (0, 2))
    with pytest.raises(InputError, match="is not the judge's"):
        calibrate(scores, human, scale=["no", "yes"], judge=judge)


def test_another_prompt_template_makes_a_calibration_stale(tmp_path: Path) -> None:
    judge = _judge(Counting(), tmp_path)
    cal = _calibrated(tmp_path, judge)
    other = dataclasses.replace(judge.identity, prompt_template_digest="sha256:other")
    decision = cal.allows_blocking(-1.0, other)
    assert not decision and "prompt template" in decision.reason
