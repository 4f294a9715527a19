"""The BEIR adapter's seed rules (groundkit, seed 000) and the parameters a compat layer uses.

* Empty documents and queries are refused, judged or not, with file, line and field.
* ``query_ids="refuse"`` refuses judged query ids that are not kebab-case (seed 000).
* ``layout="groundkit"`` writes ``OUT/corpus/`` + ``OUT/judgments.jsonl`` (seed 000's layout).
* `BeirAdaptation` carries what seed 000's ``BeirAdaptationReport`` reports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.corpus.test_beir_adapt import CORPUS, QRELS, QUERIES, make_beir, snapshot
from typer.testing import CliRunner

from rankproof import InputError
from rankproof.cli import app
from rankproof.corpus import adapt_beir, find_adaptation, read_corpus, read_judgments
from rankproof.corpus._beir_adapt import kebab_query_id


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    d = tmp_path / "dest"
    d.mkdir()
    return d


# -- empty documents and queries ---------------------------------------------------------


@pytest.mark.parametrize(("row", "line"), [
    ({"_id": "blank", "title": "", "text": ""}, 5),
    ({"_id": "blank", "title": "  ", "text": "\n\t "}, 5),
    ({"_id": "blank", "title": None, "text": " "}, 5),
    ({"_id": "blank", "text": "\ufeff"}, 5),  # a BOM alone is no text once normalised
])
def test_an_unjudged_empty_document_is_refused(tmp_path: Path, dest: Path, row: dict[str, Any],
                                              line: int) -> None:
    src = make_beir(tmp_path / "beir", corpus=[*CORPUS, row])
    before = snapshot(dest)
    with pytest.raises(InputError) as info:
        adapt_beir(src, dest / "out")
    err = info.value
    assert (err.path, err.line, err.field) == (str(src / "corpus.jsonl"), line, "text")
    assert "document 'blank' has no text (title and text are both empty or blank)" in str(err)
    assert snapshot(dest) == before


def test_a_document_with_a_title_only_is_kept(tmp_path: Path, dest: Path) -> None:
    src = make_beir(tmp_path / "beir", corpus=[*CORPUS, {"_id": "t", "title": "Only a title",
                                                         "text": ""}])
    adapt_beir(src, dest / "out")
    assert (dest / "out" / "docs" / "t.txt").read_text(encoding="utf-8") == "Only a title\n\n"


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_an_unjudged_empty_query_is_refused(tmp_path: Path, dest: Path, text: str) -> None:
    src = make_beir(tmp_path / "beir", queries=[*QUERIES, {"_id": "q9", "text": text}])
    with pytest.raises(InputError) as info:
        adapt_beir(src, dest / "out")
    err = info.value
    assert (err.path, err.line, err.field) == (str(src / "queries.jsonl"), 5, "text")
    assert "query 'q9' has no text (empty or blank)" in str(err)
    assert list(dest.iterdir()) == []


def test_the_cli_refuses_an_empty_document_with_file_and_line(tmp_path: Path) -> None:
    src = make_beir(tmp_path / "beir", corpus=[{"_id": "e", "title": "", "text": ""}, *CORPUS])
    result = CliRunner().invoke(app, ["adapt", "beir", str(src), str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "corpus.jsonl, line 1, field 'text': document 'e' has no text" in " ".join(
        result.output.split())
    assert not (tmp_path / "out").exists()


# -- query ids ---------------------------------------------------------------------------


def test_refuse_policy_lists_the_judged_ids_that_are_not_kebab_case(tmp_path: Path,
                                                                      dest: Path) -> None:
    queries = [*QUERIES, {"_id": "MED-10", "text": "Judged."}, {"_id": "UNJUDGED_1",
                                                                "text": "Never judged."}]
    src = make_beir(tmp_path / "beir", queries=queries, qrels=[*QRELS, ("MED-10", "d4", 1)])
    before = snapshot(dest)
    with pytest.raises(InputError) as info:
        adapt_beir(src, dest / "out", query_ids="refuse")
    err = info.value
    # Q_2 (line 2) and MED-10 (line 5) are judged; UNJUDGED_1 is not written, so not listed.
    assert (err.path, err.line, err.field) == (str(src / "queries.jsonl"), 2, "_id")
    assert "2 judged query id(s) are not kebab-case lowercase" in str(err)
    assert "'Q_2', 'MED-10'" in str(err) and "UNJUDGED_1" not in str(err)
    assert snapshot(dest) == before


def test_refuse_policy_accepts_kebab_ids_and_writes_them_unchanged(tmp_path: Path,
                                                                    dest: Path) -> None:
    src = make_beir(tmp_path / "beir", queries=[*QUERIES, {"_id": "Not_Judged", "text": "x"}],
                    qrels=[("q1", "d1", 1), ("q3", "d2", 2)])
    result = adapt_beir(src, dest / "out", query_ids="refuse")
    assert result.renamed_queries == 0 and result.queries == 2
    rows = [json.loads(line) for line in
            (dest / "out" / "judgments.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["query_id"], r["source_id"]) for r in rows] == [("q1", "q1"), ("q3", "q3")]


def test_rename_policy_stays_the_default(tmp_path: Path, dest: Path) -> None:
    result = adapt_beir(make_beir(tmp_path / "beir"), dest / "out")
    assert result.renamed_queries == 1
    corpus = read_corpus(result.docs_dir)
    assert kebab_query_id("Q_2") in read_judgments(result.judgments_path, corpus)


def test_the_cli_query_id_policy(tmp_path: Path) -> None:
    src = make_beir(tmp_path / "beir")
    result = CliRunner().invoke(app, ["adapt", "beir", str(src), str(tmp_path / "out"),
                                      "--query-ids", "refuse"])
    assert result.exit_code == 2 and "'Q_2'" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"layout": "flat"}, "layout must be one of rankproof, groundkit, got 'flat'"),
    ({"query_ids": "drop"}, "query_ids must be 'rename' or 'refuse', got 'drop'"),
])
def test_bad_policies_are_refused(tmp_path: Path, dest: Path, kwargs: dict[str, Any],
                                  message: str) -> None:
    with pytest.raises(InputError, match=message):
        adapt_beir(make_beir(tmp_path / "beir"), dest / "out", **kwargs)
    assert list(dest.iterdir()) == []


# -- groundkit's layout and report -----------------------------------------------------


def test_groundkit_layout_and_the_fields_its_report_needs(tmp_path: Path, dest: Path) -> None:
    src = make_beir(tmp_path / "beir", qrels=[("q1", "d1", 1), ("q1", "d2", 0),
                                              ("q3", "d2", 1), ("q3", "D-3", 2)])
    out = dest / "gk"
    result = adapt_beir(src, out, layout="groundkit", query_ids="refuse")
    assert sorted(p.name for p in out.iterdir()) == ["corpus", "judgments.jsonl"]
    assert sorted(p.name for p in (out / "corpus").iterdir()) == [
        "D-3.txt", "d1.txt", "d2.txt", "d4.txt"]
    texts = [p.read_text(encoding="utf-8") for p in (out / "corpus").iterdir()]
    # seed 000's BeirAdaptationReport: source_dir, output_dir, split, document_count,
    # query_count, relevance_pair_count, total_characters, corpus_dir, judgments_path
    assert result.source == src and result.out == out and result.split == "test"
    assert (result.documents, result.queries, result.positives) == (4, 2, 3)
    assert result.characters == sum(len(t) for t in texts)
    assert result.docs_dir == out / "corpus" and result.judgments_path == out / "judgments.jsonl"
    assert result.layout == "groundkit"
    assert find_adaptation(out) == (out / "corpus", out / "judgments.jsonl")
    corpus = read_corpus(result.docs_dir)
    judgments = read_judgments(result.judgments_path, corpus)
    assert judgments.to_qrels(corpus, "document").to_dict() == {
        "q1": {"d1.txt": 1}, "q3": {"D-3.txt": 1, "d2.txt": 1}}


def test_force_replaces_an_adaptation_in_either_layout(tmp_path: Path, dest: Path) -> None:
    src = make_beir(tmp_path / "beir")
    out = dest / "out"
    adapt_beir(src, out, layout="groundkit")
    adapt_beir(src, out, overwrite=True)  # a groundkit adaptation is a previous adaptation
    assert sorted(p.name for p in out.iterdir()) == ["docs", "judgments.jsonl"]
    adapt_beir(src, out, overwrite=True, layout="groundkit")
    assert sorted(p.name for p in out.iterdir()) == ["corpus", "judgments.jsonl"]


def test_find_adaptation_needs_exactly_an_adaptation(tmp_path: Path, dest: Path) -> None:
    out = dest / "out"
    adapt_beir(make_beir(tmp_path / "beir"), out)
    assert find_adaptation(out) == (out / "docs", out / "judgments.jsonl")
    assert find_adaptation(out / "docs") is None
    assert find_adaptation(tmp_path / "missing") is None
    (out / "notes.md").write_text("mine", encoding="utf-8")
    assert find_adaptation(out) is None  # something else lives here: not ours to read as one


def test_eval_without_judgments_on_a_plain_folder_says_what_it_needs(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("alpha", encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", str(tmp_path / "docs"), "--dry-run"])
    assert result.exit_code == 2
    assert "needs --judgments" in result.output and "adapt beir" in result.output


def test_eval_finds_the_judgments_of_a_groundkit_layout(tmp_path: Path, dest: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    adapt_beir(make_beir(tmp_path / "beir"), dest / "gk", layout="groundkit")
    result = CliRunner().invoke(app, ["eval", str(dest / "gk"), "--dry-run"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "gk (" in flat and "at document granularity" in flat
