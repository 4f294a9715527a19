"""Providers: every model call rankproof makes, over the OpenAI-compatible HTTP API.

A provider file (`ProviderConfig`, `load_provider_config`) describes a server
once; `Provider` makes the calls (``chat`` with validated structured output,
``embed``, ``models``) with its cache, retries, rate limit, concurrency bound,
deadline, reply cap and usage counts; `check_provider` is what ``rankproof
providers check`` runs. Failures are `ProviderError` with a ``reason`` from
`REASONS`. See ``docs/providers.md``.
"""

from rankproof.providers._check import CallCheck, ProviderCheck, check_provider
from rankproof.providers._client import (
    REASONS,
    ChatReply,
    Provider,
    ProviderError,
    ProviderStats,
)
from rankproof.providers._config import (
    Prices,
    ProviderConfig,
    is_provider_spec,
    load_provider_config,
    provider_from_spec,
)

__all__ = [
    "REASONS",
    "CallCheck",
    "ChatReply",
    "Prices",
    "Provider",
    "ProviderCheck",
    "ProviderConfig",
    "ProviderError",
    "ProviderStats",
    "check_provider",
    "is_provider_spec",
    "load_provider_config",
    "provider_from_spec",
]
