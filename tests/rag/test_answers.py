"""Answer files, references and arm manifests: read strictly, refused by file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankproof import InputError
from rankproof.rag import (
    ArmManifest,
    Context,
    aligned,
    content_tokens,
    load_answers,
    load_references,
    normalize_answer,
    tokens,
)


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


ROW = {"query_id": "q1", "answer": "The plant makes 42 MLD [1].",
       "contexts": [{"id": "d1#1", "text": "It has a rated capacity of 42 MLD."}]}
MANIFEST = {"__manifest__": {"name": "a", "prompt_template_digest": "sha256:ab",
                             "generator_checkpoint": "gen-1", "decoding": {"temperature": 0}}}


def test_squad_normalisation_and_content_tokens() -> None:
    assert normalize_answer("The  Operations-Manager, of course!") == "operationsmanager of course"
    assert tokens("An apple a day") == ["apple", "day"]
    assert content_tokens("It is the rated capacity of the plant") == ["rated", "capacity",
                                                                       "plant"]


def test_an_answer_file_with_its_manifest(tmp_path: Path) -> None:
    f = load_answers(_write(tmp_path / "arm.jsonl", [MANIFEST, ROW, {**ROW, "query_id": "q2",
                                                                     "citations": [1, "d1#1"]}]))
    assert f.name == "arm" and f.query_ids == ("q1", "q2")
    assert f.rows[0].contexts == (Context("d1#1", "It has a rated capacity of 42 MLD."),)
    assert f.rows[0].citations is None and f.rows[1].citations == (1, "d1#1")
    assert f.manifest == ArmManifest(name="a", prompt_template_digest="sha256:ab",
                                     generator_checkpoint="gen-1", decoding={"temperature": 0})
    other = ArmManifest(name="b", prompt_template_digest="sha256:ab",
                        generator_checkpoint="gen-2", decoding={"temperature": 0})
    assert f.manifest.differences(other) == ["generator_checkpoint"]


@pytest.mark.parametrize(("rows", "fragment"), [
    ([{**ROW, "answer": 3}], "line 1, field 'answer'"),
    ([{**ROW, "query_id": ""}], "line 1, field 'query_id'"),
    ([ROW, ROW], "line 2, field 'query_id': query 'q1' is answered twice"),
    ([{**ROW, "contexts": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]}],
     "field 'contexts[1].id'"),
    ([{**ROW, "contexts": [{"id": "a"}]}], "field 'contexts[0].text'"),
    ([{**ROW, "citations": [True]}], "field 'citations'"),
    ([{**ROW, "extra": 1}], "line 1, field 'extra'"),
    ([ROW, MANIFEST], "line 2, field '__manifest__'"),
    ([{"__manifest__": {"model": "x"}}, ROW], "field '__manifest__.model'"),
    ([MANIFEST], "holds no answers"),
])
def test_bad_answer_files(tmp_path: Path, rows: list[object], fragment: str) -> None:
    path = _write(tmp_path / "arm.jsonl", rows)
    with pytest.raises(InputError) as info:
        load_answers(path)
    assert str(path) in str(info.value) and fragment in str(info.value)


def test_references_and_coverage(tmp_path: Path) -> None:
    refs = load_references(_write(tmp_path / "ref.jsonl", [
        {"query_id": "q1", "answers": ["42 MLD", "42 million litres per day"]},
        {"query_id": "q9", "answers": [], "query": "Who won?"}]))
    assert refs.answers["q1"] == ("42 MLD", "42 million litres per day")
    assert refs.answers["q9"] == () and refs.queries["q9"] == "Who won?"
    refs.check_covers(["q1"], source="arm.jsonl")
    with pytest.raises(InputError, match=r"arm.jsonl, field 'query_id': 1 answered query has "
                                         r"no reference .*'q2'"):
        refs.check_covers(["q1", "q2"], source="arm.jsonl")
    with pytest.raises(InputError, match="line 1, field 'answers'"):
        load_references(_write(tmp_path / "bad.jsonl", [{"query_id": "q1", "answers": "x"}]))


def test_arms_must_answer_the_same_queries(tmp_path: Path) -> None:
    a = load_answers(_write(tmp_path / "a.jsonl", [ROW]))
    b = load_answers(_write(tmp_path / "b.jsonl", [{**ROW, "query_id": "q2"}]))
    assert aligned([a, a]) == ("q1",)
    with pytest.raises(InputError, match=r"a and b answer different queries \(1 only in a: "
                                         r"\['q1'\]; 1 only in b: \['q2'\]\)"):
        aligned([a, b])
