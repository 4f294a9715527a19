"""``rankproof rag``: score answer files, compare arms, calibrate a judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from rankproof._errors import InputError
from rankproof.cli._app import EXIT_FAILED, app, error_boundary, print_note
from rankproof.cli._engine import AddressOption, EngineOption, WorkersOption, engine_from
from rankproof.cli._history import history_option, record
from rankproof.cli._outputs import force_option, guard_outputs
from rankproof.cli._progress import quiet_option, stages
from rankproof.cli._requests import Request, takes
from rankproof.cli._runs import choices, write_output
from rankproof.cli._stat_options import alpha_option, resamples_option, seed_option
from rankproof.report.console import make_console, plain, print_table

FORMATS = ("table", "json", "md")

if TYPE_CHECKING:
    RagFormat = str
else:
    RagFormat = choices("RagFormat", FORMATS)

rag_app = typer.Typer(
    name="rag", no_args_is_help=True,
    help="Score RAG answers (answer metrics, grounding, citations, the triad), compare arms, "
         "calibrate a judge.")
app.add_typer(rag_app, name="rag")


def _provenance(seed: int, inputs: dict[str, Path | None],
                output: Path | None = None) -> dict[str, Any]:
    from rankproof._manifest import provenance

    return provenance(seed=seed, inputs={k: v for k, v in inputs.items() if v is not None},
                      output=output)


def _qrels(path: Path | None) -> Any:
    if path is None:
        return None
    from rankproof.data import load_qrels

    return load_qrels(path)


def _llm_setup(names: str | None, provider_file: Path | None, has_refs: bool) -> Any:
    """``(provider, metric names)`` for ``--llm-metrics``, checked before anything runs."""
    if names is None and provider_file is None:
        return None
    if names is None or provider_file is None:
        raise typer.BadParameter("--llm-metrics and --provider go together")
    from rankproof.providers import Provider, load_provider_config
    from rankproof.rag import check_llm_metrics

    provider = Provider(load_provider_config(provider_file))
    chosen = [n.strip() for n in names.split(",") if n.strip()]
    return provider, check_llm_metrics(chosen, provider, has_refs)


def _llm_run(llm: Any, report: Any, arm: Any, refs: Any,
             labels: Any) -> tuple[Any, dict[str, Any]]:
    """Score the LLM metrics (the library's `score_llm_metrics`) and print their failures;
    every call failing is exit 2 (its `TargetError`)."""
    from rankproof.rag import score_llm_metrics

    provider, names = llm
    report, summary, lines = score_llm_metrics(report, arm, names, provider, refs, labels)
    for line in lines:
        print_note(line)
    return report, summary


class RagScoreArgs(Request):
    """`score`'s options, as one request (`rankproof.cli._requests.takes`)."""

    answers: Path = typer.Argument(..., metavar="ANSWERS",
                                   help="Answer file (JSONL: query_id, answer, contexts, …).")
    references: Path | None = typer.Option(
        None, "--references", metavar="REF", help="Reference answers (JSONL: query_id, "
                                                  "answers). Needed by the answer metrics.")
    qrels: Path | None = typer.Option(None, "--qrels", metavar="QRELS",
                                      help="Judged passages: context relevance from judgments "
                                           "instead of the lexical proxy.")
    metrics: list[str] | None = typer.Option(None, "-m", "--metric", metavar="METRIC",
                                             help="Metrics to compute (default: all RAG "
                                                  "metrics). Repeatable.")
    judge: Path | None = typer.Option(None, "--judge", metavar="CONFIG",
                                      help="An LLM judge config (YAML): its score of each "
                                           "answer becomes judge_score (advisory).")
    labels: Path | None = typer.Option(None, "--labels", metavar="HUMAN",
                                       help="With --judge: human labels (JSONL query_id, "
                                            "label) for a judge-corrected (PPI) mean.")
    repeat: int = typer.Option(1, "--repeat", metavar="N",
                               help="With --judge: ask N times per answer (self-agreement).")
    keep_citations: bool = typer.Option(
        False, "--keep-citations", help="Answer metrics read citation markers ([1]) as "
                                        "answer words (default: stripped first).")
    llm_metrics: str | None = typer.Option(
        None, "--llm-metrics", metavar="M1,M2",
        help="LLM-based metrics through --provider: faithfulness, answer_relevancy, "
             "context_precision, context_recall (the last two need --references; "
             "docs/providers.md). Advisory.")
    provider_file: Path | None = typer.Option(None, "--provider", metavar="PROVIDER.yaml",
                                              help="The provider of --llm-metrics.")
    llm_labels: Path | None = typer.Option(
        None, "--llm-labels", metavar="HUMAN",
        help="With --llm-metrics: human labels (JSONL query_id, metric, label in [0, 1]) for "
             "a prediction-powered (PPI++) mean of each labelled metric.")
    fmt: RagFormat = typer.Option("table", "--format", "-f", help="Output format.")
    output: Path | None = typer.Option(None, "-o", "--output", "--json", metavar="PATH",
                                       help="Also write the report as JSON here.")
    history: str | None = history_option()
    force: bool = force_option()
    engine: EngineOption = "local"
    address: AddressOption = None
    workers: WorkersOption = None
    quiet: bool = quiet_option()


@rag_app.command("score")
@error_boundary
@takes(RagScoreArgs)
def score(a: RagScoreArgs) -> None:
    """Score one answer file: answer metrics, grounding, citations, the triad (per case)."""
    from rankproof.rag import (
        DEFAULT_METRICS,
        load_answers,
        load_judge,
        load_labels,
        load_references,
        score_answers,
    )

    if a.labels is not None and a.judge is None:
        raise typer.BadParameter("--labels needs --judge")
    if a.history is not None and a.output is None:
        raise InputError("--history records the report this command writes: give -o PATH")
    guard_outputs([(a.output, "rankproof.rag")],
                  [a.answers, a.references, a.qrels, a.judge, a.labels, a.llm_labels],
                  force=a.force)
    the_judge = None if a.judge is None else load_judge(a.judge)
    human = (None if a.labels is None or the_judge is None
             else load_labels(a.labels, the_judge.identity.scale))
    arm = load_answers(a.answers)
    refs = None if a.references is None else load_references(a.references)
    llm = _llm_setup(a.llm_metrics, a.provider_file, refs is not None)
    if a.llm_labels is not None and llm is None:
        raise typer.BadParameter("--llm-labels needs --llm-metrics")
    from rankproof.rag import load_metric_labels

    metric_labels = None if a.llm_labels is None else load_metric_labels(a.llm_labels)
    chosen = tuple(a.metrics) if a.metrics else DEFAULT_METRICS
    if refs is None and not a.metrics:
        from rankproof.rag import ANSWER_METRICS

        chosen = tuple(m for m in DEFAULT_METRICS if m not in ANSWER_METRICS)
        print_note("no --references: the answer metrics (exact match, token-F1, ROUGE-L, BLEU) "
              "are left out")
    engine_info = None
    with stages(a.quiet) as bar:
        if the_judge is None:
            with bar.stage(f"scoring {len(arm.rows):,} answer(s)"):
                report = score_answers(arm, refs, qrels=_qrels(a.qrels), metrics=chosen,
                                       repeat=a.repeat, labels=human,
                                       strip_citations=not a.keep_citations)
        else:  # the judge's calls are the engine's tasks (they wait on its server: kind "io")
            with engine_from(a.engine, a.address, a.workers) as executor, bar.stage(
                    f"scoring {len(arm.rows):,} answer(s), with {len(arm.rows) * a.repeat:,} "
                    "judge call(s)"):
                engine_info = executor.describe()
                report = score_answers(arm, refs, qrels=_qrels(a.qrels), metrics=chosen,
                                       judge=the_judge, repeat=a.repeat, labels=human,
                                       executor=executor, strip_citations=not a.keep_citations)
        llm_summary = None
        if llm is not None:
            with bar.stage(f"LLM metrics over {len(arm.rows):,} answer(s)"):
                report, llm_summary = _llm_run(llm, report, arm, refs, metric_labels)
    prov = _provenance(0, {"answers": a.answers, "references": a.references, "qrels": a.qrels,
                           "provider": a.provider_file, "llm_labels": a.llm_labels}, a.output)
    if engine_info is not None:
        prov["engine"] = engine_info
    doc = {**report.to_dict(), "provenance": prov}
    if llm_summary is not None:
        doc["llm_metrics"] = llm_summary
    if a.output is not None:
        write_output(a.output, json.dumps(doc, indent=2, allow_nan=False) + "\n")
    record(a.history, [a.output])
    if a.fmt == "json":
        typer.echo(json.dumps(doc, indent=2, allow_nan=False))
    else:
        means = report.means
        rows = [(m, f"{means[m]:.4f}" if m in means else "—",
                 str(len(report.values(m)))) for m in report.metrics]
        if a.fmt == "md":
            typer.echo(f"### {report.name}: {report.n} answers\n\n| metric | mean | n |\n"
                       "|---|---:|---:|")
            for r in rows:
                typer.echo("| " + " | ".join(r) + " |")
        else:
            from rich import box
            from rich.table import Table

            table = Table(title=plain(f"{report.name}: {report.n} answers"), box=box.SIMPLE_HEAD,
                          title_justify="left")
            for h in ("metric", "mean", "n"):
                table.add_column(h, justify="left" if h == "metric" else "right")
            for r in rows:
                table.add_row(*(plain(c) for c in r))
            print_table(make_console(), table)
    if report.judge is not None:
        j = report.judge
        line = (f"judge {j.identity['model']}: {j.calls} call(s), {j.n_errors} error row(s), "
                f"mean {j.mean if j.mean is None else round(j.mean, 4)}")
        if j.repeat > 1:
            shown = ", ".join("—" if m is None else f"{m:.4f}" for m in j.repeat_means)
            line += f" (pooled over {j.repeat} repeats; per repeat: {shown})"
        if j.ppi is not None:
            line += (f"; corrected (PPI) mean {j.ppi.estimate:.4f} "
                     f"[{j.ppi.ci_low:.4f}, {j.ppi.ci_high:.4f}] from {j.ppi.n} labels")
        print_note(line)
        failed = j.failure_line()
        if failed is not None:
            print_note(f"judge at {j.endpoint or '?'}: {failed}")
    for cav in report.caveats:
        print_note(cav)


@rag_app.command("calibrate-judge")
@error_boundary
def calibrate_judge(
    judge: Path = typer.Option(..., "--judge", metavar="CONFIG", help="The judge config."),
    answers: Path = typer.Option(..., "--answers", metavar="ANSWERS",
                                 help="The answers the humans labelled."),
    labels: Path = typer.Option(..., "--labels", metavar="HUMAN",
                                help="Human labels (JSONL query_id, label) on the judge's "
                                     "scale."),
    output: Path = typer.Option(..., "-o", "--output", metavar="PATH",
                                help="Where to write the calibration (JSON)."),
    force: bool = force_option(),
    engine: EngineOption = "local",
    address: AddressOption = None,
    workers: WorkersOption = None,
) -> None:
    """Measure the judge against human labels (Cohen's κ, accuracy, confusion) and save it."""
    from rankproof.rag import calibrate, load_answers, load_judge, load_labels

    guard_outputs([(output, "rankproof.rag.judge-calibration")], [judge, answers, labels],
                  force=force)
    the_judge = load_judge(judge)
    human = load_labels(labels, the_judge.identity.scale)
    arm = load_answers(answers)
    rows = [r for r in arm.rows if r.query_id in human]
    missing = sorted(set(human) - {r.query_id for r in rows})
    if missing:
        from rankproof._errors import InputError

        raise InputError(f"{len(missing)} labelled quer(ies) have no answer: {missing[:5]}",
                         path=str(labels), field="query_id")
    # The judge's calls are the engine's tasks, as for `rag score --judge`; every call
    # failing is exit 2 naming the endpoint and the reason (`run_judge`).
    from rankproof.rag import run_judge

    with engine_from(engine, address, workers) as executor:
        result, _ = run_judge(the_judge, rows, executor=executor)
    cal = calibrate(result, human, scale=the_judge.identity.scale, judge=the_judge)
    cal.save(output)
    kappa = "undefined" if cal.kappa is None else f"{cal.kappa:.3f}"
    typer.echo(f"judge {the_judge.identity.model}: κ = {kappa} ({cal.weighting}), accuracy "
               f"{cal.accuracy:.3f} over {cal.n} labelled case(s); written to {output}")


class RagCompareArgs(Request):
    """`compare`'s options, as one request (`rankproof.cli._requests.takes`)."""

    arms: list[Path] = typer.Argument(..., metavar="ANSWERS...",
                                      help="Two or more answer files over the same queries; the "
                                           "first is the baseline.")
    references: Path | None = typer.Option(None, "--references", metavar="REF",
                                           help="Reference answers (needed by answer metrics).")
    qrels: Path | None = typer.Option(None, "--qrels", metavar="QRELS",
                                      help="Judged passages for context relevance.")
    metrics: list[str] | None = typer.Option(None, "-m", "--metric", metavar="METRIC",
                                             help="Metrics to compare (default: all). "
                                                  "Repeatable.")
    allow_arm_mismatch: bool = typer.Option(
        False, "--allow-arm-mismatch",
        help="Compare arms whose manifests differ in prompt, checkpoint or decoding (stamped).")
    alpha: float = alpha_option()
    resamples: int = resamples_option(help="Resamples.")
    seed: int = seed_option(help="Seed of the randomization test (recorded).")
    fmt: RagFormat = typer.Option("table", "--format", "-f", help="Output format.")
    output: Path | None = typer.Option(None, "-o", "--output", "--json", metavar="PATH",
                                       help="Also write the comparison as JSON here.")
    history: str | None = history_option()
    fail_on_regression: bool = typer.Option(
        False, "--fail-on-regression", help="Exit 1 when an arm is significantly worse.")
    force: bool = force_option()


@rag_app.command("compare")
@error_boundary
@takes(RagCompareArgs)
def compare(a: RagCompareArgs) -> None:
    """Is each arm better, worse, or not detectably different from the first, per metric?"""
    from rankproof.rag import (
        ANSWER_METRICS,
        DEFAULT_METRICS,
        compare_arms,
        load_answers,
        load_references,
    )

    if a.history is not None and a.output is None:
        raise InputError("--history records the comparison this command writes: give -o PATH")
    guard_outputs([(a.output, "rankproof.comparison")], [*a.arms, a.references, a.qrels],
                  force=a.force)
    files = [load_answers(arm) for arm in a.arms]
    refs = None if a.references is None else load_references(a.references)
    chosen = tuple(a.metrics) if a.metrics else (
        DEFAULT_METRICS if refs is not None
        else tuple(m for m in DEFAULT_METRICS if m not in ANSWER_METRICS))
    result, _ = compare_arms(files, refs, qrels=_qrels(a.qrels), metrics=chosen,
                             allow_arm_mismatch=a.allow_arm_mismatch, alpha=a.alpha,
                             resamples=a.resamples, seed=a.seed)
    inputs: dict[str, Path | None] = {f"arm{i}": a for i, a in enumerate(a.arms)}
    inputs.update(references=a.references, qrels=a.qrels)
    text = json.dumps({**result.to_dict(), "provenance": _provenance(a.seed, inputs, a.output),
                       "manifests": {f.name: None if f.manifest is None else f.manifest.to_dict()
                                     for f in files}}, indent=2, allow_nan=False)
    if a.output is not None:
        write_output(a.output, text + "\n")
    record(a.history, [a.output])
    if a.fmt == "json":
        typer.echo(text)
    else:
        from rankproof.cli.compare import _print_comparison  # the one comparison printer

        _print_comparison(result, str(a.fmt))
    if a.fail_on_regression and result.regressions:
        raise typer.Exit(EXIT_FAILED)
