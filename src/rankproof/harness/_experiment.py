"""Run an experiment: every stage over the same queries, measured and compared with BM25.

The BM25 stage is always first and is the baseline. Each other stage is
compared with it on every measure by the statistics module, all p-values of
the report corrected together (Holm). Latency is reported per stage as
nearest-rank percentiles of per-query wall-clock time, measured after a warm-up and
with torch's threads set (`rankproof.retrieval.timed_search`); the warm-up's time, the
thread count and the machine load are recorded beside them.

Granularity ``document`` collapses each stage's chunk ranking to the distinct
documents in first-seen order before scoring, so a document counts once, at
the rank of its best chunk.

Each stage also gets its means per judgment category and, from every query's
top retrieval score, the threshold-free abstention AUROC (answerable against
no-answer queries; see `rankproof.harness.bootstrap_auroc`).

The report also keeps the evidence a reader needs (`stage_evidence`): each stage's first
``evidence_depth`` results for every query run, as measured, with the query text and gold.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

import numpy as np

from rankproof._errors import ConfigError, InputError
from rankproof._manifest import digest_json
from rankproof.comparison import (
    MAX_EVIDENCE_DEPTH,
    Comparison,
    Evidence,
    collect_evidence,
    compare_evaluated,
    family_cost,
    judged_measure,
)
from rankproof.data import Qrels, Run, ranked_order
from rankproof.engine import Executor, LocalExecutor
from rankproof.harness._breakdown import (
    INCOMPLETE_REASON,
    abstention,
    category_results,
    score_basis,
    top_scores,
)
from rankproof.harness._inputs import EvalInputs
from rankproof.harness._report import (
    EvalReport,
    InputsSummary,
    LatencySummary,
    StageResult,
    eval_provenance,
)
from rankproof.measures import Measure, PerQuery, evaluate, resolve_measures
from rankproof.retrieval import (
    DEFAULT_THREADS,
    DEFAULT_WARMUP,
    BM25Retriever,
    DenseRetriever,
    FusionMethod,
    FusionRetriever,
    ModelIdentity,
    Norm,
    RerankRetriever,
    Retriever,
    SentenceTransformerCrossEncoder,
    StageOutput,
    TimingStamp,
    build_embedder,
    check_dense_index,
    default_cache_dir,
    embed_model_problem,
    rerank_unavailable_reason,
    timed_search,
)
from rankproof.stats import (
    DEFAULT_ALPHA,
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_CORRECTION,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TEST,
    ProgressCallback,
    StatSettings,
    nearest_rank,
)

STAGES = ("bm25", "dense", "fusion", "rerank")
DEFAULT_EVAL_MEASURES = ("R@1", "Success@1", "R@5", "Success@5", "R@10", "Success@10", "RR@10",
                         "nDCG@10")
"""trec recall (R@k: the share of the relevant chunks found) beside the hit rate (Success@k:
was any relevant chunk found, what seed 002 calls recall@k), then RR@10 and nDCG@10."""
Progress = Callable[[str], None]


@dataclass(frozen=True)
class EvalConfig:
    """Everything that decides an experiment's numbers (recorded, and digested, in the report)."""

    stages: tuple[str, ...] = ("bm25", "dense", "fusion")
    measures: tuple[str, ...] = DEFAULT_EVAL_MEASURES
    granularity: Literal["chunk", "document"] = "chunk"
    chunk_size: int = 800
    overlap: int = 100
    depth: int = 100
    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    bm25_stemmer: str | None = "english"
    embedder: Literal["minilm", "hashing"] = "minilm"
    embed_model: str | None = None
    """The dense stage's sentence-transformers model: a local model directory or an installed
    package shipping one (None: the bundled all-MiniLM-L6-v2). Its identity (name, digest of
    its files) is recorded in the dense stage's config and the provenance, and keys the
    embedding cache."""
    dense_index: str = "exact"
    """The dense stage's search: ``exact`` (every document scored, in blocks) or a FAISS
    index (``faiss-flat``, ``faiss-hnsw``, ``faiss-ivf``; the faiss extra), whose recall@k
    against exact search the stage then measures and reports."""
    fusion: Literal["rrf", "combsum", "combmnz"] = "rrf"
    fusion_norm: Literal["minmax", "zscore"] | None = None
    rrf_k: int = 60
    rerank_model: str | None = None
    rerank_depth: int = 50
    test: str = DEFAULT_TEST
    alpha: float = DEFAULT_ALPHA
    correction: str = DEFAULT_CORRECTION
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    abstention_confidence: float = DEFAULT_CONFIDENCE_LEVEL
    """The level of each stage's abstention-AUROC interval (``--abstention-confidence``): a
    setting of its own, not ``1 − alpha``, which is the comparison's family-wise level."""
    evidence_depth: int = 10
    """How many of each stage's results per query the report keeps as evidence (0: none)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        unknown = [s for s in self.stages if s not in STAGES]
        if unknown:
            raise ConfigError(f"unknown stage(s) {unknown}; choose from {', '.join(STAGES)}")
        if not self.stages or self.stages[0] != "bm25":
            raise ConfigError("the first stage must be bm25 (the baseline)")
        if len(set(self.stages)) != len(self.stages):
            raise ConfigError(f"stage names must be unique, got {list(self.stages)}")
        if "fusion" in self.stages and "dense" not in self.stages:
            raise ConfigError("the fusion stage fuses bm25 and dense: add the dense stage")
        if self.embed_model is not None:
            self._check_embed_model()
        if self.dense_index != "exact":
            try:
                check_dense_index(self.dense_index)
            except ConfigError as exc:
                raise ConfigError(f"field 'dense_index': {exc}") from None
        if "rerank" in self.stages:
            reason = rerank_unavailable_reason(self.rerank_model)
            if reason is not None:
                raise ConfigError(f"the rerank stage is unavailable: {reason}")
        resolve_measures(self.measures)
        if self.granularity not in ("chunk", "document"):
            raise ConfigError(
                f"granularity must be 'chunk' or 'document', got {self.granularity!r}")
        self._check_parameters()
        self.check_cost(1)

    def _check_embed_model(self) -> None:
        """The model ``embed_model`` names exists and is a model directory (torch not imported)."""
        if not isinstance(self.embed_model, str) or not self.embed_model.strip():
            raise ConfigError(f"field 'embed_model': must be a model directory or a package "
                              f"name, got {self.embed_model!r}")
        if self.embedder != "minilm":
            raise ConfigError(f"field 'embed_model': names the sentence-transformers model of "
                              f"the dense stage, but the embedder is {self.embedder!r}, which "
                              "loads no model; drop one of them")
        if "dense" in self.stages:
            problem = embed_model_problem(self.embed_model)
            if problem is not None:
                raise ConfigError(f"field 'embed_model': {problem}")

    def _check_parameters(self) -> None:
        """Every number and choice a real run would use, so that ``--dry-run`` refuses what
        the run would refuse (after indexing, which can take minutes)."""
        choices = {"embedder": ("minilm", "hashing"), "fusion": get_args(FusionMethod)}
        for name, allowed in choices.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ConfigError(f"field '{name}': must be one of {', '.join(allowed)}, "
                                  f"got {value!r}")
        if self.fusion_norm is not None and self.fusion_norm not in get_args(Norm):
            raise ConfigError(f"field 'fusion_norm': must be one of {', '.join(get_args(Norm))}, "
                              f"got {self.fusion_norm!r}")
        for name in ("depth", "rrf_k", "rerank_depth", "resamples"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"field '{name}': must be a positive integer, got {value!r}")
        depth = self.evidence_depth
        if isinstance(depth, bool) or not isinstance(depth, int) \
                or not 0 <= depth <= MAX_EVIDENCE_DEPTH:
            raise ConfigError(f"field 'evidence_depth': must be an integer from 0 (no evidence) "
                              f"to {MAX_EVIDENCE_DEPTH:,}, got {depth!r}")
        for name, low, high in (("abstention_confidence", 0.0, 1.0), ("bm25_b", 0.0, 1.0)):
            value = getattr(self, name)
            strict = name == "abstention_confidence"
            inside = (low < value < high) if strict else (low <= value <= high)
            if not isinstance(value, int | float) or isinstance(value, bool) or not inside:
                bounds = f"strictly between {low:g} and {high:g}" if strict else \
                    f"between {low:g} and {high:g}"
                raise ConfigError(f"field '{name}': must be {bounds}, got {value!r}")
        if not isinstance(self.bm25_k1, int | float) or not self.bm25_k1 >= 0:
            raise ConfigError(f"field 'bm25_k1': must be a number >= 0, got {self.bm25_k1!r}")
        self.stats  # noqa: B018  (test, alpha, correction, resamples, seed: checked there, once)

    @property
    def stats(self) -> StatSettings:
        """The comparison's settings (its ``pairs`` is "baseline": every stage against bm25);
        a `ConfigError` naming the field when one is invalid."""
        try:
            return StatSettings(test=self.test, alpha=self.alpha,  # type: ignore[arg-type]
                                correction=self.correction,  # type: ignore[arg-type]
                                resamples=self.resamples, seed=self.seed)
        except InputError as exc:
            raise ConfigError(f"field '{exc.field}': {exc}") from None

    def check_cost(self, queries: int) -> None:
        """Refuse ``resamples`` whose comparison of the stages would cost too much (`ConfigError`).

        `check` runs it with one query (a lower bound, before anything is
        read); `run_experiment` again with the real count, before any stage runs.
        """
        rows = (len(self.stages) - 1) * len(resolve_measures(self.measures))
        family_cost([queries] * rows, test=self.test, resamples=self.resamples,
                    what="the comparison of the stages", error=ConfigError)

    def as_dict(self) -> dict[str, Any]:
        """The configuration as plain JSON values (tuples become lists)."""
        data: dict[str, Any] = json.loads(json.dumps(asdict(self)))
        if data.get("dense_index") == "exact":
            # The default is left out, so that reports written before the option existed
            # keep their config digest.
            del data["dense_index"]
        return data


def build_stages(config: EvalConfig, chunk_depth: int | None = None, *,
                 executor: Executor | None = None) -> list[Retriever]:
    """The configured stages, in order (bm25 first).

    ``executor``: where the dense stage embeds the chunks its cache lacks (None: here).

    ``chunk_depth`` is how many chunks each stage returns per query; fusion reads
    that many from each input, so that a document-granularity run can still fill
    ``config.depth`` distinct documents.
    """
    bm25 = BM25Retriever(k1=config.bm25_k1, b=config.bm25_b, stemmer=config.bm25_stemmer)
    stages: list[Retriever] = [bm25]
    dense: Retriever | None = None
    if "dense" in config.stages:
        embedder = build_embedder(config.embedder, config.embed_model)
        dense = DenseRetriever(embedder, cache_dir=default_cache_dir() / "embeddings",
                               index=config.dense_index, executor=executor)
        stages.append(dense)
    fusion: Retriever | None = None
    if "fusion" in config.stages:
        assert dense is not None
        fusion = FusionRetriever([bm25, dense], config.fusion, norm=config.fusion_norm,
                                 rrf_k=config.rrf_k, depth=chunk_depth or config.depth)
        stages.append(fusion)
    if "rerank" in config.stages:
        assert config.rerank_model is not None
        first = fusion or dense or bm25
        stages.append(RerankRetriever(first, SentenceTransformerCrossEncoder(config.rerank_model),
                                      depth=config.rerank_depth))
    return stages




def _embed_model_identity(stages: Sequence[Retriever]) -> ModelIdentity | None:
    """The identity of the dense stage's model, when a real model (not a test double) ran."""
    for stage in stages:
        if isinstance(stage, DenseRetriever):
            identity = getattr(stage.embedder, "identity", None)
            if isinstance(identity, ModelIdentity):
                return identity
    return None


