"""Class 12: our own files (reports, baselines) read through typed readers.

A real baseline and a real report are fuzzed field by field: every field (and
the first item of every list, the first entry of every id-keyed map) is
replaced by a value of each other JSON type — string, number, list, object,
null, boolean. Whatever the result, only a `RankproofError` may escape: a
``TypeError`` or ``AttributeError`` from deep inside a loader (19 of them on
baselines before) would be an exit-3 traceback in ``rankproof gate``. A
refusal is an `InputError` naming the file and the field that was replaced.
The same holds for a version-1 report, which is upgraded before validation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.harness._v1 import as_version_1
from typer.testing import CliRunner

from rankproof import InputError, RankproofError
from rankproof.cli import app
from rankproof.gate import load_baseline, load_report, save_baseline
from rankproof.harness import EvalConfig, golden_inputs, run_experiment, run_result_from_report

OTHER_TYPES: tuple[Any, ...] = ("text", 7, 2.5, ["x"], {"k": 1}, None, True)
# Maps keyed by data (query ids, measure names, package names): one entry is enough.
_DATA_KEYED = {"per_query", "latency_ms", "means", "judged", "values", "packages", "machine",
               "categories", "aggregates", "config", "extra"}


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A real two-stage report (comparison rows included) and a baseline saved from it."""
    root = tmp_path_factory.mktemp("typed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RANKPROOF_CACHE", str(root / "cache"))
        report, _ = run_experiment(golden_inputs("chunk", 800, 100),
                                   EvalConfig(stages=("bm25", "dense"), embedder="hashing",
                                              resamples=100))
    report_path = root / "report.json"
    report_path.write_text(report.model_dump_json(indent=2) + "\n")
    baseline_path = save_baseline(run_result_from_report(report, "dense"), "main",
                                  root / "baselines")
    return {"report": report_path, "baseline": baseline_path}


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(doc, dict):
        keyed_by_data = bool(prefix) and prefix[-1] in _DATA_KEYED
        for i, (key, value) in enumerate(doc.items()):
            if keyed_by_data and i >= 1:
                break
            yield from _paths(value, (*prefix, key))
    elif isinstance(doc, list) and doc:
        yield from _paths(doc[0], (*prefix, 0))


def _replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``doc`` with the value at ``path`` replaced; only the containers on the path are copied."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    out: Any = dict(doc) if isinstance(doc, dict) else list(doc)
    out[head] = _replaced(doc[head], rest, value) if rest else value
    return out


def _named(path: tuple[Any, ...]) -> str | None:
    """The innermost key of ``path`` a message must name (None for the whole document)."""
    keys = [p for p in path if isinstance(p, str)]
    return keys[-1] if keys else None


def _fuzz(doc: dict[str, Any], load: Callable[[Path], object], tmp: Path) -> tuple[int, int]:
    """(mutations tried, refused); asserts what escapes and what a refusal says."""
    target = tmp / "fuzzed.json"
    tried = refused = 0
    for path in _paths(doc):
        for value in OTHER_TYPES:
            original = doc
            for key in path:
                original = original[key]
            if type(original) is type(value):
                continue
            target.write_text(json.dumps(_replaced(doc, path, value)))
            tried += 1
            try:
                load(target)
            except InputError as exc:
                refused += 1
                text = str(exc)
                assert text.startswith(f"{target}"), text
                name = _named(path)
                assert name is None or name in text, (path, value, text)
                assert len(text) < 2_000, (path, value, len(text))
            except RankproofError:
                refused += 1
            # Anything else escapes and fails the test with its traceback.
    return tried, refused


def test_every_field_of_a_baseline_is_typed(real: dict[str, Path], tmp_path: Path) -> None:
    doc = json.loads(real["baseline"].read_text())
    assert load_baseline(real["baseline"]).name == "main"
    tried, refused = _fuzz(doc, load_baseline, tmp_path)
    assert tried > 150
    # Run fields hold lists, numbers, strings: nearly every change of type is refused.
    assert refused / tried > 0.85, (refused, tried)


@pytest.mark.parametrize(("path", "value", "field"), [
    (("run", "metrics"), "R@1", "run.metrics"),
    (("run", "rows"), "text", "run.rows"),
    (("run", "rows", 0, "values"), ["x"], "run.rows.0.values"),
    (("run", "aggregates"), "text", "run.aggregates"),
    (("run", "notes"), 7, "run.notes"),
    (("run", "provenance", "measures"), "nDCG@10", "run.provenance.measures"),
    (("run", "rows", 0, "text"), 7, "run.rows.0.text"),
    (("name",), 7, "name"),
])
def test_a_baseline_field_of_the_wrong_type_is_named(real: dict[str, Path], tmp_path: Path,
                                                     path: tuple[Any, ...], value: Any,
                                                     field: str) -> None:
    # These used to crash (TypeError/AttributeError) or, worse, load: a string where a
    # list belongs was read character by character ("R@1" -> metrics R, @, 1).
    doc = json.loads(real["baseline"].read_text())
    if path[-1] == "text":
        doc["run"]["rows"][0]["ranked_ids"] = ["d1"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_replaced(doc, path, value)))
    with pytest.raises(InputError, match="not a rankproof baseline") as err:
        load_baseline(bad)
    assert err.value.path == str(bad)
    assert f"first: {field}" in str(err.value)


def test_every_field_of_a_report_is_typed(real: dict[str, Path], tmp_path: Path) -> None:
    doc = json.loads(real["report"].read_text())
    assert doc["comparisons"], "the report must hold comparison rows to fuzz them"
    tried, refused = _fuzz(doc, load_report, tmp_path)
    assert tried > 200 and refused > 0.7 * tried, (refused, tried)


def test_every_field_of_a_version_1_report_is_typed(real: dict[str, Path],
                                                    tmp_path: Path) -> None:
    doc = as_version_1(json.loads(real["report"].read_text()), rows=1)
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps(doc))
    assert load_report(v1).comparisons  # the upgrade itself works
    tried, refused = _fuzz(doc, load_report, tmp_path)
    assert tried > 200 and refused > 0.7 * tried, (refused, tried)


@pytest.mark.parametrize(("path", "value", "field"), [
    (("stages",), "text", "stages"),
    (("config",), "text", "config"),
    (("comparisons", 0, "difference"), "text", "comparisons.0.difference"),
    (("config", "resamples"), "text", "config.resamples"),
    (("caveats",), 7, "caveats"),
])
def test_a_version_1_field_of_the_wrong_type_is_named(real: dict[str, Path], tmp_path: Path,
                                                      path: tuple[Any, ...], value: Any,
                                                      field: str) -> None:
    doc = as_version_1(json.loads(real["report"].read_text()), rows=1)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_replaced(doc, path, value)))
    with pytest.raises(InputError, match="not a rankproof eval report") as err:
        load_report(bad)
    assert err.value.path == str(bad)
    assert f"version-1 report: {field}:" in str(err.value)


def test_the_cli_refuses_a_mistyped_baseline_and_writes_nothing(real: dict[str, Path],
                                                                tmp_path: Path) -> None:
    doc = json.loads(real["baseline"].read_text())
    doc["run"]["rows"] = "text"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: no_regression\n    metric: nDCG@10\n"
                      "    vs_baseline: no_significant_regression\n")
    out = tmp_path / "verdict.json"
    result = CliRunner().invoke(app, ["gate", str(checks), "--report", str(real["report"]),
                                      "--stage", "dense", "--baseline", str(bad),
                                      "--json", str(out)])
    assert result.exit_code == 2, result.output
    assert "run.rows" in result.stderr and str(bad) in result.stderr
    assert not out.exists()
