"""`adapt_beir`: BEIR folder → corpus + judgments; every rejection leaves the output as it was."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from rankproof import InputError
from rankproof.corpus._beir_adapt import (
    _contained,
    adapt_beir,
    kebab_query_id,
    unsafe_component_reason,
)
from rankproof.corpus._corpus import read_corpus
from rankproof.corpus._judgments import QUERY_ID_PATTERN, read_judgments

CORPUS = [
    {"_id": "d1", "title": "Pumps", "text": "Pumps are greased every 2000 hours."},
    {"_id": "d2", "title": "", "text": "Valves are exercised every year.\r\nBig ones too."},
    {"_id": "D-3", "title": "Bills", "text": "Bills are due in 21 days."},
    {"_id": "d4", "title": "Unjudged", "text": "A distractor."},
]
QUERIES = [
    {"_id": "q1", "text": "How often are pumps greased?"},
    {"_id": "Q_2", "text": "When are bills due?"},
    {"_id": "q3", "text": "Valves?"},
    {"_id": "q4", "text": "Never judged."},
]
QRELS = [("q1", "d1", 1), ("q1", "d2", 0), ("Q_2", "D-3", 2), ("Q_2", "d1", 1), ("q3", "d2", 1)]


def make_beir(root: Path, corpus: list[Any] | None = None, queries: list[Any] | None = None,
              qrels: list[tuple[Any, ...]] | None = None, split: str = "test",
              header: str = "query-id\tcorpus-id\tscore") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "qrels").mkdir(exist_ok=True)
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for row in CORPUS if corpus is None else corpus:
            fh.write(json.dumps(row) + "\n")
    with open(root / "queries.jsonl", "w", encoding="utf-8") as fh:
        for row in QUERIES if queries is None else queries:
            fh.write(json.dumps(row) + "\n")
    with open(root / "qrels" / f"{split}.tsv", "w", encoding="utf-8") as fh:
        fh.write(header + "\n")
        for q, d, s in QRELS if qrels is None else qrels:
            fh.write(f"{q}\t{d}\t{s}\n")
    return root


def snapshot(root: Path) -> str:
    """A hash of every entry under ``root``: names, kinds, link targets and file contents."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                h.update(f"L {rel} -> {os.readlink(path)}\n".encode())
            elif path.is_dir():
                h.update(f"D {rel}\n".encode())
            else:
                h.update(f"F {rel} {hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return h.hexdigest()


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    """The folder that holds the output directory (and would hold a stray temp dir)."""
    d = tmp_path / "dest"
    d.mkdir()
    return d


def test_converts_and_reads_back(tmp_path: Path, dest: Path) -> None:
    src = make_beir(tmp_path / "beir")
    out = dest / "adapted"
    result = adapt_beir(src, out)
    assert (result.documents, result.queries, result.positives) == (4, 3, 4)
    assert (result.queries_without_positives, result.renamed_queries, result.graded) == (1, 1,
                                                                                        True)
    assert sorted(p.name for p in (out / "docs").iterdir()) == ["D-3.txt", "d1.txt", "d2.txt",
                                                                "d4.txt"]
    assert (out / "docs" / "d1.txt").read_text(encoding="utf-8") == (
        "Pumps\n\nPumps are greased every 2000 hours.")
    assert (out / "docs" / "d2.txt").read_bytes() == b"Valves are exercised every year.\nBig " \
        b"ones too."
    corpus = read_corpus(out / "docs")
    judgments = read_judgments(out / "judgments.jsonl", corpus)
    q2 = kebab_query_id("Q_2")
    assert judgments.query_ids == ("q1", q2, "q3")
    assert judgments.query(q2).source_id == "Q_2"
    assert judgments.query("q1").source_id == "q1"
    assert dict(judgments.query(q2).meta or {}) == {"grades": {"D-3.txt": 2, "d1.txt": 1}}
    assert judgments.query("q1").meta is None
    assert {q.category for q in judgments.queries} == {"normal"}
    assert judgments.to_qrels(corpus, "document").to_dict() == {
        "q1": {"d1.txt": 1}, q2: {"D-3.txt": 1, "d1.txt": 1}, "q3": {"d2.txt": 1}}
    # a whole-document quote makes every chunk of the document relevant
    small = read_corpus(out / "docs", chunk_size=10, overlap=2)
    chunk_qrels = judgments.to_qrels(small, "chunk").to_dict()
    assert set(chunk_qrels["q3"]) == {c.id for c in small.chunks_of("d2.txt")}
    assert [p.name for p in dest.iterdir()] == ["adapted"]  # no temporary directory left


def test_existing_empty_output_directory_is_used(tmp_path: Path, dest: Path) -> None:
    out = dest / "adapted"
    out.mkdir()
    adapt_beir(make_beir(tmp_path / "beir"), out)
    assert (out / "judgments.jsonl").is_file()


def test_other_split(tmp_path: Path, dest: Path) -> None:
    src = make_beir(tmp_path / "beir", qrels=[("q4", "d4", 1)], split="dev")
    result = adapt_beir(src, dest / "out", split="dev")
    assert (result.split, result.queries, result.renamed_queries) == ("dev", 1, 0)


def test_kebab_query_ids() -> None:
    assert kebab_query_id("q-7") == "q-7"
    assert kebab_query_id("301") == "301"
    for original in ["Q 7", "q_7", "Q7", "../x", "日本", "", "a--b"]:
        new = kebab_query_id(original)
        assert new != original
        assert new == kebab_query_id(original)  # deterministic
        assert QUERY_ID_PATTERN.match(new), new
    assert kebab_query_id("Q 7") != kebab_query_id("q_7")
    assert kebab_query_id("日本").startswith("q-")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "is empty"), ("a/b", "path separator"), ("a\\b", "path separator"),
        ("/etc", "path separator"), (".", "relative path step"), ("..", "relative path step"),
        ("C:x", "absolute or drive path"), ("a\x00b", "control character"),
        ("a\nb", "control character"), ("a\x7fb", "control character"),
        (".env", "starts with '.'"), ("CON", "reserved device name on Windows (CON)"),
        ("nul", "(NUL)"), ("com1", "(COM1)"), ("LPT9.log", "(LPT9)"), ("aux ", "(AUX)"),
        ("x" * 252, "too long"),
    ],
)
def test_unsafe_components(name: str, reason: str) -> None:
    found = unsafe_component_reason(name)
    assert found is not None and reason in found


