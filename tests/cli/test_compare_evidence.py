"""``rankproof compare`` stores the evidence of the runs it compared: top ids in the
measures' order, the gold at ``-l``, the query text from ``--queries``; a sidecar when large."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rankproof.comparison
from rankproof.cli import app
from rankproof.comparison import Evidence, collect_evidence, load_evidence, read_queries
from rankproof.data import load_qrels, load_run

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
QRELS = SHARED / "trec_dl" / "qrels.dl19-passage.txt"
TOPICS = SHARED / "trec_dl" / "topics.dl19-passage.txt"
BM25 = SHARED / "rankllm_runs" / "BM25" / "trec_results_dl19.txt"
LLAMA = SHARED / "rankllm_runs" / "REP_LLAMA" / "trec_results_dl19.txt"
runner = CliRunner()


def cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _compare(*extra: str) -> tuple[int, str, str]:
    return cli("compare", str(QRELS), str(BM25), str(LLAMA), "-m", "nDCG@10", "--resamples",
               "200", *extra)


def test_the_json_holds_evidence_with_query_text(tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    code, stdout, err = _compare("--queries", str(TOPICS), "-l", "2", "-o", str(out),
                                 "--format", "json")
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert json.loads(stdout) == doc
    ev = load_evidence(doc, tmp_path)
    assert isinstance(ev, Evidence) and ev.k == 10
    row = doc["rows"][0]
    assert list(ev.top) == doc["systems"] == [row["baseline"], row["candidate"]]
    assert ev.queries == read_queries(TOPICS) and ev.queries["156493"] == "do goldfish grow"
    # The same evidence the library collects from the same runs, at the compare's -l.
    runs = {name: load_run(path) for name, path in zip(doc["systems"], (BM25, LLAMA),
                                                       strict=True)}
    assert ev == collect_evidence(load_qrels(QRELS), runs, queries=read_queries(TOPICS),
                                  rel_level=2)
    assert all(grade >= 2 for grades in ev.gold.values() for grade in grades.values())
    assert not any("no text" in c for c in doc["caveats"])


def test_depth_order_and_no_evidence(tmp_path: Path) -> None:
    code, stdout, err = _compare("--evidence-depth", "3", "--order", "rank", "--format",
                                 "json")
    assert code == 0, err
    doc = json.loads(stdout)
    ev = Evidence.from_dict(doc["evidence"])
    assert ev.k == 3 and ev.queries == {}
    llama = ev.top[doc["systems"][1]]
    assert llama["1037798"] == ["3620986", "8760866", "8760871"]  # the file's rank column
    code, stdout, err = _compare("--evidence-depth", "0", "--format", "json")
    assert code == 0 and "evidence" not in json.loads(stdout)
    code, _, err = _compare("--evidence-depth", "-1")
    assert code == 2 and "--evidence-depth" in err


def test_topics_without_text_are_said(tmp_path: Path) -> None:
    few = tmp_path / "few.tsv"
    few.write_text("156493\tdo goldfish grow\n")
    code, stdout, err = _compare("--queries", str(few), "--format", "json")
    assert code == 0, err
    doc = json.loads(stdout)
    assert doc["evidence"]["queries"] == {"156493": "do goldfish grow"}
    assert any(c.startswith("42 of 43 topic(s) have no text in ") for c in doc["caveats"])


def test_a_bad_queries_file_names_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "topics.txt"
    bad.write_text("1\tfine\n2 no tab here\n")
    code, _, err = _compare("--queries", str(bad), "-o", str(tmp_path / "cmp.json"))
    assert code == 2 and f"{bad}, line 2" in err and "no tab" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["topics.txt"]


def test_past_the_cap_a_file_gets_a_sidecar_and_standard_output_a_caveat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rankproof.comparison, "MAX_INLINE_EVIDENCE_IDS", 300)
    out = tmp_path / "cmp.json"
    code, stdout, err = _compare("--queries", str(TOPICS), "-o", str(out), "--format", "json")
    assert code == 0, err
    doc = json.loads(out.read_text())
    side = tmp_path / "cmp.evidence.json"
    assert doc["evidence"]["sidecar"] == side.name and "cmp.evidence.json" in err
    full = load_evidence(doc, tmp_path)
    assert isinstance(full, Evidence) and full.ids == doc["evidence"]["ids"] > 300
    assert len(full.queries) == 43
    sidecar = json.loads(side.read_text())
    assert (sidecar["kind"], sidecar["schema_version"]) == ("rankproof.evidence", 1)
    printed = json.loads(stdout)
    capped = Evidence.from_dict(printed["evidence"])
    assert capped.ids <= 300 and capped.topics == full.topics[: len(capped.topics)]
    assert any("queries left out of this output" in c for c in printed["caveats"])
    # A sidecar edited after the fact no longer matches the digest the report recorded.
    side.write_text(side.read_text().replace("do goldfish grow", "do goldfish shrink"))
    with pytest.raises(rankproof.InputError, match="digest"):
        load_evidence(doc, tmp_path)


def test_a_sidecar_that_would_replace_an_input_is_refused_before_anything_runs(
        tmp_path: Path) -> None:
    topics = tmp_path / "cmp.evidence.json"  # where cmp.json's sidecar would go
    topics.write_text(TOPICS.read_text())
    code, _, err = _compare("--queries", str(topics), "-o", str(tmp_path / "cmp.json"))
    assert code == 2 and "would replace the input" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cmp.evidence.json"]


def test_an_existing_file_of_another_kind_at_the_sidecar_path_is_kept(tmp_path: Path) -> None:
    (tmp_path / "cmp.evidence.json").write_text('{"kind": "rankproof.eval"}\n')
    code, _, err = _compare("-o", str(tmp_path / "cmp.json"))
    assert code == 2 and "--force" in err and not (tmp_path / "cmp.json").exists()
    code, _, err = _compare("-o", str(tmp_path / "cmp.json"), "--force")
    assert code == 0, err
