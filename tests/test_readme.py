"""Every example in the README runs, and console examples print what the README shows.

The machinery here (`blocks`, `console_examples`, `run_console`, `run_python`, `sh_examples`,
`run_sh`) also runs every example of the documentation site's pages (tests/test_docs.py).
"""

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
README_MAX_BYTES = 15 * 1024
SKIP = re.compile(r"<!-- docs-test: skip \S[^>]*-->\n$")
"""A page marks an example it cannot run (it needs a model server, say) with this comment on
the line right above the fence, giving the reason: ``<!-- docs-test: skip needs a server -->``."""


def blocks(text: str, lang: str) -> list[str]:
    """The bodies of the ```LANG fenced blocks of a Markdown text, without skip-marked ones."""
    return [m.group(2) for m in re.finditer(rf"(^[^\n]*\n)?^```{lang}\n(.*?)^```", text,
                                            flags=re.S | re.M)
            if not (m.group(1) and SKIP.match(m.group(1)))]


def console_examples(text: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for every ``$ `` line of the ```console blocks."""
    examples: list[tuple[str, list[str]]] = []
    for block in blocks(text, "console"):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, *output = chunk.rstrip("\n").split("\n")
            if command == INSTALL:
                continue  # the quick start's install step: what this test environment did
            examples.append((command, output))
    return examples


def run_console(command: str, expected: list[str]) -> None:
    argv = shlex.split(command)
    assert argv[0] == "rankproof"
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    proc = subprocess.run([sys.executable, "-m", "rankproof", *argv[1:]], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert [line.rstrip() for line in proc.stdout.splitlines()] == [e.rstrip() for e in expected]


def run_python(code: str, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    exec(compile(code, name, "exec"), {})


def sh_examples(text: str) -> list[list[str]]:
    return [[line for line in block.splitlines() if line.strip() and not line.startswith("#")]
            for block in blocks(text, "sh")]


def run_sh(lines: list[str], tmp_path: Path) -> None:
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


def test_readme_opens_with_exactly_two_setup_commands() -> None:
    first = blocks(README, "bash")[0]
    commands = [line for line in first.splitlines() if line.strip() and not line.startswith("#")]
    assert commands == ["make demo", "make test"]
    assert README.index("```bash") < README.index("```console")


def test_the_first_screen_has_a_quick_start() -> None:
    """What rankproof is, the two set-up commands, then install + one measure command."""
    head = README[: README.index("\n## ")]
    assert "Python\nlibrary and command-line tool for evaluating retrieval" in head
    quick = blocks(README, "console")[0]
    assert quick.startswith(f"$ {INSTALL}\n$ rankproof measure ")
    assert README.index(quick) < README.index("\n## ")
    assert (REPO / "pyproject.toml").is_file()  # what `pip install -e .` installs


def test_readme_is_short() -> None:
    """The README says what rankproof is and links into the site; the manual is the site."""
    size = len(README.encode("utf-8"))
    assert size <= README_MAX_BYTES, f"README.md is {size:,} bytes (at most {README_MAX_BYTES:,})"


def test_readme_has_no_skipped_examples() -> None:
    assert "<!-- docs-test: skip" not in README


@pytest.mark.parametrize(("command", "expected"), console_examples(README),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_console_example(command: str, expected: list[str]) -> None:
    run_console(command, expected)


@pytest.mark.parametrize("code", blocks(README, "python"))
def test_python_example(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run_python(code, "README.md", monkeypatch)


@pytest.mark.parametrize("lines", sh_examples(README), ids=lambda v: v[0] if v else "")
def test_shell_example(lines: list[str], tmp_path: Path) -> None:
    run_sh(lines, tmp_path)
