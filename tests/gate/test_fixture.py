"""The fixture headline gate: ``rankproof fixture check`` and `rankproof.gate.check_fixture`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof import InputError
from rankproof.cli import app
from rankproof.data import load_qrels, load_run
from rankproof.gate import (
    HEADLINE_METRICS,
    check_fixture,
    fixture_dir,
    load_expected,
    observe_fixture,
    proposed_expected,
)
from rankproof.measures import evaluate
from rankproof.rag import load_answers, load_references, score_answers

runner = CliRunner()
COMMITTED = fixture_dir() / "expected.json"


@pytest.fixture(scope="module")
def observed() -> dict[str, float]:
    return observe_fixture()


def _expected(tmp_path: Path, **changes: dict[str, float]) -> Path:
    doc = json.loads(COMMITTED.read_text(encoding="utf-8"))
    for name, spec in changes.items():
        doc["metrics"][name.replace("__", ".")].update(spec)
    path = tmp_path / "expected.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def test_fixture_is_committed_and_complete() -> None:
    root = fixture_dir()
    for name in ("qrels.txt", "run.txt", "answers.jsonl", "references.jsonl", "expected.json",
                 "README.md"):
        assert (root / name).is_file(), name
    assert set(load_expected(COMMITTED)) == set(HEADLINE_METRICS)


def test_observed_values_are_the_library_s_own(observed: dict[str, float]) -> None:
    root = fixture_dir()
    per_query = evaluate(load_qrels(root / "qrels.txt"), load_run(root / "run.txt"), ["RR@10"])
    report = score_answers(load_answers(root / "answers.jsonl"),
                           load_references(root / "references.jsonl"))
    assert observed == {
        "retrieval.mrr@10": per_query.mean("RR@10"),
        "generation.mean_token_f1": report.means["token_f1"],
        "grounding.mean_lexical_content_token_grounding": report.means["grounding"],
    }
    # Not a degenerate fixture: none of the three is at its bound.
    assert all(0.0 < v < 1.0 for v in observed.values())


def test_committed_expected_file_passes() -> None:
    result = runner.invoke(app, ["fixture", "check", str(COMMITTED)])
    assert result.exit_code == 0, result.output
    assert "fixture headline gate passed: 3 values within tolerance" in result.stdout
    for name in HEADLINE_METRICS:
        assert f"ok    {name}: expected" in result.stdout


def test_value_beyond_its_tolerance_fails_naming_it(tmp_path: Path,
                                                    observed: dict[str, float]) -> None:
    shifted = observed["generation.mean_token_f1"] + 0.01
    path = _expected(tmp_path, generation__mean_token_f1={"expected": shifted,
                                                          "tolerance": 0.005})
    result = runner.invoke(app, ["fixture", "check", str(path)])
    assert result.exit_code == 1, result.output
    assert ("FAIL  generation.mean_token_f1: expected "
            f"{shifted:.12g}, observed {observed['generation.mean_token_f1']:.12g}, |Δ| 0.01 "
            "OUTSIDE tolerance 0.005") in result.stdout
    assert "1 of 3 outside tolerance (generation.mean_token_f1)" in result.stderr
    assert "ok    retrieval.mrr@10" in result.stdout


def test_value_within_a_wider_tolerance_passes(tmp_path: Path,
                                               observed: dict[str, float]) -> None:
    shifted = observed["retrieval.mrr@10"] - 0.004
    path = _expected(tmp_path)
    doc = json.loads(path.read_text())
    doc["metrics"]["retrieval.mrr@10"] = {"expected": shifted, "tolerance": 0.005}
    path.write_text(json.dumps(doc))
    result = check_fixture(path)
    assert result.passed
    check = next(c for c in result.checks if c.name == "retrieval.mrr@10")
    assert check.delta == pytest.approx(0.004)


def test_every_failure_is_named_and_an_unpinned_metric_fails(
        tmp_path: Path, observed: dict[str, float]) -> None:
    doc = {"metrics": {"retrieval.mrr@10": {"expected": 0.5, "tolerance": 0.01},
                       "generation.mean_token_f1": {"expected": 0.9, "tolerance": 0.0}}}
    path = tmp_path / "two.json"
    path.write_text(json.dumps(doc))
    result = check_fixture(path, observed=observed)
    assert not result.passed
    assert [c.name for c in result.failures] == list(HEADLINE_METRICS)
    unpinned = result.failures[2]
    assert unpinned.expected is None and unpinned.delta is None
    assert "pins no value" in unpinned.describe()
    cli = runner.invoke(app, ["fixture", "check", str(path)])
    assert cli.exit_code == 1
    assert "3 of 3 outside tolerance" in cli.stderr


@pytest.mark.parametrize(("text", "line", "field", "reason"), [
    ('{"metrics": {\n  "retrieval.mrr@10": {"expected": 0.9,\n', 3, None, "invalid JSON"),
    ('[1, 2]', None, None, "expected a JSON object"),
    ('{\n  "metric": {}\n}', 2, "metric", "unknown key 'metric'"),
    ('{\n  "schema": "other"\n, "metrics": {}}', 2, "schema", "schema 'other' is not"),
    ('{"notes": "x"}', None, None, "missing 'metrics'"),
    ('{\n "metrics": {}\n}', 2, "metrics", "non-empty object"),
    ('{"metrics": {\n  "ndcg@10": {"expected": 0.5, "tolerance": 0}\n}}', 2,
     "metrics.ndcg@10", "unknown headline metric 'ndcg@10'"),
    ('{"metrics": {\n  "retrieval.mrr@10": 0.5\n}}', 2, "metrics.retrieval.mrr@10",
     "expected an object"),
    ('{"metrics": {\n  "retrieval.mrr@10": {"expected": 0.5}\n}}', 2,
     "metrics.retrieval.mrr@10", "missing 'tolerance'"),
    ('{"metrics": {\n  "retrieval.mrr@10": {\n "expected": "0.5", "tolerance": 0}}}', 3,
     "metrics.retrieval.mrr@10.expected", "expected must be a finite number, got '0.5'"),
    ('{"metrics": {\n  "retrieval.mrr@10": {"expected": 0.5,\n  "tolerance": -1}}}', 3,
     "metrics.retrieval.mrr@10.tolerance", "tolerance must be >= 0"),
    ('{"metrics": {\n  "retrieval.mrr@10": {"expected": 0.5,\n  "tolerance": true}}}', 3,
     "metrics.retrieval.mrr@10.tolerance", "tolerance must be a finite number, got True"),
    ('{"metrics": {\n  "retrieval.mrr@10": {"expected": 0.5, "tolerance": 0,\n "value": 1}}}',
     3, "metrics.retrieval.mrr@10.value", "unknown key 'value'"),
])
def test_malformed_expected_file_is_refused_by_file_line_field(
        tmp_path: Path, text: str, line: int | None, field: str | None, reason: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_expected(path)
    assert info.value.path == str(path)
    assert info.value.line == line
    assert info.value.field == field
    assert reason in info.value.reason
    result = runner.invoke(app, ["fixture", "check", str(path)])
    assert result.exit_code == 2, result.output
    assert str(path) in result.stderr and reason in result.stderr


def test_missing_expected_file_is_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["fixture", "check", str(tmp_path / "none.json")])
    assert result.exit_code == 2
    assert "expected file not found" in result.stderr


def test_dump_observed_round_trips_to_a_passing_check(tmp_path: Path,
                                                      observed: dict[str, float]) -> None:
    current = tmp_path / "current.json"
    current.write_text(json.dumps({"metrics": {
        "retrieval.mrr@10": {"expected": 0.1, "tolerance": 0.25},
        "generation.mean_token_f1": {"expected": 0.1, "tolerance": 1e-6}}}))
    printed = runner.invoke(app, ["fixture", "check", str(current), "--dump-observed"])
    assert printed.exit_code == 0, printed.output
    proposed = json.loads(printed.stdout)
    assert proposed == proposed_expected(observed, {"retrieval.mrr@10": 0.25,
                                                    "generation.mean_token_f1": 1e-6})
    assert proposed["metrics"]["retrieval.mrr@10"] == {
        "expected": observed["retrieval.mrr@10"], "tolerance": 0.25}
    assert proposed["metrics"]["grounding.mean_lexical_content_token_grounding"][
        "tolerance"] == 1e-9  # not pinned before: the default
    assert runner.invoke(app, ["fixture", "check", str(current)]).exit_code == 1
    written = tmp_path / "proposed.json"
    out = runner.invoke(app, ["fixture", "check", str(current), "--dump-observed",
                              "-o", str(written)])
    assert out.exit_code == 0, out.output
    assert json.loads(written.read_text()) == proposed
    again = runner.invoke(app, ["fixture", "check", str(written)])
    assert again.exit_code == 0, again.output


def test_dump_never_replaces_the_expected_file(tmp_path: Path) -> None:
    path = tmp_path / "expected.json"
    shutil.copy(COMMITTED, path)
    before = path.read_bytes()
    result = runner.invoke(app, ["fixture", "check", str(path), "--dump-observed",
                                 "-o", str(path)])
    assert result.exit_code == 2
    assert path.read_bytes() == before


def test_another_fixture_directory(tmp_path: Path, observed: dict[str, float]) -> None:
    copy = tmp_path / "fx"
    shutil.copytree(fixture_dir(), copy)
    # One judgment dropped: the retrieval headline moves, the other two do not.
    lines = (copy / "qrels.txt").read_text().splitlines()
    (copy / "qrels.txt").write_text("\n".join(lines[1:]) + "\n")
    result = runner.invoke(app, ["fixture", "check", str(COMMITTED), "--fixture", str(copy)])
    assert result.exit_code == 1, result.output
    assert "FAIL  retrieval.mrr@10" in result.stdout
    assert "ok    generation.mean_token_f1" in result.stdout
    (copy / "run.txt").unlink()
    missing = runner.invoke(app, ["fixture", "check", str(COMMITTED), "--fixture", str(copy)])
    assert missing.exit_code == 2
    assert "the fixture has no run.txt" in missing.stderr
