"""`HttpTarget` against a real HTTP server on 127.0.0.1 (see conftest.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from rankproof import TargetError
from rankproof.targets import (
    Case,
    HttpTarget,
    Target,
    default_build_payload,
    default_extract,
)

CASE = Case(id="q-1", query="boil water advisory", relevant=("d1",))


def test_ok_default_payload_and_extract(server: Any) -> None:
    server.script(server.reply(200, {"ids": ["d3", "d1"], "text": "boil it"}))
    with HttpTarget(server.url, "svc", headers={"X-Team": "search"}) as target:
        assert isinstance(target, Target)
        response = target.invoke(CASE)
    assert response.ranked_ids == ("d3", "d1")
    assert response.text == "boil it"
    assert response.latency_ms > 0
    assert dict(response.meta) == {}
    assert server.requests == 1
    assert server.bodies == [{"query": "boil water advisory", "id": "q-1"}]
    assert server.headers[0]["X-Team"] == "search"
    assert server.headers[0]["Content-Type"] == "application/json"


def test_defaults_are_documented_functions() -> None:
    assert default_build_payload(CASE) == {"query": CASE.query, "id": CASE.id}
    assert default_extract({"ids": ["a"]}) == ["a"]


def test_500_then_200_retries_once_and_latency_covers_both(server: Any) -> None:
    server.script(server.reply(500, {"error": "warming up"}, delay_s=0.15),
                  server.reply(200, {"ids": ["d1"]}))
    with HttpTarget(server.url, "svc") as target:
        response = target.invoke(CASE)
    assert server.requests == 2
    assert response.ranked_ids == ("d1",)
    assert response.latency_ms >= 150.0


def test_500_twice_fails_after_one_retry(server: Any) -> None:
    server.script(server.reply(503, {"error": "down"}))
    with HttpTarget(server.url, "svc") as target, pytest.raises(TargetError) as err:
        target.invoke(CASE)
    assert server.requests == 2
    msg = str(err.value)
    assert "'q-1'" in msg and server.url in msg and "HTTP 503" in msg
    assert "after 2 attempts" in msg


def test_404_is_not_retried(server: Any) -> None:
    server.script(server.reply(404, {"error": "no such index"}))
    with HttpTarget(server.url, "svc") as target, pytest.raises(TargetError) as err:
        target.invoke(CASE)
    assert server.requests == 1
    msg = str(err.value)
    assert "'q-1'" in msg and server.url in msg
    assert "HTTP 404 Not Found" in msg and "not retried" in msg


def test_dropped_connection_retried_once_then_fails(server: Any) -> None:
    server.script(server.drop())
    with HttpTarget(server.url, "svc") as target, pytest.raises(TargetError) as err:
        target.invoke(CASE)
    assert server.requests == 2
    msg = str(err.value)
    assert "'q-1'" in msg and "connection dropped" in msg and "after 2 attempts" in msg


def test_dropped_connection_then_success(server: Any) -> None:
    server.script(server.drop(), server.reply(200, {"ids": ["d2"]}))
    with HttpTarget(server.url, "svc") as target:
        assert target.invoke(CASE).ranked_ids == ("d2",)
    assert server.requests == 2


def test_slower_than_timeout_retried_once_then_fails(server: Any) -> None:
    server.script(server.reply(200, {"ids": ["d1"]}, delay_s=1.0))
    start = time.perf_counter()
    with HttpTarget(server.url, "svc", timeout=0.2) as target, \
            pytest.raises(TargetError) as err:
        target.invoke(CASE)
    elapsed = time.perf_counter() - start
    assert server.requests == 2
    msg = str(err.value)
    assert "'q-1'" in msg and "read timeout (timeout=0.2 s)" in msg
    assert "after 2 attempts" in msg
    assert 0.4 <= elapsed < 1.5  # two 0.2 s attempts; waiting for the server would take 2 s


def test_connect_error_is_retried_once() -> None:
    import socket

    with socket.socket() as s:  # a port that was just free: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with HttpTarget(f"http://127.0.0.1:{port}/search", "svc", timeout=1.0) as target, \
            pytest.raises(TargetError) as err:
        target.invoke(CASE)
    assert "connect error" in str(err.value) and "after 2 attempts" in str(err.value)


def test_non_json_body(server: Any) -> None:
    server.script(server.reply(200, raw=b"<html>oops</html>", content_type="text/html"))
    with HttpTarget(server.url, "svc") as target, pytest.raises(TargetError) as err:
        target.invoke(CASE)
    assert server.requests == 1
    msg = str(err.value)
    assert "'q-1'" in msg and "not JSON" in msg and "<html>oops" in msg


def test_json_list_body(server: Any) -> None:
    server.script(server.reply(200, ["d1", "d2"]))
    with HttpTarget(server.url, "svc") as target, pytest.raises(TargetError) as err:
        target.invoke(CASE)
    assert server.requests == 1
    assert "'q-1'" in str(err.value) and "expected a JSON object, got a JSON array" in str(
        err.value)


def test_extract_raising(server: Any) -> None:
    server.script(server.reply(200, {"results": []}))
    with HttpTarget(server.url, "svc") as target, pytest.raises(TargetError) as err:
        target.invoke(CASE)  # the default extract wants body["ids"]
    assert "'q-1'" in str(err.value) and "extract raised KeyError: 'ids'" in str(err.value)
    assert isinstance(err.value.__cause__, KeyError)


@pytest.mark.parametrize(("ids", "expected"), [
    ("d1", "expected a sequence of document ids, got str"),
    ({"d1": 1}, "expected a sequence of document ids, got dict"),
    ([1, 2], "item 1 is int"),
    (["d1", ""], "item 2 is str ''"),
])
def test_extract_returning_non_ids(server: Any, ids: Any, expected: str) -> None:
    server.script(server.reply(200, {"ids": ids}))
    with HttpTarget(server.url, "svc") as target, pytest.raises(TargetError) as err:
        target.invoke(CASE)
    assert "'q-1'" in str(err.value) and expected in str(err.value)


def test_custom_payload_extract_and_meta_keys(server: Any) -> None:
    server.script(server.reply(200, {"hits": [{"doc": "d9"}, {"doc": "d4"}], "model": "m-2",
                              "cost": 0.25, "ignored": True}))
    with HttpTarget(
        server.url, "svc",
        build_payload=lambda c: {"q": c.query, "top_k": 2},
        extract=lambda body: [h["doc"] for h in body["hits"]],
        meta_keys=("model", "cost"),
    ) as target:
        response = target.invoke(CASE)
    assert server.bodies == [{"q": "boil water advisory", "top_k": 2}]
    assert response.ranked_ids == ("d9", "d4")
    assert dict(response.meta) == {"model": "m-2", "cost": 0.25}
    assert response.text is None


def test_missing_meta_key_is_an_error(server: Any) -> None:
    server.script(server.reply(200, {"ids": ["d1"]}))
    with HttpTarget(server.url, "svc", meta_keys=("cost",)) as target, \
            pytest.raises(TargetError, match="meta key 'cost' is missing"):
        target.invoke(CASE)


def test_build_payload_raising(server: Any) -> None:
    def boom(case: Case) -> dict[str, Any]:
        raise ValueError("no")

    with HttpTarget(server.url, "svc", build_payload=boom) as target, \
            pytest.raises(TargetError, match=r"'q-1'.*build_payload raised ValueError"):
        target.invoke(CASE)
    assert server.requests == 0


def test_invoke_many_bounds_concurrency_and_keeps_order(server: Any) -> None:
    def echo(body: dict[str, Any]) -> Any:
        # Later cases answer faster, so completion order differs from input order.
        n = int(body["id"].split("-")[1])
        return server.reply(200, {"ids": [f"doc-{body['id']}"]}, delay_s=0.02 * (12 - n))

    server.script(echo)
    cases = [Case(id=f"q-{i}", query=f"query {i}") for i in range(12)]
    with HttpTarget(server.url, "svc", max_concurrency=3) as target:
        responses = target.invoke_many(cases)
    assert [r.ranked_ids for r in responses] == [(f"doc-q-{i}",) for i in range(12)]
    assert server.requests == 12
    assert 2 <= server.max_in_flight <= 3


def test_invoke_many_raises_first_failure_in_input_order(server: Any) -> None:
    def some_fail(body: dict[str, Any]) -> Any:
        if body["id"] in ("q-3", "q-5"):
            return server.reply(404)
        return server.reply(200, {"ids": ["d"]})

    server.script(some_fail)
    cases = [Case(id=f"q-{i}", query="x") for i in range(8)]
    with HttpTarget(server.url, "svc", max_concurrency=2) as target, \
            pytest.raises(TargetError, match="'q-3'"):
        target.invoke_many(cases)


def test_context_manager_closes_the_client(server: Any) -> None:
    server.script(server.reply(200, {"ids": []}))
    with HttpTarget(server.url, "svc") as target:
        assert target.invoke(CASE).ranked_ids == ()
        assert not target.closed
    assert target.closed
    assert target._client.is_closed
    with pytest.raises(RuntimeError, match="closed"):
        target.invoke(CASE)
    target.close()  # idempotent


def test_close_without_context_manager(server: Any) -> None:
    target = HttpTarget(server.url, "svc")
    target.close()
    assert target._client.is_closed


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"url": "ftp://example.org/x"}, "absolute http:// or https:// URL"),
    ({"url": "/search"}, "absolute http:// or https:// URL"),
    ({"name": ""}, "non-empty name"),
    ({"timeout": 0}, "timeout must be a positive number"),
    ({"max_concurrency": 0}, "max_concurrency must be an integer >= 1"),
])
def test_constructor_validation(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"url": "http://127.0.0.1:1/search", "name": "svc", **kwargs}
    with pytest.raises(ValueError, match=message):
        HttpTarget(**args)


def test_meta_keys_must_not_be_a_bare_string() -> None:
    with pytest.raises(TypeError, match="meta_keys"):
        HttpTarget("http://127.0.0.1:1/search", "svc", meta_keys="cost")


@pytest.mark.parametrize(("steps", "status", "attempts"), [
    ("503", 503, 2),
    ("404", 404, 1),
    ("drop", None, 2),
    ("html", 200, None),
])
def test_target_errors_carry_case_target_status_and_attempts(
    server: Any, steps: str, status: int | None, attempts: int | None
) -> None:
    step = {"503": server.reply(503, {"error": "down"}), "404": server.reply(404, {}),
            "drop": server.drop(), "html": server.reply(200, raw=b"<html>", content_type="x")}
    server.script(step[steps])
    with HttpTarget(server.url, "svc") as target, pytest.raises(TargetError) as err:
        target.invoke(CASE)
    e = err.value
    assert (e.case_id, e.target, e.status, e.attempts) == ("q-1", "svc", status, attempts)


def test_a_body_over_max_body_bytes_is_a_target_error(server: Any) -> None:
    server.script(server.reply(200, {"ids": ["d1"], "text": "x" * 5000}))
    with HttpTarget(server.url, "svc", max_body_bytes=1000) as target, \
            pytest.raises(TargetError) as err:
        target.invoke(CASE)
    e = err.value
    assert "Content-Length" in str(e) and "max_body_bytes" in str(e)
    assert (e.case_id, e.target, e.status, e.attempts) == ("q-1", "svc", 200, 1)
    assert server.requests == 1


def test_a_slow_server_is_cut_at_the_deadline_not_at_two_timeouts(server: Any) -> None:
    server.script(server.reply(200, {"ids": ["d1"]}, delay_s=2.0))
    start = time.perf_counter()
    with HttpTarget(server.url, "svc", timeout=0.4, deadline=0.6) as target, \
            pytest.raises(TargetError) as err:
        target.invoke(CASE)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.2  # twice the deadline: the retry gets only what is left of it
    assert "deadline of 0.6 s" in str(err.value) and err.value.attempts == 2
