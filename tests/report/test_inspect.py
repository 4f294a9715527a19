"""``rankproof inspect``: review records of sampled regressions on real comparisons and eval
reports, the tally of labelled sides, and bad input that leaves nothing behind."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.comparison import sample_regressions

runner = CliRunner()
SIDES = ("retrieval", "generation", "metric", "annotation")


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _lines(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows = [json.loads(line) for line in text.splitlines()]
    assert set(rows[0]) == {"__meta__"}
    return rows[0]["__meta__"], rows[1:]


@pytest.fixture(scope="module")
def comparison(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("inspect") / "cmp.json"
    qrels = shared_data / "trec_dl" / "qrels.dl19-passage.txt"
    topics = shared_data / "trec_dl" / "topics.dl19-passage.txt"
    runs = [shared_data / "rankllm_runs" / s / "trec_results_dl19.txt"
            for s in ("BM25", "D_BERT_KD_TASB")]
    code, _, err = invoke("compare", str(qrels), *map(str, runs), "--queries", str(topics),
                          "-o", str(out))
    assert code == 0, err
    assert "evidence" in json.loads(out.read_text(encoding="utf-8"))
    return out


@pytest.fixture(scope="module")
def eval_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("inspect") / "eval.json"
    code, _, err = invoke("eval", "--embedder", "hashing", "-o", str(out), "--quiet")
    assert code == 0, err
    return out


def _row(doc: dict[str, Any], measure: str, candidate: str) -> dict[str, Any]:
    rows = doc.get("rows") or doc.get("comparisons")
    return next(r for r in rows if r["measure"] == measure and r["candidate"] == candidate)


def _per_query(doc: dict[str, Any], candidate: str) -> dict[str, dict[str, tuple[float, float]]]:
    """qid -> measure -> (baseline, candidate) from the document's own rows."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for r in doc.get("rows") or doc.get("comparisons"):
        if r["candidate"] == candidate:
            for q, b, c in zip(r["qids"], r["baseline_values"], r["candidate_values"],
                               strict=True):
                out.setdefault(q, {})[r["measure"]] = (b, c)
    return out


