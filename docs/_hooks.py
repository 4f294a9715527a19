"""MkDocs hook: a command page's ``<!-- rankproof-help: NAME -->`` line becomes that command's
``--help`` (and each subcommand's, for a group such as ``baseline``), read from the installed
CLI when the site is built, so the option lists in the site cannot drift from the code.
(Listed in ``mkdocs.yml``; excluded from the pages themselves.)"""

from __future__ import annotations

import re
from typing import Any

from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.plugins import event_priority

MARKER = re.compile(r"^<!-- rankproof-help: ([a-z_]+) -->$", re.M)
_ENV = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb", "TERMINAL_WIDTH": "100"}


def _help_text(argv: list[str]) -> str:
    from typer.testing import CliRunner

    from rankproof.cli._app import app

    result = CliRunner().invoke(app, [*argv, "--help"], env=_ENV)
    if result.exit_code != 0:
        raise RuntimeError(f"rankproof {' '.join(argv)} --help exited {result.exit_code}: "
                           f"{result.output}")
    text = "\n".join(line.rstrip() for line in result.output.splitlines()).strip("\n")
    return f"```text\n$ rankproof {' '.join(argv)} --help\n{text}\n```\n"


def _subcommands(name: str) -> list[str]:
    import typer

    from rankproof.cli._app import app

    root: Any = typer.main.get_command(app)
    with root.context_class(root) as ctx:
        command = root.get_command(ctx, name)
        if not hasattr(command, "list_commands"):  # a plain command, not a group
            return []
        return list(command.list_commands(ctx))


def _help(name: str) -> str:
    parts = [_help_text([name])]
    parts += [_help_text([name, sub]) for sub in _subcommands(name)]
    return "\n".join(parts)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return MARKER.sub(lambda m: _help(m.group(1)), markdown)


class _DoctestPreprocessor(Preprocessor):
    """Doctest lines (``>>> …`` and the output below them, up to a blank line) become a
    ``pycon`` code block, in the pages and in the docstrings mkdocstrings renders: Markdown
    would otherwise read ``>>>`` as a quote and ``['d1', 'd2']`` as a link reference."""

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        fence = ""
        i = 0
        while i < len(lines):
            line = lines[i]
            stripped = line.lstrip()
            if stripped.startswith(("```", "~~~")):
                marker = stripped[:3]
                fence = "" if fence == marker else (fence or marker)
            if not fence and (stripped.startswith(">>> ") or stripped == ">>>"):
                indent = line[: len(line) - len(stripped)]
                block: list[str] = []
                while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
                    block.append(lines[i])
                    i += 1
                out += ["", f"{indent}```pycon", *block, f"{indent}```", ""]
                continue
            out.append(line)
            i += 1
        return out


class _DoctestExtension(Extension):
    def extendMarkdown(self, md: Any) -> None:  # Python-Markdown names it so
        md.preprocessors.register(_DoctestPreprocessor(md), "rankproof_doctest", 27)


@event_priority(100)  # before mkdocstrings reads the extensions for its docstrings
def on_config(config: Any, **_: Any) -> Any:
    config.markdown_extensions.append(_DoctestExtension())
    return config
