"""The citation-echo check's plumbing, against a local server (it says nothing about a model)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests._jsonserver import serve

from rankproof import ConfigError
from rankproof.rag import citation_echo_check, echo_payload
from rankproof.targets import CallableTarget, HttpTarget, TargetResponse

PASSAGES = ["The plant treats river water.", "Storage reservoirs hold two days of supply.",
            "Meters are read every quarter."]


def _reply(behaviour: str) -> object:
    def reply(body: dict[str, list[dict[str, str]]]) -> dict[str, object]:
        contexts = body["contexts"]
        planted = next(i for i, c in enumerate(contexts) if "ECHO-" in c["text"])
        found = re.search(r"ECHO-[0-9A-F]+", contexts[planted]["text"])
        assert found is not None
        cited = planted + 1 if behaviour != "wrong-citation" else (planted + 1) % 3 + 1
        code = found.group(0) if behaviour != "no-echo" else "unknown"
        return {"ids": [c["id"] for c in contexts],
                "text": f"The certificate code is {code} [{cited}]."}
    return reply


@pytest.fixture(params=["echo", "wrong-citation", "no-echo"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    with serve(_reply(request.param), "/answer") as url:  # type: ignore[arg-type]
        yield request.param, url


def test_the_check_passes_only_when_the_cited_passage_is_echoed(
        served: tuple[str, str], tmp_path: Path) -> None:
    behaviour, url = served
    artifact = tmp_path / "echo.json"
    target = HttpTarget(url, "generator", build_payload=echo_payload)
    result = citation_echo_check(target, passages=PASSAGES, question="What is the code?",
                                 planted_index=1, artifact=artifact)
    assert result.passed == (behaviour == "echo")
    assert result.cites_planted == (behaviour != "wrong-citation")
    assert result.echoes_marker == (behaviour != "no-echo")
    saved = json.loads(artifact.read_text())
    assert saved["kind"] == "rankproof.rag.echo" and saved["passed"] == result.passed


def test_there_is_no_offline_double(tmp_path: Path) -> None:
    fake = CallableTarget(lambda case: TargetResponse(ranked_ids=("p1",), text="[1]"),
                          name="fake")
    with pytest.raises(ConfigError, match="real system"):
        citation_echo_check(fake, passages=PASSAGES, question="q",  # type: ignore[arg-type]
                            artifact=tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()
