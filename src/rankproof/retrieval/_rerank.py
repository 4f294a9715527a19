"""Cross-encoder re-ranking of a first stage's top documents.

No cross-encoder ships inside a package on rankproof's registries, so the
rerank stage exists only when a local model directory is given
(``--rerank-model PATH``); :func:`rerank_unavailable_reason` says why it is
not, and nothing stands in for a missing model.

**Plumbing-only models.** A randomly initialised cross-encoder (as the tests
build with :func:`rankproof.retrieval.make_plumbing_cross_encoder`)
exercises the real code path but its scores mean nothing. Such a model is
marked either by the caller (``plumbing_only=True``) or by its own
``config.json`` carrying ``"rankproof_plumbing_only": true`` (written by
``make_plumbing_cross_encoder``); every stage output then carries
:data:`PLUMBING_NOTE`.
"""

from __future__ import annotations

import inspect
import itertools
import os
import time
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from rankproof._errors import ConfigError, InputError
from rankproof.data import ranked_order, read_document, tie_keys, top_k
from rankproof.retrieval._base import (
    DENSE_EXTRA_HINT,
    Docs,
    Queries,
    Retriever,
    RunBuilder,
    StageOutput,
    check_docs,
    check_queries,
    docs_digest,
    merge_notes,
)
from rankproof.retrieval._embed import hub_offline, import_sentence_transformers

PLUMBING_NOTE = "plumbing-only: randomly initialised cross-encoder"
PLUMBING_MARKER = "rankproof_plumbing_only"