def latency_summary(latency_ms: dict[str, float],
                    stamp: TimingStamp | None = None) -> LatencySummary:
    """Nearest-rank percentiles of ``latency_ms`` and, with ``stamp``, the conditions they
    were measured under (warm-up, torch threads, machine load)."""
    values = list(latency_ms.values())
    conditions = stamp.as_dict() if stamp is not None else {}
    if not values:
        return LatencySummary(n=0, p50=math.nan, p95=math.nan, p99=math.nan, mean=math.nan,
                              max=math.nan, **conditions)
    return LatencySummary(
        n=len(values), p50=nearest_rank(values, 50), p95=nearest_rank(values, 95),
        p99=nearest_rank(values, 99), mean=float(np.mean(values)), max=float(max(values)),
        **conditions,
    )


def collapse_to_documents(run: Run, chunk_doc: dict[str, str], limit: int | None = None) -> Run:
    """Each query's distinct documents in the order their chunks are first ranked.

    Scores become a strictly decreasing sequence so that no tie-breaking can
    reorder what the chunk ranking decided. ``limit`` keeps the first
    ``limit`` documents of each query, so that every stage is measured on
    lists of the same depth.
    """
    order = ranked_order(run)
    rows = order.row_ids(len(run))
    qids = run.qids().take(rows).to_pylist()
    docids = run.docids.take(rows).to_pylist()
    out_q: list[str] = []
    out_d: list[str] = []
    seen: set[tuple[str, str]] = set()
    per_query: dict[str, int] = {}
    for q, c in zip(qids, docids, strict=True):
        d = chunk_doc.get(c)
        if d is None:
            raise InputError(f"retrieved chunk {c!r} is not in the corpus")
        if (q, d) not in seen:
            seen.add((q, d))
            per_query[q] = per_query.get(q, 0) + 1
            if limit is None or per_query[q] <= limit:
                out_q.append(q)
                out_d.append(d)
    scores = np.empty(len(out_q), dtype=np.float64)
    rank = np.empty(len(out_q), dtype=np.int64)
    start = 0
    for i in range(1, len(out_q) + 1):
        if i == len(out_q) or out_q[i] != out_q[start]:
            n = i - start
            scores[start:i] = np.arange(n, 0, -1, dtype=np.float64)
            rank[start:i] = np.arange(1, n + 1)
            start = i
    return Run.from_columns(out_q, out_d, scores, rank, name=run.name, notes=run.notes)


