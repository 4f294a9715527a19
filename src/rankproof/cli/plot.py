"""``rankproof plot``: save a figure of a result (forest, per-query, null, curve, trend) as
PNG, SVG or PDF — the figure the HTML report shows, drawn by the same code
(`rankproof.report.figures`), with publication defaults."""

from __future__ import annotations

from pathlib import Path

import typer

from rankproof.cli._app import app, err_console, error_boundary
from rankproof.cli._outputs import force_option, guard_outputs
from rankproof.report.console import plain


@app.command("plot")
@error_boundary
def plot_command(
    result: Path = typer.Argument(..., metavar="RESULT.json",
                                  help="A comparison, eval report or gate verdict (forest, "
                                       "per-query, null), a discovery report or measure "
                                       "results with curves (curve), or a history trend "
                                       "(history trend -f json) (trend)."),
    kind: str = typer.Option(..., "--kind", metavar="forest|per-query|null|curve|trend",
                             help="Which figure."),
    measure: str | None = typer.Option(None, "--measure", "-m", metavar="MEASURE",
                                       help="The measure (for curve: the curve's key); "
                                            "needed when the result holds several."),
    system: str | None = typer.Option(None, "--system", metavar="NAME",
                                      help="per-query, null: the candidate (needed when "
                                           "there are several)."),
    width: float = typer.Option(3.5, "--width", metavar="INCHES",
                                help="Figure width: 3.5 is one column of a two-column "
                                     "paper, 7 the page."),
    output: Path = typer.Option(..., "-o", "--output", metavar="FIG.png|svg|pdf",
                                help="The figure; the format comes from the suffix."),
    force: bool = force_option(),
) -> None:
    """Save a figure of a result (forest, per-query, null, curve, trend) as PNG, SVG or PDF."""
    from rankproof._io import commit_all
    from rankproof.report.figures import (
        FigureRequest,
        draw_figure,
        figure_format,
        load_result,
        save_figure,
    )

    request = FigureRequest(kind, measure, system)
    fmt = figure_format(output)
    guard_outputs([(output, None)], [result], force=force)
    drawing = draw_figure(load_result(result), request)
    blob = save_figure(drawing, fmt, width=width)
    commit_all([(output, blob)])
    err_console.print(plain(f"wrote {output} ({kind}, {fmt}, {len(blob):,} bytes)"))
