"""The citation-echo check (seed 002's synthesis check): does a cited passage say what was cited?

A marker sentence — a fact nobody could know otherwise — is planted in one of
the passages sent with a question that can only be answered from it. The
check passes when the answer cites that passage (a ``[N]`` marker or the
response's ``citations``) **and** repeats the planted fact: a plausible
answer citing the wrong passage, or a right-looking citation whose text the
answer does not echo, fails.

It runs against a real system only — an `HttpTarget` — and writes its own
artifact. There is deliberately no offline double: an echo result from a
scripted stand-in would be noise presented as a measurement. (The tests run
it against a local server to check the plumbing; they assert nothing about
any model.)
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rankproof._errors import ConfigError
from rankproof._io import PathLike, atomic_write
from rankproof.rag._text import cited_numbers, content_tokens
from rankproof.targets import Case, HttpTarget

DEFAULT_ARTIFACT = Path("evals/results/echo-latest.json")


@dataclass(frozen=True)
class EchoResult:
    """What the echo check saw: the planted passage, what was cited, whether it echoed."""

    target: str
    question: str
    marker: str
    planted_index: int
    answer: str
    cited: tuple[int, ...]
    cites_planted: bool
    echoes_marker: bool
    passed: bool
    checked_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "rankproof.rag.echo", "schema_version": 1, **self.__dict__,
                "cited": list(self.cited)}


def echo_payload(case: Case) -> dict[str, Any]:
    """The request body of a generation service: the question and the passages to use."""
    return {"query": case.query, "contexts": list(case.meta.get("contexts", ()))}


def _cited(answer: str, declared: Any, n: int) -> tuple[int, ...]:
    """1-based passage numbers cited: the declared list when given, else ``[N]`` markers."""
    found: list[int] = []
    if isinstance(declared, list):
        found = [int(c) for c in declared if isinstance(c, int) and not isinstance(c, bool)]
    else:
        found = cited_numbers(answer)
    return tuple(sorted({c for c in found if 1 <= c <= n}))


def citation_echo_check(target: HttpTarget, *, passages: Sequence[str], question: str,
                        marker: str | None = None, echo: str | None = None,
                        planted_index: int = 0,
                        artifact: PathLike = DEFAULT_ARTIFACT) -> EchoResult:
    """Plant ``marker`` in ``passages[planted_index]``, ask ``question``, check the echo.

    The passages travel in the case's ``meta["contexts"]``: build the target
    with ``build_payload=echo_payload`` (or your own function that sends
    them) so the request body is ``{"query": question, "contexts": [{"id",
    "text"}, …]}``; the answer is the response's text. ``marker`` defaults
    to a fresh sentence with a random code, so no model can answer it from
    memory. ``echo`` is what the answer must repeat (default: that code for
    the default marker, else the whole marker); it holds when each of its
    content words appears in the answer, and the planted passage is among
    those cited.
    """
    if not isinstance(target, HttpTarget):
        raise ConfigError("the citation-echo check runs against a real system (an HttpTarget); "
                          "an offline stand-in would measure nothing")

    def ask(question: str, contexts: list[dict[str, str]]) -> tuple[str, Any]:
        case = Case(id="echo", query=question, meta={"contexts": contexts})
        response = target.invoke(case)
        return response.text or "", response.meta.get("citations")

    return run_echo(target.name, ask, passages=passages, question=question, marker=marker,
                    echo=echo, planted_index=planted_index, artifact=artifact)


Ask = Callable[[str, list[dict[str, str]]], tuple[str, Any]]
"""``(question, contexts) -> (answer, declared citations or None)``: one real call."""


def run_echo(name: str, ask: Ask, *, passages: Sequence[str], question: str,
             marker: str | None = None, echo: str | None = None, planted_index: int = 0,
             artifact: PathLike = DEFAULT_ARTIFACT) -> EchoResult:
    """The check itself (`citation_echo_check`) over any real call ``ask``; the
    synthesis provider's check (`rankproof.rag.synthesize`) goes through here too."""
    if not passages or not 0 <= planted_index < len(passages):
        raise ConfigError(f"planted_index must point into the {len(passages)} passage(s)")
    if marker is None:
        code = f"ECHO-{secrets.token_hex(3).upper()}"
        marker = f"The inspection certificate for this site carries the code {code}."
        echo = echo or code
    echo = echo or marker
    texts = list(passages)
    texts[planted_index] = f"{texts[planted_index].rstrip()} {marker}"
    contexts = [{"id": f"p{i + 1}", "text": t} for i, t in enumerate(texts)]
    answer, declared = ask(question, contexts)
    cited = _cited(answer, declared, len(contexts))
    wanted = set(content_tokens(echo))
    echoes = bool(wanted) and wanted <= set(content_tokens(answer))
    cites = (planted_index + 1) in cited
    result = EchoResult(target=name, question=question, marker=marker,
                        planted_index=planted_index, answer=answer, cited=cited,
                        cites_planted=cites, echoes_marker=echoes, passed=cites and echoes,
                        checked_at=datetime.now(UTC).isoformat(timespec="seconds"))
    with atomic_write(artifact) as out:
        out.write(json.dumps(result.to_dict(), indent=2) + "\n")
    return result