def test_comparison_records_carry_values_gold_and_top_results(comparison: Path,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "review.jsonl"
    code, _, err = invoke("inspect", str(comparison), "--regressions", "5", "--seed", "0",
                          "-o", str(out))
    assert code == 0, err
    assert "5 of" in err and "regressed" in err
    doc = json.loads(comparison.read_text(encoding="utf-8"))
    meta, records = _lines(out.read_text(encoding="utf-8"))
    base, cand = doc["systems"][:2]
    row = _row(doc, "nDCG@10", cand)
    fell = [q for q, b, c in zip(row["qids"], row["baseline_values"], row["candidate_values"],
                                 strict=True) if c < b]
    digest = "sha256:" + hashlib.sha256(comparison.read_bytes()).hexdigest()
    assert meta["source"] == str(comparison) and meta["digest"] == digest
    assert (meta["kind"], meta["measure"], meta["baseline"], meta["candidate"]) == (
        "rankproof.comparison", "nDCG@10", base, cand)
    assert (meta["seed"], meta["n"], meta["regressed"], meta["sampled"]) == (0, 5, len(fell), 5)
    assert meta["sides"] == list(SIDES) and meta["rankproof_version"]
    expected = sample_regressions(row["qids"], row["baseline_values"], row["candidate_values"],
                                  higher_is_better=True, n=5, seed=0)
    assert [r["qid"] for r in records] == list(expected.qids)
    values = _per_query(doc, cand)
    evidence = doc["evidence"]
    for r in records:
        b, c = values[r["qid"]]["nDCG@10"]
        assert (r["baseline"]["value"], r["candidate"]["value"]) == (b, c)
        assert r["delta"] == pytest.approx(c - b) and r["delta"] < 0
        assert r["deltas"] == pytest.approx({m: vc - vb for m, (vb, vc)
                                             in values[r["qid"]].items()})
        assert r["query"] == evidence["queries"].get(r["qid"]) and r["query"]
        assert r["gold"] == evidence["gold"][r["qid"]] and r["gold"]
        for side in ("baseline", "candidate"):
            top = r[side]["top"]
            assert [t["id"] for t in top] == evidence["top"][r[side]["name"]][r["qid"]]
            assert [t["rank"] for t in top] == list(range(1, len(top) + 1))
            assert all(t["grade"] == r["gold"].get(t["id"]) for t in top)
        assert (r["side"], r["note"], r["measure"]) == ("", "", "nDCG@10")
    assert any(t["grade"] for r in records for s in ("baseline", "candidate")
               for t in r[s]["top"])
    assert [r["delta"] for r in records] == sorted(r["delta"] for r in records)


def test_same_seed_same_file_and_another_seed_another_sample(comparison: Path) -> None:
    runs = [invoke("inspect", str(comparison), "-n", "3", "--seed", s)[1]
            for s in ("4", "4", "5")]
    assert runs[0] == runs[1]
    assert [r["qid"] for r in _lines(runs[0])[1]] != [r["qid"] for r in _lines(runs[2])[1]]


def test_measure_baseline_and_candidate_are_chosen_and_validated(comparison: Path) -> None:
    doc = json.loads(comparison.read_text(encoding="utf-8"))
    base, cand = doc["systems"][:2]
    code, out, err = invoke("inspect", str(comparison), "--measure", "map",
                            "--baseline", cand, "--candidate", base)
    assert code == 0, err
    meta, records = _lines(out)
    assert (meta["measure"], meta["baseline"], meta["candidate"]) == ("AP", cand, base)
    assert all(r["delta"] < 0 and r["baseline"]["name"] == cand for r in records)
    code, _, err = invoke("inspect", str(comparison), "--measure", "P@7")
    assert code == 2 and "'P@7'" in err and "nDCG@10, RR@10" in err
    code, _, err = invoke("inspect", str(comparison), "--candidate", "nope")
    assert code == 2 and "no system 'nope'" in err and base in err
    code, _, err = invoke("inspect", str(comparison), "--candidate", base)
    assert code == 2 and "both" in err


def test_eval_report_records_follow_the_stage_values(eval_report: Path) -> None:
    code, out, err = invoke("inspect", str(eval_report))
    assert code == 0, err
    doc = json.loads(eval_report.read_text(encoding="utf-8"))
    meta, records = _lines(out)
    first = doc["comparisons"][0]["measure"]
    assert (meta["kind"], meta["measure"], meta["baseline"], meta["candidate"]) == (
        "rankproof.eval", first, "bm25", "dense")
    assert meta["sampled"] == len(records) == min(30, meta["regressed"]) > 0
    assert meta["evidence"] and meta["k"] == doc["evidence"]["k"]
    stages = {s["name"]: s["per_query"] for s in doc["stages"]}
    categories = doc["inputs"].get("query_categories") or {}
    for r in records:
        b, c = stages["bm25"][r["qid"]], stages["dense"][r["qid"]]
        assert r["delta"] == pytest.approx(c[first] - b[first]) and r["delta"] < 0
        assert r["deltas"] == pytest.approx({m: c[m] - b[m] for m in b})
        assert r["category"] == categories.get(r["qid"])
        assert r["side"] == ""
        assert r["query"] == doc["evidence"]["queries"][r["qid"]]
        assert r["gold"] == doc["evidence"]["gold"][r["qid"]] and r["gold"]
        for side, stage in (("baseline", "bm25"), ("candidate", "dense")):
            top = r[side]["top"]
            assert [t["id"] for t in top] == doc["evidence"]["top"][stage][r["qid"]]
            assert all(t["grade"] == r["gold"].get(t["id"]) for t in top)


def _labelled(comparison: Path, tmp_path: Path, sides: list[str]) -> Path:
    _, out, _ = invoke("inspect", str(comparison), "-n", str(len(sides)))
    meta, records = _lines(out)
    assert len(records) == len(sides)
    for r, side in zip(records, sides, strict=True):
        r["side"] = side
    path = tmp_path / "labelled.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [{"__meta__": meta}, *records]) + "\n",
                    encoding="utf-8")
    return path


def test_summarize_counts_the_labelled_sides(comparison: Path, tmp_path: Path) -> None:
    path = _labelled(comparison, tmp_path, ["retrieval", "retrieval", "metric", "",
                                            "Annotation"])
    code, out, err = invoke("inspect", "--summarize", str(path), "-f", "json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["counts"] == {"retrieval": 2, "generation": 0, "metric": 1,
                                 "annotation": 1, "unlabelled": 1}
    assert (summary["total"], summary["labelled"]) == (5, 4)
    assert summary["shares"]["retrieval"] == pytest.approx(0.4)
    assert summary["source"] == str(comparison)
    code, out, err = invoke("inspect", "--summarize", str(path))
    assert code == 0, err
    assert "retrieval" in out and "40%" in out and "unlabelled" in out


