"""Discovery cases: an intent and the ids that should answer it, as committable JSONL.

A case set is the fixture that makes a discovery evaluation repeatable: the
catalogue may change under it, the cases do not. An **empty** ``gold`` marks
an abstention case ("nothing in the catalogue applies"): it is scored by
whether the system declines, never by a retrieval measure, which would need a
relevant item to exist.

Files are JSON Lines, one case per line, with an optional first line
``{"__meta__": {...}}`` (the natural home for the catalogue version the cases
were written against). Every problem is an `InputError` naming the file, the
line and the field; nothing is returned from a file with any bad line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankproof._errors import InputError
from rankproof._io import PathLike, atomic_write
from rankproof.data import Qrels, check_keys, read_jsonl

META_KEY = "__meta__"
_CASE_KEYS = ("query", "gold", "corpus", "source_id", "metadata")


@dataclass(frozen=True)
class DiscoveryCase:
    """One discovery probe: ``query`` (the intent) and the ``gold`` ids that answer it.

    ``gold`` holds one id for a single-answer case, several when capabilities
    overlap, none for an abstention case. ``corpus`` names the catalogue the
    case targets (for files that mix catalogues), ``source_id`` the item the
    query was written from, ``metadata`` anything else (category,
    difficulty, author).
    """

    query: str
    gold: tuple[str, ...] = ()
    corpus: str | None = None
    source_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.gold, str):  # a bare string is one id, not its characters
            object.__setattr__(self, "gold", (self.gold,))
        else:
            object.__setattr__(self, "gold", tuple(self.gold))
        if not isinstance(self.query, str) or not self.query.strip():
            raise InputError("a discovery case needs a non-empty query", field="query")
        for g in self.gold:
            if not isinstance(g, str) or not g:
                raise InputError(f"gold ids must be non-empty strings, got {g!r}", field="gold")
        if len(set(self.gold)) != len(self.gold):
            raise InputError(f"gold lists an id twice: {list(self.gold)}", field="gold")

    @property
    def gold_is_none(self) -> bool:
        """True for an abstention case: no item should be returned."""
        return not self.gold

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DiscoveryCase:
        """The inverse of `to_dict`; ``gold`` may be a string (one id) or a list."""
        if not isinstance(d, Mapping):
            raise InputError(f"a discovery case is a JSON object, got {type(d).__name__}")
        check_keys(d, _CASE_KEYS, "a case")
        if "query" not in d:
            raise InputError("a discovery case needs a query", field="query")
        gold = d.get("gold", ())
        if gold is None:
            gold = ()
        if not isinstance(gold, str | list | tuple):
            raise InputError(f"gold must be an id or a list of ids, got {gold!r}", field="gold")
        for name in ("corpus", "source_id"):
            if d.get(name) is not None and not isinstance(d[name], str):
                raise InputError(f"{name} must be a string, got {d[name]!r}", field=name)
        metadata = d.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise InputError(f"metadata must be an object, got {metadata!r}", field="metadata")
        if not isinstance(d["query"], str):
            raise InputError(f"query must be a string, got {d['query']!r}", field="query")
        return cls(query=d["query"], gold=(gold,) if isinstance(gold, str) else tuple(gold),
                   corpus=d.get("corpus"), source_id=d.get("source_id"),
                   metadata=dict(metadata))

    def to_dict(self) -> dict[str, Any]:
        """JSON form; empty optional fields are left out (``gold`` is always written)."""
        out: dict[str, Any] = {"query": self.query, "gold": list(self.gold)}
        if self.corpus is not None:
            out["corpus"] = self.corpus
        if self.source_id is not None:
            out["source_id"] = self.source_id
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out


def case_id(index: int) -> str:
    """The query id of the case at ``index`` (0-based position in its file or list).

    Derived from the position, so ids stay stable when abstention cases are
    skipped by the retrieval measures.
    """
    return f"q{index}"


def save_cases(cases: Iterable[DiscoveryCase], path: PathLike, *,
               meta: Mapping[str, Any] | None = None) -> None:
    """Write ``cases`` as JSONL (atomically), after a ``{"__meta__": meta}`` line if given."""
    import json

    rows = [c.to_dict() for c in cases]
    with atomic_write(path) as out:
        if meta is not None:
            out.write(json.dumps({META_KEY: dict(meta)}, ensure_ascii=False) + "\n")
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_meta(path: PathLike) -> dict[str, Any]:
    """The ``__meta__`` header of a cases file (``{}`` when it has none)."""
    for lineno, obj in read_jsonl(path):
        return _meta(obj, str(path), lineno) or {}
    return {}


def _meta(obj: Mapping[str, Any], path: str, lineno: int) -> dict[str, Any] | None:
    if META_KEY not in obj:
        return None
    if len(obj) != 1:
        raise InputError(f"a {META_KEY} line holds only {META_KEY}, found also "
                         f"{', '.join(repr(k) for k in obj if k != META_KEY)}",
                         path=path, line=lineno, field=META_KEY)
    meta = obj[META_KEY]
    if not isinstance(meta, Mapping):
        raise InputError(f"{META_KEY} must be an object, got {type(meta).__name__}",
                         path=path, line=lineno, field=META_KEY)
    return dict(meta)


def load_cases(path: PathLike) -> list[DiscoveryCase]:
    """Read cases from JSONL, skipping a leading ``__meta__`` line; refuse a bad line by name."""
    cases: list[DiscoveryCase] = []
    first = True
    for lineno, obj in read_jsonl(path):
        meta = _meta(obj, str(path), lineno)
        if meta is not None:
            if not first:
                raise InputError(f"{META_KEY} may only be the first line", path=str(path),
                                 line=lineno, field=META_KEY)
            first = False
            continue
        first = False
        try:
            cases.append(DiscoveryCase.from_dict(obj))
        except InputError as exc:
            raise InputError(exc.reason, path=str(path), line=lineno, field=exc.field) from None
    if not cases:
        raise InputError("the file holds no cases", path=str(path))
    return cases


def validate_cases(ids: Iterable[str], cases: Sequence[DiscoveryCase]) -> dict[int, list[str]]:
    """``{case index: [gold ids absent from ids]}`` — empty when the cases fit the catalogue."""
    known = set(ids)
    return {i: missing for i, c in enumerate(cases)
            if (missing := [g for g in c.gold if g not in known])}


def check_cases(ids: Iterable[str], cases: Sequence[DiscoveryCase], *, source: str = "cases"
                ) -> None:
    """Refuse (`InputError`) cases whose gold ids are not in the catalogue, naming them."""
    missing = validate_cases(ids, cases)
    if missing:
        shown = "; ".join(f"case {i} ({cases[i].query[:60]!r}): {', '.join(m)}"
                          for i, m in list(missing.items())[:5])
        more = f" and {len(missing) - 5} more case(s)" if len(missing) > 5 else ""
        raise InputError(f"{len(missing)} case(s) name gold ids that are not in the catalogue: "
                         f"{shown}{more}", path=source, field="gold")


def to_qrels(cases: Sequence[DiscoveryCase], *, grade: int = 1) -> tuple[dict[str, str], Qrels]:
    """``(queries, qrels)`` of the gold-bearing cases; abstention cases are left out.

    Query ids come from each case's position (`case_id`), so they do not
    shift when abstention cases are skipped.
    """
    if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
        raise InputError(f"grade must be a positive integer, got {grade!r}", field="grade")
    queries = {case_id(i): c.query for i, c in enumerate(cases) if c.gold}
    judged = {case_id(i): {g: grade for g in c.gold} for i, c in enumerate(cases) if c.gold}
    if not judged:
        raise InputError("no case has a gold id: nothing to build qrels from "
                         "(every case is an abstention case)")
    return queries, Qrels.from_dict(judged)
