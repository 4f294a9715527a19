"""``rankproof eval``: corpus + judgments → retrieval stages → measured, compared report."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from rankproof.cli._app import app, err_console, error_boundary
from rankproof.cli._engine import AddressOption, EngineOption, WorkersOption, engine_from
from rankproof.cli._evidence import sidecar_outputs, write_reports
from rankproof.cli._history import history_option, record
from rankproof.cli._html_report import html_destination, html_option, write_html
from rankproof.cli._outputs import force_option, guard_outputs
from rankproof.cli._progress import quiet_option
from rankproof.cli._progress import stages as shown_stages
from rankproof.cli._requests import Request, settings, takes
from rankproof.cli._runs import choices
from rankproof.cli._stat_options import (
    confidence_option,
)
from rankproof.comparison import Evidence, EvidenceSidecar
from rankproof.corpus import COLLECTIONS, DOCUMENT_SUFFIXES, find_adaptation
from rankproof.data import IRDS_PREFIX, is_irds
from rankproof.harness import (
    DEFAULT_EVAL_MEASURES,
    STAGES,
    EvalConfig,
    EvalInputs,
    beir_inputs,
    collection_inputs,
    directory_inputs,
    golden_inputs,
    irds_inputs,
    run_experiment,
)
from rankproof.measures import resolve_measures
from rankproof.report.compare import comparison_markdown, print_matrix, verdicts_table
from rankproof.report.console import make_console, plain, print_table
from rankproof.report.eval import eval_tables, synthesis_markdown
from rankproof.retrieval import DENSE_INDEXES
from rankproof.stats import StatSettings

DEFAULT_OUTPUT = Path("evals/results/latest.json")


FORMATS = ("table", "json", "md")
"""Output formats: Rich tables, the report as JSON, the comparison as Markdown."""

_CONFIG_TYPES = typing.get_type_hints(EvalConfig)

if TYPE_CHECKING:
    from rankproof.harness import EvalReport
    from rankproof.providers import ProviderConfig
    from rankproof.rag import Judge, References, SynthesisSettings

    Granularity = str
    CollectionName = str
    EmbedderOpt = str
    DenseIndexOpt = str
    EvalFormat = str
else:
    Granularity = choices("Granularity", typing.get_args(_CONFIG_TYPES["granularity"]))
    CollectionName = choices("CollectionName", COLLECTIONS)
    EmbedderOpt = choices("EmbedderOpt", typing.get_args(_CONFIG_TYPES["embedder"]))
    DenseIndexOpt = choices("DenseIndexOpt", DENSE_INDEXES)
    EvalFormat = choices("EvalFormat", FORMATS)


Synthesis = tuple["ProviderConfig", "SynthesisSettings", "Judge | None", "References | None"]
"""What ``--synthesis`` and its options resolve to, read before anything runs."""


def _inputs(corpus: Path | None, judgments: Path | None, collection: CollectionName | None,
            data_root: Path | None, beir: Path | None, split: str, granularity: Granularity,
            chunk_size: int, overlap: int, irds: str | None = None) -> EvalInputs:
    sources = sum(x is not None for x in (corpus, collection, beir, irds))
    if sources > 1:
        raise typer.BadParameter("give at most one of CORPUS_DIR, --collection, --beir, --irds")
    g = str(granularity)
    if irds is not None:
        if judgments is not None:
            raise typer.BadParameter("--judgments goes with CORPUS_DIR; --irds reads the "
                                     "dataset's own qrels")
        return irds_inputs(irds, g, chunk_size, overlap)  # type: ignore[arg-type]
    if collection is not None:
        if data_root is None:
            raise typer.BadParameter("--collection needs --data-root (the folder holding "
                                     f"{collection}/)", param_hint="'--data-root'")
        return collection_inputs(str(collection), data_root, g,  # type: ignore[arg-type]
                                 chunk_size, overlap)
    if beir is not None:
        return beir_inputs(beir, split, g, chunk_size, overlap)  # type: ignore[arg-type]
    if corpus is not None:
        if judgments is None:
            # A folder written by `rankproof adapt beir` carries its own judgments.
            found = find_adaptation(corpus)
            if found is None:
                raise typer.BadParameter("CORPUS_DIR needs --judgments JUDGMENTS.jsonl (unless "
                                         "it is a folder written by `rankproof adapt beir`)")
            return directory_inputs(found[0], found[1], g, chunk_size,  # type: ignore[arg-type]
                                    overlap, name=corpus.resolve().name, complete=False)
        return directory_inputs(corpus, judgments, g, chunk_size, overlap)  # type: ignore[arg-type]
    if judgments is not None:
        raise typer.BadParameter("--judgments needs CORPUS_DIR")
    return golden_inputs(g, chunk_size, overlap)  # type: ignore[arg-type]


def _plan(inputs: EvalInputs, config: EvalConfig, outputs: list[Path], warmup: int = 8,
          threads: int = 1, synthesis: Synthesis | None = None) -> Table:
    table = Table(title="plan (--dry-run: nothing is indexed, searched or written)",
                  title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value")
    cats = ", ".join(f"{k} {v}" for k, v in inputs.categories.items())
    rows = [
        ("inputs", f"{inputs.name} ({inputs.source})"),
        ("documents", str(len(inputs.corpus.documents))),
        ("chunks", f"{len(inputs.corpus.chunks)} (size {inputs.corpus.chunk_size}, "
                   f"overlap {inputs.corpus.overlap})"),
        ("queries", f"{len(inputs.queries)} ({cats})" if cats else str(len(inputs.queries))),
        ("scored queries", str(len(inputs.qrels.topics))),
        ("judgments", f"{len(inputs.qrels)} qrels rows at {inputs.granularity} granularity"),
        ("stages", ", ".join(config.stages) + " (baseline: bm25)"),
        ("measures", ", ".join(str(m) for m in resolve_measures(config.measures))),
        ("statistics", f"{config.test}, {config.resamples} resamples, seed {config.seed}, "
                       f"{config.correction}, α = {config.alpha:g}"),
        ("evidence", f"each stage's top {config.evidence_depth} per query, with the query text "
                     "and the gold" if config.evidence_depth else "none (--evidence-depth 0)"),
        ("latency", (f"after a {warmup}-query warm-up per stage" if warmup
                     else "no warm-up") + ", torch threads "
                    + (str(threads) if threads else "as torch sets them")),
        ("report", ", ".join(map(str, outputs))),
    ]
    if synthesis is not None:
        provider, settings, judge, references = synthesis
        rows.insert(-1, ("synthesis", f"{provider.model} at {provider.base_url}: one answer per "
                         f"answerable query from the best stage's top {settings.k}, prompt "
                         f"{settings.digest[:19]}… ({settings.prompt_source})"
                         + (", with references" if references is not None else "")
                         + (f", judged by {judge.model}" if judge is not None else "")
                         + (", echo check first" if settings.echo_check else "")))
    for r in rows:
        table.add_row(*r)
    return table


def _outputs(output: Path | None) -> list[Path]:
    """Where the report goes: always `DEFAULT_OUTPUT`, and ``-o`` when it names another file."""
    outputs = [DEFAULT_OUTPUT]
    if output is not None and not (output.exists() and DEFAULT_OUTPUT.exists()
                                   and output.samefile(DEFAULT_OUTPUT)):
        outputs.append(output)
    return outputs


def _guard(outputs: list[Path], corpus: Path | None, judgments: Path | None,
           collection: CollectionName | None, data_root: Path | None, beir: Path | None,
           split: str, force: bool, html: Path | None = None) -> None:
    """Check every destination against every input before anything is read."""
    inputs: list[Path | None] = [judgments]
    if beir is not None:
        inputs += [beir / "corpus.jsonl", beir / "queries.jsonl", beir / "qrels" / f"{split}.tsv"]
    folders: list[tuple[Path | None, frozenset[str] | None]] = [(corpus, DOCUMENT_SUFFIXES)]
    if collection is not None and data_root is not None:
        folders.append((data_root / str(collection), None))
    guard_outputs([*((p, "rankproof.eval") for p in outputs), *sidecar_outputs(outputs),
                   *html_destination(html)], inputs, force=force, input_dirs=folders)


def _input_files(corpus: Path | None, judgments: Path | None,
                 collection: CollectionName | None, data_root: Path | None, beir: Path | None,
                 split: str, irds: str | None = None) -> dict[str, Path | str | list[Path] | None]:
    """The files the report is built from, by role, for its provenance block (a dataset id:
    its digest is over the ir_datasets cache files read)."""
    files: dict[str, Path | str | list[Path] | None] = {"corpus": corpus,
                                                        "judgments": judgments}
    if irds is not None:
        files["irds"] = irds if is_irds(irds) else IRDS_PREFIX + irds
    if collection is not None and data_root is not None:
        files["collection"] = data_root / str(collection)
    if beir is not None:
        files["beir"] = [beir / "corpus.jsonl", beir / "queries.jsonl",
                         beir / "qrels" / f"{split}.tsv"]
    return files


def _synthesis_setup(synthesis: Path | None, k: int, prompt: Path | None, judge: Path | None,
                     echo: bool, references: Path | None) -> Synthesis | None:
    """The synthesis options, every file read and checked before anything runs."""
    if synthesis is None:
        for flag, given in (("--judge", judge is not None), ("--echo-check", echo),
                            ("--synthesis-prompt", prompt is not None),
                            ("--synthesis-references", references is not None)):
            if given:
                raise typer.BadParameter(f"{flag} needs --synthesis PROVIDER.yaml",
                                         param_hint=f"'{flag}'")
        return None
    from rankproof.providers import load_provider_config
    from rankproof.rag import SynthesisSettings, load_judge, load_references

    settings = SynthesisSettings.from_options(k=k, prompt_file=prompt, echo_check=echo)
    return (load_provider_config(synthesis), settings,
            None if judge is None else load_judge(judge),
            None if references is None else load_references(references))


def _synthesized(report: EvalReport, inputs: EvalInputs, synth: Synthesis,
                 quiet: bool) -> EvalReport:
    """The report with its ``synthesis`` field (and the synthesis caveats)."""
    from rankproof.harness import synthesis_passages
    from rankproof.rag import SynthesisQuery, synthesize

    provider, settings, judge, references = synth
    passages = synthesis_passages(inputs, report, settings.k)
    planned = len(passages.rows)
    # One answer per query: the synthesizer names each query as it is answered.
    with shown_stages(quiet) as bar, bar.counting(f"synthesizing answers from {passages.stage}",
                                            "answers") as tick:
        answered = [0]

        def one_more(_qid: str) -> None:
            answered[0] += 1
            tick(answered[0], planned)

        result = synthesize([SynthesisQuery.of(*row) for row in passages.rows], provider,
                            settings, references=references, qrels=inputs.qrels, judge=judge,
                            stage=passages.stage,
                            selected_by=passages.selected_by, progress=one_more)
    return report.model_copy(update={"synthesis": result.to_dict(),
                                     "caveats": [*report.caveats, *result.caveats]})


class EvalArgs(Request):
    """`eval_command`'s options, as one request (`rankproof.cli._requests.takes`)."""

    corpus: Path | None = typer.Argument(None, metavar="CORPUS_DIR",
                                         help="A directory of .txt/.md documents (default: "
                                              "the bundled golden corpus).")
    judgments: Path | None = typer.Option(None, "--judgments", "-j", metavar="PATH",
                                          help="Quote-anchored judgments (JSONL).")
    corpus_dir: Path | None = typer.Option(None, "--corpus-dir", metavar="DIR",
                                           help="CORPUS_DIR as an option (groundkit's "
                                                "grk eval spelling).")
    collection: CollectionName | None = typer.Option(None, "--collection",
                                                     help="A classic test collection.")
    data_root: Path | None = typer.Option(None, "--data-root", metavar="DIR",
                                          help="Folder holding the collection's folder.")
    beir: Path | None = typer.Option(None, "--beir", metavar="DIR",
                                     help="Evaluate a BEIR folder directly.")
    split: str = typer.Option("test", "--split", help="BEIR qrels split.")
    irds: str | None = typer.Option(
        None, "--irds", metavar="ID",
        help="Evaluate an ir_datasets dataset (its documents, queries and qrels) from its "
             "local cache only, never downloading (the irds extra).")
    stages: str = typer.Option("bm25,dense,fusion", "--stages", metavar="STAGE,...",
                               help=f"Comma-separated: {','.join(STAGES)} (bm25 first).")
    measures: list[str] | None = typer.Option(None, "-m", "--measure", metavar="MEASURE",
                                              help="Measures (default "
                                                   f"{' '.join(DEFAULT_EVAL_MEASURES)}).")
    granularity: Granularity | None = typer.Option(
        None, "--granularity",
        help="chunk (default) or document (default for --collection, --beir, --irds and a "
             "folder written by `adapt beir`: BEIR's own, comparable to published BEIR "
             "numbers).")
    chunk_size: int = typer.Option(800, "--chunk-size", help="Chunk size in characters.")
    overlap: int = typer.Option(100, "--overlap", help="Chunk overlap in characters.")
    embedder: EmbedderOpt = typer.Option(
        "minilm", "--embedder",
        help="minilm (all-MiniLM-L6-v2, offline) or hashing (a labelled test double).")
    embed_model: str | None = typer.Option(
        None, "--embed-model", metavar="DIR|PACKAGE|openai:MODEL@URL|provider:FILE",
        help="The dense stage's sentence-transformers model: a local model directory or an "
             "installed package that ships one (default: the bundled all-MiniLM-L6-v2). "
             "Loaded offline; its name and file digest key the embedding cache and are "
             "recorded in the report. openai:MODEL@BASE_URL or provider:FILE.yaml embeds "
             "through an OpenAI-compatible /v1/embeddings server instead (docs/providers.md).")
    dense_index: DenseIndexOpt = typer.Option(
        "exact", "--dense-index",
        help="The dense stage's search: exact (every chunk scored, in blocks) or a FAISS "
             "index (faiss-flat, faiss-hnsw, faiss-ivf; the faiss extra), labelled "
             "approximate, with its recall@k against exact search measured and reported.")
    rerank_model: Path | None = typer.Option(None, "--rerank-model", metavar="DIR",
                                             help="Local cross-encoder directory for rerank.")
    warmup: int = typer.Option(
        8, "--warmup", metavar="N", min=0,
        help="Search the first N queries, untimed, before timing each stage (0: no warm-up); "
             "the warm-up's time is reported apart from the latency percentiles.")
    threads: int = typer.Option(
        1, "--threads", metavar="N", min=0,
        help="torch's intra-op threads while stages are timed one query at a time "
             "(0: torch's own setting); recorded with the latencies and the machine load.")
    stats: StatSettings = settings(
        StatSettings, only=("test", "alpha", "correction", "resamples", "seed"),
        helps={"alpha": "Family-wise significance level of the stages' comparison."})
    abstention_confidence: float = confidence_option(
        help="Confidence level of each stage's abstention-AUROC interval.",
        flag="--abstention-confidence")
    evidence_depth: int = typer.Option(
        10, "--evidence-depth", metavar="N",
        help="Keep each stage's first N results per query in the report, with the query text "
             "and the gold (0: none). Past 200,000 ids, a report file keeps them in a sidecar "
             "NAME.evidence.json beside it.")
    output: Path | None = typer.Option(None, "-o", "--output", metavar="PATH",
                                       help=f"Also write the report here (always written to "
                                            f"{DEFAULT_OUTPUT}); - is standard output.")
    html_out: Path | None = html_option()
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and do nothing else.")
    quiet: bool = quiet_option()
    fmt: EvalFormat = typer.Option("table", "--format", "-f", help="Output format.")
    detail: bool = typer.Option(False, "--detail",
                                help="List every verdict row (the rows with no detectable "
                                     "difference are otherwise folded into one per measure).")
    force: bool = force_option()
    engine: EngineOption = "local"
    address: AddressOption = None
    workers: WorkersOption = None
    history: str | None = history_option()
    synthesis: Path | None = typer.Option(
        None, "--synthesis", metavar="PROVIDER.yaml",
        help="Generate one answer per answerable judged query from the best stage's top "
             "passages through this chat provider, score it (grounding, citations) and keep "
             "it in the report's synthesis field (docs/providers.md).")
    synthesis_k: int = typer.Option(5, "--synthesis-k", metavar="K",
                                    help="Passages per synthesized answer.")
    synthesis_prompt: Path | None = typer.Option(
        None, "--synthesis-prompt", metavar="FILE",
        help="Replace the synthesis prompt template (it must hold {query} and {passages}); "
             "recorded by digest.")
    judge: Path | None = typer.Option(None, "--judge", metavar="JUDGE.yaml",
                                      help="With --synthesis: judge each answer (advisory "
                                           "until calibrated).")
    synthesis_references: Path | None = typer.Option(
        None, "--synthesis-references", metavar="REFS.jsonl",
        help="With --synthesis: reference answers (JSONL query_id, answers) for every "
             "answerable query, so the answer metrics score the synthesized answers too.")
    echo_check: bool = typer.Option(
        False, "--echo-check", help="With --synthesis: run the planted-marker citation-echo "
                                    "check first and refuse a provider that fails it (its "
                                    "own artifact: evals/results/echo-latest.json).")


