"""Class 14: one grammar per thing, the same in every reader.

* a key repeated in one JSON object is an error in every JSON and JSONL
  reader (``json`` keeps the last one silently), and in YAML files;
* a CSV quote left open is an error naming the line, not a field that
  swallows the rest of the file;
* a BEIR relevance grade follows the TREC reader's integer grammar exactly
  (ASCII digits and a sign: no ``٣``, no ``1_0``), in the BEIR reader and in
  the adapter;
* every file name the BEIR adapter writes is portable (no character Windows
  refuses, no trailing dot or space, no reserved device name), and its output
  folder gets the permissions the umask gives, not ``mkdtemp``'s ``0700``.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rankproof import ConfigError, InputError
from rankproof.corpus import adapt_beir, read_corpus, read_judgments
from rankproof.corpus._beir_adapt import portable_stem
from rankproof.data import (
    read_beir_qrels,
    read_document,
    read_jsonl,
    read_jsonl_qrels,
    read_jsonl_run,
    read_trec_qrels,
)
from rankproof.gate import load_baseline, load_report, parse_checks
from rankproof.targets import load_goldens

WINDOWS_RESERVED = set('<>:"/\\|?*')


def beir_folder(root: Path, docs: list[dict[str, Any]] | None = None,
                qrels: list[tuple[str, str, str]] | None = None,
                corpus_text: str | None = None, queries_text: str | None = None) -> Path:
    root.mkdir()
    docs = docs if docs is not None else [{"_id": "d1", "title": "", "text": "pumps"}]
    (root / "corpus.jsonl").write_text(
        corpus_text if corpus_text is not None
        else "".join(json.dumps(d) + "\n" for d in docs))
    (root / "queries.jsonl").write_text(
        queries_text if queries_text is not None
        else json.dumps({"_id": "q1", "text": "pumps?"}) + "\n")
    (root / "qrels").mkdir()
    rows = qrels if qrels is not None else [("q1", d["_id"], "1") for d in docs]
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows))
    return root


# -- duplicate keys ---------------------------------------------------------------------

DUP = '{"qid": "q", "docid": "d", "docid": "e", "score": 1}'


def _dup_cases(tmp: Path) -> Iterator[tuple[str, Callable[[], object], Path, int | None]]:
    run = tmp / "r.jsonl"
    run.write_text('{"qid": "q", "docid": "a", "score": 1}\n' + DUP + "\n")
    yield "jsonl run", lambda: read_jsonl_run(run), run, 2
    qrels = tmp / "q.jsonl"
    qrels.write_text('{"qid": "q", "docid": "d", "rel": 1, "rel": 0}\n')
    yield "jsonl qrels", lambda: read_jsonl_qrels(qrels), qrels, 1
    plain = tmp / "p.jsonl"
    plain.write_text('{"a": {"b": 1, "b": 2}}\n')
    yield "read_jsonl (nested object)", lambda: list(read_jsonl(plain)), plain, 1
    goldens = tmp / "g.jsonl"
    goldens.write_text('{"id": "a", "query": "q"}\n{"id": "b", "query": "q", "id": "c"}\n')
    yield "goldens jsonl", lambda: load_goldens(goldens), goldens, 2
    report = tmp / "report.json"
    report.write_text('{"schema_version": 2,\n "kind": "rankproof.eval",\n "kind": "x"}')
    yield "report", lambda: load_report(report), report, None
    baseline = tmp / "b.json"
    baseline.write_text('{"schema_version": 2, "name": "a", "name": "b"}')
    yield "baseline", lambda: load_baseline(baseline), baseline, None
    yaml_doc = tmp / "d.yaml"
    yaml_doc.write_text("a: 1\nb: 2\na: 3\n")
    yield "yaml document", lambda: read_document(yaml_doc), yaml_doc, 3


def test_duplicate_keys_are_refused_in_every_json_reader(tmp_path: Path) -> None:
    for what, call, path, line in _dup_cases(tmp_path):
        with pytest.raises(InputError, match="duplicate key") as err:
            call()
        assert err.value.path == str(path), what
        if line is not None:
            assert err.value.line == line, (what, err.value)


def test_duplicate_keys_in_judgments_and_the_beir_adapter(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha beta\n")
    judgments = tmp_path / "j.jsonl"
    judgments.write_text('{"query_id": "x", "query": "q", "category": "no_answer", "gold": [],'
                         ' "meta": {"k": 1, "k": 2}}\n')
    with pytest.raises(InputError, match="duplicate key 'k'") as err:
        read_judgments(judgments, read_corpus(docs))
    assert (err.value.path, err.value.line) == (str(judgments), 1)
    src = beir_folder(tmp_path / "beir", queries_text='{"_id": "q1", "text": "a", "_id": "q2"}\n')
    with pytest.raises(InputError, match="duplicate key '_id'") as err:
        adapt_beir(src, tmp_path / "out")
    assert (err.value.path, err.value.line) == (str(src / "queries.jsonl"), 1)
    assert not (tmp_path / "out").exists()


def test_duplicate_keys_in_yaml_checks_and_goldens() -> None:
    with pytest.raises(ConfigError, match=r"c\.yaml, line 4: key 'metric' repeated"):
        parse_checks("checks:\n  - id: a\n    metric: nDCG@10\n    metric: RR@10\n"
                     "    op: '>='\n    threshold: 0.5\n", source="c.yaml")


def test_duplicate_keys_in_a_goldens_yaml_case(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text("- id: a\n  query: q\n  query: r\n")
    with pytest.raises(InputError, match="appears twice") as err:
        load_goldens(path)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), 3, "query")


# -- CSV quotes -------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "line", "problem"), [
    ('id,query\na,"never closed\nb,second\nc,third\n', 2, "unexpected end of data"),
    ('id,query\na,first\nb,"closed" then text\n', 3, "',' expected after '\"'"),
])
def test_a_broken_csv_quote_is_refused_with_its_line(tmp_path: Path, text: str, line: int,
                                                     problem: str) -> None:
    # Before, the open quote swallowed every later row into one query: two cases lost.
    path = tmp_path / "g.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=f"malformed CSV: {problem}") as err:
        load_goldens(path)
    assert (err.value.path, err.value.line) == (str(path), line)


def test_a_quoted_multiline_csv_field_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    path.write_text('id,query\na,"two\nlines"\nb,"with ""quotes"""\n')
    cases = load_goldens(path)
    assert [c.query for c in cases] == ["two\nlines", 'with "quotes"']


