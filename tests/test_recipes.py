"""The recipes of docs/architecture.md ("Where does it go"), each followed here with a
throwaway example through exactly the files the recipe names.

The source tree is copied, the recipe's files (and only those) are edited in the copy, and
the copy is run in a fresh interpreter: if the recipe needed a third file, the example
would not work.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "examples" / "toy"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of ``src/`` to edit."""
    shutil.copytree(ROOT / "src", tmp_path / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return tmp_path / "src"


def _run(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([sys.executable, "-m", "rankproof", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


def _append(path: Path, text: str, before: str | None = None) -> None:
    body = path.read_text(encoding="utf-8")
    if before is None:
        path.write_text(body + text, encoding="utf-8")
    else:
        assert before in body, f"{before!r} is not in {path.name}"
        path.write_text(body.replace(before, text + before, 1), encoding="utf-8")


def test_a_retrieval_measure_takes_its_family_and_its_kernel(tree: Path) -> None:
    """``measures/_families.py`` (the definition) and ``measures/_kernels.py`` (the kernel):
    a throwaway "Top" family (1 when the first document is relevant) is then parsed,
    evaluated by ``rankproof measure`` and equal to P@1, which it is by definition."""
    measures = tree / "rankproof" / "measures"
    _append(measures / "_families.py", '''
register(Family(
    "Top", True, "1 when the first document retrieved is relevant (a recipe's example).",
    "tests/test_recipes.py.", "none", _params(rel=REL),
))
''')
    _append(measures / "_kernels.py", '''def top(j: Judged, m: Measure) -> F64:
    sel = j.is_rel(j.level(m)) & (j.pos == 0)
    return (j.bincount(j.topic[sel]) > 0).astype(np.float64)


''', before="KERNELS: dict[")
    _append(measures / "_kernels.py", '    "Top": top,\n', before='    "P": precision,\n')
    changed = [p for p in (tree / "rankproof").rglob("*.py")
               if p.read_bytes() != (ROOT / "src" / p.relative_to(tree)).read_bytes()]
    assert sorted(p.name for p in changed) == ["_families.py", "_kernels.py"]
    r = _run(tree, "measure", str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "-m", "Top",
             "-m", "P@1", "-q", "-f", "json")
    assert r.returncode == 0, r.stderr
    (run,) = json.loads(r.stdout)["runs"]
    assert run["means"]["Top"] == run["means"]["P@1"]
    assert all(v["Top"] == v["P@1"] for v in run["per_query"].values())
    # Without the edit, the same command refuses the name: the test could fail.
    plain = subprocess.run([sys.executable, "-m", "rankproof", "measure",
                            str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "-m", "Top"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert plain.returncode == 2 and "Top" in plain.stderr


def test_an_evaluation_setting_is_an_option_of_measure_and_compare(tree: Path) -> None:
    """A field on ``measures.EvalOptions`` (with its command-line ``metadata``) is an option
    of ``measure`` and ``compare`` with no edit to either (the recipe's second file is the
    code that uses the setting; a throwaway one uses nothing)."""
    setting = ('    throwaway: bool = field(default=False, metadata={\n'
               '        "flags": ("--throwaway",), "help": "A recipe\'s example setting."})\n\n')
    _append(tree / "rankproof" / "measures" / "_options.py", setting,
            before="    def __post_init__(self) -> None:\n        if isinstance(self.rel_level")
    for command in ("measure", "compare"):
        r = _run(tree, command, "--help")
        assert r.returncode == 0, r.stderr
        assert "--throwaway" in r.stdout and "A recipe's example setting." in r.stdout
    r = _run(tree, "measure", str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "-m", "AP",
             "--throwaway", "-f", "json")
    assert r.returncode == 0, r.stderr
    plain = subprocess.run([sys.executable, "-m", "rankproof", "measure", "--help"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert "--throwaway" not in plain.stdout
