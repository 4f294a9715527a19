"""Fuzz: corpus readers — judgments, corpus folders and the BEIR adapter.

Property (see ``_fuzz``): mutated real judgments, document folders and BEIR
folders give a result or a `rankproof.RankproofError`, never another
exception; a reader writes nothing, and the BEIR adapter, which writes a
folder, leaves no output and no temporary directory when it refuses.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path

from hypothesis import event, given
from hypothesis import strategies as st
from tests.hostile._fuzz import (
    REPO,
    assert_no_controls,
    file_bytes,
    fuzz_settings,
    jsonl_text,
    maybe_gzipped,
    mutated,
    refused_or_read,
    snapshot,
)
from typer.testing import CliRunner

from rankproof import RankproofError
from rankproof.cli import app
from rankproof.corpus import adapt_beir, golden_corpus, read_corpus, read_judgments
from rankproof.data import read_jsonl

GOLDEN = REPO / "src" / "rankproof" / "golden"
CORPUS, _ = golden_corpus()
JUDGMENT_ROWS = [row for _, row in read_jsonl(GOLDEN / "judgments.jsonl")][:6]
DOC_SEEDS = [p.read_bytes()[:600] for p in sorted((GOLDEN / "docs").glob("*.md"))[:4]]


@given(content=jsonl_text(JUDGMENT_ROWS).flatmap(maybe_gzipped))
@fuzz_settings(500)
def test_read_judgments_refuses_mutated_rows_with_typed_errors(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judgments.jsonl"
        path.write_bytes(content)
        before = snapshot(Path(tmp))
        refused_or_read(read_judgments, path, CORPUS)
        assert snapshot(Path(tmp)) == before


FILE_NAMES = st.one_of(
    st.sampled_from(["a.md", "b.txt", "C.MD", ".hidden.md", "x.rst", "sub/d.md", ".git/e.md",
                     "deep/er/f.txt", "[/x].md", "\x1b[31m.md", "é.md", "e\u0301.md",
                     "tab\tname.md", "new\nline.txt", " .md", "-.md"]),
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters="/\x00"),
            min_size=1, max_size=12).map(lambda s: s + ".md"),
)


@given(files=st.lists(st.tuples(FILE_NAMES, file_bytes(DOC_SEEDS)), min_size=0, max_size=4,
                      unique_by=lambda f: f[0].casefold()))
@fuzz_settings(300)
def test_read_corpus_refuses_mutated_folders_with_typed_errors(
        files: list[tuple[str, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        root.mkdir()
        for name, content in files:
            path = root / name
            if path.name in ("", ".", ".."):
                continue
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
            except OSError:  # a name this file system cannot hold (too long, a clash)
                continue
        before = snapshot(Path(tmp))
        refused_or_read(read_corpus, root, chunk_size=200, overlap=20)
        assert snapshot(Path(tmp)) == before


BEIR_CORPUS = [{"_id": "d1", "title": "Pumps", "text": "Pumps are greased every 2000 hours."},
               {"_id": "d2", "title": "", "text": "Valves are exercised every year."},
               {"_id": "D-3", "title": "Bills", "text": "Bills are due in 21 days."}]
BEIR_QUERIES = [{"_id": "q1", "text": "How often are pumps greased?"},
                {"_id": "Q_2", "text": "When are bills due?"}]
BEIR_QRELS = b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nQ_2\tD-3\t2\nQ_2\td1\t1\n"


def _jsonl(rows: list[dict[str, str]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


@st.composite
def beir_folders(draw: st.DrawFn) -> dict[str, bytes]:
    """The three files of a small BEIR folder, one or more of them mutated."""
    files = {"corpus.jsonl": _jsonl(BEIR_CORPUS), "queries.jsonl": _jsonl(BEIR_QUERIES),
             "qrels/test.tsv": BEIR_QRELS}
    hit = draw(st.sets(st.sampled_from(sorted(files)), min_size=1))
    for name in sorted(hit):
        if name == "corpus.jsonl":
            files[name] = draw(jsonl_text(BEIR_CORPUS))
        elif name == "queries.jsonl":
            files[name] = draw(jsonl_text(BEIR_QUERIES))
        else:
            files[name] = draw(mutated(BEIR_QRELS, 4))
        files[name] = draw(maybe_gzipped(files[name]))
    if draw(st.integers(0, 9)) == 0:  # a file missing altogether
        del files[draw(st.sampled_from(sorted(files)))]
    return files


@given(files=beir_folders(), split=st.sampled_from(["test"] * 5 + ["../test", "[/x]", "t\x1b"]))
@fuzz_settings(400)
def test_adapt_beir_refuses_mutated_folders_and_writes_nothing(
        files: dict[str, bytes], split: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        for name, content in files.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes(content)
        out = Path(tmp) / "out"
        before = snapshot(src)
        outcome = refused_or_read(adapt_beir, src, out, split=split)
        assert snapshot(src) == before, "the adapter changed its input folder"
        if isinstance(outcome, RankproofError):
            assert not out.exists(), "a refused adaptation left an output folder"
            assert sorted(p.name for p in Path(tmp).iterdir()) == ["src"], \
                "a refused adaptation left a temporary folder"
        else:
            assert (out / "judgments.jsonl").is_file()


# -- through the CLI: ``rankproof eval`` over a mutated folder and judgments -----------

EVAL_DOCS = ("backflow-prevention.md", "billing-commercial.md", "treatment-overview.md")
EVAL_ROWS = [row for _, row in read_jsonl(GOLDEN / "judgments.jsonl")
             if row["gold"] and all(g["doc"] in EVAL_DOCS for g in row["gold"])][:5]


@given(judgments=jsonl_text(EVAL_ROWS), doc=st.sampled_from(EVAL_DOCS),
       text=st.none() | file_bytes(DOC_SEEDS, 3))
@fuzz_settings(60)
def test_eval_cli_on_mutated_inputs_exits_0_or_2_and_writes_all_or_nothing(
        judgments: bytes, doc: str, text: bytes | None) -> None:
    """``eval`` writes two outputs (``-o`` and ``evals/results/latest.json``): both, or
    neither when an input is refused."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        for name in EVAL_DOCS:
            (root / "docs" / name).write_bytes((GOLDEN / "docs" / name).read_bytes())
        if text is not None:
            (root / "docs" / doc).write_bytes(text)
        (root / "judgments.jsonl").write_bytes(judgments)
        (root / "out").mkdir()
        with contextlib.chdir(root):
            result = CliRunner().invoke(app, ["eval", "docs", "--judgments", "judgments.jsonl",
                                              "--stages", "bm25", "--quiet",
                                              "-o", "out/report.json"])
        event(f"exit {result.exit_code}")
        assert result.exit_code in (0, 2), (result.exit_code, result.output[-2000:])
        assert_no_controls(result.output)
        outputs = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                         if p.is_file() and p.parts[len(root.parts)] in ("out", "evals"))
        expected = ["evals/results/latest.json", "out/report.json"]
        assert outputs == (expected if result.exit_code == 0 else []), \
            (result.exit_code, outputs, result.output[-500:])
