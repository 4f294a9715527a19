"""Citation markers are not answer words: stripped before the answer metrics (issue 26).

The RAG protocol (seed 003) scores the answer text, not the pointers to passages
in it; ``strip_citations=False`` keeps the old reading, and the report records
which normalisation ran.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankproof import InputError
from rankproof.rag import (
    bleu,
    exact_match,
    load_answers,
    load_references,
    rouge_l,
    score_answers,
    token_f1,
)
from rankproof.rag._text import ANSWER_NORMALISATION, strip_citations


def test_the_protocol_example() -> None:
    assert exact_match("42 MLD [1]", ["42 MLD"]) == 1.0
    assert exact_match("42 MLD [1]", ["42 MLD"], strip_citations=False) == 0.0


@pytest.mark.parametrize(("text", "stripped"), [
    ("42 MLD [1]", "42 MLD"),
    ("Paris [1][2]. Rome [3, 4].", "Paris. Rome."),
    ("[2] first", "first"),
    ("a [ 1 ; 2 ] b", "a b"),
    ("in [the] year [12a]", "in [the] year [12a]"),  # not markers: kept
])
def test_what_counts_as_a_marker(text: str, stripped: str) -> None:
    assert strip_citations(text) == stripped


def test_every_answer_metric_strips_them() -> None:
    answer, refs = "the cat sat on the mat [3]", ["the cat sat on the mat"]
    assert token_f1(answer, refs) == 1.0
    assert rouge_l(answer, refs) == 1.0
    assert bleu(answer, refs) == 1.0
    assert token_f1(answer, refs, strip_citations=False) < 1.0
    assert rouge_l(answer, refs, strip_citations=False) < 1.0
    assert bleu(answer, refs, strip_citations=False) < 1.0


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_score_answers_records_the_step_and_can_keep_markers(tmp_path: Path) -> None:
    answers = load_answers(_write(tmp_path / "arm.jsonl", [
        {"query_id": "q1", "query": "How much water?", "answer": "42 MLD [1]",
         "contexts": [{"id": "d1#1", "text": "It has a rated capacity of 42 MLD."}]}]))
    refs = load_references(_write(tmp_path / "ref.jsonl", [
        {"query_id": "q1", "answers": ["42 MLD"]}]))
    report = score_answers(answers, refs, metrics=("exact_match", "token_f1"))
    assert report.means == {"exact_match": 1.0, "token_f1": 1.0}
    assert report.normalisation == ANSWER_NORMALISATION
    assert report.to_dict()["normalisation"][0] == "strip citation markers [n]"
    kept = score_answers(answers, refs, metrics=("exact_match",), strip_citations=False)
    assert kept.means == {"exact_match": 0.0}
    assert kept.normalisation == ANSWER_NORMALISATION[1:]
    grounding_only = score_answers(answers, refs, metrics=("grounding",))
    assert grounding_only.normalisation == ()
    with pytest.raises(InputError, match="strip_citations must be true or false, got 'no'"):
        score_answers(answers, refs, strip_citations="no")  # type: ignore[arg-type]


def test_rag_score_keep_citations(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankproof.cli import app

    arm = _write(tmp_path / "arm.jsonl", [
        {"query_id": "q1", "query": "How much water?", "answer": "42 MLD [1]",
         "contexts": [{"id": "d1#1", "text": "It has a rated capacity of 42 MLD."}]}])
    ref = _write(tmp_path / "ref.jsonl", [{"query_id": "q1", "answers": ["42 MLD"]}])
    for flag, want in (([], 1.0), (["--keep-citations"], 0.0)):
        out = tmp_path / f"report{len(flag)}.json"
        got = CliRunner().invoke(app, ["rag", "score", str(arm), "--references", str(ref),
                                       "-m", "exact_match", "-o", str(out), *flag])
        assert got.exit_code == 0, got.stderr
        report = json.loads(out.read_text())
        assert report["means"] == {"exact_match": want}
        assert (report["normalisation"][0] == "strip citation markers [n]") == (not flag)