def _restrict(run: Run, topics: set[str]) -> Run:
    """The rows of ``run`` whose query is one of ``topics`` (unjudged queries are reported
    once, as no-answer queries, not once per stage)."""
    keep = np.array([q in topics for q in run.topics], dtype=bool)[run.qid_codes]
    if keep.all():
        return run
    rows = np.flatnonzero(keep)
    ranks = run.ranks[rows] if run.ranks is not None else None
    return Run.from_columns(run.qids().take(rows), run.docids.take(rows), run.scores[rows],
                            ranks, name=run.name, tag=run.tag, notes=run.notes)


def _chunk_depth(inputs: EvalInputs, config: EvalConfig) -> int:
    cutoffs = [m.depth or 0 for m in resolve_measures(config.measures)]
    depth = max(config.depth, *cutoffs)
    if inputs.granularity == "document":
        per_doc = math.ceil(len(inputs.corpus.chunks) / max(1, len(inputs.corpus.documents)))
        depth *= per_doc
    return min(depth, len(inputs.corpus.chunks))


def _answerable(inputs: EvalInputs) -> tuple[list[str], list[str], str | None]:
    """Queries run with a relevant judgment, those without, and why the split cannot serve
    abstention (None when it can)."""
    q = inputs.qrels
    topics = q.topics
    relevant = {topics[c] for c in np.unique(q.qid_codes[q.rels >= 1]).tolist()}
    run = [qid for qid, _ in inputs.queries]
    answerable = [qid for qid in run if qid in relevant]
    no_answer = [qid for qid in run if qid not in relevant]
    return answerable, no_answer, None if inputs.complete_judgments else INCOMPLETE_REASON


