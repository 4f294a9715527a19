"""`ServedEmbedder`: a dense stage's embedding model served over HTTP (``/v1/embeddings``).

``--embed-model openai:MODEL@BASE_URL`` (or ``provider:PATH.yaml``) runs the
dense stage through `rankproof.providers.Provider`: batched, retried, cached,
bounded like every model call. Its `ModelIdentity` stands where a local
model's file digest stands: the name is ``openai:MODEL`` and the digest is
sha256 over the provider's base URL, the model and the entry ``/v1/models``
lists for it, so the embedding cache and the report's provenance change when
the server says it serves something else. A server that lists no models (or
not this one) is noted in every stage output (`notes`), never silently keyed
by URL and name alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError
from rankproof._manifest import digest_json
from rankproof.providers import Provider, ProviderConfig, ProviderError, provider_from_spec
from rankproof.retrieval._embed_model import ModelIdentity

PROBE_TEXT = "rankproof embedding dimension probe"


class ServedEmbedder:
    """An `Embedder` whose vectors come from an OpenAI-compatible ``/v1/embeddings``.

    Construction lists the server's models and embeds one probe text (its
    dimension is the stage's). Rows are L2-normalised here when the server
    did not (cosine = dot product, as for a local model).
    """

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.provider = Provider(config)
        self.model_id = f"openai:{config.model}@{config.base_url}"
        notes: list[str] = []
        try:
            listed = [m for m in self.provider.models() if m["id"] == config.model]
        except ProviderError as exc:
            listed = []
            notes.append(f"{config.base_url} did not list its models ({exc.reason}); the "
                         "embedding cache is keyed by the URL and the model name only")
        else:
            if not listed:
                notes.append(f"{config.base_url}/models does not list {config.model!r}; the "
                             "embedding cache is keyed by the URL and the model name only")
        self.listed: dict[str, Any] | None = listed[0] if listed else None
        self.notes = tuple(notes)
        digest = digest_json({"base_url": config.base_url, "model": config.model,
                              "listed": self.listed})
        self.identity = ModelIdentity(name=f"openai:{config.model}", digest=digest,
                                      path=config.base_url, files=0)
        self.dim = int(self.provider.embed([PROBE_TEXT]).shape[1])

    @classmethod
    def from_spec(cls, spec: str) -> ServedEmbedder:
        return cls(provider_from_spec(spec, kind="embeddings"))

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self.provider.embed(list(texts))
        if out.shape[1] != self.dim:
            raise ProviderError(f"{self.model_id}: the server returned {out.shape[1]}-"
                                f"dimensional embeddings, {self.dim} before",
                                reason="schema violation", endpoint=self.config.base_url)
        norms = np.linalg.norm(out.astype(np.float64), axis=1)
        off = np.abs(norms - 1.0) > 1e-4
        if off.any():
            safe = np.where(norms[off] > 0, norms[off], 1.0)
            out[off] = (out[off] / safe[:, None]).astype(np.float32)
        return np.ascontiguousarray(out, dtype=np.float32)
