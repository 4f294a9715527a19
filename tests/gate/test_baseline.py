"""Baselines: saved atomically under safe names, loaded by name or path, listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.gate._helpers import result

from rankproof import ConfigError, InputError
from rankproof.gate import baseline_path, list_baselines, load_baseline, save_baseline
from rankproof.targets import RunResult

R = result({"a": {"nDCG@10": 0.5}, "b": {"nDCG@10": 1.0}}, latency={"a": 1.0, "b": 3.0},
           ids={"a": ("d1",), "b": ("d2", "d1")})


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    path = save_baseline(R, "main", tmp_path, source={"report": "r.json"})
    assert path == (tmp_path / "main.json").resolve()
    data = json.loads(path.read_text())
    assert data["kind"] == "rankproof.baseline" and data["schema_version"] == 2
    assert data["run"]["rows"][1]["ranked_ids"] == ["d2", "d1"]
    b = load_baseline("main", tmp_path)
    assert b.name == "main" and b.source["report"] == "r.json" and b.path == path
    assert b.result.to_dict() == R.to_dict()
    assert isinstance(b.result, RunResult) and b.result.mean("nDCG@10") == 0.75
    # by path, wherever it is
    assert load_baseline(str(path)).name == "main"
    assert load_baseline(path).name == "main"
    assert [x.name for x in list_baselines(tmp_path)] == ["main"]
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_an_existing_baseline_is_not_replaced_unless_asked(tmp_path: Path) -> None:
    save_baseline(R, "main", tmp_path)
    with pytest.raises(ConfigError, match=r"already exists.*--force"):
        save_baseline(R, "main", tmp_path)
    other = result({"a": {"nDCG@10": 0.0}})
    save_baseline(other, "main", tmp_path, overwrite=True)
    assert load_baseline("main", tmp_path).result.case_ids == ("a",)


@pytest.mark.parametrize("name", ["../escape", "a/b", "", ".hidden", "x.", "..", "a b",
                                  "a\\b", "x" * 101, "é"])
def test_unsafe_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="not allowed"):
        save_baseline(R, name, tmp_path)
    with pytest.raises(ConfigError, match="not allowed"):
        baseline_path(name, tmp_path)
    assert not any(tmp_path.iterdir())


def test_a_name_stays_inside_the_directory(tmp_path: Path) -> None:
    root = tmp_path / "baselines"
    assert baseline_path("v1.2_rc-1", root).parent == root.resolve()


def test_unknown_names_list_what_is_saved(tmp_path: Path) -> None:
    save_baseline(R, "main", tmp_path)
    save_baseline(R, "release-1", tmp_path)
    with pytest.raises(ConfigError, match=r"no baseline named 'mian'.*main, release-1"):
        load_baseline("mian", tmp_path)
    with pytest.raises(ConfigError, match="none are saved"):
        load_baseline("main", tmp_path / "empty")
    assert list_baselines(tmp_path / "missing") == ()


def test_malformed_files_are_input_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="cannot read the baseline"):
        load_baseline(bad)
    bad.write_text(json.dumps({"kind": "rankproof.eval"}))
    with pytest.raises(InputError, match="not a rankproof baseline"):
        load_baseline(bad)
    with pytest.raises(InputError, match="not a rankproof baseline"):
        list_baselines(tmp_path)
    with pytest.raises(InputError, match="not found"):
        load_baseline(tmp_path / "nope.json")


def test_a_version_1_baseline_still_loads(tmp_path: Path) -> None:
    # Written as the version-1 code wrote it: the same fields, schema_version 1.
    doc = {"schema_version": 1, "kind": "rankproof.baseline", "name": "old",
           "created_at": "2026-01-01T00:00:00+00:00", "tool_version": "0.1.0",
           "source": {"report": "evals/results/latest.json", "stage": "dense"},
           "run": R.to_dict()}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    b = load_baseline("old", tmp_path)
    assert b.name == "old" and b.source["stage"] == "dense"
    assert b.result.to_dict() == R.to_dict()
    path.write_text(json.dumps({**doc, "schema_version": 3}))
    with pytest.raises(InputError, match="schema_version"):
        load_baseline(path)
