"""``rankproof discover`` and ``discover compare`` end to end: outputs, exit codes, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.discovery import EXAMPLE_CASES, EXAMPLE_CATALOG, EXAMPLE_THEMES, load_catalog

runner = CliRunner()


def _run(*args: str) -> object:
    return runner.invoke(app, list(args))


def test_the_bundled_example_with_calibration_and_sweep(tmp_path: Path) -> None:
    out = tmp_path / "discovery.json"
    r = _run("discover", "--mode", "bm25", "--calibrate", "--sweep", "-o", str(out))
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    text = r.stdout  # type: ignore[attr-defined]
    for needle in ("failure taxonomy at k = 10", "hit_rank_1", "calibrated abstention floor",
                   "selector sweep (conservative, bm25)", "one retrieval pass"):
        assert needle in text, needle
    doc = json.loads(out.read_text())
    assert doc["kind"] == "rankproof.discovery" and doc["schema_version"] == 1
    assert set(doc) >= {"provenance", "identity", "discovery", "calibration", "sweep"}
    assert doc["identity"]["mode"] == "bm25" and doc["identity"]["size"] == 153
    assert doc["provenance"]["inputs"]["cases"]["sha256"].startswith("sha256:")
    assert doc["discovery"]["n_abstention"] == 20
    # The abstention threshold is the calibrated floor, and it is recorded.
    assert doc["discovery"]["abstain_threshold"] == doc["calibration"]["min_score"]


def test_json_format_and_markdown(tmp_path: Path) -> None:
    r = _run("discover", "--mode", "bm25", "-f", "json")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    doc = json.loads(r.stdout)  # type: ignore[attr-defined]
    assert doc["discovery"]["failure_classes"]["abstention_unscored"] == 20
    md = _run("discover", "--mode", "bm25", "-f", "md")
    assert md.stdout.startswith("### discovery (bm25)")  # type: ignore[attr-defined]


def test_your_own_retriever(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "svc.py").write_text(
        "def search(query, k):\n"
        "    return [('data-quality-rules', 2.0), ('pipeline-scheduler', 1.0)][:k]\n")
    monkeypatch.chdir(tmp_path)
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"query": "check my tables for broken rows", "gold": ["pipeline-scheduler"]}'
                     '\n{"query": "order lunch", "gold": []}\n')
    r = _run("discover", str(cases), "--retriever", "svc:search", "--retriever-version", "2",
             "-f", "json")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    doc = json.loads(r.stdout)  # type: ignore[attr-defined]
    assert doc["identity"] == {"kind": "callable", "callable": "svc:search", "version": "2",
                               "mode": "callable"}
    assert doc["discovery"]["failure_classes"]["surfaced_low_rank"] == 1
    refused = _run("discover", str(cases), "--retriever", "svc:search", "--curve")
    assert refused.exit_code == 2 and "needs --catalog" in refused.output  # type: ignore[attr-defined]


def test_an_unknown_gold_id_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"query": "load files", "gold": ["no-such-tool"]}\n')
    out = tmp_path / "out.json"
    r = _run("discover", str(cases), "--catalog", str(EXAMPLE_CATALOG), "--mode", "bm25",
             "-o", str(out))
    assert r.exit_code == 2 and "no-such-tool" in r.output  # type: ignore[attr-defined]
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["cases.jsonl"]


def test_a_malformed_meta_line_is_refused(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"__meta__": "v1"}\n{"query": "x", "gold": []}\n')
    r = _run("discover", str(cases), "--catalog", str(EXAMPLE_CATALOG), "--mode", "bm25")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "line 1, field '__meta__'" in r.output  # type: ignore[attr-defined]


def test_a_stale_calibration_is_refused(tmp_path: Path) -> None:
    floor = tmp_path / "floor.json"
    saved = _run("discover", "--mode", "bm25", "--calibrate", "--save-calibration", str(floor))
    assert saved.exit_code == 0 and floor.exists()  # type: ignore[attr-defined]
    used = _run("discover", "--mode", "bm25", "--calibration", str(floor), "-f", "json")
    assert used.exit_code == 0, used.output  # type: ignore[attr-defined]
    threshold = json.loads(used.stdout)["discovery"]["abstain_threshold"]  # type: ignore[attr-defined]
    assert threshold == json.loads(floor.read_text())["min_score"]
    # The catalogue changed since the floor was calibrated: refused, nothing written.
    changed = tmp_path / "catalog.jsonl"
    lines = EXAMPLE_CATALOG.read_text().splitlines()
    changed.write_text("\n".join(lines[:-1]) + "\n")
    assert len(load_catalog(changed)) == 152
    out = tmp_path / "out.json"
    stale = _run("discover", str(EXAMPLE_CASES), "--catalog", str(changed), "--mode", "bm25",
                 "--calibration", str(floor), "-o", str(out))
    assert stale.exit_code == 2 and "digest" in stale.output  # type: ignore[attr-defined]
    assert not out.exists()
    other_mode = _run("discover", "--mode", "hybrid", "--embedder", "hashing", "--calibration",
                      str(floor))
    assert other_mode.exit_code == 2 and "mode" in other_mode.output  # type: ignore[attr-defined]


def test_discover_compare_two_indexings(tmp_path: Path) -> None:
    titles = tmp_path / "titles-only.jsonl"
    rows = [json.loads(line) for line in EXAMPLE_CATALOG.read_text().splitlines()]
    titles.write_text("".join(json.dumps({"id": r["id"], "title": r["title"]}) + "\n"
                              for r in rows))
    out = tmp_path / "cmp.json"
    r = _run("discover", "compare", str(EXAMPLE_THEMES), "--catalog", str(EXAMPLE_CATALOG),
             "--catalog", str(titles), "--mode", "bm25", "--cases", str(EXAMPLE_CASES),
             "--seed", "0", "-o", str(out))
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    doc = json.loads(out.read_text())
    report = doc["comparison"]
    assert report["labels"] == ["catalog", "titles-only"] and report["baseline"] == "catalog"
    assert "regressions against catalog" in r.stdout  # type: ignore[attr-defined]
    failing = _run("discover", "compare", str(EXAMPLE_THEMES), "--catalog",
                   str(EXAMPLE_CATALOG), "--catalog", str(titles), "--mode", "bm25",
                   "--fail-on-regression")
    assert failing.exit_code == 1, failing.output  # type: ignore[attr-defined]


def test_compare_of_modes_of_one_catalogue() -> None:
    r = _run("discover", "compare", str(EXAMPLE_THEMES), "--catalog", str(EXAMPLE_CATALOG),
             "--modes", "bm25", "--modes", "hybrid", "--embedder", "hashing", "-f", "json")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    doc = json.loads(r.stdout)  # type: ignore[attr-defined]
    assert doc["comparison"]["labels"] == ["bm25", "hybrid"] and doc["comparison"]["degraded"]