def _stage_result(name: str, out: StageOutput, full: PerQuery, measures: Sequence[Measure],
                  judged_ms: Sequence[Measure], inputs: EvalInputs,
                  config: EvalConfig, stamp: TimingStamp | None = None) -> StageResult:
    pq = full.select(measures)
    per_query = {q: {str(m): float(v) for m, v in zip(measures, row, strict=True)}
                 for q, row in zip(pq.qids, pq.values.tolist(), strict=True)}
    # The chunk ranking's top score, also at document granularity, where the collapsed
    # run's scores are ranks.
    top = top_scores(out.run, [qid for qid, _ in inputs.queries])
    answerable, no_answer, reason = _answerable(inputs)
    return StageResult(
        name=name, config=dict(out.config), notes=list(out.notes),
        means={str(m): pq.mean(m) for m in measures},
        per_query=per_query,
        latency=latency_summary(dict(out.latency_ms), stamp),
        latency_ms={q: float(v) for q, v in out.latency_ms.items()},
        judged={str(j): full.mean(j) for j in judged_ms},
        categories=category_results(per_query, inputs.query_categories,
                                    [str(m) for m in measures]),
        top_scores=top,
        abstention=abstention(top, answerable, no_answer, basis=score_basis(out.config),
                              reason=reason, resamples=config.resamples, seed=config.seed,
                              confidence_level=config.abstention_confidence),
    )


