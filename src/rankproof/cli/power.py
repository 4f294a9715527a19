"""``rankproof power``: how many queries does it take to see an effect?"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer
from rich.table import Table

from rankproof._errors import InputError
from rankproof.cli._app import app, error_boundary
from rankproof.cli._requests import Request, takes
from rankproof.cli._stat_options import alpha_option, seed_option
from rankproof.comparison import ComparisonRow, rows_from_document, select_row
from rankproof.data import read_document, validate_model
from rankproof.report.console import make_console, print_table
from rankproof.stats import DetectionTable, detection_table


class PowerFormat(StrEnum):
    table = "table"
    json = "json"


class PowerMethod(StrEnum):
    normal = "normal"
    simulated = "simulated"


def _pilot_rows(path: Path) -> tuple[ComparisonRow, ...]:
    """The comparison rows of a saved comparison, eval report (v1 or v2) or gate result."""
    doc = read_document(path, what="pilot")
    try:
        if isinstance(doc, dict) and doc.get("kind") == "rankproof.eval":
            from rankproof.harness import EvalReport

            report = validate_model(doc, EvalReport, str(path), what="pilot",
                                    kind="valid eval report")
            return tuple(report.comparisons)
        return rows_from_document(doc)
    except InputError as exc:
        if exc.path is not None:
            raise
        raise InputError(exc.reason, path=str(path), field=exc.field) from None


def detection_rich_table(table: DetectionTable, title: str) -> Table:
    out = Table(title=title, title_justify="left")
    out.add_column("effect", justify="right")
    for n in table.ns:
        out.add_column(f"n={n}", justify="right")
    out.add_column(f"queries for {table.target_power:.0%} power", justify="right")
    for i, effect in enumerate(table.effects):
        needed = table.queries_needed[i]
        out.add_row(f"{effect:+g}", *[f"{p:.0%}" for p in table.power[i]],
                    "—" if needed is None else str(needed))
    return out


class PowerArgs(Request):
    """`power`'s options, as one request (`rankproof.cli._requests.takes`)."""

    pilot: Path | None = typer.Option(
        None, "--pilot", help="A comparison JSON (rankproof compare -o), an eval report or a "
                              "gate result (--json) whose per-query differences serve as "
                              "the pilot.")
    sd: float | None = typer.Option(None, "--sd", help="SD of per-query differences.")
    effects: list[float] | None = typer.Option(None, "--effect",
                                               help="Effect(s) to detect (default .02 .05 .10).")
    ns: list[int] | None = typer.Option(None, "--n", help="Query counts (default 50 100 200 "
                                                          "500).")
    candidate: str | None = typer.Option(None, "--candidate",
                                         help="With --pilot: which candidate's differences.")
    measure: str | None = typer.Option(None, "-m", "--measure",
                                       help="With --pilot: which measure's differences.")
    alpha: float = alpha_option(help="Two-sided level of the test whose power is computed.")
    target: float = typer.Option(0.8, "--power", help="Target power for 'queries needed'.")
    method: PowerMethod = typer.Option(PowerMethod.normal, "--method",
                                       help="normal approximation, or simulation by "
                                            "resampling the pilot deltas (--pilot only).")
    simulations: int = typer.Option(1000, "--simulations")
    seed: int = seed_option()
    fmt: PowerFormat = typer.Option(PowerFormat.table, "--format", "-f", metavar="table|json",
                                    help="A table, or the detection table as JSON.")
    as_json: bool = typer.Option(False, "--json", hidden=True,
                                 help="Same as --format json (kept for scripts).")


@app.command()
@error_boundary
@takes(PowerArgs)
def power(a: PowerArgs) -> None:
    """Detection rates for effects × query counts, and the queries needed for each effect."""
    if (a.pilot is None) == (a.sd is None):
        raise InputError("give exactly one of --pilot COMPARISON.json or --sd SD")
    if a.pilot is not None:
        row = select_row(_pilot_rows(a.pilot), candidate=a.candidate, measure=a.measure)
        source: object = row.differences
        title = (f"Power from pilot: {row.candidate} − {row.baseline} on {row.measure} "
                 f"({row.result.n} queries)")
    else:
        if a.method is PowerMethod.simulated:
            raise InputError("--method simulated needs --pilot (it resamples pilot deltas)")
        source = a.sd
        title = f"Power for SD of differences {a.sd:g}"
    result = detection_table(
        source,  # type: ignore[arg-type]
        tuple(a.effects or (0.02, 0.05, 0.10)), tuple(a.ns or (50, 100, 200, 500)),
        alpha=a.alpha, target_power=a.target, method=a.method.value, simulations=a.simulations,
        seed=a.seed,
    )
    if a.as_json or a.fmt is PowerFormat.json:
        typer.echo(result.to_json())
        return
    print_table(make_console(), detection_rich_table(result, f"{title}; α = {a.alpha:g}, "
                                                             f"{result.method}"))
