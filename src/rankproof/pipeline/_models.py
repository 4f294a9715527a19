"""The experiment file's sections and stage kinds, as pydantic models (``extra="forbid"``).

`KIND_MODELS` maps each ``kind`` to its model; `RUN_KINDS`, `RESULT_KINDS` and
`DOCUMENT_KINDS` say which kinds' outputs a reference may name (`WANTS`).
"""

from __future__ import annotations

import dataclasses
import re
import typing
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from rankproof.data import IRDS_PREFIX, Dedupe, ExtraColumns, Order, ReadOptions, parse_size
from rankproof.harness import EvalConfig
from rankproof.measures import DEFAULT_MEASURES, EvalOptions, TopicPolicy
from rankproof.stats import (
    DEFAULT_ALPHA,
    DEFAULT_RESAMPLES,
    StatSettings,
)

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
RUN_KINDS = ("retrieve", "run_file", "fuse")
"""Kinds whose output is a run (what ``runs``, ``baseline`` and ``candidates`` refer to)."""
RESULT_KINDS = ("measure", "compare", "eval")
"""Kinds whose output is per-query JSON a gate can check."""
DOCUMENT_KINDS = ("measure", "compare", "eval", "gate", "discover", "rag")
"""Kinds whose JSON output ``rankproof report`` renders."""


