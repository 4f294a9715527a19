"""Fuzz: the gate's inputs — checks files, eval reports, baselines — and ``rankproof gate``.

Property (see ``_fuzz``): a mutated checks file is a `rankproof.ConfigError`
(or any `RankproofError`), a mutated report or baseline a typed error naming
the file — never a `TypeError`/`AttributeError`/`KeyError` escaping — and
nothing is written on refusal. Through the CLI, a mutated input is exit 0, 1
(a check failed) or 2 (bad input), never 3, and on exit 2 none of the
``--json``/``--junit``/``--markdown`` outputs exists.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given
from hypothesis import strategies as st
from tests.hostile._fuzz import (
    REPO,
    assert_no_controls,
    dumps,
    fuzz_settings,
    json_text,
    maybe_gzipped,
    mutated,
    mutated_json,
    refused_or_read,
    snapshot,
)
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.gate import load_baseline, load_checks, result_from_report, save_baseline

CHECKS_SEEDS = [(REPO / "examples" / "gate" / "checks.yaml").read_bytes(),
                (REPO / "examples" / "custom_client" / "checks.yaml").read_bytes()]
# A small "billion laughs" in a checks file: 6 levels of 8 aliases.
CHECKS_BOMB = ("a0: &a0 [x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 8)}]\n" for i in range(1, 7))
    + "checks: *a6\n").encode()


@st.composite
def checks_files(draw: st.DrawFn) -> bytes:
    """Checks YAML: byte-mutated, structurally mutated (block or flow style), or a bomb."""
    seed = draw(st.sampled_from(CHECKS_SEEDS))
    how = draw(st.sampled_from(("bytes", "bytes", "block", "flow", "bomb")))
    if how == "bomb":
        return CHECKS_BOMB
    if how == "bytes":
        return draw(mutated(seed, 4))
    doc = draw(mutated_json(yaml.safe_load(seed)))
    if how == "flow":
        return dumps(doc)
    try:
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True).encode(
            "utf-8", "surrogatepass")
    except (yaml.YAMLError, RecursionError, ValueError):  # a value YAML cannot write
        return dumps(doc)


@given(content=checks_files().flatmap(maybe_gzipped),
       known=st.sampled_from([None, ("wifi-password", "free-parking"), ()]))
@fuzz_settings(500)
def test_load_checks_refuses_mutated_files_with_typed_errors(
        content: bytes, known: tuple[str, ...] | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "checks.yaml"
        path.write_bytes(content)
        before = snapshot(Path(tmp))
        refused_or_read(load_checks, path, known_case_ids=known)
        assert snapshot(Path(tmp)) == before


# -- reports and baselines: made by the library itself, then mutated -------------------

@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real ``rankproof eval --stages bm25`` report on the golden corpus, and a baseline
    saved from it, as parsed JSON (the seeds of the mutations)."""
    root = tmp_path_factory.mktemp("fuzz-gate")
    with contextlib.chdir(root):  # eval also writes evals/results/latest.json in the cwd
        result = CliRunner().invoke(app, ["eval", "--stages", "bm25", "--quiet",
                                          "-o", "report.json"])
    assert result.exit_code == 0, result.output
    report = root / "report.json"
    saved = save_baseline(result_from_report(report), "base", directory=root / "baselines")
    return {"report": json.loads(report.read_text()), "baseline": json.loads(saved.read_text()),
            "report_bytes": report.read_bytes()}


@given(data=st.data())
@fuzz_settings(300)
def test_reports_refuse_mutated_documents_with_typed_errors(
        made: dict[str, Any], data: st.DataObject) -> None:
    content = data.draw(json_text(made["report"]).flatmap(maybe_gzipped), label="report")
    stage = data.draw(st.sampled_from([None, "bm25", "nope"]), label="stage")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.json"
        path.write_bytes(content)
        before = snapshot(Path(tmp))
        refused_or_read(result_from_report, path, stage)
        assert snapshot(Path(tmp)) == before


@given(data=st.data())
@fuzz_settings(300)
def test_baselines_refuse_mutated_documents_with_typed_errors(
        made: dict[str, Any], data: st.DataObject) -> None:
    content = data.draw(json_text(made["baseline"]).flatmap(maybe_gzipped), label="baseline")
    by_name = data.draw(st.booleans(), label="by_name")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "baselines"
        folder.mkdir()
        (folder / "base.json").write_bytes(content)
        before = snapshot(Path(tmp))
        if by_name:
            refused_or_read(load_baseline, "base", directory=folder)
        else:
            refused_or_read(load_baseline, folder / "base.json")
        assert snapshot(Path(tmp)) == before


# -- through the CLI: exit 0/1/2, never 3, and all outputs or none ------------------------

@contextlib.contextmanager
def _gate_folder(made: dict[str, Any], report: bytes, checks: bytes,
                 baseline: bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "report.json").write_bytes(report)
        (root / "checks.yaml").write_bytes(checks)
        (root / "baselines").mkdir()
        (root / "baselines" / "base.json").write_bytes(baseline)
        yield root


@given(data=st.data())
@fuzz_settings(120)
def test_gate_cli_on_mutated_inputs_exits_0_1_or_2_and_writes_all_or_nothing(
        made: dict[str, Any], data: st.DataObject) -> None:
    which = data.draw(st.sampled_from(["report", "checks", "baseline"]), label="mutated")
    report = made["report_bytes"]
    checks = CHECKS_SEEDS[0]
    baseline = dumps(made["baseline"])
    if which == "report":
        report = data.draw(json_text(made["report"]), label="report")
    elif which == "checks":
        checks = data.draw(checks_files(), label="checks")
    else:
        baseline = data.draw(json_text(made["baseline"]), label="baseline")
    with _gate_folder(made, report, checks, baseline) as root:
        outputs = [root / "out" / "verdict.json", root / "out" / "junit.xml",
                   root / "out" / "summary.md"]
        (root / "out").mkdir()
        with contextlib.chdir(root):
            result = CliRunner().invoke(app, [
                "gate", "checks.yaml", "--report", "report.json", "--baseline", "base",
                "--baseline-dir", "baselines", "--json", str(outputs[0]),
                "--junit", str(outputs[1]), "--markdown", str(outputs[2])])
        event(f"exit {result.exit_code}")
        assert result.exit_code in (0, 1, 2), (result.exit_code, result.output[-2000:])
        assert_no_controls(result.output)
        written = [p.exists() for p in outputs]
        if result.exit_code == 2:
            assert not any(written), f"exit 2 but wrote {written}: {result.output[-500:]}"
        else:
            assert all(written), f"exit {result.exit_code} but wrote only {written}"
        assert sorted(p.name for p in (root / "out").iterdir()) == \
            sorted(p.name for p, w in zip(outputs, written, strict=True) if w), \
            "a temporary file was left next to the outputs"
