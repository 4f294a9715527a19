"""``rankproof eval --html PATH``: the HTML report beside the JSON, checked before anything
is written, and both paths printed last; ``make demo`` ends naming both files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app

runner = CliRunner()
FAST = ["eval", "--embedder", "hashing", "--resamples", "300", "--quiet"]
LATEST = Path("evals") / "results" / "latest.json"
VOID = {"meta", "br", "img", "input", "link", "hr", "col", "source", "wbr", "area", "base"}


class _Sections(HTMLParser):
    """Section ids, and whether every element that was opened was closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.stack: list[str] = []
        self.balanced = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section":
            self.sections.append(dict(attrs).get("id") or "")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.balanced = False


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_eval_writes_the_html_report_and_names_both_files_last(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    page = Path("evals") / "results" / "latest.html"
    result = runner.invoke(app, [*FAST, "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert _lines(result.stderr)[-2:] == [f"report written to {LATEST}",
                                          f"HTML report written to {page}"]
    assert json.loads(LATEST.read_text(encoding="utf-8"))["kind"] == "rankproof.eval"

    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.endswith("</html>\n")
    parser = _Sections()
    parser.feed(text)
    parser.close()
    assert parser.balanced and parser.stack == []
    assert {"summary", "verdicts", "forest", "latency", "tables", "browser", "caveats",
            "provenance"} <= set(parser.sections)
    assert "default-src 'none'" in text and 'id="rp-browser-data"' in text
    # The same page `rankproof report` renders from the JSON: one view, one rendering.
    again = tmp_path / "again.html"
    assert runner.invoke(app, ["report", str(LATEST), "--html", str(again)]).exit_code == 0
    assert again.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in (tmp_path / "evals" / "results").iterdir()) == [
        "latest.html", "latest.json"]


def test_eval_html_is_checked_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    stdout = runner.invoke(app, [*FAST, "--html", "-"])
    assert stdout.exit_code == 2
    assert "the HTML report needs a file path, not standard output" in stdout.output
    twice = runner.invoke(app, [*FAST, "--html", str(LATEST)])
    assert twice.exit_code == 2
    assert "given twice" in twice.output
    run = tmp_path / "bm25.run"
    run.write_text("q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n", encoding="utf-8")
    kept = runner.invoke(app, [*FAST, "--html", str(run)])
    assert kept.exit_code == 2
    assert "holds a run" in kept.output and "--force" in kept.output
    assert run.read_text(encoding="utf-8").startswith("q1 Q0 d1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bm25.run"]


def test_dry_run_names_the_html_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, [*FAST, "--dry-run", "--html", "out/report.html"])
    assert result.exit_code == 0, result.output
    assert "out/report.html" in result.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_make_demo_ends_naming_the_json_and_the_html(tmp_path: Path) -> None:
    """The Makefile's own ``demo`` recipe, run by make in a fresh folder (no evals/ yet),
    with this environment's rankproof standing in for the one ``make demo`` installs."""
    repo = Path(__file__).resolve().parents[2]
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    shutil.copy(repo / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(sys.executable)
    rankproof = Path(sys.executable).with_name("rankproof")
    (venv / "rankproof").symlink_to(rankproof)
    stamp = tmp_path / "venv" / ".rankproof-dense"
    stamp.touch()
    os.utime(tmp_path / "pyproject.toml", (1_000_000_000, 1_000_000_000))
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb",
           "RANKPROOF_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run(["make", "-s", "demo", "VENV=venv"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert _lines(proc.stderr)[-2:] == ["report written to evals/results/latest.json",
                                        "HTML report written to evals/results/latest.html"]
    page = (tmp_path / "evals" / "results" / "latest.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and '<section id="browser">' in page
    assert json.loads((tmp_path / "evals" / "results" / "latest.json").read_text(
        encoding="utf-8"))["kind"] == "rankproof.eval"


def test_eval_markdown_leads_with_the_stages_by_measures_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, [*FAST, "-f", "md"])
    assert result.exit_code == 0, result.output
    report = json.loads(LATEST.read_text(encoding="utf-8"))
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"## {len(report['stages'])} stages × "
                               f"{len(report['measures'])} measures, baseline bm25")
    assert lines[2].startswith("| system | ") and lines[2].count("|") == len(report["measures"]) + 2
    assert lines[4].startswith("| bm25 (baseline) |")
    # the per-measure detail follows the table
    assert result.stdout.index("| system |") < result.stdout.index("### ")