@pytest.mark.parametrize("name", ["d1", "doc-1_a.b", "<dbpedia:Animal>", "a b", "config",
                                  "console", "COM10", "x" * 251, "ünïcode", "a#b"])
def test_safe_components(name: str) -> None:
    assert unsafe_component_reason(name) is None


def test_containment_check(tmp_path: Path) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    (root / "link").symlink_to(tmp_path)
    assert _contained(root / "a.txt", root) == root / "a.txt"
    with pytest.raises(InputError, match="resolves outside the output folder"):
        _contained(root / "link" / "a.txt", root)
    with pytest.raises(InputError, match="resolves outside the output folder"):
        _contained(root / ".." / "a.txt", root)


# -- every rejection: message, and nothing written ---------------------------

def doc(i: str, text: str = "text") -> dict[str, str]:
    return {"_id": i, "title": "", "text": text}


def bad_doc_id(doc_id: str) -> dict[str, Any]:
    return {"corpus": [*CORPUS, doc(doc_id)]}


REJECTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("separator slash", bad_doc_id("a/b"), "document id 'a/b' contains a path separator"),
    ("separator backslash", bad_doc_id("a\\b"), "contains a path separator"),
    ("absolute", bad_doc_id("/etc/passwd"), "document id '/etc/passwd' contains a path "
     "separator"),
    ("drive", bad_doc_id("C:evil"), "document id 'C:evil' is an absolute or drive path"),
    ("dotdot", bad_doc_id(".."), "document id '..' is '..', a relative path step"),
    ("dot", bad_doc_id("."), "is '.', a relative path step"),
    ("control character", bad_doc_id("a\x07b"), "contains a control character"),
    ("empty id", bad_doc_id(""), "document id '' is empty"),
    ("reserved CON", bad_doc_id("CON"), "is a reserved device name on Windows \\(CON\\)"),
    ("reserved nul", bad_doc_id("nul"), "reserved device name on Windows \\(NUL\\)"),
    ("reserved COM1 with extension", bad_doc_id("com1.dat"), "\\(COM1\\)"),
    ("hidden", bad_doc_id(".profile"), "starts with '.', a hidden file"),
    ("too long", bad_doc_id("x" * 300), "is too long for a file name"),
    ("id not a string", {"corpus": [*CORPUS, {"_id": ["x"], "text": "t"}]},
     "_id must be a string"),
    ("duplicate doc id", {"corpus": [*CORPUS, doc("d1")]},
     "corpus.jsonl, line 5, field '_id': duplicate document id 'd1' \\(first on line 1\\)"),
    ("case collision", {"corpus": [*CORPUS, doc("D1")]},
     "corpus.jsonl, line 5, field '_id': document id 'D1' collides with 'd1' \\(line 1\\) when "
     "case is ignored"),
    ("unicode normalisation collision", {"corpus": [*CORPUS, doc("caf\u00e9"),
                                                    doc("cafe\u0301")]},
     "collides with 'café'"),
    ("unknown doc in qrels", {"qrels": [*QRELS, ("q1", "d9", 1)]},
     "test.tsv, line 7, field 'corpus-id': unknown document 'd9' \\(not in corpus.jsonl\\)"),
    ("unknown doc in a zero row", {"qrels": [*QRELS, ("q1", "d9", 0)]}, "unknown document 'd9'"),
    ("unknown query in qrels", {"qrels": [*QRELS, ("q9", "d1", 1)]},
     "test.tsv, line 7, field 'query-id': unknown query 'q9' \\(not in queries.jsonl\\)"),
    ("no positive rows", {"qrels": [("q1", "d1", 0), ("q3", "d2", 0)]},
     "the split has no positive judgments \\(score > 0\\)"),
    ("empty split", {"qrels": []}, "the split has no positive judgments"),
    ("duplicate judgment", {"qrels": [*QRELS, ("q1", "d1", 1)]},
     "duplicate judgment \\(q1, d1\\) \\(first on line 2\\)"),
    ("bad score", {"qrels": [("q1", "d1", "high")]}, "score must be an integer, found 'high'"),
    ("bad header", {"header": "qid\tdocid\trel"}, "expected the header 'query-id<TAB>corpus-id"
     "<TAB>score'"),
    ("empty relevant document", {"corpus": [*CORPUS, doc("blank", "")],
                                 "qrels": [("q1", "blank", 1)]},
     # issue 10: empty documents and queries are refused on reading, judged or not
     # (tests/corpus/test_beir_seed_rules.py), so the message names the corpus line
     "corpus.jsonl, line 5, field 'text': document 'blank' has no text"),
    ("empty judged query", {"queries": [*QUERIES, {"_id": "q5", "text": " "}],
                            "qrels": [("q5", "d1", 1)]},
     "queries.jsonl, line 5, field 'text': query 'q5' has no text"),
    ("duplicate query id", {"queries": [*QUERIES, {"_id": "q1", "text": "again"}]},
     "queries.jsonl, line 5, field '_id': duplicate query id 'q1'"),
    ("invalid JSON", {"corpus": [*CORPUS, "not json"]}, "corpus.jsonl, line 5: invalid JSON"),
    ("missing text", {"corpus": [*CORPUS, {"_id": "d9"}]}, "missing key 'text'"),
    ("surrogate in text", {"corpus": [*CORPUS, doc("d9", "bad \ud800")]},
     "field 'text': text holds an unpaired surrogate"),
    ("surrogate in id", bad_doc_id("d\udc80"), "holds an unpaired surrogate"),
]


