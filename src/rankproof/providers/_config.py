"""A provider described once: the YAML file (or the same block inside a judge config).

A provider is an OpenAI-compatible HTTP server (vLLM, llama.cpp's server,
Ollama, LM Studio, TGI/TEI, OpenAI) and the rules rankproof follows when it
calls it::

    name: local-qwen                  # shown in messages and reports
    base_url: http://127.0.0.1:8080/v1
    model: qwen2.5-7b-instruct
    kinds: [chat, embeddings]         # which endpoints the file allows
    api_key_env: OPENAI_API_KEY       # the key is read from this variable, never the file
    timeout: 30                       # seconds per connect / read / write
    deadline: 120                     # seconds per call, retries and waits included
    max_concurrency: 4                # calls in flight at once
    requests_per_minute: 600          # spacing between request starts
    max_retries: 3                    # on 429, 5xx, timeouts; never other 4xx or refused
    backoff: 0.5                      # seconds, doubled per retry (Retry-After wins)
    max_reply_bytes: 8388608          # a longer reply is refused, not read
    structured_output: json_schema    # json_schema | json_object | none
    embedding_batch_size: 64
    prices: {input_per_1k_tokens: 0.0, output_per_1k_tokens: 0.0}
    cache_dir: .rankproof-cache       # relative to this file (default: the user cache)

Only ``base_url`` and ``model`` are required. ``--embed-model`` accepts the
short form ``openai:MODEL@BASE_URL`` for an embeddings-only provider with the
defaults, or ``provider:PATH.yaml`` for a file.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

import rankproof._limits as _limits
from rankproof._errors import ConfigError
from rankproof._io import PathLike
from rankproof.data import read_model

Kind = Literal["chat", "embeddings"]
SPEC_PREFIXES = ("openai:", "provider:")


class Prices(BaseModel):
    """What a thousand tokens cost, in the currency the user thinks in."""

    model_config = ConfigDict(extra="forbid", strict=True)
    input_per_1k_tokens: float = Field(default=0.0, ge=0)
    output_per_1k_tokens: float = Field(default=0.0, ge=0)


class ProviderConfig(BaseModel):
    """One provider (see the module docstring); validated once, frozen."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str = Field(default="provider", min_length=1)
    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    kinds: tuple[Kind, ...] = ("chat",)
    api_key_env: str | None = None
    timeout: float = Field(default=60.0, gt=0)
    deadline: float | None = Field(default=None, gt=0)
    max_concurrency: int = Field(default=4, ge=1, le=256)
    requests_per_minute: float | None = Field(default=None, gt=0)
    max_retries: int = Field(default=3, ge=0, le=20)
    backoff: float = Field(default=0.5, ge=0, le=600)
    max_reply_bytes: int = Field(default=_limits.MAX_HTTP_BODY_BYTES, ge=1)
    structured_output: Literal["json_schema", "json_object", "none"] = "json_schema"
    embedding_batch_size: int = Field(default=64, ge=1, le=4096)
    temperature: float = Field(default=0.0, ge=0, le=2)
    prices: Prices | None = None
    cache_dir: str | None = None

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must be an http(s) URL, got {value!r}")
        return value.rstrip("/")

    @field_validator("kinds", mode="before")
    @classmethod
    def _list(cls, value: object) -> object:
        return tuple(value) if isinstance(value, list) else value

    @model_validator(mode="after")
    def _check(self) -> ProviderConfig:
        if not self.kinds or len(set(self.kinds)) != len(self.kinds):
            raise ValueError("kinds must list chat and/or embeddings, each once")
        for name in ("timeout", "deadline", "backoff"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{name} must be finite")
        return self

    @property
    def call_deadline(self) -> float:
        """The overall deadline of one call (default: twice ``timeout``)."""
        return self.deadline if self.deadline is not None else 2 * self.timeout

    def api_key(self) -> str | None:
        """The key from ``api_key_env`` (`ConfigError` when that variable is not set)."""
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if key is None:
            raise ConfigError(f"provider {self.name!r}: the environment variable "
                              f"{self.api_key_env} (api_key_env) is not set")
        return key


def load_provider_config(path: PathLike) -> ProviderConfig:
    """The provider a YAML/JSON file describes; a relative ``cache_dir`` is made absolute."""
    config = read_model(path, ProviderConfig, what="provider file", error=ConfigError)
    if config.cache_dir is not None and not Path(config.cache_dir).is_absolute():
        config = config.model_copy(
            update={"cache_dir": str(Path(path).parent.resolve() / config.cache_dir)})
    return config


def is_provider_spec(spec: object) -> bool:
    """True for ``openai:MODEL@BASE_URL`` and ``provider:PATH`` (served models)."""
    return isinstance(spec, str) and spec.startswith(SPEC_PREFIXES)


def provider_from_spec(spec: str, *, kind: Kind = "embeddings") -> ProviderConfig:
    """The provider ``spec`` names; `ConfigError` saying what the spec should look like."""
    if spec.startswith("provider:"):
        path = spec.removeprefix("provider:")
        if not path:
            raise ConfigError("provider:PATH needs the path of a provider file")
        config = load_provider_config(path)
    elif spec.startswith("openai:"):
        model, at, base_url = spec.removeprefix("openai:").rpartition("@")
        if not at or not model or not base_url:
            raise ConfigError(f"{spec!r}: write openai:MODEL@BASE_URL, e.g. "
                              "openai:nomic-embed-text@http://127.0.0.1:11434/v1")
        try:
            config = ProviderConfig(name=f"openai:{model}", base_url=base_url, model=model,
                                    kinds=(kind,))
        except ValueError as exc:
            raise ConfigError(f"{spec!r}: {exc}") from None
    else:
        raise ConfigError(f"{spec!r} is not a provider spec (openai:MODEL@BASE_URL or "
                          "provider:PATH.yaml)")
    if kind not in config.kinds:
        raise ConfigError(f"provider {config.name!r} does not allow {kind} calls (its kinds "
                          f"are {list(config.kinds)}); add {kind} to kinds")
    return config
