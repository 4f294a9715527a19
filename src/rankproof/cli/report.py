"""``rankproof report``: render any rankproof JSON as HTML, Markdown or LaTeX.

The document's kind and schema version decide how it is read
(`rankproof.report.document`); one view (`rankproof.report.views`) feeds
every format. Every destination is checked before anything is read, every
output is rendered in memory, and then all files are written together
(`rankproof._io.commit_all`): a refused input or output leaves nothing
behind. With no output option the Markdown goes to standard output, ready
for ``>> $GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from rankproof._errors import InputError
from rankproof._io import commit_all
from rankproof.cli._app import app, error_boundary, print_note
from rankproof.cli._outputs import STDIN, force_option, guard_outputs
from rankproof.cli._progress import Stages, quiet_option, stages


def sources_path(latex: Path) -> Path:
    """The ``.sources.json`` sidecar of a LaTeX fragment: ``table.tex`` → ``table.sources.json``."""
    return latex.with_name(latex.stem + ".sources.json")


_SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".tex": "latex"}


def _output_format(output: Path, fmt: str | None) -> str:
    """``-o``'s format: ``-f`` when given, else the suffix; Markdown for standard output."""
    if fmt is not None:
        if fmt not in ("html", "md", "latex"):
            raise InputError(f"-f/--format must be html, md or latex, got {fmt!r}",
                             field="--format")
        return fmt
    if str(output) == STDIN:
        return "md"
    kind = _SUFFIXES.get(output.suffix.lower())
    if kind is None:
        raise InputError(f"cannot tell the format of {output} from its suffix: name it with "
                         "-f html|md|latex (or use .html, .md, .tex)", field="--output")
    return kind


@app.command("report")
@error_boundary
def report_command(
    document: Path = typer.Argument(..., metavar="INPUT.json",
                                    help="Any JSON rankproof writes: an eval report, a "
                                         "comparison, a gate verdict, a discovery or RAG report, "
                                         "measure results."),
    html_out: Path | None = typer.Option(None, "--html", metavar="OUT.html",
                                         help="One self-contained HTML file (offline: inline "
                                              "CSS, SVG plots and script)."),
    md_out: Path | None = typer.Option(None, "--md", metavar="OUT.md",
                                       help="GitHub-flavoured Markdown (≤ 65,536 characters); "
                                            "- is standard output."),
    latex_out: Path | None = typer.Option(None, "--latex", metavar="OUT.tex",
                                          help="A booktabs table fragment, with OUT.sources.json "
                                               "naming the input's digest and this command."),
    latex_style: str = typer.Option(
        "wide", "--latex-style", metavar="wide|long",
        help="--latex of a comparison or eval: wide (one row per system, one column per "
             "measure, best values bold) or long (one row per verdict)."),
    detail: bool = typer.Option(
        False, "--detail",
        help="HTML: list every verdict row in the leading table's verdicts instead of folding "
             "those with no detectable difference into one line per measure."),
    output: Path | None = typer.Option(
        None, "-o", "--output", metavar="OUT",
        help="Write here, in the format -f names or else the suffix says (.html, .md, .tex); "
             "- is standard output (Markdown unless -f says otherwise)."),
    fmt: str | None = typer.Option(None, "-f", "--format", metavar="html|md|latex",
                                   help="The format of -o (default: from its suffix)."),
    force: bool = force_option(),
    quiet: bool = quiet_option(),
) -> None:
    """Render any rankproof JSON as one offline HTML file, Markdown or LaTeX."""
    if latex_style not in ("wide", "long"):
        raise InputError(f"--latex-style must be wide or long, got {latex_style!r}",
                         field="--latex-style")
    if fmt is not None and output is None:
        raise InputError("-f/--format names the format of -o/--output: give -o PATH",
                         field="--format")
    if output is not None:
        kind = _output_format(output, fmt)
        taken = {"html": html_out, "md": md_out, "latex": latex_out}[kind]
        if taken is not None:
            raise InputError(f"-o and --{kind} both ask for {kind}: give one",
                             field="--output")
        if kind == "html":
            html_out = output
        elif kind == "md":
            md_out = output
        else:
            latex_out = output
    if html_out is None and md_out is None and latex_out is None:
        md_out = Path(STDIN)
    sidecar = sources_path(latex_out) if latex_out is not None and str(latex_out) != STDIN \
        else None
    guard_outputs([(html_out, None), (md_out, None), (latex_out, None), (sidecar, None)],
                  [document], force=force)
    from rankproof.report.document import read
    from rankproof.report.views import build

    with stages(quiet) as bar:
        with bar.stage(f"reading {document.name}", files=[document]):
            view = build(read(document))
        rendered = _rendered(bar, view, document, html_out, md_out, latex_out, latex_style,
                             detail, sidecar)
    commit_all([(path, text) for _, path, text in rendered if str(path) != STDIN])
    for label, path, text in rendered:
        if str(path) == STDIN:
            typer.echo(text, nl=not text.endswith("\n"))
        else:
            print_note(f"wrote {label}: {path}")


def _rendered(bar: Stages, view: Any, document: Path, html_out: Path | None,
              md_out: Path | None, latex_out: Path | None, latex_style: str, detail: bool,
              sidecar: Path | None) -> list[tuple[str, Path, str]]:
    """Every asked-for rendering of ``view`` as ``(label, path, text)``, each one a stage
    of the progress display (the HTML's figures are most of the time)."""
    rendered: list[tuple[str, Path, str]] = []
    if html_out is not None:
        from rankproof.report.html import render_html

        with bar.stage("rendering the HTML and its figures"):
            rendered.append(("HTML", html_out, render_html(view, detail=detail)))
    if md_out is not None:
        from rankproof.report.markdown import render_markdown

        rendered.append(("Markdown", md_out, render_markdown(view)))
    if latex_out is not None:
        from rankproof.report.latex import latex_sources, render_latex

        rendered.append(("LaTeX", latex_out, render_latex(view, style=latex_style)))
        if sidecar is not None:
            command = ["rankproof", "report", str(document)]
            for flag, path in (("--html", html_out), ("--md", md_out), ("--latex", latex_out)):
                if path is not None:
                    command += [flag, str(path)]
            command += ["--latex-style", latex_style] + (["--detail"] if detail else [])
            sources = latex_sources(view, command=command, output=latex_out.name)
            rendered.append(("sources", sidecar, json.dumps(sources, indent=2) + "\n"))
    return rendered
