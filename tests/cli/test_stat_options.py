"""The statistics options, declared once (`rankproof.cli._stat_options`), on compare, eval
and gate (issue 22): eval gains --test/--correction and --abstention-confidence, gate gains
--test/--correction/--seed/--resamples and a checks-file ``test:`` key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from rankproof.cli import app
from rankproof.stats import CORRECTIONS

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "examples" / "toy"
runner = CliRunner()

CHECKS = """\
checks:
  - id: no_regression
    metric: nDCG@10
    vs_baseline: no_significant_regression
"""


def cli(*args: str) -> Result:
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("stat-options")
    out = {"bm25": root / "bm25.json", "dense": root / "dense.json",
           "checks": root / "checks.yaml"}
    for name in ("bm25", "dense"):
        r = cli("measure", str(TOY / "qrels.txt"), str(TOY / f"{name}.run"), "-m", "nDCG@10",
                "-f", "json", "-o", str(out[name]))
        assert r.exit_code == 0, r.output
    out["checks"].write_text(CHECKS)
    return out


def _gate(files: dict[str, Path], *extra: str, checks: Path | None = None) -> Result:
    return cli("gate", str(checks or files["checks"]), "--report", str(files["dense"]),
               "--baseline", str(files["bm25"]), "-f", "json", *extra)


def test_gate_test_option_chooses_the_baseline_checks_test(measured: dict[str, Path]) -> None:
    r = _gate(measured, "--test", "bootstrap", "--resamples", "500", "--seed", "4",
              "--correction", "bonferroni")
    assert r.exit_code == 0, r.output
    verdict = json.loads(r.stdout)
    row = verdict["checks"][0]["comparison"]
    assert row["result"]["test"] == "bootstrap"
    assert (verdict["seed"], verdict["resamples"], verdict["correction"]) == (4, 500,
                                                                              "bonferroni")
    plain = json.loads(_gate(measured).stdout)["checks"][0]["comparison"]
    assert plain["result"]["test"] == "randomization"


def test_gate_checks_file_test_key_and_the_option_overrides_it(measured: dict[str, Path],
                                                               tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text("test: t\n" + CHECKS)
    r = _gate(measured, checks=checks)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["checks"][0]["comparison"]["result"]["test"] == "t"
    r = _gate(measured, "--test", "sign", checks=checks)
    assert json.loads(r.stdout)["checks"][0]["comparison"]["result"]["test"] == "sign"
    checks.write_text("test: ttest\n" + CHECKS)
    r = _gate(measured, checks=checks)
    assert r.exit_code == 2 and "test" in r.output


def test_gate_alpha_sets_the_level_of_checks_without_their_own(measured: dict[str, Path],
                                                                tmp_path: Path) -> None:
    r = _gate(measured, "--alpha", "0.2")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["checks"][0]["comparison"]["alpha"] == 0.2
    own = tmp_path / "own.yaml"
    own.write_text(CHECKS + "    alpha: 0.01\n")
    r = _gate(measured, "--alpha", "0.2", checks=own)
    assert json.loads(r.stdout)["checks"][0]["comparison"]["alpha"] == 0.01
    assert json.loads(_gate(measured).stdout)["checks"][0]["comparison"]["alpha"] == 0.05
    r = _gate(measured, "--alpha", "1.5")
    assert r.exit_code == 2 and "alpha" in r.output


def test_gate_writes_its_verdict_with_o_as_every_command_does(measured: dict[str, Path],
                                                              tmp_path: Path) -> None:
    for flag in ("-o", "--output", "--json"):
        out = tmp_path / f"verdict{flag}.json"
        r = _gate(measured, flag, str(out))
        assert r.exit_code == 0, r.output
        assert json.loads(out.read_text())["kind"] == "rankproof.gate"


def test_gate_refuses_too_few_resamples_from_the_command_line(
        measured: dict[str, Path]) -> None:
    r = _gate(measured, "--resamples", "10")
    assert r.exit_code == 2 and "at least 100" in r.output


@pytest.mark.parametrize("command", [
    ["compare", str(TOY / "qrels.txt"), str(TOY / "bm25.run"), str(TOY / "dense.run")],
    ["eval", "--dry-run", "--embedder", "hashing"],
    ["gate", "checks.yaml"],
])
def test_a_bad_correction_exits_2_naming_the_choices(command: list[str]) -> None:
    r = cli(*command, "--correction", "fdr")
    assert r.exit_code == 2
    for choice in CORRECTIONS:
        assert choice in r.output


@pytest.mark.slow
def test_eval_records_its_test_correction_and_abstention_confidence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = cli("eval", "--embedder", "hashing", "--stages", "bm25,dense", "--resamples", "200",
            "--test", "t", "--correction", "bh", "--alpha", "0.1",
            "--abstention-confidence", "0.8", "--quiet", "-f", "json")
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "evals" / "results" / "latest.json").read_text())
    config = report["config"]
    assert (config["test"], config["correction"], config["alpha"],
            config["abstention_confidence"]) == ("t", "bh", 0.1, 0.8)
    rows = report["comparisons"]
    assert rows and {row["result"]["test"] for row in rows} == {"t"}
    assert {row["correction"] for row in rows} == {"bh"}
    assert {s["abstention"]["confidence_level"] for s in report["stages"]
            if s.get("abstention") and s["abstention"].get("confidence_level")} <= {0.8}


def test_every_statistics_option_is_derived_from_its_settings_field() -> None:
    """Flag, metavar, help and default come from `StatSettings`' fields (issue 22 item 3):
    `compare --help` shows each field's own default and words, and the parsed values are
    the settings the library gets."""
    import dataclasses

    from rankproof.cli._stat_options import PARAMETERS, settings_option, stat_settings
    from rankproof.stats import StatSettings

    helped = cli("compare", "--help")
    assert helped.exit_code == 0
    text = " ".join(helped.output.split())
    for field in dataclasses.fields(StatSettings):
        option = settings_option(field.name)
        assert option.default == field.default
        assert option.param_decls == field.metadata["flags"]
        assert option.help == field.metadata["help"]
        assert field.metadata["flags"][0] in text
        assert " ".join(field.metadata["help"].split())[:30] in text
    assert stat_settings() == StatSettings()
    changed = stat_settings(test="t", confidence=0.9, resamples=100)
    assert changed == StatSettings(test="t", confidence_level=0.9, resamples=100)
    assert PARAMETERS == {"confidence_level": "confidence"}
    with pytest.raises(TypeError):
        stat_settings(confidence_level=0.9)
