"""Each statistics default is written once, in ``rankproof/stats/_defaults.py`` (issue 22).

The scan reads every module of ``src/rankproof`` with `ast` and fails on a parameter,
dataclass/pydantic field or Typer option whose name says it is a resamples or alpha
setting and whose default is the literal ``10_000``/``10000`` or ``0.05``: such a
default must name ``DEFAULT_RESAMPLES``/``DEFAULT_ALPHA`` instead, so the number has
one home. ``ALLOWED`` pins the places that may still write the literal, each with why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rankproof
from rankproof import stats

SRC = Path(rankproof.__file__).parent
DEFAULTS_MODULE = SRC / "stats" / "_defaults.py"
LITERALS = {10_000, 0.05}

#: (module relative to src/rankproof, name) allowed to write a literal default, and why.
ALLOWED: dict[tuple[str, str], str] = {
    # The seed systems' own API: its documented default, which must not follow ours.
    ("compat/evalkit.py", "DEFAULT_RESAMPLES"): "evalkit's n_resamples default",
    ("compat/groundkit.py", "DEFAULT_RESAMPLES"): "groundkit's resamples default",
}


def _is_setting(name: str) -> bool:
    low = name.lower()
    return "resample" in low or low == "alpha" or low.endswith("_alpha")


def _literal(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        return node.value in LITERALS
    if isinstance(node, ast.Call):  # Field(default=…), typer.Option(…)
        first = node.args[0] if node.args else None
        given = [k.value for k in node.keywords if k.arg == "default"]
        return _literal(first) or any(_literal(v) for v in given)
    return False


def literal_defaults(tree: ast.AST) -> list[tuple[str, int]]:
    """(setting name, line) of every resamples/alpha default written as a literal."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults,
                             strict=True))
            pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
                      if d is not None]
            found += [(arg.arg, arg.lineno) for arg, d in pairs
                      if _is_setting(arg.arg) and _literal(d)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if _is_setting(node.target.id) and _literal(node.value):
                found.append((node.target.id, node.lineno))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if (isinstance(target, ast.Name) and _is_setting(target.id)
                        and _literal(node.value)):
                    found.append((target.id, node.lineno))
    return found


def _scan() -> list[str]:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        if path == DEFAULTS_MODULE:
            continue
        rel = path.relative_to(SRC).as_posix()
        for name, line in literal_defaults(ast.parse(path.read_text(encoding="utf-8"))):
            if (rel, name) not in ALLOWED:
                problems.append(f"{rel}:{line} {name}")
    return problems


def test_no_resamples_or_alpha_default_is_written_outside_the_defaults_module() -> None:
    assert _scan() == []


def test_every_allowed_literal_still_exists() -> None:
    """An entry that no longer matches anything is dead weight in the pin: remove it."""
    seen = set()
    for rel, _ in ALLOWED:
        tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
        seen |= {(rel, name) for name, _ in literal_defaults(tree)}
    assert seen == set(ALLOWED)


@pytest.mark.parametrize("source", [
    "def f(resamples: int = 10_000): ...",
    "def f(*, alpha=0.05): ...",
    "def f(n_resamples=10000): ...",
    "class C:\n    alpha: float = 0.05\n",
    "class C:\n    resamples: int = Field(default=10_000, ge=1)\n",
    "def f(alpha: float = typer.Option(0.05, '--alpha')): ...",
    "DEFAULT_RESAMPLES = 10_000\n",
])
def test_the_scan_catches_each_way_of_writing_the_literal(source: str) -> None:
    assert literal_defaults(ast.parse(source)) != []


@pytest.mark.parametrize("source", [
    "def f(resamples: int = DEFAULT_RESAMPLES): ...",
    "def f(alpha: float = 0.01): ...",
    "def f(trials: int = 10_000): ...",
    "MAX_YAML_NODES = 10_000\n",
])
def test_the_scan_lets_named_defaults_and_other_settings_through(source: str) -> None:
    assert literal_defaults(ast.parse(source)) == []


def test_the_defaults_are_the_documented_ones() -> None:
    assert (stats.DEFAULT_TEST, stats.DEFAULT_ALPHA, stats.DEFAULT_CORRECTION,
            stats.DEFAULT_RESAMPLES, stats.DEFAULT_SEED, stats.DEFAULT_CONFIDENCE_LEVEL,
            stats.DEFAULT_PAIRS) == ("randomization", 0.05, "holm", 10_000, 0, 0.95,
                                     "baseline")
    assert stats.DEFAULT_TEST in stats.TESTS
    assert stats.DEFAULT_CORRECTION in stats.CORRECTIONS
    assert stats.DEFAULT_PAIRS in stats.PAIRS