@pytest.mark.parametrize(("case", "spec", "message"), REJECTIONS, ids=[r[0] for r in REJECTIONS])
@pytest.mark.parametrize("out_state", ["absent", "empty"])
def test_rejections_write_nothing(tmp_path: Path, dest: Path, case: str, spec: dict[str, Any],
                                  message: str, out_state: str) -> None:
    corpus = spec.get("corpus")
    if corpus is not None:
        corpus = [json.loads(r) if isinstance(r, str) and r.startswith("{") else r
                  for r in corpus]
    src = tmp_path / "beir"
    make_beir(src, corpus=None, queries=spec.get("queries"), qrels=spec.get("qrels"),
              header=spec.get("header", "query-id\tcorpus-id\tscore"))
    if corpus is not None:
        with open(src / "corpus.jsonl", "w", encoding="utf-8") as fh:
            for row in corpus:
                fh.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    out = dest / "out"
    if out_state == "empty":
        out.mkdir()
    before = snapshot(dest)
    with pytest.raises(InputError, match=message):
        adapt_beir(src, out)
    assert snapshot(dest) == before


def test_reject_non_empty_output_directory(tmp_path: Path, dest: Path) -> None:
    out = dest / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    before = snapshot(dest)
    with pytest.raises(InputError, match="out: the output directory exists and is not empty"):
        adapt_beir(make_beir(tmp_path / "beir"), out)
    assert snapshot(dest) == before


