"""The run-producing and scoring kinds: retrieve, run_file, fuse, measure, compare.

Each calls the library function its CLI command calls, and writes what that command
writes: a TREC run (``run.trec``), ``rankproof measure -f json``'s document
(``measure.json``), ``rankproof compare -o``'s comparison with its evidence
(``comparison.json``).

**Retrieval at document granularity.** A retrieve stage ranks chunks, as ``rankproof
eval`` does, keeps that chunk ranking (``chunks.trec``), and writes the run it is measured
on (``run.trec``): each query's first ``depth`` distinct documents, each at the rank of
its best chunk. A fuse stage whose inputs all kept a chunk ranking fuses the chunk
rankings, then collapses — exactly ``rankproof eval``'s fusion stage — so the numbers of
an experiment file and of ``rankproof eval`` agree; over run files it fuses the runs as
they are.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rankproof._errors import ConfigError
from rankproof._manifest import input_entry, provenance, query_scope
from rankproof.comparison import (
    MAX_INLINE_EVIDENCE_IDS,
    sidecar_name,
    split_evidence,
)
from rankproof.data import (
    Qrels,
    Run,
    load_run,
    read_jsonl,
    read_subtopic_qrels,
    write_trec_run,
)
from rankproof.harness import EvalInputs, collapse_to_documents, latency_summary
from rankproof.jobs import (
    CompareFilesRequest,
    RunFilesRequest,
    compare_files,
    measure_files,
    trec_eval_limited,
)
from rankproof.measures import Measure, resolve_measures
from rankproof.pipeline._context import Context, Made
from rankproof.providers import is_provider_spec
from rankproof.report import records
from rankproof.retrieval import (
    BM25Retriever,
    DenseRetriever,
    RerankRetriever,
    Retriever,
    SentenceTransformerCrossEncoder,
    StageOutput,
    build_embedder,
    default_cache_dir,
    fuse,
    optimize_fusion,
    timed_search,
)


def embed_model_spec(ctx: Context, spec: str) -> str:
    """A model folder relative to the experiment file, else the spec as given (a package);
    a served model's ``provider:PATH`` with PATH relative to the experiment file."""
    if is_provider_spec(spec):
        path = spec.removeprefix("provider:")
        return spec if path == spec else f"provider:{ctx.exp.resolve(path)}"
    here = ctx.exp.resolve(spec)
    return str(here) if here.exists() else spec


def chunk_depth(inputs: EvalInputs, depth: int) -> int:
    """How many chunks a stage returns per query so that ``depth`` distinct documents can
    be kept (``rankproof eval``'s rule)."""
    if inputs.granularity == "document":
        per_doc = math.ceil(len(inputs.corpus.chunks) / max(1, len(inputs.corpus.documents)))
        depth *= per_doc
    return min(depth, len(inputs.corpus.chunks))


def scope(ctx: Context, queries: str = "full") -> dict[str, str]:
    return {"queries": queries, "pool": ctx.exp.scope.pool}


def stamp(ctx: Context, stage: Any, made: Made) -> dict[str, Any]:
    """The provenance block of one stage's outputs."""
    return provenance(seed=ctx.exp.seed, inputs=made.input_files,
                      upstream=made.upstream_files,
                      output=ctx.folder(stage.id) / (made.document or "stage.json"),
                      scope=scope(ctx, made.summary.get("queries_scope", "full")))


class _Fixed:
    """A `Retriever` that answers with a stored run (the first stage of a rerank)."""

    def __init__(self, run: Run, name: str) -> None:
        self.run = run
        self.name = name

    def index(self, docs: Any) -> None:
        return None

    def search(self, queries: Any, k: int) -> StageOutput:
        return StageOutput(run=self.run, latency_ms={q: 0.0 for q, _ in queries},
                           config={"stage": "stored", "name": self.name})


