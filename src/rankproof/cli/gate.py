"""``rankproof gate``: evaluate a checks file on a report; exit 1 only on a blocking failure.

The report may be any rankproof JSON that keeps per-query values (an eval
report, ``rankproof measure -f json`` output, a ``rankproof compare -o``
comparison, a run result); so may a ``--baseline`` given as a path
(`rankproof.gate.load_result`). ``--plugin`` imports modules that register
metrics before the checks' names are resolved.

With ``--target URL --goldens PATH`` the gate runs a search service over the
golden set instead of reading a report (`rankproof.cli._gate_target`): sharded
on ``--engine/--workers``, never more than ``--max-concurrency`` requests in
flight, checkpointed as shards finish and continued by ``--resume``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from rankproof._errors import ConfigError
from rankproof._io import commit_all
from rankproof.cli._app import EXIT_FAILED, app, err_console, error_boundary
from rankproof.cli._engine import AddressOption, EngineOption, WorkersOption
from rankproof.cli._history import (
    history_option,
    history_source,
    is_history_ref,
    materialize,
    record,
)
from rankproof.cli._outputs import STDIN, force_option, guard_outputs
from rankproof.cli._requests import Request, takes
from rankproof.cli._runs import choices
from rankproof.cli._stat_options import (
    CorrectionChoice,
    TestChoice,
    alpha_option,
    correction_option,
    resamples_option,
    seed_option,
    test_option,
)
from rankproof.gate import (
    DEFAULT_DIR,
    GateVerdict,
    baseline_path,
    import_plugin,
    load_baseline_input,
    load_checks,
    load_result,
    run_gate,
)
from rankproof.report.console import make_console, plain, print_table
from rankproof.report.gate import verdict_lines, verdict_markdown, verdict_table
from rankproof.report.junit import verdict_junit
from rankproof.stats import (
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TEST,
)

DEFAULT_REPORT = Path("evals/results/latest.json")
FORMATS = ("table", "json", "md", "junit")
"""What the gate prints on standard output: a Rich table, the verdict as JSON, the Markdown
summary, or JUnit XML."""

if TYPE_CHECKING:
    GateFormat = str
else:
    GateFormat = choices("GateFormat", FORMATS)


def baseline_dir_option() -> Any:
    """The one option naming the baselines folder (gate and every baseline command)."""
    return typer.Option(DEFAULT_DIR, "--baseline-dir", metavar="DIR",
                        help="Where named baselines live.")


def write_outputs(verdict: GateVerdict, junit: Path | None, markdown: Path | None,
                  json_out: Path | None) -> list[str]:
    """Write the requested files, all or nothing; append to $GITHUB_STEP_SUMMARY if set.

    Everything is rendered in memory first, then `rankproof._io.commit_all`
    writes the files together: when one cannot be written, the others are as
    they were. ``-`` is standard output, written after the files. The step
    summary is GitHub's, appended to as its contract says (other steps write
    to it too); failing to append is a printed warning, not a failed gate.
    """
    md = verdict_markdown(verdict)
    wanted: list[tuple[str, Path | None, Callable[[], str]]] = [
        ("JUnit XML", junit, lambda: verdict_junit(verdict)),
        ("Markdown", markdown, lambda: md),
        ("JSON", json_out, lambda: verdict.to_json() + "\n")]
    rendered = [(label, path, text()) for label, path, text in wanted if path is not None]
    commit_all([(path, text) for _, path, text in rendered if str(path) != STDIN])
    written = []
    for label, path, text in rendered:
        if str(path) == STDIN:
            typer.echo(text, nl=False)
        else:
            written.append(f"{label}: {path}")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(md + "\n")
        except OSError as exc:
            line = plain("warning:", style="yellow")
            line.append_text(plain(f" could not append to $GITHUB_STEP_SUMMARY ({summary}): "
                                   f"{exc.strerror or exc}"))
            err_console.print(line)
        else:
            written.append(f"GitHub step summary: {summary}")
    return written


def render(verdict: GateVerdict, fmt: str) -> None:
    """Print the verdict on standard output in ``fmt`` (one of `FORMATS`)."""
    if fmt == "json":
        typer.echo(verdict.to_json())
    elif fmt == "md":
        typer.echo(verdict_markdown(verdict), nl=False)
    elif fmt == "junit":
        typer.echo(verdict_junit(verdict), nl=False)
    else:
        console = make_console()
        print_table(console, verdict_table(verdict))
        for line in verdict_lines(verdict):
            console.print(plain(line))


def _baseline_file(ref: str | None, directory: Path) -> Path | None:
    """The file a ``--baseline`` NAME or PATH would be read from (an input to protect)."""
    if ref is None:
        return None
    if "/" in ref or os.sep in ref or ref.endswith(".json") or Path(ref).is_file():
        return Path(ref)  # load_baseline's rule for a path
    try:
        return baseline_path(ref, directory)
    except ConfigError:  # load_baseline reports a bad name
        return None


def _provenance(seed: int, checks: Path, report: Path | None, baseline: Path | None,
                json_out: Path | None, goldens: Path | None = None,
                ran: dict[str, Any] | None = None) -> dict[str, Any]:
    """The verdict's provenance block; its scope is the checked report's (a target run has
    none), and a target run records its engine and target."""
    from rankproof._manifest import provenance, recorded_scope

    if report is None:
        return provenance(seed=seed, inputs={"checks": checks, "goldens": goldens,
                                             "baseline": baseline},
                          output=json_out, extra=ran)
    return provenance(seed=seed, inputs={"checks": checks, "report": report,
                                         "baseline": baseline},
                      output=json_out, scope=recorded_scope(report))


class GateArgs(Request):
    """`gate_command`'s options, as one request (`rankproof.cli._requests.takes`)."""

    checks: Path = typer.Argument(..., metavar="CHECKS", help="Checks file (YAML).")
    report: Path | None = typer.Option(None, "--report", "-r", metavar="PATH",
                                       help="What to check: a rankproof eval report, rankproof "
                                            "measure JSON (-f json) or a comparison (rankproof "
                                            "compare -o) — any rankproof JSON with per-query "
                                            f"values. Default {DEFAULT_REPORT}, unless "
                                            "--target runs a service instead.")
    stage: str | None = typer.Option(None, "--stage", "--system", metavar="NAME",
                                     help="The report stage, measure run or comparison system "
                                          "to check (required when the file has several; a "
                                          "comparison's one candidate is the default).")
    baseline: str | None = typer.Option(None, "--baseline", "-b", metavar="NAME|PATH",
                                        help="Baseline NAME (in --baseline-dir) or PATH (a "
                                             "baseline, or any file --report accepts), or a "
                                             "stored result: history:ID or "
                                             "history:latest@BRANCH, for vs_baseline checks.")
    baseline_stage: str | None = typer.Option(
        None, "--baseline-stage", "--baseline-system", metavar="NAME",
        help="With --baseline PATH: its stage, run or system to compare with (default: the "
             "comparison's baseline, the eval report's baseline stage, or its only run).")
    baseline_dir: Path = baseline_dir_option()
    plugins: list[str] | None = typer.Option(
        None, "--plugin", metavar="MODULE",
        help="Import MODULE (a dotted name importable from here, or a .py path) before the "
             "checks run, so the metrics it registers can be checked. Repeatable.")
    junit: Path | None = typer.Option(None, "--junit", metavar="PATH",
                                      help="Write JUnit XML here (- is standard output).")
    markdown: Path | None = typer.Option(None, "--markdown", metavar="PATH",
                                         help="Write a Markdown summary here (also appended "
                                              "to $GITHUB_STEP_SUMMARY when set).")
    json_out: Path | None = typer.Option(None, "-o", "--output", "--json", metavar="PATH",
                                         help="Write the verdict as JSON here (--json is "
                                              "the older spelling).")
    fmt: GateFormat = typer.Option("table", "--format", "-f",
                                   help="What to print on standard output.")
    test: TestChoice | None = test_option(
        None, "Paired test of the baseline checks (default: the checks file's test:, else "
              f"{DEFAULT_TEST}).")
    correction: CorrectionChoice | None = correction_option(
        None, "Correction across the baseline checks (default: the checks file's "
              f"correction:, else {DEFAULT_CORRECTION}).")
    resamples: int | None = resamples_option(
        None, "Resamples of the baseline checks (default: the checks file's resamples:, else "
              f"{DEFAULT_RESAMPLES}).")
    seed: int | None = seed_option(None, "Seed of the baseline checks (default: the checks "
                                         f"file's seed:, else {DEFAULT_SEED}).")
    alpha: float | None = alpha_option(
        None, "Level of every baseline check that sets no alpha: of its own (default: "
              f"{DEFAULT_ALPHA}).")
    force: bool = force_option()
    history: str | None = history_option(
        "Record the verdict written by --json in the results history, and read a "
        "--baseline history:ID or history:latest@BRANCH from this store (a SQLite file, "
        "postgresql://…, or 'default': $RANKPROOF_HISTORY, else .rankproof/history.db).")
    target: str | None = typer.Option(
        None, "--target", metavar="URL",
        help="Run this HTTP search service over --goldens and gate the run, instead of "
             "reading --report: POST {\"query\", \"id\"}, read {\"ids\": [...]}; one retry on "
             "a 5xx or transport error.")
    goldens: Path | None = typer.Option(None, "--goldens", metavar="PATH",
                                        help="The golden cases (JSONL, YAML or CSV) for --target.")
    target_name: str = typer.Option("target", "--target-name", metavar="NAME",
                                    help="The target's name in the verdict.")
    max_concurrency: int = typer.Option(4, "--max-concurrency", min=1, metavar="N",
                                        help="Requests in flight at once, across all workers.")
    timeout: float = typer.Option(10.0, "--timeout", min=0.001, metavar="S",
                                  help="Seconds for each connect, read and write.")
    deadline: float | None = typer.Option(None, "--deadline", min=0.001, metavar="S",
                                          help="Seconds for a whole call, retry included "
                                               "(default twice --timeout).")
    headers: list[str] | None = typer.Option(None, "--header", metavar="'NAME: VALUE'",
                                             help="Sent with every request. Repeatable.")
    shard_size: int = typer.Option(256, "--shard-size", min=1, metavar="N",
                                   help="Cases per shard: the unit of work and of checkpoints.")
    resume: bool = typer.Option(False, "--resume",
                                help="Continue an interrupted --target run from its checkpoint "
                                     "(in the rankproof cache folder) instead of refusing it.")
    quiet: bool = typer.Option(False, "--quiet", "--no-progress",
                               help="No progress on standard error.")
    engine: EngineOption = "local"
    address: AddressOption = None
    workers: WorkersOption = None