@runtime_checkable
class CrossEncoder(Protocol):
    """Scores (query, document) pairs jointly; higher is more relevant.

    ``model_id`` names the model in reports. An implementation may have a
    ``notes`` attribute (caveats every stage output using it carries).
    """

    model_id: str

    def score(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        """One finite score per pair."""
        ...


def rerank_unavailable_reason(path: str | os.PathLike[str] | None) -> str | None:
    """Why the rerank stage cannot run with ``path``, or None when it can.

    Checks, without importing torch: a path was given, it is a directory
    holding ``config.json``, and the ``dense`` extra (sentence-transformers)
    is installed.
    """
    if path is None or str(path) == "":
        return ("rerank stage unavailable: no cross-encoder given. Pass --rerank-model PATH, "
                "a local directory holding a sentence-transformers cross-encoder; none ships "
                "with rankproof, and the stage is never faked")
    p = Path(path)
    if not p.exists():
        return f"rerank stage unavailable: cross-encoder directory {p} does not exist"
    if not p.is_dir():
        return f"rerank stage unavailable: {p} is not a directory"
    if not (p / "config.json").is_file():
        return (f"rerank stage unavailable: {p} has no config.json, so it is not a "
                "Hugging Face model directory")
    if find_spec("sentence_transformers") is None or find_spec("torch") is None:
        return ("rerank stage unavailable: the 'dense' extra (sentence-transformers, torch) "
                f"is not installed: {DENSE_EXTRA_HINT}")
    return None


def _marked_plumbing_only(path: Path) -> bool:
    try:
        config = read_document(path / "config.json", what="model config")
    except ValueError:
        return False
    return isinstance(config, dict) and config.get(PLUMBING_MARKER) is True


class SentenceTransformerCrossEncoder:
    """A sentence-transformers ``CrossEncoder`` loaded offline from a local directory.

    Scores are the model's raw output (no sigmoid), so that saturation never
    creates ties that the logits did not have. ``plumbing_only`` (or the
    model's config marker, see the module docstring) stamps outputs with
    :data:`PLUMBING_NOTE`. Raises `ConfigError` with
    :func:`rerank_unavailable_reason`'s message when the path is unusable.
    """

    def __init__(self, path: str | os.PathLike[str], *, plumbing_only: bool = False,
                 batch_size: int = 32, max_length: int | None = 512,
                 device: str = "cpu") -> None:
        reason = rerank_unavailable_reason(path)
        if reason is not None:
            if "extra" in reason:
                import_sentence_transformers("the rerank stage")  # raises MissingExtraError
            raise ConfigError(reason)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
        st = import_sentence_transformers("the rerank stage")
        import torch

        resolved = Path(path).resolve()
        self.path = resolved
        self.model_id = f"local:{resolved}"
        self.batch_size = batch_size
        self.plumbing_only = bool(plumbing_only) or _marked_plumbing_only(resolved)
        self.notes: tuple[str, ...] = (PLUMBING_NOTE,) if self.plumbing_only else ()
        # Raw logits: sentence-transformers 4+ calls the option activation_fn, 3.x
        # default_activation_function.
        params = inspect.signature(st.CrossEncoder.__init__).parameters
        identity = {("activation_fn" if "activation_fn" in params
                     else "default_activation_function"): torch.nn.Identity()}
        with hub_offline():
            self._model = st.CrossEncoder(str(resolved), device=device, local_files_only=True,
                                          max_length=max_length, **identity)

    def score(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        if len(pairs) == 0:
            return np.zeros(0, dtype=np.float64)
        out = self._model.predict([(q, d) for q, d in pairs], batch_size=self.batch_size,
                                  show_progress_bar=False, convert_to_numpy=True)
        scores = np.asarray(out, dtype=np.float64).reshape(len(pairs), -1)
        if scores.shape[1] != 1:
            raise InputError(f"{self.model_id} returns {scores.shape[1]} labels per pair; "
                             "a re-ranker must return one score")
        return scores[:, 0]


class RerankRetriever:
    """Re-rank the top ``depth`` documents of ``first_stage`` with ``cross_encoder``.

    The final list holds at most ``k`` of those documents ordered by the
    cross-encoder's score (ties by docid descending, as trec_eval). Documents
    beyond ``depth`` are not returned. ``latency_ms`` per query = the first
    stage's latency for it + the time to score its pairs and sort them.
    """

    def __init__(self, first_stage: Retriever, cross_encoder: CrossEncoder, depth: int = 100,
                 *, name: str = "rerank") -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise InputError(f"depth must be a positive integer, got {depth!r}")
        self.name = name
        self.first_stage = first_stage
        self.cross_encoder = cross_encoder
        self.depth = depth
        self._texts: dict[str, str] = {}
        self.indexed_digest: str | None = None

    @property
    def config(self) -> dict[str, Any]:
        return {"stage": "rerank", "name": self.name, "model": self.cross_encoder.model_id,
                "depth": self.depth, "first_stage": self.first_stage.name,
                "plumbing_only": bool(getattr(self.cross_encoder, "plumbing_only", False))}

    def index(self, docs: Docs) -> None:
        ids, texts = check_docs(docs)
        self.first_stage.index(docs)
        digest = docs_digest(docs)
        if digest != self.indexed_digest:
            self._texts = dict(zip(ids, texts, strict=True))
            self.indexed_digest = digest

    def search(self, queries: Queries, k: int) -> StageOutput:
        qids, texts = check_queries(queries, k)
        if self.indexed_digest is None:
            raise RuntimeError(f"{self.name}: call index() before search()")
        first = self.first_stage.search(queries, self.depth)
        run = first.run
        ro = ranked_order(run)
        rows = ro.row_ids(len(run))
        q_of_row = run.qids().to_numpy(zero_copy_only=False)[rows]
        docs_of_row = run.docids.to_numpy(zero_copy_only=False)[rows]
        bounds = np.concatenate(([0], np.flatnonzero(q_of_row[1:] != q_of_row[:-1]) + 1,
                                 [len(rows)]))
        candidates: dict[str, list[str]] = {
            str(q_of_row[s]): [str(d) for d in docs_of_row[s:e]]
            for s, e in itertools.pairwise(bounds)
        }
        builder = RunBuilder()
        latency: dict[str, float] = {}
        for qid, text in zip(qids, texts, strict=True):
            cands = candidates.get(qid, [])
            start = time.perf_counter()
            pairs = [(text, self._texts[d]) for d in cands]
            scores = np.asarray(self.cross_encoder.score(pairs), dtype=np.float64)
            if scores.shape != (len(cands),) or not np.isfinite(scores).all():
                raise InputError(f"cross-encoder {self.cross_encoder.model_id} returned "
                                 f"{scores.shape} scores (finite: {np.isfinite(scores).all()}) "
                                 f"for {len(cands)} pairs")
            best = top_k(scores, k, tie_keys(cands)) if cands else np.zeros(0, np.int64)
            elapsed = (time.perf_counter() - start) * 1000.0
            latency[qid] = float(first.latency_ms[qid]) + elapsed
            builder.add(qid, [cands[i] for i in best], scores[best])
        notes = merge_notes(first.notes, tuple(getattr(self.cross_encoder, "notes", ())),
                            builder.empty_note(self.name, len(qids)))
        config = {**self.config, "k": int(k), "first_stage_config": dict(first.config)}
        return StageOutput(run=builder.build(self.name, notes), latency_ms=latency, notes=notes,
                           config=config)