def retrieve(ctx: Context, stage: Any, work: Path) -> Made:
    inputs = ctx.sources.load()
    k = chunk_depth(inputs, stage.depth)
    retriever: Retriever
    upstream: list[Path] = []
    if stage.method == "bm25":
        retriever = BM25Retriever(k1=stage.k1, b=stage.b, stemmer=stage.stemmer, name=stage.id)
    elif stage.method == "dense":
        model = None if stage.embed_model is None else embed_model_spec(ctx, stage.embed_model)
        retriever = DenseRetriever(build_embedder(stage.embedder, model),
                                   cache_dir=default_cache_dir() / "embeddings", name=stage.id)
    else:
        first = stage.inputs[0]
        path = ctx.chunks_path(first) or ctx.run_path(first)
        upstream.append(path)
        retriever = RerankRetriever(_Fixed(ctx.run(first, chunks=path != ctx.run_path(first)),
                                           first),
                                    SentenceTransformerCrossEncoder(ctx.exp.resolve(stage.model)),
                                    depth=stage.rerank_depth, name=stage.id)
    retriever.index([(c.id, c.text) for c in inputs.corpus.chunks])
    queries = inputs.queries
    if stage.queries is not None:
        queries = transformed_queries(ctx, stage.queries, inputs.queries)
        upstream.append(ctx.folder(stage.queries) / QUERIES_FILE)
    # Timed as `rankproof eval` times a stage: warmed up first, torch's threads set.
    timed = timed_search(retriever, queries, k)
    out = timed.output
    made = Made(run="run.trec", upstream_files=upstream, notes=list(out.notes),
                input_files=ctx.sources.files(),
                summary={"config": json.loads(json.dumps(dict(out.config), default=str)),
                         "granularity": inputs.granularity, "depth": stage.depth,
                         "chunk_depth": k,
                         "latency": latency_summary(dict(out.latency_ms),
                                                    timed.stamp).model_dump()})
    if inputs.granularity == "document":
        write_trec_run(out.run, work / "chunks.trec", tag=stage.id)
        made.chunks = "chunks.trec"
        run = collapse_to_documents(out.run, inputs.chunk_doc, limit=stage.depth)
    else:
        run = out.run
    write_trec_run(run, work / "run.trec", tag=stage.id)
    made.summary.update(rows=len(run), topics=len(run.topics))
    return made


QUERIES_FILE = "queries.jsonl"


def transformed_queries(ctx: Context, stage_id: str, original: Sequence[tuple[str, str]]
                        ) -> tuple[tuple[str, str], ...]:
    """A ``query_transform`` stage's queries, in the inputs' order (the same ids)."""
    rows = [row for _, row in read_jsonl(ctx.folder(stage_id) / QUERIES_FILE,
                                          allow_empty=True)]
    text = {r["query_id"]: r["query"] for r in rows}
    if set(text) != {q for q, _ in original}:
        raise ConfigError(f"stage {stage_id!r} rewrote other queries than the inputs hold; "
                          "rerun it (rankproof run --only " + stage_id + ")")
    return tuple((q, text[q]) for q, _ in original)


