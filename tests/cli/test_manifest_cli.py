"""Every JSON output carries the provenance block; ``rankproof manifest verify`` re-hashes it."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from rankproof.cli import app
from rankproof.discovery import EXAMPLE_CASES

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
RAG = REPO / "src" / "rankproof" / "rag" / "example"
GOLDEN_DIR = REPO / "src" / "rankproof" / "golden"
runner = CliRunner()


def cli(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _entry(path: Path) -> dict[str, Any]:
    return {"sha256": "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest(),
            "bytes": path.stat().st_size}


def _has(block: dict[str, Any], role: str, path: Path) -> None:
    entry = block["inputs"][role]
    assert {k: entry[k] for k in ("sha256", "bytes")} == _entry(path), role


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """The toy qrels and runs, copied where a test may change them."""
    for name in ("qrels.txt", "bm25.run", "dense.run"):
        shutil.copy(TOY / name, tmp_path / name)
    return tmp_path


def _prov(path: Path) -> dict[str, Any]:
    block = json.loads(path.read_text())["provenance"]
    assert block["manifest_version"] == 1 and block["environment_digest"].startswith("sha256:")
    assert block["output_dir"] == str(path.parent.resolve())
    return block  # type: ignore[no-any-return]


def test_measure_json_records_qrels_runs_and_a_full_query_scope(toy: Path) -> None:
    out = toy / "out" / "m.json"
    r = cli("measure", toy / "qrels.txt", toy / "bm25.run", toy / "dense.run", "-f", "json",
            "-o", out)
    assert r.exit_code == 0, r.output
    block = _prov(out)
    _has(block, "qrels", toy / "qrels.txt")
    assert [e["sha256"] for e in block["inputs"]["runs"]] == [
        _entry(toy / "bm25.run")["sha256"], _entry(toy / "dense.run")["sha256"]]
    assert block["scope"] == {"queries": "full", "pool": "unknown"}
    # the document is still what the gate and the report renderer read
    assert cli("report", out, "--md", "-").stdout.count("scope: full query set") == 1


def test_the_command_line_is_recorded_as_typed(toy: Path) -> None:
    out = toy / "m.json"
    args = ["measure", str(toy / "qrels.txt"), str(toy / "bm25.run"), "-f", "json", "-o",
            str(out)]
    subprocess.run([sys.executable, "-m", "rankproof", *args], check=True, cwd=toy)
    assert _prov(out)["command"] == ["rankproof", *args]


def test_measure_over_the_intersection_of_a_partial_run_is_a_subset(toy: Path) -> None:
    partial = toy / "partial.run"
    lines = (toy / "bm25.run").read_text().splitlines()
    first = lines[0].split()[0]
    partial.write_text("".join(ln + "\n" for ln in lines if ln.split()[0] == first))
    out = toy / "m.json"
    r = cli("measure", toy / "qrels.txt", partial, "-f", "json", "-o", out, "--topics",
            "intersection")
    assert r.exit_code == 0, r.output
    assert _prov(out)["scope"]["queries"] == "subset"


def test_compare_records_its_inputs_and_seed(toy: Path) -> None:
    out = toy / "cmp.json"
    r = cli("compare", toy / "qrels.txt", toy / "bm25.run", toy / "dense.run", "--resamples",
            "200", "--seed", "3", "-o", out)
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["kind"] == "rankproof.comparison" and list(doc)[-1] == "evidence"
    block = _prov(out)
    _has(block, "qrels", toy / "qrels.txt")
    assert len(block["inputs"]["runs"]) == 2 and block["seed"] == 3
    assert block["scope"]["queries"] == "full"
    assert "scope: full query set" in cli("report", out, "--md", "-").stdout


def test_fuse_writes_a_provenance_sidecar_beside_the_run(toy: Path) -> None:
    out = toy / "fused.run"
    r = cli("fuse", toy / "bm25.run", toy / "dense.run", "-o", out)
    assert r.exit_code == 0, r.output
    side = toy / "fused.run.provenance.json"
    doc = json.loads(side.read_text())
    assert doc["kind"] == "rankproof.provenance" and doc["parameters"]["method"] == "rrf"
    assert {k: doc["output"][k] for k in ("sha256", "bytes")} == _entry(out)
    assert len(_prov(side)["inputs"]["runs"]) == 2
    assert cli("manifest", "verify", side).exit_code == 0
    out.write_text(out.read_text().replace("rankproof-fusion", "edited"))
    r = cli("manifest", "verify", side)
    assert r.exit_code == 1 and "output" in r.stdout


def test_gate_verdict_records_checks_and_report(toy: Path) -> None:
    measured = toy / "m.json"
    assert cli("measure", toy / "qrels.txt", toy / "bm25.run", "-f", "json", "-o",
               measured).exit_code == 0
    checks = toy / "checks.yaml"
    checks.write_text("checks:\n  - {id: floor, metric: nDCG@10, op: '>=', threshold: 0.1}\n")
    out = toy / "verdict.json"
    r = cli("gate", checks, "--report", measured, "--json", out)
    assert r.exit_code == 0, r.output
    block = _prov(out)
    _has(block, "checks", checks)
    _has(block, "report", measured)
    assert block["scope"]["queries"] == "full"  # the checked report's


def test_eval_report_records_judgments_and_corpus(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # eval also writes evals/results/latest.json here
    judgments = GOLDEN_DIR / "judgments.jsonl"
    out = tmp_path / "report.json"
    r = cli("eval", GOLDEN_DIR / "docs", "--judgments", judgments, "--embedder", "hashing",
            "--stages", "bm25,dense", "--resamples", "200", "-o", out, "--quiet")
    assert r.exit_code == 0, r.output
    block = _prov(out)
    _has(block, "judgments", judgments)
    assert block["inputs"]["corpus"]["files"] >= 1
    assert block["corpus_digest"].startswith("sha256:") and block["seed"] == 0
    assert block["scope"] == {"queries": "full", "pool": "unknown"}
    assert cli("manifest", "verify", out).exit_code == 0


def test_discover_records_cases(tmp_path: Path) -> None:
    out = tmp_path / "d.json"
    r = cli("discover", "--mode", "bm25", "--embedder", "hashing", "-o", out)
    assert r.exit_code == 0, r.output
    block = _prov(out)
    _has(block, "cases", EXAMPLE_CASES)
    assert block["scope"]["queries"] == "full"


def test_rag_score_records_answers_and_references(tmp_path: Path) -> None:
    out = tmp_path / "rag.json"
    answers, refs = RAG / "answers_faithful.jsonl", RAG / "references.jsonl"
    r = cli("rag", "score", answers, "--references", refs, "-o", out)
    assert r.exit_code == 0, r.output
    block = _prov(out)
    _has(block, "answers", answers)
    _has(block, "references", refs)


def test_verify_unchanged_changed_and_missing(toy: Path) -> None:
    out = toy / "cmp.json"
    assert cli("compare", toy / "qrels.txt", toy / "bm25.run", toy / "dense.run",
               "--resamples", "200", "-o", out).exit_code == 0
    r = cli("manifest", "verify", out)
    assert r.exit_code == 0, r.output
    assert "3 recorded, 0 changed, 0 missing" in r.stdout
    statuses = [e["status"] for e in json.loads(cli("manifest", "verify", out, "-f",
                                                    "json").stdout)["entries"]]
    assert statuses == ["unchanged"] * 3

    with (toy / "dense.run").open("a") as fh:
        fh.write("q9 Q0 extra 1 0.5 dense\n")
    r = cli("manifest", "verify", out, "-f", "json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    changed = [e for e in doc["entries"] if e["status"] == "CHANGED"]
    assert [e["path"] for e in changed] == [str(toy / "dense.run")] and doc["changed"] == 1

    (toy / "dense.run").unlink()
    (toy / "bm25.run").write_text((TOY / "bm25.run").read_text())  # unchanged content
    r = cli("manifest", "verify", out)
    assert r.exit_code == 0, r.output  # missing is reported, not a failure
    assert "missing" in r.stdout and "1 missing" in r.stdout


def test_verify_checks_an_evidence_sidecar(toy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rankproof.comparison as comparison

    monkeypatch.setattr(comparison, "MAX_INLINE_EVIDENCE_IDS", 10)
    out = toy / "cmp.json"
    assert cli("compare", toy / "qrels.txt", toy / "bm25.run", toy / "dense.run",
               "--resamples", "200", "-o", out).exit_code == 0
    side = toy / "cmp.evidence.json"
    assert side.is_file()
    assert cli("manifest", "verify", out).exit_code == 0
    side.write_bytes(side.read_bytes() + b" ")
    r = cli("manifest", "verify", out)
    assert r.exit_code == 1 and "evidence sidecar" in r.stdout


@pytest.mark.parametrize("content, fragment", [
    ('{"a": 1}', "not a rankproof JSON document"),
    ('{"kind": "rankproof.comparison"}', "no provenance block"),
    ('{"kind": "rankproof.eval", "provenance": {"seed": 0}}', "before the manifest"),
    ("not json", "invalid JSON"),
])
def test_verify_refuses_what_it_cannot_check(tmp_path: Path, content: str,
                                             fragment: str) -> None:
    doc = tmp_path / "x.json"
    doc.write_text(content)
    r = cli("manifest", "verify", doc)
    assert r.exit_code == 2 and fragment in r.output, r.output
