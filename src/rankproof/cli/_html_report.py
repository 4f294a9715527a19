"""``--html PATH`` on a command that writes a JSON report: the HTML report beside it.

The HTML is exactly what ``rankproof report JSON --html PATH`` renders (one view, every
format from it), made from the JSON file the command has just written, so the two cannot
disagree and the report's evidence sidecar, when there is one, is read from beside it.
The destination is checked with the command's other outputs before anything is read or
written (`rankproof.cli._outputs.guard_outputs`: not an input, not given twice, not a file
of another kind unless ``--force``), and the page is written atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from rankproof.cli._outputs import STDIN


def html_option() -> Any:
    """The one ``--html PATH`` option of a command that writes a JSON report."""
    return typer.Option(
        None, "--html", metavar="PATH",
        help="Also write the report as one self-contained HTML file here (what `rankproof "
             "report JSON --html` renders: offline, inline CSS, plots and script).")


def html_destination(html: Path | None) -> list[tuple[Path | None, str | None]]:
    """``html`` as a `guard_outputs` destination; standard output is refused (exit 2): the
    command's tables already go there."""
    if html is not None and str(html) == STDIN:
        raise typer.BadParameter("the HTML report needs a file path, not standard output",
                                 param_hint="'--html'")
    return [(html, None)]


def write_html(document: Path, html: Path) -> Path:
    """Render the JSON report ``document`` (already written) as HTML into ``html``,
    atomically; return ``html``."""
    from rankproof._io import commit_all
    from rankproof.report.document import read
    from rankproof.report.html import render_html
    from rankproof.report.views import build

    commit_all([(html, render_html(build(read(document))))])
    return html
