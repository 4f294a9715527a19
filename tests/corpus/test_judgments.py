"""`read_judgments`: schema, quote resolution, errors with line and field, qrels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rankproof import InputError
from rankproof.corpus._corpus import Corpus, Document
from rankproof.corpus._judgments import (
    Judgments,
    parse_judgments,
    read_judgments,
    write_judgments,
)

PUMPS = "Pumps are greased every 2000 hours. Vibration is checked monthly at every station."
BILLS = "Bills are due 21 days after the bill date. A late charge of 1.5 percent applies."


@pytest.fixture
def corpus() -> Corpus:
    return Corpus.from_documents(
        [Document("pumps.md", PUMPS), Document("billing/bills.md", BILLS)],
        chunk_size=40, overlap=10,
    )


def row(qid: str = "grease-interval", **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "query_id": qid, "query": "How often are pumps greased?", "category": "normal",
        "gold": [{"doc": "pumps.md", "quote": "every 2000 hours"}],
    }
    base.update(over)
    return base


def write_rows(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def test_reads_and_resolves_spans(tmp_path: Path, corpus: Corpus) -> None:
    path = write_rows(tmp_path / "j.jsonl", [
        row(),
        row("due-date", query="When is a bill due?", category="ambiguous",
            gold=[{"doc": "billing/bills.md", "quote": "21 days"},
                  {"doc": "pumps.md", "quote": "monthly"}]),
        row("fluoride", query="Fluoride?", category="no_answer", gold=[]),
    ])
    j = read_judgments(path, corpus)
    assert j.query_ids == ("grease-interval", "due-date", "fluoride")
    assert j.answerable == ("grease-interval", "due-date")
    assert j.no_answer == ("fluoride",)
    assert j.by_category() == {"normal": ("grease-interval",), "ambiguous": ("due-date",),
                               "no_answer": ("fluoride",), "adversarial": ()}
    g = j.query("grease-interval").gold[0]
    assert PUMPS[g.start:g.end] == "every 2000 hours" == g.quote
    assert j.source == str(path) and j.digest.startswith("sha256:")


def test_first_occurrence_is_used(corpus: Corpus) -> None:
    j = Judgments.from_rows([row(gold=[{"doc": "pumps.md", "quote": "every"}])], corpus)
    assert j.queries[0].gold[0].start == PUMPS.index("every")


def test_chunk_qrels_mark_every_overlapping_chunk(corpus: Corpus) -> None:
    quote = "Vibration is checked monthly"
    j = Judgments.from_rows([row(gold=[{"doc": "pumps.md", "quote": quote}])], corpus)
    start = PUMPS.index(quote)
    expected = [c.id for c in corpus.chunks_of("pumps.md")
                if c.start < start + len(quote) and start < c.end]
    assert len(expected) >= 2  # the quote straddles a chunk boundary here
    qrels = j.to_qrels(corpus, "chunk")
    assert qrels.to_dict() == {"grease-interval": dict.fromkeys(expected, 1)}


def test_document_qrels_and_no_answer_rows(corpus: Corpus) -> None:
    j = Judgments.from_rows([
        row(gold=[{"doc": "pumps.md", "quote": "2000"}, {"doc": "pumps.md", "quote": "monthly"}]),
        row("fluoride", category="no_answer", gold=[]),
    ], corpus)
    assert j.to_qrels(corpus, "document").to_dict() == {"grease-interval": {"pumps.md": 1}}
    assert "fluoride" not in j.to_qrels(corpus).topics


def test_to_qrels_rejects_a_different_corpus(corpus: Corpus) -> None:
    j = Judgments.from_rows([row()], corpus)
    other = Corpus.from_documents([Document("pumps.md", "changed text")])
    with pytest.raises(InputError, match=r"gold quote from document 'pumps\.md' is not at"):
        j.to_qrels(other)
    with pytest.raises(InputError, match="granularity must be 'chunk' or 'document', got 'x'"):
        j.to_qrels(corpus, "x")  # type: ignore[arg-type]


def test_only_no_answer_has_no_qrels(corpus: Corpus) -> None:
    j = Judgments.from_rows([row("fluoride", category="no_answer", gold=[])], corpus)
    with pytest.raises(InputError, match="no answerable queries"):
        j.to_qrels(corpus)


def test_optional_source_id_and_meta_are_preserved(tmp_path: Path, corpus: Corpus) -> None:
    meta = {"grades": {"pumps.md": 2}, "tags": ["a", "b"]}
    j = Judgments.from_rows([row(source_id="Q 1", meta=meta)], corpus)
    q = j.queries[0]
    assert q.source_id == "Q 1"
    assert q.to_row()["meta"] == meta
    with pytest.raises(TypeError):
        q.meta["new"] = 1  # type: ignore[index]
    out = tmp_path / "out.jsonl"
    write_judgments(j, out)
    again = read_judgments(out, corpus)
    assert again.to_rows() == j.to_rows() and again.digest == j.digest


def test_digest_ignores_line_and_key_order(corpus: Corpus) -> None:
    a, b = row(), row("due-date", gold=[{"doc": "billing/bills.md", "quote": "21 days"}])
    reordered = {k: b[k] for k in reversed(list(b))}
    assert (Judgments.from_rows([a, b], corpus).digest
            == Judgments.from_rows([reordered, a], corpus).digest)
    assert Judgments.from_rows([a], corpus).digest != Judgments.from_rows([b], corpus).digest


def test_blank_lines_and_bom_are_tolerated(corpus: Corpus) -> None:
    data = ("\ufeff" + json.dumps(row()) + "\n\n   \n").encode()
    assert parse_judgments(data, corpus).query_ids == ("grease-interval",)


ERRORS: list[tuple[str, Any, int, str | None, str]] = [
    ("invalid JSON", '{"query_id": ', 2, None, "invalid JSON: Expecting value at column 14"),
    ("not an object", "[1, 2]", 2, None, "expected a JSON object, found an array"),
    ("duplicate key", '{"query_id": "a", "query_id": "b"}', 2, None,
     "invalid JSON object: duplicate key 'query_id'"),
    ("missing key", {k: v for k, v in row("x").items() if k != "category"}, 2, "category",
     "missing key 'category'"),
    ("extra key", row("x", glod=[]), 2, "glod", "unexpected key 'glod'"),
    ("query id not a string", row(7), 2, "query_id", "query_id must be a string, found a "
     "number"),
    ("not kebab-case", row("Grease_Interval"), 2, "query_id",
     "query_id must be kebab-case lowercase"),
    ("double dash", row("grease--interval"), 2, "query_id", "must be kebab-case"),
    ("empty query", row("x", query="  "), 2, "query", "query must be a non-empty string"),
    ("unknown category", row("x", category="easy"), 2, "category",
     "category must be one of normal, ambiguous, no_answer, adversarial, found 'easy'"),
    ("gold not a list", row("x", gold={"doc": "pumps.md"}), 2, "gold",
     "gold must be a list, found an object"),
    ("no_answer with gold", row("x", category="no_answer"), 2, "gold",
     "a no_answer query must have empty gold, found 1 entries"),
    ("normal without gold", row("x", gold=[]), 2, "gold",
     "a normal query needs at least one gold entry"),
    ("gold entry not an object", row("x", gold=["pumps.md"]), 2, "gold[0]",
     "expected an object {doc, quote}"),
    ("gold missing quote", row("x", gold=[{"doc": "pumps.md"}]), 2, "gold[0].quote",
     "missing key 'quote'"),
    ("gold extra key", row("x", gold=[{"doc": "pumps.md", "quote": "2000", "page": 1}]), 2,
     "gold[0].page", "unexpected key 'page'"),
    ("unknown doc", row("x", gold=[{"doc": "pumps.md", "quote": "2000"},
                                   {"doc": "valves.md", "quote": "2000"}]), 2,
     "gold[1].doc", "unknown document 'valves.md'"),
    ("quote not found", row("x", gold=[{"doc": "pumps.md", "quote": "every 3000 hours"}]), 2,
     "gold[0].quote", "quote not found verbatim in document 'pumps.md': 'every 3000 hours'"),
    ("empty quote", row("x", gold=[{"doc": "pumps.md", "quote": ""}]), 2, "gold[0].quote",
     "quote must be a non-empty string"),
    ("duplicate query id", row(), 2, "query_id",
     "duplicate query_id 'grease-interval' \\(first on line 1\\)"),
    ("source_id not a string", row("x", source_id=3), 2, "source_id",
     "source_id must be a string"),
    ("meta not an object", row("x", meta=[1]), 2, "meta", "meta must be a JSON object"),
    ("meta with NaN", '{"query_id": "x", "query": "q", "category": "no_answer", "gold": [], '
     '"meta": {"a": NaN}}', 2, "meta", "meta must hold plain JSON values: Out of range float"),
    ("lone surrogate", row("x", query="bad \ud800"), 2, "query",
     "query holds an unpaired surrogate"),
]


@pytest.mark.parametrize(("case", "bad", "line", "field", "message"), ERRORS,
                         ids=[e[0] for e in ERRORS])
def test_errors_name_line_and_field(tmp_path: Path, corpus: Corpus, case: str, bad: Any,
                                    line: int, field: str | None, message: str) -> None:
    path = write_rows(tmp_path / "j.jsonl", [row(), bad])
    with pytest.raises(InputError, match=message) as info:
        read_judgments(path, corpus)
    err = info.value
    assert (err.path, err.line, err.field) == (str(path), line, field)
    assert str(err).startswith(f"{path}, line {line}")


def test_empty_file(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="the judgments have no queries"):
        read_judgments(path, corpus)


def test_invalid_utf8(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(json.dumps(row()).encode() + b"\n\xff\n")
    with pytest.raises(InputError, match="invalid UTF-8") as info:
        read_judgments(path, corpus)
    assert info.value.line == 2


def test_missing_file(tmp_path: Path, corpus: Corpus) -> None:
    with pytest.raises(InputError, match="cannot read the judgments file"):
        read_judgments(tmp_path / "nope.jsonl", corpus)
