"""The bundled QA set's planted errors, and how many the grounding and citation checks catch.

The figures are quoted in the README; this test keeps them true.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from rankproof.rag import load_answers, load_references, score_answers

EX = Path(__file__).resolve().parents[2] / "src" / "rankproof" / "rag" / "example"
CHECKS = {
    "grounding": lambda v: v["grounding"] < 1,
    "grounding_cited": lambda v: v["grounding_cited"] < 1,
    "citations_dangling": lambda v: v["citations_dangling"] > 0,
    "quotes_unsupported": lambda v: v["quotes_unsupported"] > 0,
}


def _values(name: str) -> dict[str, dict[str, float]]:
    refs = load_references(EX / "references.jsonl")
    report = score_answers(load_answers(EX / name), refs)
    return {r.case_id: dict(r.values) for r in report.run.rows}


def test_every_planted_error_is_caught_and_false_alarms_are_counted() -> None:
    planted = [json.loads(line) for line in (EX / "planted.jsonl").read_text().splitlines()]
    bad, good = _values("answers_hallucinated.jsonl"), _values("answers_faithful.jsonl")
    caught: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    by_check: Counter[tuple[str, str]] = Counter()
    for p in planted:
        kinds[p["kind"]] += 1
        flags = [name for name, flagged in CHECKS.items() if flagged(bad[p["query_id"]])]
        caught[p["kind"]] += bool(flags)
        by_check.update((p["kind"], f) for f in flags)
    assert kinds == {"wrong_fact": 6, "wrong_citation": 6, "fabricated_quote": 6,
                     "added_claim": 5, "dangling_citation": 4}
    assert caught == kinds  # 27 of 27
    # Which check catches which kind: wrong citations only by cited grounding.
    assert by_check[("wrong_citation", "grounding_cited")] == 6
    assert by_check[("wrong_citation", "grounding")] == 0
    assert by_check[("dangling_citation", "citations_dangling")] == 4
    assert by_check[("fabricated_quote", "quotes_unsupported")] == 6
    # False alarms on the faithful answers (44): the citation checks raise none.
    alarms = {name: sum(flagged(v) for v in good.values()) for name, flagged in CHECKS.items()}
    assert alarms == {"grounding": 2, "grounding_cited": 6, "citations_dangling": 0,
                      "quotes_unsupported": 0}