# -- one integer grammar for relevance grades --------------------------------------------

GRADES = ["1", "0", "-1", "+1", "2", "007", "٣", "1_0", "１", "1.0", "1e0", "0x1", "½",
          "9" * 19, "9" * 41]


def _accepts(call: Callable[[], object]) -> bool:
    try:
        call()
    except InputError:
        return False
    return True


@pytest.mark.parametrize("grade", GRADES)
def test_beir_grades_follow_the_trec_integer_grammar(tmp_path: Path, grade: str) -> None:
    trec = tmp_path / "q.txt"
    trec.write_text(f"q1 0 d1 {grade}\n")
    beir = tmp_path / "q.tsv"
    beir.write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t{grade}\n")
    src = beir_folder(tmp_path / "beir", qrels=[("q1", "d1", "1"), ("q1", "d2", grade)],
                      docs=[{"_id": "d1", "text": "a"}, {"_id": "d2", "text": "b"}])
    by_trec = _accepts(lambda: read_trec_qrels(trec))
    assert _accepts(lambda: read_beir_qrels(beir)) == by_trec
    assert _accepts(lambda: adapt_beir(src, tmp_path / "out")) == by_trec
    if grade in ("٣", "1_0", "１", "½"):
        assert not by_trec  # int() would take the first three
    if not by_trec:
        assert not (tmp_path / "out").exists()


# -- portable file names ------------------------------------------------------------------

@pytest.mark.parametrize(("doc_id", "stem"), [
    ("<dbpedia:Animal>", "%3Cdbpedia%3AAnimal%3E"),
    ('a"b|c?d*e', "a%22b%7Cc%3Fd%2Ae"),
    ("trailing.", "trailing%2E"),
    ("trailing ", "trailing%20"),
    ("mixed. .", "mixed%2E%20%2E"),
    ("50%", "50%25"),
    ("%3C", "%253C"),
    ("plain-id_1.v2", "plain-id_1.v2"),
])
def test_portable_stems(doc_id: str, stem: str) -> None:
    assert portable_stem(doc_id) == stem


def test_the_adapter_writes_only_portable_names(tmp_path: Path) -> None:
    ids = ["<dbpedia:Animal>", "<dbpedia:animal_2>", "a.", "a", "b ", "50%", "50%25", "q?",
           "COM10", "con.txt.x"[4:]]
    src = beir_folder(tmp_path / "beir", docs=[{"_id": i, "text": f"text of {i}"} for i in ids])
    out = tmp_path / "out"
    result = adapt_beir(src, out)
    assert result.documents == len(ids)
    names = [p.name for p in (out / "docs").iterdir()]
    assert len(names) == len(set(names)) == len(ids)  # one-to-one: nothing collided
    for name in names:
        assert not WINDOWS_RESERVED & set(name), name
        assert not name.endswith((".", " ")), name
        assert all(ord(c) >= 0x20 for c in name), name
        assert name.split(".")[0].lower() not in {"con", "prn", "aux", "nul"}, name
    # The judgments point at those files, and read back against the written corpus.
    judged = read_judgments(out / "judgments.jsonl", read_corpus(out / "docs"))
    gold = {g.doc for q in judged.queries for g in q.gold}
    assert "%3Cdbpedia%3AAnimal%3E.txt" in gold and "a%2E.txt" in gold
    assert gold == set(names)


@pytest.mark.parametrize(("doc_id", "reason"), [
    ("CON", "reserved device name on Windows (CON)"),
    ("lpt1.log", "(LPT1)"),
    ("aux ", "(AUX)"),
    ("a\x01b", "control character"),
    ("a/b", "path separator"),
    ("C:x", "absolute or drive path"),
])
def test_unportable_ids_that_cannot_be_escaped_are_refused(tmp_path: Path, doc_id: str,
                                                           reason: str) -> None:
    src = beir_folder(tmp_path / "beir", docs=[{"_id": doc_id, "text": "t"}])
    with pytest.raises(InputError) as err:
        adapt_beir(src, tmp_path / "out")
    assert reason in str(err.value) and err.value.field == "_id"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_the_adapter_output_follows_the_umask(tmp_path: Path, umask: int) -> None:
    src = beir_folder(tmp_path / "beir")
    old = os.umask(umask)
    try:
        adapt_beir(src, tmp_path / "out")
    finally:
        os.umask(old)
    folder = stat.S_IMODE((tmp_path / "out").stat().st_mode)
    assert folder == 0o777 & ~umask, oct(folder)
    assert stat.S_IMODE((tmp_path / "out" / "docs").stat().st_mode) == 0o777 & ~umask
    assert stat.S_IMODE((tmp_path / "out" / "judgments.jsonl").stat().st_mode) \
        == 0o666 & ~umask