@app.command("eval")
@error_boundary
@takes(EvalArgs)
def eval_command(a: EvalArgs) -> None:
    """Run BM25 / dense / fusion / rerank over a corpus and compare each with BM25."""
    corpus = a.corpus
    if a.corpus_dir is not None:  # grk eval's --corpus-dir: the same argument, one value
        if a.corpus is not None and a.corpus != a.corpus_dir:
            raise typer.BadParameter(f"CORPUS_DIR {a.corpus} and --corpus-dir {a.corpus_dir} "
                                     "name two corpora; give one", param_hint="--corpus-dir")
        corpus = a.corpus_dir
    outputs = _outputs(a.output)
    adapted = find_adaptation(corpus) if corpus is not None and a.judgments is None else None
    _guard(outputs, corpus, a.judgments or (adapted[1] if adapted else None), a.collection,
           a.data_root, a.beir, a.split, a.force, a.html_out)
    # Document-level judgments (a collection's, BEIR's) are scored by document by default.
    by_document = (a.collection is not None or a.beir is not None or adapted is not None
                   or a.irds is not None)
    gran = str(a.granularity) if a.granularity else ("document" if by_document else "chunk")
    config = EvalConfig(
        stages=tuple(s.strip() for s in a.stages.split(",") if s.strip()),
        measures=tuple(a.measures) if a.measures else DEFAULT_EVAL_MEASURES,
        granularity=gran,  # type: ignore[arg-type]
        chunk_size=a.chunk_size, overlap=a.overlap, embedder=str(a.embedder),  # type: ignore[arg-type]
        embed_model=a.embed_model, dense_index=str(a.dense_index),
        rerank_model=str(a.rerank_model) if a.rerank_model else None,
        resamples=a.stats.resamples, seed=a.stats.seed, test=a.stats.test,
        alpha=a.stats.alpha, correction=a.stats.correction,
        abstention_confidence=a.abstention_confidence,
        evidence_depth=a.evidence_depth,
    )
    config.check()
    synth = _synthesis_setup(a.synthesis, a.synthesis_k, a.synthesis_prompt, a.judge, a.echo_check,
                             a.synthesis_references)
    inputs = _inputs(corpus, a.judgments, a.collection, a.data_root, a.beir, a.split, gran,
                     a.chunk_size, a.overlap, a.irds)
    console = make_console()
    if a.dry_run:
        print_table(console, _plan(inputs, config,
                                   [*outputs, *([a.html_out] if a.html_out else [])],
                                   a.warmup, a.threads, synth))
        return
    # Each phase (indexing, searching per stage; evaluating) a stage of its own, and the
    # comparison's resamples counted.
    with engine_from(a.engine, a.address, a.workers) as executor, shown_stages(a.quiet) as bar, \
            bar.steps() as say:
        report, comparison = run_experiment(
            inputs, config, progress=say, warmup=a.warmup, threads=a.threads or None,
            executor=executor, resampling=say.counter("comparing the stages", "resamples"))
    if synth is not None:
        report = _synthesized(report, inputs, synth, a.quiet)
    report = report.stamped(inputs=_input_files(corpus, a.judgments or (adapted[1] if adapted
                                                                      else None),
                                                a.collection, a.data_root, a.beir, a.split, a.irds),
                            output=next((o for o in reversed(outputs) if str(o) != "-"), None))

    def render(evidence: Evidence | EvidenceSidecar | None, caveats: Sequence[str]) -> str:
        doc = report.model_copy(update={"evidence": evidence,
                                        "caveats": [*report.caveats, *caveats]})
        return doc.model_dump_json(indent=2) + "\n"

    text, sidecars = write_reports(outputs, report.evidence
                                   if isinstance(report.evidence, Evidence) else None, render)
    record(a.history, [next((o for o in outputs if str(o) != "-"), None)])
    if str(a.fmt) == "json":
        typer.echo(text, nl=False)
    elif str(a.fmt) == "md":
        if comparison is not None:
            # The answer first here too: stages × measures, then the per-measure detail.
            from rankproof.report.markdown import matrix_markdown
            from rankproof.report.matrix import eval_matrix

            typer.echo("\n".join(matrix_markdown(eval_matrix(report), caveats=False)) + "\n")
            typer.echo(comparison_markdown(comparison))
        if (synthesized := synthesis_markdown(report)) is not None:
            typer.echo(synthesized)
    else:
        if comparison is not None:
            # The answer first: stages × measures, then the verdicts (n.s. rows folded).
            from rankproof.report.matrix import eval_matrix

            answer = eval_matrix(report)
            print_matrix(console, answer)
            console.print()
            table, notes = verdicts_table(answer, detail=a.detail)
            print_table(console, table)
            for note in notes:
                console.print(plain(note))
            console.print()
        for n, (table, notes) in enumerate(eval_tables(report)):
            if n:
                console.print()
            print_table(console, table)
            for note in notes:
                console.print(plain(note))
    from rankproof._manifest import scope_note

    if (scope := scope_note(report.provenance.scope)) is not None:
        err_console.print(plain(f"note: {scope}"))
    for cav in report.caveats:
        line = plain("caveat:", style="yellow")
        line.append_text(plain(f" {cav}"))
        err_console.print(line)
    if sidecars:
        err_console.print(plain(f"evidence written beside it to {', '.join(map(str, sidecars))} "
                                "(too large to keep inline)"))
    # The paths come last, the HTML (rendered from the JSON just written) after the JSON.
    page = None if a.html_out is None else write_html(outputs[0], a.html_out)
    err_console.print(plain(f"report written to {', '.join(map(str, outputs))}"))
    if page is not None:
        err_console.print(plain(f"HTML report written to {page}"))