def test_reject_symlinked_output_path(tmp_path: Path, dest: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    out = dest / "out"
    out.symlink_to(target)
    before, before_target = snapshot(dest), snapshot(target)
    with pytest.raises(InputError, match="the output path is a symlink; refusing to write "
                       "through it"):
        adapt_beir(make_beir(tmp_path / "beir"), out)
    assert snapshot(dest) == before and snapshot(target) == before_target


def test_reject_dangling_symlink_output_path(tmp_path: Path, dest: Path) -> None:
    out = dest / "out"
    out.symlink_to(tmp_path / "missing")
    before = snapshot(dest)
    with pytest.raises(InputError, match="the output path is a symlink"):
        adapt_beir(make_beir(tmp_path / "beir"), out)
    assert snapshot(dest) == before and not (tmp_path / "missing").exists()


def test_reject_output_path_that_is_a_file(tmp_path: Path, dest: Path) -> None:
    out = dest / "out"
    out.write_text("a file", encoding="utf-8")
    before = snapshot(dest)
    with pytest.raises(InputError, match="the output path exists and is not a directory"):
        adapt_beir(make_beir(tmp_path / "beir"), out)
    assert snapshot(dest) == before


@pytest.mark.parametrize("split", ["../test", "", "a/b", ".."])
def test_reject_unsafe_split(tmp_path: Path, dest: Path, split: str) -> None:
    before = snapshot(dest)
    with pytest.raises(InputError, match="field 'split': split"):
        adapt_beir(make_beir(tmp_path / "beir"), dest / "out", split=split)
    assert snapshot(dest) == before


def test_reject_missing_files(tmp_path: Path, dest: Path) -> None:
    src = make_beir(tmp_path / "beir")
    before = snapshot(dest)
    with pytest.raises(InputError, match=r"dev\.tsv: file not found; a BEIR folder needs"):
        adapt_beir(src, dest / "out", split="dev")
    (src / "queries.jsonl").unlink()
    with pytest.raises(InputError, match=r"queries\.jsonl: file not found"):
        adapt_beir(src, dest / "out")
    with pytest.raises(InputError, match="expected a BEIR folder"):
        adapt_beir(tmp_path / "nope", dest / "out")
    assert snapshot(dest) == before


@pytest.mark.parametrize("out_state", ["absent", "empty"])
def test_failure_while_writing_leaves_nothing(tmp_path: Path, dest: Path, out_state: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("rankproof.corpus._beir_adapt.os.replace", fail)
    if out_state == "empty":
        (dest / "out").mkdir()
    before = snapshot(dest)
    with pytest.raises(OSError, match="disk full"):
        adapt_beir(make_beir(tmp_path / "beir"), dest / "out")
    assert snapshot(dest) == before
