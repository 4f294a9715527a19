"""The documentation site builds offline with ``mkdocs build --strict``, has a page per command,
and every example in its pages runs (as the README's do: tests/test_readme.py's machinery)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.test_readme import (
    REPO,
    blocks,
    console_examples,
    run_console,
    run_python,
    run_sh,
    sh_examples,
)

DOCS = REPO / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md"))


def _rel(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


def _examples(kind: str) -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        items: list[object]
        if kind == "console":
            items = list(console_examples(text))
        elif kind == "python":
            items = list(blocks(text, "python"))
        else:
            items = list(sh_examples(text))
        found += [(f"{_rel(page)}#{i}", item) for i, item in enumerate(items, 1)]
    return found


def _nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_pages(item)]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_pages(value)]
    return []


class _Loader(yaml.SafeLoader):
    """mkdocs.yml may hold ``!!python/name:`` tags; the nav is all this test reads."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *_: None)
CONFIG = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def test_mkdocs_build_strict_offline(tmp_path: Path) -> None:
    """The whole site builds with every warning an error, and fetches nothing while it does."""
    assert CONFIG["theme"]["font"] is False  # Material would link Google Fonts otherwise
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "-f", str(REPO / "mkdocs.yml"), "-d", str(site)],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("load_run", "evaluate", "paired_test", "Comparison", "InputError"):
        assert 'id="rankproof.' in api and name in api, name
    measure = (site / "commands" / "measure" / "index.html").read_text(encoding="utf-8")
    assert "--rel-level" in measure  # the hook put the command's live --help there
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in html and "fonts.gstatic.com" not in html, page


def test_every_page_is_in_the_nav_and_every_command_has_a_page() -> None:
    from rankproof.cli._app import COMMANDS

    nav = _nav_pages(CONFIG["nav"])
    assert sorted(nav) == sorted(_rel(p) for p in PAGES)
    for command in COMMANDS:
        assert f"commands/{command}.md" in nav, command
        page = (DOCS / "commands" / f"{command}.md").read_text(encoding="utf-8")
        assert f"<!-- rankproof-help: {command} -->" in page, command


@pytest.mark.parametrize(("where", "example"), _examples("console"), ids=lambda v: v
                         if isinstance(v, str) else "")
def test_console_example(where: str, example: tuple[str, list[str]]) -> None:
    run_console(*example)


@pytest.mark.parametrize(("where", "code"), _examples("python"), ids=lambda v: v
                         if isinstance(v, str) and "\n" not in v else "")
def test_python_example(where: str, code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run_python(code, where, monkeypatch)


@pytest.mark.parametrize(("where", "lines"), _examples("sh"), ids=lambda v: v
                         if isinstance(v, str) else "")
def test_shell_example(where: str, lines: list[str], tmp_path: Path) -> None:
    run_sh(lines, tmp_path)


def _hooks() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("rankproof_docs_hooks", DOCS / "_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_doctest_lines_become_code_and_fences_are_left_alone() -> None:
    """Docstrings' ``>>>`` examples render as code (Markdown would read ``['d1']`` as a link
    reference, which ``--strict`` refuses); a fenced block is never touched."""
    import markdown

    hooks: object = _hooks()
    md = markdown.Markdown(extensions=["pymdownx.superfences",
                                       hooks._DoctestExtension()])  # type: ignore[attr-defined]
    html = md.convert("Ranks:\n\n>>> fuse(a, b)\n[('y', 0.03), ('x', 0.01)]\n\nDone.\n")
    assert "<blockquote>" not in html
    assert html.index("<code") < html.index("0.03") < html.index("</code>")
    pre = hooks._DoctestPreprocessor(md)  # type: ignore[attr-defined]
    fenced = ["```python", ">>> 1 + 1", "2", "```"]
    assert pre.run(fenced) == fenced


def test_the_help_marker_becomes_the_commands_help() -> None:
    hooks: object = _hooks()
    page = hooks.on_page_markdown("# x\n\n<!-- rankproof-help: baseline -->\n")  # type: ignore[attr-defined]
    assert "$ rankproof baseline --help" in page and "$ rankproof baseline save --help" in page
    assert "--baseline-dir" in page and "<!-- rankproof-help" not in page