def test_summarize_refuses_an_unknown_side_with_its_line(comparison: Path,
                                                         tmp_path: Path) -> None:
    path = _labelled(comparison, tmp_path, ["retrieval", "ranking", ""])
    code, _, err = invoke("inspect", "--summarize", str(path))
    assert code == 2
    assert "line 3" in err and "unknown side 'ranking'" in err and str(path) in err


def test_summarize_refuses_a_file_without_its_meta_line(tmp_path: Path) -> None:
    path = tmp_path / "bare.jsonl"
    path.write_text('{"qid": "1", "side": "metric"}\n', encoding="utf-8")
    code, _, err = invoke("inspect", "--summarize", str(path))
    assert code == 2 and "line 1" in err and "__meta__" in err
    path.write_text('{"__meta__": {"source": "x.json"}}\n{"qid": "1", "side": \n',
                    encoding="utf-8")
    code, _, err = invoke("inspect", "--summarize", str(path))
    assert code == 2 and "line 2" in err and "invalid JSON" in err


def test_summarize_takes_no_sampling_options(comparison: Path, tmp_path: Path) -> None:
    path = _labelled(comparison, tmp_path, ["metric"])
    code, _, err = invoke("inspect", str(comparison), "--summarize", str(path))
    assert code == 2 and "REPORT" in err
    code, _, err = invoke("inspect")
    assert code == 2 and "give a REPORT" in err and "--summarize" in err
    code, _, err = invoke("inspect", str(comparison), "--regressions", "0")
    assert code == 2 and "sample size must be a positive integer" in err


def test_a_file_of_unknown_kind_is_refused_and_nothing_written(tmp_path: Path) -> None:
    src = tmp_path / "odd.json"
    src.write_text('{"kind": "something.else", "schema_version": 1}', encoding="utf-8")
    out = tmp_path / "review.jsonl"
    code, _, err = invoke("inspect", str(src), "-o", str(out))
    assert code == 2 and "unknown kind 'something.else'" in err
    assert not out.exists()


def test_a_kind_without_per_query_values_is_refused_naming_what_inspect_reads(
        tmp_path: Path) -> None:
    src = tmp_path / "gate.json"
    src.write_text(json.dumps({"kind": "rankproof.gate", "schema_version": 2, "checks": [],
                               "passed": True}), encoding="utf-8")
    out = tmp_path / "review.jsonl"
    code, _, err = invoke("inspect", str(src), "-o", str(out))
    assert code == 2 and "inspect reads eval reports, comparisons" in err
    assert not out.exists()


def test_output_onto_the_input_is_refused_and_the_input_kept(comparison: Path,
                                                             tmp_path: Path) -> None:
    copy = tmp_path / "cmp.json"
    copy.write_bytes(comparison.read_bytes())
    code, _, err = invoke("inspect", str(copy), "-o", str(copy))
    assert code == 2 and "would replace the input" in err
    assert copy.read_bytes() == comparison.read_bytes()


def test_a_document_without_evidence_still_gives_values_and_says_so(comparison: Path,
                                                                     tmp_path: Path) -> None:
    doc = json.loads(comparison.read_text(encoding="utf-8"))
    del doc["evidence"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = invoke("inspect", str(bare), "-n", "4")
    assert code == 0, err
    assert "keeps no top results" in err
    meta, records = _lines(out)
    assert (meta["evidence"], meta["k"], len(records)) == (False, 0, 4)
    assert all(r["gold"] is None and r["query"] is None and r["candidate"]["top"] is None
               and r["delta"] < 0 for r in records)


def test_text_from_files_cannot_steer_a_terminal() -> None:
    from rankproof.report.inspect import _safe_json

    text = "caf\u00e9 \x1b[2J \x9b31m \u202egnp.exe \u2028 end"
    line = _safe_json({"query": text})
    assert not any(c in line for c in "\x1b\x9b\u202e\u2028")
    assert "caf\u00e9" in line and json.loads(line) == {"query": text}