def stage_evidence(inputs: EvalInputs, runs: dict[str, Run], depth: int) -> Evidence | None:
    """What a reader must see of each stage (None when ``depth`` is 0): its first ``depth``
    results for every query run, no-answer ones included, as measured (after the document
    collapse), with the query text and the relevant judgments."""
    if depth == 0:
        return None
    return collect_evidence(inputs.qrels, runs, k=depth, queries=dict(inputs.queries),
                            topics=[qid for qid, _ in inputs.queries], rel_level=1)


def evaluate_stage_run(item: tuple[Qrels, Run, tuple[Measure, ...]]) -> PerQuery:
    """One stage's run evaluated (an engine task: module-level, so workers import it)."""
    qrels, run, measures = item
    return evaluate(qrels, run, measures)


def check_timing(warmup: int, threads: int | None) -> None:
    """Refuse a ``warmup`` below 0 or a ``threads`` below 1 (`ConfigError`), before any
    stage runs."""
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ConfigError(f"field 'warmup': must be an integer >= 0 (0: no warm-up), "
                          f"got {warmup!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise ConfigError(f"field 'threads': must be a positive integer (or none: torch's "
                          f"own setting), got {threads!r}")


def run_experiment(inputs: EvalInputs, config: EvalConfig,
                   progress: Progress | None = None, *, warmup: int = DEFAULT_WARMUP,
                   threads: int | None = DEFAULT_THREADS, executor: Executor | None = None,
                   resampling: ProgressCallback | None = None,
                   ) -> tuple[EvalReport, Comparison | None]:
    """Index, search, measure and compare every stage; return the report and the comparison.

    Each stage is warmed up on the first ``warmup`` queries (0: none) and timed with
    torch's intra-op threads set to ``threads`` (None: torch's own setting); see
    `rankproof.retrieval.timed_search`. Neither changes a result, so neither is part
    of ``config`` (nor of its digest): they are recorded in each stage's latency.

    ``executor`` (`rankproof.engine`; None: this process) embeds the dense stage's
    missing chunks and evaluates the stages' runs, one task per stage; searching, which
    is timed, stays here. The engine is recorded in the provenance, never in ``config``:
    the numbers are the same whichever engine ran.

    ``progress`` is told each phase as it begins (indexing and searching each stage, then
    evaluating); ``resampling`` counts the comparison's row-resamples done of those
    planned (`rankproof.stats.ProgressCallback`). Neither changes a number.
    """
    executor = executor or LocalExecutor()
    config.check()
    check_timing(warmup, threads)
    config.check_cost(len(inputs.qrels.topics))
    say = progress or (lambda _msg: None)
    k = _chunk_depth(inputs, config)
    stages = build_stages(config, k, executor=executor)
    docs = [(c.id, c.text) for c in inputs.corpus.chunks]
    chunk_doc = inputs.chunk_doc
    outputs: dict[str, StageOutput] = {}
    stamps: dict[str, TimingStamp] = {}
    runs: dict[str, Run] = {}
    for stage in stages:
        say(f"indexing {stage.name} ({len(docs)} chunks)")
        stage.index(docs)
        say(f"searching {stage.name} ({len(inputs.queries)} queries"
            + (f", {min(warmup, len(inputs.queries))} to warm up)" if warmup else ")"))
        timed = timed_search(stage, inputs.queries, k, warmup=warmup, threads=threads)
        out = timed.output
        outputs[stage.name] = out
        stamps[stage.name] = timed.stamp
        run = out.run
        if inputs.granularity == "document":
            run = collapse_to_documents(run, chunk_doc, limit=max(
                config.depth, *(m.depth or 0 for m in resolve_measures(config.measures))))
        runs[stage.name] = run

    measures = resolve_measures(config.measures)
    say("measuring and comparing")
    scored = set(inputs.qrels.topics)
    judged_ms = tuple(dict.fromkeys(judged_measure(m) for m in measures))
    # Each stage is evaluated once; the same tables feed its result and the comparison.
    # One engine task per stage; the results come back in the order of the stages.
    tables = dict(zip(runs, executor.map(evaluate_stage_run, [
        (inputs.qrels, _restrict(run, scored), (*measures, *judged_ms))
        for run in runs.values()]), strict=True))
    comparison: Comparison | None = None
    if len(runs) > 1:
        comparison = compare_evaluated(
            tables, measures, baseline="bm25", stats=config.stats,
            positives_only=not bool((inputs.qrels.rels <= 0).any()),
            complete_judgments=inputs.complete_judgments, progress=resampling)
        comparison = dataclasses.replace(comparison, rel_level=1, topics="complete")
    stage_results = [_stage_result(name, outputs[name], tables[name], measures, judged_ms,
                                   inputs, config, stamps.get(name)) for name in runs]
    caveats = list(dict.fromkeys(
        [*inputs.notes, *(n for o in outputs.values() for n in o.notes),
         *(comparison.caveats if comparison is not None else ())]
    ))
    if inputs.no_answer:
        scored_abstention = any(s.abstention is not None and s.abstention.auroc is not None
                                for s in stage_results)
        caveats.append(f"{len(inputs.no_answer)} query(ies) without relevance judgments "
                       "(no-answer or unjudged) are run but not scored by retrieval measures"
                       + ("; their top scores are scored by the abstention AUROC"
                          if scored_abstention else ""))
    config_dict = config.as_dict()
    model = _embed_model_identity(stages)
    if model is not None:
        # In the config, so that the config digest (which the gate compares with a
        # baseline's) changes with the model's files, not only with its path.
        config_dict["embed_model_identity"] = {"name": model.name, "digest": model.digest}
    report = EvalReport(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        config=config_dict,
        provenance=eval_provenance(seed=config.seed, corpus_digest=inputs.corpus.digest,
                                   judgments_digest=inputs.judgments_digest,
                                   config_digest=digest_json(config_dict),
                                   embed_model=model.as_dict() if model else None,
                                   engine=executor.describe()),
        inputs=InputsSummary(
            name=inputs.name, source=inputs.source, documents=len(inputs.corpus.documents),
            chunks=len(inputs.corpus.chunks), chunk_size=inputs.corpus.chunk_size,
            overlap=inputs.corpus.overlap, granularity=inputs.granularity,
            queries=len(inputs.queries), scored_queries=len(inputs.qrels.topics),
            no_answer_queries=list(inputs.no_answer), categories=dict(inputs.categories),
            query_categories=dict(inputs.query_categories),
        ),
        measures=[str(m) for m in measures],
        baseline="bm25",
        stages=stage_results,
        comparisons=list(comparison.rows if comparison is not None else ()),
        caveats=caveats,
        evidence=stage_evidence(inputs, runs, config.evidence_depth),
    )
    return report, comparison
