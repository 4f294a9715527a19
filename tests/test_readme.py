"""Every example in the README runs, and console examples print what the README shows."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
INSTALL = "pip install -e ."


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README, flags=re.S | re.M)


def _console_examples() -> list[tuple[str, list[str]]]:
    examples: list[tuple[str, list[str]]] = []
    for block in _blocks("console"):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, *output = chunk.rstrip("\n").split("\n")
            if command == INSTALL:
                continue  # the quick start's install step: what this test environment did
            examples.append((command, output))
    return examples


def test_readme_opens_with_exactly_two_setup_commands() -> None:
    first = _blocks("bash")[0]
    commands = [line for line in first.splitlines() if line.strip() and not line.startswith("#")]
    assert commands == ["make demo", "make test"]
    assert README.index("```bash") < README.index("```console")


def test_the_first_screen_has_a_quick_start() -> None:
    """What rankproof is, the two set-up commands, then install + one measure command."""
    head = README[: README.index("\n## ")]
    assert "Python\nlibrary and command-line tool for evaluating retrieval" in head
    quick = _blocks("console")[0]
    assert quick.startswith(f"$ {INSTALL}\n$ rankproof measure ")
    assert README.index(quick) < README.index("\n## ")
    assert (REPO / "pyproject.toml").is_file()  # what `pip install -e .` installs


@pytest.mark.parametrize(("command", "expected"), _console_examples(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_console_example(command: str, expected: list[str]) -> None:
    argv = shlex.split(command)
    assert argv[0] == "rankproof"
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    proc = subprocess.run([sys.executable, "-m", "rankproof", *argv[1:]], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert [line.rstrip() for line in proc.stdout.splitlines()] == [e.rstrip() for e in expected]


@pytest.mark.parametrize("code", _blocks("python"))
def test_python_example(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    exec(compile(code, "README.md", "exec"), {})


def _sh_examples() -> list[list[str]]:
    return [[line for line in block.splitlines() if line.strip() and not line.startswith("#")]
            for block in _blocks("sh")]


@pytest.mark.parametrize("lines", _sh_examples(), ids=lambda v: v[0] if v else "")
def test_shell_example(lines: list[str], tmp_path: Path) -> None:
    """Each line runs (in a scratch folder) with the exit code its comment states (default 0)."""
    (tmp_path / "examples").symlink_to(REPO / "examples")
    env = {**os.environ, "COLUMNS": "120", "RANKPROOF_CACHE": str(tmp_path / "cache")}
    for line in lines:
        command, _, comment = line.partition("  # ")
        expected = int(comment.split()[-1]) if comment.startswith("exits") else 0
        argv = shlex.split(command)
        assert argv[0] == "rankproof"
        proc = subprocess.run([sys.executable, "-m", "rankproof", *argv[1:]], cwd=tmp_path,
                              env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == expected, (line, proc.stdout, proc.stderr)
