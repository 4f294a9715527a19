"""Query transformations: rewrite each query before retrieval, recorded by name and hash.

Seed 003's protocol runs retrieval on transformed queries as an ablation:
each transformation is compared, paired by query, with ``none``. A
transformation here is deterministic and local; its `config_hash` (sha256
over its name, version and parameters) is recorded with how many queries it
changed, so two runs can be told apart by more than a name.

* ``none``: the query as it is.
* ``lowercase``: lower-cased, runs of white space squashed to one space.
* ``strip_stopwords``: the words of `QUERY_STOP_WORDS` removed (case-insensitive;
  a query made only of stop words is kept whole, since an empty query retrieves
  nothing).

`register_query_transform` adds one; registering a name twice is an error.

`rewrite_queries` is the one transformation that goes through a model provider
(``rewrite``): the provider's chat endpoint is asked, per query, for a JSON
object ``{"query": "..."}`` (structured output, validated) through the provider
layer's cache, retries and failure counting. Its config hash covers the
provider's identity (name, base URL, model, temperature) and the prompt's
digest. A query whose call fails keeps its text (counted); every call failing
is a `ProviderError` naming the endpoint and the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from rankproof._errors import ConfigError

if TYPE_CHECKING:
    from rankproof.providers import Provider

#: English function words `strip_stopwords` removes (a short, documented list).
QUERY_STOP_WORDS: frozenset[str] = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from",
    "how", "i", "in", "is", "it", "of", "on", "or", "should", "that", "the", "this", "to",
    "what", "when", "where", "which", "who", "whom", "why", "will", "with",
})
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class QueryTransform:
    """A named rewrite of one query text, with the parameters its hash covers."""

    name: str
    fn: Callable[[str], str]
    version: int = 1
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def config_hash(self) -> str:
        raw = json.dumps({"name": self.name, "version": self.version,
                          "params": dict(self.params)}, sort_keys=True, default=sorted)
        return "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TransformedQueries:
    """The queries after one transformation, and what it did."""

    method: str
    config_hash: str
    queries: tuple[tuple[str, str], ...]
    changed: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "config_hash": self.config_hash,
                "n": len(self.queries), "changed": len(self.changed),
                "changed_ids": list(self.changed)}


def _lowercase(text: str) -> str:
    return " ".join(text.lower().split())


def _strip_stopwords(text: str) -> str:
    words = _WORD.findall(text)
    kept = [w for w in words if w.lower().strip("?!.,;:\"'()") not in QUERY_STOP_WORDS]
    return " ".join(kept) if kept else text


_TRANSFORMS: dict[str, QueryTransform] = {
    "none": QueryTransform("none", lambda text: text),
    "lowercase": QueryTransform("lowercase", _lowercase),
    "strip_stopwords": QueryTransform("strip_stopwords", _strip_stopwords,
                                      params={"stop_words": sorted(QUERY_STOP_WORDS)}),
}


def query_transforms() -> tuple[str, ...]:
    """The registered transformation names."""
    return tuple(_TRANSFORMS)


def register_query_transform(transform: QueryTransform) -> None:
    """Add a transformation (a name already registered is refused)."""
    if not isinstance(transform, QueryTransform):
        raise ConfigError(f"register a QueryTransform, got {type(transform).__name__}")
    if transform.name in _TRANSFORMS:
        raise ConfigError(f"query transformation {transform.name!r} is already registered")
    _TRANSFORMS[transform.name] = transform


def get_query_transform(name: str) -> QueryTransform:
    found = _TRANSFORMS.get(name)
    if found is None:
        raise ConfigError(f"unknown query transformation {name!r}; the registered ones are "
                          f"{', '.join(_TRANSFORMS)}")
    return found


def transform_queries(queries: Sequence[tuple[str, str]], method: str) -> TransformedQueries:
    """Every ``(query id, text)`` rewritten by ``method``; ids whose text changed are listed."""
    t = get_query_transform(method)
    out = []
    changed = []
    for qid, text in queries:
        new = t.fn(text)
        if not isinstance(new, str) or not new.strip():
            raise ConfigError(f"query transformation {method!r} turned query {qid!r} into "
                              f"{new!r}; a transformed query must be non-empty text")
        out.append((qid, new))
        if new != text:
            changed.append(qid)
    return TransformedQueries(method, t.config_hash, tuple(out), tuple(changed))


#: The default prompt of ``rewrite`` (``{query}`` is replaced by the query text).
QUERY_REWRITE_PROMPT = (
    "Rewrite the search query below so that a keyword search engine finds the documents "
    "that answer it: keep its meaning, expand abbreviations, drop filler words. Reply with "
    'a JSON object {{"query": "<the rewritten query>"}} and nothing else.\n\n'
    "Query: {query}")


class _Rewritten(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    query: str = Field(min_length=1)


@dataclass(frozen=True)
class RewrittenQueries(TransformedQueries):
    """`TransformedQueries` from a provider, with its identity and call counts."""

    provider: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)
    failed: tuple[str, ...] = ()


def rewrite_config_hash(provider: Provider, prompt: str) -> str:
    """sha256 over ``rewrite``, its version, the provider's identity and the prompt digest."""
    return QueryTransform("rewrite", lambda text: text, params={
        "provider": _identity(provider),
        "prompt_sha256": hashlib.sha256(prompt.encode("utf-8")).hexdigest()}).config_hash


def _identity(provider: Provider) -> dict[str, Any]:
    c = provider.config
    return {"name": c.name, "base_url": c.base_url, "model": c.model,
            "temperature": c.temperature}


def rewrite_queries(queries: Sequence[tuple[str, str]], provider: Provider, *,
                    prompt: str | None = None) -> RewrittenQueries:
    """Every ``(query id, text)`` rewritten by ``provider``'s chat endpoint (``prompt``:
    a template holding ``{query}``; default `QUERY_REWRITE_PROMPT`)."""
    from rankproof.providers import ProviderError

    template = QUERY_REWRITE_PROMPT if prompt is None else prompt
    if "{query}" not in template:
        raise ConfigError("a rewrite prompt must hold {query}, where the query text goes")
    out: list[tuple[str, str]] = []
    changed: list[str] = []
    failed: list[str] = []
    last: ProviderError | None = None
    for qid, text in queries:
        try:
            reply = provider.chat(template.replace("{query}", text), schema=_Rewritten)
            new = " ".join(reply.value.query.split()) or text
        except ProviderError as exc:
            last, new = exc, text
            failed.append(qid)
        out.append((qid, new))
        if new != text:
            changed.append(qid)
    if last is not None and len(failed) == len(queries):
        raise ProviderError(f"query transformation 'rewrite': every call failed "
                            f"({len(failed)} of {len(queries)}); last: {last}",
                            reason=last.reason, endpoint=last.endpoint, status=last.status)
    return RewrittenQueries("rewrite", rewrite_config_hash(provider, template), tuple(out),
                            tuple(changed), provider=_identity(provider),
                            stats=provider.stats.to_dict(), failed=tuple(failed))
