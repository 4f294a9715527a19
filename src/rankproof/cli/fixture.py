"""``rankproof fixture check``: the fixture headline gate (`rankproof.gate.check_fixture`).

Recomputes the three headline metrics of the committed fixture and compares
each with its expected value and tolerance: exit 0 when every value is within
its tolerance, 1 naming every value outside (expected, observed, |Δ|,
tolerance), 2 when the expected file is malformed. ``--dump-observed`` prints
(or writes with ``-o``) the expected file a person would commit: the observed
values with the current tolerances. rankproof never rewrites the expected file
itself: a changed golden is a reviewed diff.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from rankproof._io import commit_all
from rankproof.cli._app import EXIT_FAILED, app, error_boundary, print_note
from rankproof.cli._outputs import STDIN, force_option, guard_outputs
from rankproof.gate import (
    check_fixture,
    load_expected,
    observe_fixture,
    proposed_expected,
)

fixture_app = typer.Typer(
    name="fixture", no_args_is_help=True,
    help="Pin headline metrics of a committed fixture: check them, or propose new values.")
app.add_typer(fixture_app, name="fixture")


@fixture_app.command("check")
@error_boundary
def check_command(
    expected: Path = typer.Argument(..., metavar="EXPECTED.json",
                                    help="Expected values and tolerances "
                                         "({\"metrics\": {NAME: {\"expected\", "
                                         "\"tolerance\"}}}), as seed 003's golden.json."),
    dump_observed: bool = typer.Option(False, "--dump-observed",
                                       help="Print the proposed expected file (observed values, "
                                            "current tolerances) instead of checking."),
    output: Path | None = typer.Option(None, "-o", "--output", metavar="PATH",
                                       help="With --dump-observed: write the proposed file "
                                            "here (never over EXPECTED.json)."),
    fixture: Path | None = typer.Option(None, "--fixture", metavar="DIR",
                                        help="A fixture directory (qrels.txt, run.txt, "
                                             "answers.jsonl, references.jsonl); default: the "
                                             "committed one."),
    force: bool = force_option(),
) -> None:
    """Check a committed fixture's headline metrics against EXPECTED.json."""
    if output is not None and not dump_observed:
        raise typer.BadParameter("-o/--output writes the proposed file: give --dump-observed")
    guard_outputs([(output, None)], [expected], force=force)
    if dump_observed:
        tolerances: dict[str, float] = {}
        if expected.exists():
            tolerances = {n: e.tolerance for n, e in load_expected(expected).items()}
        else:
            print_note(f"{expected} does not exist: default tolerances proposed")
        text = json.dumps(proposed_expected(observe_fixture(fixture), tolerances),
                          indent=2) + "\n"
        if output is None or str(output) == STDIN:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            commit_all([(output, text)])
            print_note(f"proposed expected values written to {output}; review the diff and "
                       f"commit it as {expected}")
        return
    result = check_fixture(expected, fixture=fixture)
    where = "the committed fixture" if fixture is None else str(fixture)
    for check in result.checks:
        typer.echo(("ok    " if check.passed else "FAIL  ") + check.describe())
    if result.passed:
        typer.echo(f"fixture headline gate passed: {len(result.checks)} values within "
                   f"tolerance ({where})")
        return
    names = ", ".join(c.name for c in result.failures)
    typer.echo(f"fixture headline gate FAILED: {len(result.failures)} of {len(result.checks)} "
               f"outside tolerance ({names}); if a deliberate change moved them, inspect "
               f"`rankproof fixture check {expected} --dump-observed` and commit the reviewed "
               "values", err=True)
    raise typer.Exit(EXIT_FAILED)