@app.command("gate")
@error_boundary
@takes(GateArgs)
def gate_command(a: GateArgs) -> None:
    """Check a report against CHECKS: exit 0 pass, 1 a blocking check failed, 2 bad input.

    The report may be any rankproof JSON with per-query values: an eval report, rankproof
    measure -f json output, or a rankproof compare -o comparison. With --target URL
    --goldens PATH the gate runs that service over the golden cases instead (resumable
    with --resume after an interruption).
    """
    if a.target is None:
        used = [flag for flag, on in (("--goldens", a.goldens is not None), ("--resume", a.resume),
                                      ("--engine ray", str(a.engine) == "ray"),
                                      ("--address", a.address is not None),
                                      ("--workers", a.workers is not None)) if on]
        if used:
            raise ConfigError(f"{', '.join(used)} only apply to a target run; give --target URL")
    elif a.report is not None or a.stage is not None:
        raise ConfigError("--target runs a service; --report/--stage check a file: give one "
                          "or the other")
    elif a.goldens is None:
        raise ConfigError("--target needs --goldens PATH, the cases to run it on")
    report = DEFAULT_REPORT if a.target is None and a.report is None else a.report
    baseline = a.baseline
    source = None
    if is_history_ref(baseline):  # a stored result: read from the history into a temp file
        baseline = materialize(str(baseline), a.history)
        source = history_source(baseline)
    guard_outputs([(a.junit, None), (a.markdown, None), (a.json_out, "rankproof.gate")],
                  [report if a.target is None else a.goldens, a.checks,
                   _baseline_file(baseline, a.baseline_dir)], force=a.force)
    for module in a.plugins or ():
        import_plugin(module)
    if a.goldens is not None:
        from rankproof.targets import load_goldens

        cases = load_goldens(a.goldens)
        spec = load_checks(a.checks, known_case_ids=cases.ids())
    else:
        result = load_result(report or DEFAULT_REPORT, a.stage)
        spec = load_checks(a.checks, known_case_ids=result.case_ids)
    spec = spec.with_stats(test=None if a.test is None else str(a.test),
                           correction=None if a.correction is None else str(a.correction),
                           resamples=a.resamples, seed=a.seed, alpha=a.alpha)
    base = None
    if baseline is not None:
        base = load_baseline_input(baseline, a.baseline_dir, stage=a.baseline_stage)
    elif a.baseline_stage is not None:
        raise ConfigError("--baseline-stage chooses within --baseline PATH; give --baseline")
    ran = None
    if a.target is not None and a.goldens is not None:
        from rankproof.cli._gate_target import run_target_gate

        verdict, _result, ran = run_target_gate(spec, base, cases, a)
    else:
        verdict = run_gate(spec, result, base)
    block = _provenance(verdict.seed, a.checks, report,
                        None if source else _baseline_file(baseline, a.baseline_dir), a.json_out,
                        a.goldens, ran)
    if source:  # the stored result, not the temporary file it was read through
        block["baseline_history"] = source
    verdict = dataclasses.replace(verdict, provenance=block)
    render(verdict, str(a.fmt))
    for line in write_outputs(verdict, a.junit, a.markdown, a.json_out):
        err_console.print(plain(f"wrote {line}"))
    if a.json_out is not None:
        record(a.history, [a.json_out])
    if not verdict.passed:
        raise typer.Exit(EXIT_FAILED)
