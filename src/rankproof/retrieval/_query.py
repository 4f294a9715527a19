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

`register_query_transform` adds one (the hook a provider-backed rewrite, such
as an LLM's, plugs into: issue 24); registering a name twice is an error.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankproof._errors import ConfigError

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