_EVAL, _READ, _STATS = EvalOptions(), ReadOptions(), StatSettings()
"""The settings' defaults, from the types that own them (each written once, there)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CollectionSource(_Model):
    name: str = Field(strict=True, min_length=1)
    root: str = Field(strict=True, min_length=1)


class BeirSource(_Model):
    folder: str = Field(strict=True, min_length=1)
    split: str = Field(default="test", strict=True, min_length=1)


class Inputs(_Model):
    """What the stages read: a corpus folder (+ judgments), a classic collection, a BEIR
    folder, an ir_datasets dataset by id (``irds: ID``, read from its local cache only), the
    bundled golden corpus (none of those given), or qrels (+ topics) alone for an
    experiment over run files only (``qrels`` and ``topics`` may be ``irds:ID`` too)."""

    corpus: str | None = Field(default=None, strict=True, min_length=1)
    judgments: str | None = Field(default=None, strict=True, min_length=1)
    collection: CollectionSource | None = None
    beir: BeirSource | None = None
    irds: str | None = Field(default=None, strict=True, min_length=1)
    """An ir_datasets dataset id (``ID`` or ``irds:ID``): its documents, queries and qrels."""
    qrels: str | list[str] | None = None
    topics: str | None = Field(default=None, strict=True, min_length=1)
    granularity: Literal["chunk", "document"] | None = None
    chunk_size: int = Field(default=800, strict=True, ge=1)
    overlap: int = Field(default=100, strict=True, ge=0)

    @model_validator(mode="after")
    def _one_source(self) -> Inputs:
        given = [n for n in ("corpus", "collection", "beir", "irds", "qrels")
                 if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(f"give one source of judgments, got {', '.join(given)}")
        if self.judgments is not None and self.corpus is None:
            raise ValueError("judgments needs corpus (the folder its quotes come from)")
        if self.topics is not None and self.qrels is None:
            raise ValueError("topics goes with qrels (a collection, a corpus, BEIR and an "
                             "ir_datasets dataset carry their own queries)")
        if isinstance(self.qrels, list) and (not self.qrels or not all(
                isinstance(q, str) and q for q in self.qrels)):
            raise ValueError("qrels is a path or a non-empty list of paths")
        return self

    @property
    def irds_label(self) -> str | None:
        """``irds:ID`` of the ``irds`` input (None without one)."""
        if self.irds is None:
            return None
        return self.irds if self.irds.startswith(IRDS_PREFIX) else IRDS_PREFIX + self.irds

    @property
    def has_corpus(self) -> bool:
        """Whether documents can be retrieved (everything but qrels alone)."""
        return self.qrels is None

    @property
    def default_granularity(self) -> Literal["chunk", "document"]:
        """``rankproof eval``'s rule: document for a collection, BEIR, an ir_datasets dataset
        or an adapted folder."""
        if self.granularity is not None:
            return self.granularity
        by_document = (self.collection is not None or self.beir is not None
                       or self.irds is not None
                       or (self.corpus is not None and self.judgments is None))
        return "document" if by_document else "chunk"


class Scope(_Model):
    pool: Literal["full-corpus", "sampled", "unknown"] = "unknown"


class Stage(_Model):
    id: str = Field(strict=True, pattern=ID_PATTERN.pattern)
    kind: str

    def reads(self) -> list[tuple[str, str]]:
        """``(field, stage id)`` for every stage this one reads."""
        return []


class RetrieveStage(Stage):
    """A retrieval stage over the inputs' corpus → ``run.trec`` (at document granularity
    also ``chunks.trec``, the chunk ranking fusion and rerank read)."""

    kind: Literal["retrieve"]
    method: Literal["bm25", "dense", "rerank"]
    depth: int = Field(default=100, strict=True, ge=1)
    k1: float = Field(default=0.9, ge=0, allow_inf_nan=False)
    b: float = Field(default=0.4, ge=0, le=1, allow_inf_nan=False)
    stemmer: str | None = "english"
    embedder: Literal["minilm", "hashing"] = "minilm"
    embed_model: str | None = Field(default=None, strict=True, min_length=1)
    """dense: a sentence-transformers model folder or an installed package shipping one
    (None: the bundled all-MiniLM-L6-v2)."""
    model: str | None = Field(default=None, strict=True, min_length=1)
    rerank_depth: int = Field(default=50, strict=True, ge=1)
    inputs: list[str] = Field(default_factory=list)
    queries: str | None = Field(default=None, strict=True, min_length=1)
    """A ``query_transform`` stage whose rewritten queries are searched (None: the inputs')."""

    @model_validator(mode="after")
    def _rerank(self) -> RetrieveStage:
        if self.method == "rerank":
            if len(self.inputs) != 1:
                raise ValueError("a rerank stage reads exactly one first stage: inputs: [ID]")
            if self.model is None:
                raise ValueError("a rerank stage needs model: the local cross-encoder folder")
        elif self.inputs:
            raise ValueError(f"inputs is for method rerank; {self.method} reads the corpus")
        elif self.model is not None:
            raise ValueError("model is the cross-encoder of method rerank")
        if self.embed_model is not None and (self.method != "dense"
                                             or self.embedder != "minilm"):
            raise ValueError("embed_model is the sentence-transformers model of method dense "
                             "(with embedder minilm, the default)")
        return self

    def reads(self) -> list[tuple[str, str]]:
        return [("inputs", i) for i in self.inputs] + (
            [("queries", self.queries)] if self.queries else [])


class QueryTransformStage(Stage):
    """The inputs' queries rewritten by one named transformation → ``queries.jsonl``.

    ``method`` is ``none``, a name of `rankproof.retrieval.query_transforms`, or
    ``rewrite``: each query rewritten by the chat endpoint of ``provider`` (a provider
    file, relative to the experiment file) with ``prompt`` (a template holding
    ``{query}``; default `rankproof.retrieval.QUERY_REWRITE_PROMPT`). The stage records
    the transformation's config hash and how many queries changed. A ``retrieve``
    stage searches them with ``queries: <this stage's id>``.
    """

    kind: Literal["query_transform"]
    method: str = Field(strict=True, min_length=1)
    provider: str | None = Field(default=None, strict=True, min_length=1)
    prompt: str | None = Field(default=None, strict=True, min_length=1)

    @field_validator("method")
    @classmethod
    def _known(cls, value: str) -> str:
        from rankproof.retrieval import get_query_transform

        if value != "rewrite":
            get_query_transform(value)
        return value

    @model_validator(mode="after")
    def _rewrite(self) -> QueryTransformStage:
        if self.method == "rewrite":
            if self.provider is None:
                raise ValueError("method rewrite needs provider: a provider file (PATH.yaml)")
            if self.prompt is not None and "{query}" not in self.prompt:
                raise ValueError("prompt must hold {query}, where the query text goes")
        elif self.provider is not None or self.prompt is not None:
            raise ValueError("provider and prompt are for method rewrite")
        return self


class RunFileStage(Stage):
    """An external run file, digested; its run is named by the stage id."""

    kind: Literal["run_file"]
    path: str = Field(strict=True, min_length=1)


class FuseOptimize(_Model):
    """A fuse stage's ``optimize``: its method's weights (and RRF's k, a score method's
    normalisation) chosen by k-fold cross-validation over the experiment's qrels topics
    (`rankproof.retrieval.FusionSearch` — the same fields, defaults and checks)."""

    measure: str = Field(default="nDCG@10", strict=True, min_length=1)
    folds: int = Field(default=5, strict=True, ge=2)
    seed: int = Field(default=0, strict=True)
    step: float = Field(default=0.1, gt=0, le=1, allow_inf_nan=False)
    ks: list[float] | None = None
    norms: list[str] | None = None

    def search(self, method: str) -> Any:
        """The `FusionSearch` this asks for with ``method``."""
        from rankproof.retrieval import FusionSearch

        return FusionSearch(method, self.measure, folds=self.folds, seed=self.seed,
                            step=self.step, ks=None if self.ks is None else tuple(self.ks),
                            norms=None if self.norms is None else tuple(self.norms))


class FuseStage(Stage):
    kind: Literal["fuse"]
    runs: list[str] = Field(min_length=2)
    method: Literal["rrf", "combsum", "combmnz"] = "rrf"
    norm: Literal["minmax", "zscore"] | None = None
    k: float = Field(default=60, gt=0, allow_inf_nan=False)
    depth: int | None = Field(default=None, strict=True, ge=1)
    limit: int | None = Field(default=None, strict=True, ge=1)
    optimize: FuseOptimize | None = None
    """Choose the parameters by cross-validation (`FuseOptimize`) instead of ``norm``/``k``."""

    @model_validator(mode="after")
    def _optimize(self) -> FuseStage:
        if self.optimize is not None:
            if "norm" in self.model_fields_set or "k" in self.model_fields_set:
                raise ValueError("optimize chooses norm and k itself; drop them (limit the "
                                 "search with optimize's ks and norms)")
            self.optimize.search(self.method)  # refused when the file is read
        return self

    def reads(self) -> list[tuple[str, str]]:
        return [("runs", r) for r in self.runs]


def _check_measures(measures: list[str] | None, subtopics: str | None) -> None:
    """Every measure parses (as `rankproof measure -m` reads it), and a diversity measure
    comes with subtopic qrels: refused when the file is read, not when the stage runs."""
    from rankproof.measures import DIVERSITY_FAMILIES, resolve_measures

    diversity: list[str] = []
    for spec in measures or ():
        made = resolve_measures([spec])  # an InputError is a ValueError: pydantic reports it
        diversity.extend(str(m) for m in made if m.family in DIVERSITY_FAMILIES)
    if subtopics == "":  # only the names: the field validator below
        return
    if diversity and subtopics is None:
        raise ValueError(f"{', '.join(dict.fromkeys(diversity))}: diversity measures need "
                         "subtopic qrels: give the stage subtopics: PATH (ndeval's qid "
                         "subtopic docid rel), as rankproof measure --subtopics")


class _ReadsRuns(Stage):
    """What a stage that evaluates run files shares with ``rankproof measure`` and
    ``rankproof compare``: the fields of `rankproof.measures.EvalOptions` and
    `rankproof.data.ReadOptions`, under their names there, with their defaults taken from
    them (written once, on the floor that owns them) and checked by them when the file is
    read: an invalid value is refused with its field and line, before any stage runs."""

    rel_level: int = Field(default=_EVAL.rel_level, strict=True)
    topics: TopicPolicy = _EVAL.topics
    order: Order = _EVAL.order
    """``score`` (trec_eval's) or ``rank`` (the run's rank column), ``--order``."""
    max_retrieved: int | None = Field(default=_EVAL.max_retrieved, strict=True, ge=0)
    """trec_eval ``-M``: evaluate only the first N documents of each topic."""
    judged_only: bool = Field(default=_EVAL.judged_only, strict=True)
    """trec_eval ``-J``: remove unjudged documents before evaluating."""
    dedupe: Dedupe | None = _READ.dedupe
    """What a repeated (qid, docid) row of a run does (``--dedupe``): None refuses it."""
    extra_columns: ExtraColumns = _READ.extra_columns
    """``ignore`` accepts run lines with extra columns (``--allow-extra-columns``)."""
    memory_cap: int | str | None = None
    """Bytes, or a size such as ``512MiB`` (``--memory-cap``): a run over it is streamed in
    partitions of whole topics, with identical numbers."""

    @field_validator("memory_cap")
    @classmethod
    def _size(cls, value: int | str | None) -> int | None:
        return parse_size(value) if isinstance(value, str) else value
    subtopics: str | None = Field(default=None, strict=True, min_length=1)
    """ndeval's subtopic qrels (a path): the stage evaluates against them instead of the
    inputs' qrels (``--subtopics``)."""

    def eval_options(self) -> EvalOptions:
        """The stage's `EvalOptions`."""
        return EvalOptions(rel_level=self.rel_level, topics=self.topics, order=self.order,
                           max_retrieved=self.max_retrieved, judged_only=self.judged_only)

    def read_options(self) -> ReadOptions:
        """The stage's `ReadOptions` (the runs are rankproof's own TREC files)."""
        cap = self.memory_cap  # a size was made bytes when the file was read
        return ReadOptions(dedupe=self.dedupe, extra_columns=self.extra_columns,
                           memory_cap=None if cap is None else int(cap))

    @model_validator(mode="after")
    def _settings(self) -> _ReadsRuns:
        self.eval_options()  # an InputError is a ValueError: pydantic reports it
        self.read_options()
        return self


class MeasureStage(_ReadsRuns):
    kind: Literal["measure"]
    runs: list[str] = Field(min_length=1)
    measures: list[str] = Field(default_factory=lambda: [str(m) for m in DEFAULT_MEASURES],
                                min_length=1)
    cross_check: Literal["auto", "ir-measures", "pytrec-eval"] | None = None
    """Every value computed a second time by that evaluator (`rankproof measure
    --cross-check-with`); a difference beyond ``tolerance`` fails the stage (and the run)."""
    tolerance: float = Field(default=1e-4, ge=0, allow_inf_nan=False)

    @field_validator("measures")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        _check_measures(value, "")
        return value

    @model_validator(mode="after")
    def _measures(self) -> MeasureStage:
        _check_measures(self.measures, self.subtopics)
        return self

    def reads(self) -> list[tuple[str, str]]:
        return [("runs", r) for r in self.runs]


class CompareStage(_ReadsRuns):
    kind: Literal["compare"]
    baseline: str
    candidates: list[str] = Field(min_length=1)
    measures: list[str] | None = None
    test: str = _STATS.test
    correction: str = _STATS.correction
    alpha: float = Field(default=_STATS.alpha, gt=0, lt=1)
    resamples: int = Field(default=_STATS.resamples, strict=True, ge=1)
    seed: int | None = Field(default=None, strict=True)
    """The resampling seed (``--seed``); None: the experiment's ``seed``."""
    confidence_level: float = Field(default=_STATS.confidence_level, gt=0, lt=1)
    """The level of the reported intervals (``--confidence``)."""
    pairs: Literal["baseline", "all"] = _STATS.pairs
    evidence_depth: int = Field(default=10, strict=True, ge=0)
    fail_on_regression: bool = Field(default=False, strict=True)
    """Fail the stage (and the run, exit 1) when a candidate is significantly worse on a
    measure (``--fail-on-regression``)."""

    @field_validator("measures")
    @classmethod
    def _names(cls, value: list[str] | None) -> list[str] | None:
        _check_measures(value, "")
        return value

    @model_validator(mode="after")
    def _measures(self) -> CompareStage:
        _check_measures(self.measures, self.subtopics)
        self.stat_settings(0)  # an InputError is a ValueError: pydantic reports it
        return self

    def stat_settings(self, experiment_seed: int) -> StatSettings:
        """The stage's `StatSettings`, its seed the experiment's unless it gives one."""
        return StatSettings(test=self.test, alpha=self.alpha,  # type: ignore[arg-type]
                            correction=self.correction,  # type: ignore[arg-type]
                            resamples=self.resamples,
                            seed=experiment_seed if self.seed is None else self.seed,
                            confidence_level=self.confidence_level, pairs=self.pairs)

    def reads(self) -> list[tuple[str, str]]:
        return [("baseline", self.baseline), *(("candidates", c) for c in self.candidates)]


class GateStage(Stage):
    kind: Literal["gate"]
    checks: str = Field(strict=True, min_length=1)
    input: str
    system: str | None = None
    baseline: str | None = None
    baseline_system: str | None = None

    def reads(self) -> list[tuple[str, str]]:
        return [("input", self.input), *([("baseline", self.baseline)] if self.baseline else [])]


ReportFormat = Literal["html", "md", "latex"]


class ReportStage(Stage):
    kind: Literal["report"]
    input: str
    formats: list[ReportFormat] = Field(default_factory=lambda: list[ReportFormat](["md"]),
                                        min_length=1)

    def reads(self) -> list[tuple[str, str]]:
        return [("input", self.input)]


_EVAL_KIND: Any = Literal["eval"]


def _eval_fields() -> dict[str, Any]:
    """`rankproof.harness.EvalConfig`'s fields, each optional (None: the default)."""
    hints = typing.get_type_hints(EvalConfig)
    return {f.name: (hints[f.name] | None, None) for f in dataclasses.fields(EvalConfig)
            if f.name != "extra"}


EvalStage: type[Stage] = create_model(
    "EvalStage", __base__=Stage, __doc__=(
        "The whole of ``rankproof eval`` in one stage: `rankproof.harness.EvalConfig`'s "
        "fields (granularity, chunk_size and overlap default to the inputs'; seed to the "
        "file's; everything else to ``rankproof eval``'s defaults)."),
    kind=(_EVAL_KIND, ...), **_eval_fields())


class DiscoverStage(Stage):
    """``rankproof discover``: cases (default: the bundled example) over a catalogue."""

    kind: Literal["discover"]
    cases: str | None = Field(default=None, strict=True, min_length=1)
    catalog: str | None = Field(default=None, strict=True, min_length=1)
    mode: Literal["bm25", "dense", "hybrid"] = "hybrid"
    embedder: Literal["minilm", "hashing"] = "minilm"
    k: int = Field(default=10, strict=True, ge=1)
    abstain_threshold: float | None = None
    calibrate: bool = False
    sweep: bool = False
    curve: bool = False
    curve_mode: Literal["bm25", "dense", "hybrid"] = "bm25"
    trials: int = Field(default=20, strict=True, ge=1)


class RagStage(Stage):
    """``rankproof rag score``: an answer file's metrics, grounding, citations, triad."""

    kind: Literal["rag"]
    answers: str = Field(strict=True, min_length=1)
    references: str | None = Field(default=None, strict=True, min_length=1)
    qrels: str | None = Field(default=None, strict=True, min_length=1)
    metrics: list[str] | None = None
    llm_metrics: list[str] | None = Field(default=None, min_length=1)
    """``rag score --llm-metrics``: faithfulness, answer_relevancy, context_precision,
    context_recall (the last two need references), through ``provider``."""
    provider: str | None = Field(default=None, strict=True, min_length=1)
    """The provider file of ``llm_metrics`` (relative to the experiment file)."""
    llm_labels: str | None = Field(default=None, strict=True, min_length=1)
    """``rag score --llm-labels``: human labels of the LLM metrics (a PPI++ mean each)."""

    @model_validator(mode="after")
    def _llm(self) -> RagStage:
        if (self.llm_metrics is None) != (self.provider is None):
            raise ValueError("llm_metrics and provider go together")
        if self.llm_labels is not None and self.llm_metrics is None:
            raise ValueError("llm_labels needs llm_metrics")
        return self


class RagCompareStage(Stage):
    """``rankproof rag compare`` as a stage: answer arms paired by query id, against the first.

    With ``packing: true`` the baseline is the full-context arm and each
    candidate a packed one: the document adds the characters of context each
    saved beside the paired change in every metric (`rankproof.rag.compare_packing`).
    """

    kind: Literal["rag_compare"]
    baseline: str = Field(strict=True, min_length=1)
    candidates: list[str] = Field(min_length=1)
    references: str | None = Field(default=None, strict=True, min_length=1)
    qrels: str | None = Field(default=None, strict=True, min_length=1)
    metrics: list[str] | None = None
    packing: bool = False
    allow_arm_mismatch: bool = False
    alpha: float = Field(default=DEFAULT_ALPHA, gt=0, lt=1)
    correction: Literal["holm", "bh", "bonferroni", "none"] = "holm"
    resamples: int = Field(default=DEFAULT_RESAMPLES, strict=True, ge=1)
    bertscore_n: int | None = Field(default=None, strict=True, ge=1)
    """Also BERTScore on a seeded, paired subsample of this many questions (the bundled
    MiniLM; `rankproof.rag.bertscore_arms`); needs ``references``."""
    bertscore_layer: int | None = Field(default=None, strict=True, ge=0)

    @model_validator(mode="after")
    def _bertscore(self) -> RagCompareStage:
        if self.bertscore_n is not None and self.references is None:
            raise ValueError("bertscore_n compares answers with references: give references")
        if self.bertscore_layer is not None and self.bertscore_n is None:
            raise ValueError("bertscore_layer is the encoder layer of bertscore_n")
        return self


KIND_MODELS: dict[str, type[Stage]] = {
    "retrieve": RetrieveStage, "run_file": RunFileStage, "fuse": FuseStage,
    "measure": MeasureStage, "compare": CompareStage, "gate": GateStage,
    "report": ReportStage, "eval": EvalStage, "discover": DiscoverStage, "rag": RagStage,
    "rag_compare": RagCompareStage, "query_transform": QueryTransformStage,
}
STAGE_KINDS = tuple(KIND_MODELS)

WANTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("retrieve", "inputs"): ("retrieve", "fuse"),
    ("retrieve", "queries"): ("query_transform",),
    ("fuse", "runs"): RUN_KINDS, ("measure", "runs"): RUN_KINDS,
    ("compare", "baseline"): RUN_KINDS, ("compare", "candidates"): RUN_KINDS,
    ("gate", "input"): RESULT_KINDS, ("gate", "baseline"): RESULT_KINDS,
    ("report", "input"): DOCUMENT_KINDS,
}
"""(kind, field) → the kinds of stage that field may name."""

NAMED_FILES: dict[str, tuple[str, ...]] = {
    "run_file": ("path",), "gate": ("checks",), "retrieve": ("model",),
    "eval": ("rerank_model",), "discover": ("cases", "catalog"),
    "rag": ("answers", "references", "qrels", "provider", "llm_labels"), "measure": ("subtopics",),
    "rag_compare": ("baseline", "candidates", "references", "qrels"),
    "compare": ("subtopics",), "query_transform": ("provider",),
}
"""The fields of each kind that name a file or folder (checked, digested into the key)."""