def query_transform_stage(ctx: Context, stage: Any, work: Path) -> Made:
    """The inputs' queries rewritten (`rankproof.retrieval.transform_queries`)."""
    from rankproof.retrieval import transform_queries

    inputs = ctx.sources.load()
    if stage.method == "rewrite":
        return _rewrite_stage(ctx, stage, work, inputs.queries)
    done = transform_queries(inputs.queries, stage.method)
    lines = [json.dumps({"query_id": q, "query": t}, ensure_ascii=False)
             for q, t in done.queries]
    (work / QUERIES_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    made = Made(document=QUERIES_FILE, input_files=ctx.sources.files())
    made.summary.update(method=done.method, config_hash=done.config_hash,
                        queries=len(done.queries), changed=len(done.changed))
    if stage.method != "none" and not done.changed:
        made.notes.append(f"query transformation {stage.method!r} changed no query")
    return made


def _rewrite_stage(ctx: Context, stage: Any, work: Path,
                   queries: Sequence[tuple[str, str]]) -> Made:
    """``method: rewrite``: the queries rewritten through the stage's provider file."""
    from rankproof.providers import Provider, load_provider_config
    from rankproof.retrieval import rewrite_queries

    path = ctx.exp.resolve(stage.provider)
    config = load_provider_config(path)
    if "chat" not in config.kinds:
        raise ConfigError(f"{path}: provider {config.name!r} does not allow chat calls (its "
                          f"kinds are {list(config.kinds)}); add chat to kinds")
    with Provider(config) as provider:
        done = rewrite_queries(queries, provider, prompt=stage.prompt)
    lines = [json.dumps({"query_id": q, "query": t}, ensure_ascii=False)
             for q, t in done.queries]
    (work / QUERIES_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    made = Made(document=QUERIES_FILE, input_files={**ctx.sources.files(), "provider": path})
    made.summary.update(method=done.method, config_hash=done.config_hash,
                        queries=len(done.queries), changed=len(done.changed),
                        provider=dict(done.provider), calls=done.stats["calls"],
                        cache_hits=done.stats["cache_hits"], failed=len(done.failed),
                        failures=done.stats["failures"])
    if done.failed:
        made.notes.append(f"{len(done.failed)} rewrite call(s) failed; those queries were "
                          f"kept as they are: {', '.join(done.failed[:5])}")
    if not done.changed:
        made.notes.append("query transformation 'rewrite' changed no query")
    return made


def run_file(ctx: Context, stage: Any, work: Path) -> Made:
    path = ctx.exp.resolve(stage.path).absolute()
    run = load_run(str(path))
    entry = input_entry(path)
    return Made(run=str(path), external={"path": str(path), "sha256": entry["sha256"]},
                input_files={"run": path},
                summary={"rows": len(run), "topics": len(run.topics), "sha256": entry["sha256"]})


def fuse_stage(ctx: Context, stage: Any, work: Path) -> Made:
    chunked = ctx.exp.inputs.has_corpus and all(ctx.chunks_path(r) is not None
                                                for r in stage.runs)
    made = Made(run="run.trec", input_files={})
    if chunked and stage.optimize is not None:
        raise ConfigError(f"stage {stage.id!r}: optimize tunes a fusion of run files against "
                          "the qrels; this stage fuses chunk rankings of a corpus (their "
                          "documents are scored after collapsing), which it does not tune")
    if chunked:
        summaries = [ctx.summary(r) for r in stage.runs]
        k = max(int(s.get("chunk_depth", 0)) for s in summaries)
        keep = max(int(s.get("depth", 0)) for s in summaries)
        runs = [ctx.run(r, chunks=True) for r in stage.runs]
        made.upstream_files = [p for r in stage.runs if (p := ctx.chunks_path(r)) is not None]
        fused = fuse(runs, stage.method, norm=stage.norm, k=stage.k, depth=stage.depth or k,
                     limit=stage.limit or k, name=stage.id)
        write_trec_run(fused, work / "chunks.trec", tag=stage.id)
        made.chunks = "chunks.trec"
        inputs = ctx.sources.load()
        run = collapse_to_documents(fused, inputs.chunk_doc, limit=keep)
        made.summary.update(chunk_depth=k, depth=keep, fused="chunk rankings, then collapsed "
                                                            "to documents")
    else:
        runs = [ctx.run(r) for r in stage.runs]
        made.upstream_files = [ctx.run_path(r) for r in stage.runs]
        if stage.optimize is not None:
            search = stage.optimize.search(stage.method)
            result = optimize_fusion(runs, ctx.sources.qrels(), search,
                                     depth=stage.depth or 1000, limit=stage.limit,
                                     name=stage.id)
            run = result.run
            made.input_files = dict(ctx.sources.files())
            made.summary["optimization"] = result.to_dict()
            made.notes.append(f"fusion tuned by {stage.optimize.folds}-fold cross-validation on "
                              f"{result.search.measure}: out-of-fold {result.out_of_fold:.4f}, "
                              f"in-sample best {result.in_sample:.4f} (optimism "
                              f"{result.optimism:+.4f}); chosen "
                              f"{result.chosen.describe(stage.method)}")
        else:
            run = fuse(runs, stage.method, norm=stage.norm, k=stage.k,
                       depth=stage.depth or 1000, limit=stage.limit, name=stage.id)
    write_trec_run(run, work / "run.trec", tag=stage.id)
    made.summary.update(rows=len(run), topics=len(run.topics), method=stage.method)
    return made


def _runs(ctx: Context, ids: Sequence[str]) -> list[Run]:
    return [ctx.run(i) for i in ids]


def _judgments(ctx: Context, stage: Any) -> tuple[Qrels, dict[str, Any]]:
    """The stage's judgments and the files they come from: its ``subtopics`` file (ndeval's
    subtopic qrels) when it names one, else the experiment's inputs."""
    if stage.subtopics is None:
        return ctx.sources.qrels(), ctx.sources.files()
    path = ctx.exp.resolve(stage.subtopics)
    return read_subtopic_qrels(str(path)), {"subtopics": path}


def _files(ctx: Context, stage: Any, ids: Sequence[str], qrels: Qrels,
           measures: tuple[Measure, ...], evidence_depth: int = 0) -> RunFilesRequest:
    """The `RunFilesRequest` of a measure or compare stage: its runs' files named by their
    stage ids, read and evaluated with the stage's settings (those of `rankproof measure`
    and `rankproof compare`)."""
    return RunFilesRequest(qrels=qrels, runs=tuple(str(ctx.run_path(i)) for i in ids),
                           measures=measures, names=tuple(ids), read=stage.read_options(),
                           options=stage.eval_options(), subtopics=stage.subtopics is not None,
                           evidence_depth=evidence_depth)


def measure_stage(ctx: Context, stage: Any, work: Path) -> Made:
    qrels, files = _judgments(ctx, stage)
    measures = resolve_measures(stage.measures)  # the one list grammar, sets expanded
    done = measure_files(_files(ctx, stage, stage.runs, qrels, measures))
    results = [dataclasses.replace(r.per_query, qrels_digest=qrels.digest) for r in done.runs]
    made = Made(document="measure.json", input_files=files,
                upstream_files=[ctx.run_path(r) for r in stage.runs])
    made.notes.extend(n.text if n.about is None else f"{n.about}: {n.text}" for n in done.notes)
    made.summary["queries_scope"] = query_scope(*(pq.not_evaluated for pq in results))
    made.summary["means"] = {pq.run_name: {str(m): pq.aggregate(m) for m in pq.measures}
                             for pq in results}
    checked = None
    if stage.cross_check is not None:
        from rankproof.measures import cross_check

        options = stage.eval_options()
        runs = [trec_eval_limited(r, qrels, options) for r in _runs(ctx, stage.runs)]
        checked = cross_check(qrels, runs, backend=stage.cross_check, tolerance=stage.tolerance,
                              rel_level=stage.rel_level, topics=stage.topics,
                              order=stage.order, results=results)
        made.summary["cross_check"] = {"backend": checked.backend, "passed": checked.passed}
        if not checked.available:
            made.notes.append("cross-check: no second evaluator is installed (pip install "
                              "'rankproof[crosscheck]'); nothing was cross-checked")
        elif checked.passed is False:
            made.passed = False
            made.notes.append(f"cross-check with {checked.backend}: values differ beyond "
                              f"{stage.tolerance:g} (measure.json, cross_check)")
    text = records.render(results, "json", per_query=True, provenance=stamp(ctx, stage, made),
                          cross_check=None if checked is None else checked.to_dict())
    (work / "measure.json").write_text(text, encoding="utf-8")
    return made


def compare_stage(ctx: Context, stage: Any, work: Path) -> Made:
    qrels, files = _judgments(ctx, stage)
    ids = [stage.baseline, *stage.candidates]
    texts = ctx.sources.queries() if stage.evidence_depth > 0 else None
    request = CompareFilesRequest(
        files=_files(ctx, stage, ids, qrels, resolve_measures(stage.measures or None),
                     stage.evidence_depth),
        stats=stage.stat_settings(ctx.exp.seed), queries=dict(texts) if texts else None,
        complete_judgments=ctx.sources.complete_judgments())
    done = compare_files(request)
    result = done.comparison
    made = Made(document="comparison.json", input_files=files,
                upstream_files=[ctx.run_path(r) for r in ids])
    made.summary["queries_scope"] = "full" if result.n_topics == len(qrels.topics) else "subset"
    result = dataclasses.replace(result, provenance=stamp(ctx, stage, made))
    doc = dataclasses.replace(result, evidence=None).to_dict()
    if result.evidence is not None:
        if result.evidence.ids > MAX_INLINE_EVIDENCE_IDS:
            ref, blob = split_evidence(result.evidence, sidecar_name(work / "comparison.json"))
            (work / ref.sidecar).write_bytes(blob)
            doc["evidence"] = ref.to_dict()
        else:
            doc["evidence"] = result.evidence.to_dict()
    (work / "comparison.json").write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n",
                                          encoding="utf-8")
    made.summary["regressions"] = [f"{r.candidate} on {r.measure}" for r in result.regressions]
    if stage.fail_on_regression and result.regressions:
        made.passed = False
        made.notes.append("significantly worse: " + ", ".join(made.summary["regressions"]))
    made.summary["rows"] = [{"baseline": r.baseline, "candidate": r.candidate,
                             "measure": r.measure, "baseline_mean": r.result.mean_b,
                             "candidate_mean": r.result.mean_a, "p_corrected": r.p_corrected,
                             "verdict": r.verdict} for r in result.rows]
    return made
