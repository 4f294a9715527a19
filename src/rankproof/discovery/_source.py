"""What a discovery evaluation searches: a catalogue with a retrieval mode, or your callable.

Everything in `rankproof.discovery` asks a `Searcher` for the top ``k`` ids
of each query, **once** per evaluation, and scores what came back. Two kinds:

* `CatalogSearcher`: a `Catalog` (a folder of ``.txt``/``.md`` files, id =
  file stem, or a JSONL file of ``{id, title, text, tags}``) indexed with
  rankproof's own retrieval stages: ``bm25``, ``dense``, ``hybrid`` (RRF
  fusion of the two) and, on request, a cross-encoder ``rerank`` on top.
  ``dense``/``hybrid`` need the ``dense`` extra; without it the searcher is
  refused with the install hint (`MissingExtraError`), never quietly
  downgraded. The hashing embedder is accepted as a labelled test double:
  the searcher is then ``degraded`` and says why in ``notes``.
* `TargetSearcher`: a rankproof target (an `HttpTarget` to your service, whose
  responses may carry scores: ``scores_key``).
* `CallableSearcher`: any ``(query, k) -> [(id, score), ...]`` (best first),
  e.g. a production search service behind a function. Its identity is its
  ``MODULE:CALLABLE`` name plus an optional version you give, which is what
  a calibrated floor is stamped with.

A searcher's ``identity`` (catalogue digest, mode, model) is recorded on
every report and calibration, so a number is never read against the wrong
configuration and a stale floor is refused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from rankproof._errors import ConfigError, InputError, note_user_code
from rankproof._io import PathLike
from rankproof.data import Input, Run, check_keys, read_jsonl
from rankproof.retrieval import (
    BM25Retriever,
    CrossEncoder,
    DenseRetriever,
    Embedder,
    FusionRetriever,
    HashingEmbedder,
    RerankRetriever,
    Retriever,
    SentenceTransformerEmbedder,
    default_cache_dir,
    retrieved_nothing,
)
from rankproof.targets import Case, Target

MODES: tuple[str, ...] = ("bm25", "dense", "hybrid")
Hit = tuple[str, float]
Ranking = tuple[Hit, ...]
SearchFn = Callable[[str, int], Sequence[tuple[str, float]]]

_ITEM_KEYS = ("id", "title", "text", "tags")
#: The parts of a catalogue item that can be indexed (`SearchSettings.surfaces`).
SURFACES: tuple[str, ...] = ("title", "text", "tags")
_DEFAULT_RRF_K = 60.0
_DEFAULT_DEPTH = 100


@dataclass(frozen=True)
class SearchSettings:
    """How a catalogue is searched, beside its mode: one object, validated once.

    ``surfaces`` restricts what of each item is indexed (a subset of
    `SURFACES`; None: all of them), ``rrf_k`` is the fusion constant of the
    ``hybrid`` mode, ``depth`` how deep each first stage is read before fusion
    or a rerank. Every discovery entry point takes ``search=`` (this object or
    a mapping of its fields); `compare_indexings` also takes one per label,
    merged over the shared one (`merged`).
    """

    surfaces: tuple[str, ...] | None = None
    rrf_k: float = _DEFAULT_RRF_K
    depth: int = _DEFAULT_DEPTH

    def __post_init__(self) -> None:
        surfaces = self.surfaces
        if surfaces is not None:
            if isinstance(surfaces, str) or not isinstance(surfaces, Iterable):
                raise ConfigError(f"surfaces must be a list of {', '.join(SURFACES)}, got "
                                  f"{surfaces!r}")
            chosen = tuple(dict.fromkeys(surfaces))
            unknown = [x for x in chosen if x not in SURFACES]
            if unknown or not chosen:
                raise ConfigError(f"surfaces must be a non-empty subset of "
                                  f"{', '.join(SURFACES)}, got {list(surfaces)!r}")
            object.__setattr__(self, "surfaces", tuple(x for x in SURFACES if x in chosen))
        rrf_k = self.rrf_k
        if isinstance(rrf_k, bool) or not isinstance(rrf_k, int | float) \
                or not math.isfinite(rrf_k) or rrf_k < 0:
            raise ConfigError(f"rrf_k must be a non-negative number, got {rrf_k!r}")
        object.__setattr__(self, "rrf_k", float(rrf_k))
        depth = self.depth
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ConfigError(f"depth must be a positive integer, got {depth!r}")

    @classmethod
    def of(cls, value: SearchSettings | Mapping[str, Any] | None) -> SearchSettings:
        """``value`` as settings: None is the defaults, a mapping names fields (checked)."""
        if value is None:
            return cls()
        if isinstance(value, SearchSettings):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"search settings are a SearchSettings or a mapping, got "
                              f"{type(value).__name__}")
        return cls().merged(value)

    def merged(self, overrides: SearchSettings | Mapping[str, Any] | None) -> SearchSettings:
        """These settings with ``overrides`` on top (a mapping's keys are checked)."""
        if overrides is None:
            return self
        if isinstance(overrides, SearchSettings):
            overrides = overrides.changed()
        fields = ("surfaces", "rrf_k", "depth")
        unknown = sorted(str(k) for k in overrides if k not in fields)
        if unknown:
            raise ConfigError(f"unknown search setting(s) {', '.join(unknown)}; the settings "
                              f"are {', '.join(fields)}")
        return dataclasses.replace(self, **dict(overrides))

    def changed(self) -> dict[str, Any]:
        """The fields that differ from the defaults (what an identity records)."""
        out: dict[str, Any] = {}
        if self.surfaces is not None:
            out["surfaces"] = list(self.surfaces)
        if self.rrf_k != _DEFAULT_RRF_K:
            out["rrf_k"] = self.rrf_k
        if self.depth != _DEFAULT_DEPTH:
            out["depth"] = self.depth
        return out
_TEXT_SUFFIXES = (".txt", ".md")


@dataclass(frozen=True)
class CatalogItem:
    """One capability: a stable ``id``, a ``title``, a description ``text`` and ``tags``."""

    id: str
    title: str = ""
    text: str = ""
    tags: tuple[str, ...] = ()

    @property
    def document(self) -> str:
        """What is indexed: title, description and tags, one per line."""
        return self.document_of(None)

    def document_of(self, surfaces: Iterable[str] | None) -> str:
        """The indexed text built from only ``surfaces`` (None: all of `SURFACES`)."""
        wanted = SURFACES if surfaces is None else tuple(surfaces)
        parts = {"title": self.title, "text": self.text, "tags": " ".join(self.tags)}
        return "\n".join(parts[s] for s in SURFACES if s in wanted and parts[s])

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "text": self.text, "tags": list(self.tags)}


@dataclass(frozen=True)
class Catalog:
    """The items a discovery query can be answered with, in a fixed order (by id)."""

    items: tuple[CatalogItem, ...]
    name: str = "catalog"
    path: str | None = None

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for item in self.items:
            if item.id in seen:
                raise InputError(f"catalogue {self.name!r} lists id {item.id!r} twice",
                                 path=self.path, field="id")
            seen.add(item.id)
        if not self.items:
            raise InputError(f"catalogue {self.name!r} is empty", path=self.path)
        object.__setattr__(self, "items", tuple(sorted(self.items, key=lambda i: i.id)))

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(i.id for i in self.items)

    def __len__(self) -> int:
        return len(self.items)

    def get(self, item_id: str) -> CatalogItem:
        for item in self.items:
            if item.id == item_id:
                return item
        raise KeyError(item_id)

    def docs(self, surfaces: Iterable[str] | None = None) -> list[tuple[str, str]]:
        """``(id, text)`` pairs for the retrieval stages, of only ``surfaces`` when given.

        An item with nothing on those surfaces is indexed as its id, so it can
        still be ranked (last) rather than vanish from the catalogue.
        """
        return [(i.id, i.document_of(surfaces) or i.id) for i in self.items]

    @property
    def digest(self) -> str:
        """``sha256:…`` over every item (id, title, text, tags): the catalogue's identity."""
        h = hashlib.sha256(b"rankproof-catalog-v1\0")
        for item in self.items:
            raw = json.dumps(item.to_dict(), ensure_ascii=False, sort_keys=True).encode("utf-8")
            h.update(len(raw).to_bytes(8, "little"))
            h.update(raw)
        return "sha256:" + h.hexdigest()

    def subset(self, ids: Iterable[str], name: str | None = None) -> Catalog:
        """A catalogue of only ``ids`` (each must exist)."""
        wanted = set(ids)
        missing = sorted(wanted - set(self.ids))
        if missing:
            raise InputError(f"ids not in catalogue {self.name!r}: {', '.join(missing[:5])}")
        return Catalog(tuple(i for i in self.items if i.id in wanted),
                       name=name or f"{self.name}[{len(wanted)}]", path=self.path)


def _item(obj: Mapping[str, Any], path: str, line: int) -> CatalogItem:
    check_keys(obj, _ITEM_KEYS, "an item", path=path, line=line)
    item_id = obj.get("id")
    if not isinstance(item_id, str) or not item_id.strip() or item_id != item_id.strip():
        raise InputError(f"id must be a non-empty string without surrounding spaces, got "
                         f"{item_id!r}", path=path, line=line, field="id")
    for name in ("title", "text"):
        if not isinstance(obj.get(name, ""), str):
            raise InputError(f"{name} must be a string", path=path, line=line, field=name)
    tags = obj.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InputError("tags must be a list of strings", path=path, line=line, field="tags")
    item = CatalogItem(item_id, obj.get("title", ""), obj.get("text", ""), tuple(tags))
    if not item.document.strip():
        raise InputError(f"item {item_id!r} has no title, text or tags to search",
                         path=path, line=line, field="text")
    return item


def load_catalog(path: PathLike, *, name: str | None = None) -> Catalog:
    """A catalogue from a folder of ``.txt``/``.md`` files (id = stem) or a JSONL file.

    In a folder, each file's first non-blank line is its title and the rest
    its text; other files are ignored, and a folder without any is refused.
    """
    p = Path(path)
    label = name or p.stem
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.suffix in _TEXT_SUFFIXES and f.is_file())
        if not files:
            raise InputError(f"no {' or '.join(_TEXT_SUFFIXES)} files in the folder", path=str(p))
        items = []
        for f in files:
            text = Input.open(f).text().strip()
            if not text:
                raise InputError("the file is empty", path=str(f))
            title, _, body = text.partition("\n")
            items.append(CatalogItem(f.stem, title.strip().lstrip("# ").strip(), body.strip()))
        return Catalog(tuple(items), name=label, path=str(p))
    items = [_item(obj, str(p), line) for line, obj in read_jsonl(p)]
    return Catalog(tuple(items), name=label, path=str(p))


@runtime_checkable
class Searcher(Protocol):
    """Ranks catalogue ids for queries; what every discovery function asks, once."""

    mode: str
    degraded: bool
    notes: tuple[str, ...]

    @property
    def identity(self) -> dict[str, Any]: ...

    @property
    def ids(self) -> tuple[str, ...] | None: ...

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]: ...


def _ranked(scores: Mapping[str, float], k: int) -> Ranking:
    """Best first by trec_eval's rule: score descending, ties by id descending (byte-wise)."""
    by_id = sorted(scores.items(), key=lambda kv: kv[0].encode("utf-8"), reverse=True)
    return tuple(sorted(by_id, key=lambda kv: -kv[1])[:k])


def rank_run(rankings: Mapping[str, Ranking], *, name: str = "run") -> Run:
    """A `Run` whose trec_eval order is exactly each ranking's order (first = rank 1).

    Searchers' scores may tie in an order trec_eval would break differently,
    so scores are replaced by strictly falling values; a repeated id keeps
    its first (best) place.
    """
    table: dict[str, dict[str, float]] = {}
    for qid, ranking in rankings.items():
        docs: dict[str, float] = {}
        for doc in _unique(ranking):
            docs[doc] = float(len(ranking) - len(docs))
        table[qid] = docs
    return Run.from_dict(table, name=name)


def _unique(ranking: Ranking) -> list[str]:
    seen: dict[str, None] = {}
    for doc, _ in ranking:
        seen.setdefault(doc, None)
    return list(seen)


@dataclass
class CatalogSearcher:
    """A catalogue searched with rankproof's retrieval stages in one ``mode``.

    ``embedder`` defaults to the MiniLM sentence-transformer (the ``dense``
    extra); a `HashingEmbedder` is accepted and marks the searcher
    ``degraded``. ``rerank`` puts a cross-encoder over the first ``depth``
    results.
    """

    catalog: Catalog
    mode: str = "hybrid"
    embedder: Embedder | None = None
    rerank: CrossEncoder | None = None
    rrf_k: float = _DEFAULT_RRF_K
    depth: int = _DEFAULT_DEPTH
    surfaces: tuple[str, ...] | None = None
    """Index only these parts of each item (`SURFACES`; None: all)."""
    cache: bool = True
    """Keep document embeddings in the on-disk cache (off for throwaway sub-catalogues)."""
    calls: int = 0
    degraded: bool = False
    notes: tuple[str, ...] = ()
    _stage: Retriever | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        settings = SearchSettings(self.surfaces, self.rrf_k, self.depth)  # validates them
        self.surfaces, self.rrf_k = settings.surfaces, settings.rrf_k
        if self.mode != "bm25" and self.embedder is None:
            self.embedder = SentenceTransformerEmbedder()  # MissingExtraError without the extra
        if isinstance(self.embedder, HashingEmbedder) and self.mode != "bm25":
            self.degraded = True
            self.notes = (*self.notes, f"mode {self.mode!r} used the hashing embedder, a "
                          "test double: its dense scores are not a real model's")

    def _build(self) -> Retriever:
        bm25 = BM25Retriever()
        stage: Retriever = bm25
        if self.mode != "bm25":
            assert self.embedder is not None
            dense = DenseRetriever(self.embedder, cache_dir=default_cache_dir() / "embeddings"
                                   if self.cache else None)
            stage = dense if self.mode == "dense" else FusionRetriever(
                [bm25, dense], "rrf", rrf_k=self.rrf_k, depth=self.depth)
        if self.rerank is not None:
            stage = RerankRetriever(stage, self.rerank, depth=self.depth)
        stage.index(self.catalog.docs(self.surfaces))
        return stage

    @property
    def settings(self) -> SearchSettings:
        return SearchSettings(self.surfaces, self.rrf_k, self.depth)

    @property
    def identity(self) -> dict[str, Any]:
        model = None if self.mode == "bm25" or self.embedder is None else self.embedder.model_id
        ident = {"kind": "catalog", "catalog": self.catalog.name,
                 "digest": self.catalog.digest, "size": len(self.catalog), "mode": self.mode,
                 "embedder": model,
                 "rerank": None if self.rerank is None else getattr(self.rerank, "model_id",
                                                                    type(self.rerank).__name__)}
        changed = self.settings.changed()
        if self.mode != "hybrid":
            changed.pop("rrf_k", None)
        if changed:  # only when not the defaults, so stored stamps stay valid
            ident["search"] = changed
        return ident

    @property
    def ids(self) -> tuple[str, ...] | None:
        return self.catalog.ids

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]:
        """The top ``k`` ``(id, score)`` of each query, in the order of ``queries``."""
        if self._stage is None:
            self._stage = self._build()
        self.calls += 1
        qids = [f"q{i}" for i in range(len(queries))]
        try:
            out = self._stage.search(list(zip(qids, queries, strict=True)), k)
        except InputError as exc:
            # A stage refuses a batch in which no query retrieved anything (a run cannot be
            # empty); for discovery that is an ordinary outcome: every query missed.
            if not retrieved_nothing(exc):
                raise
            return [() for _ in qids]
        table = out.run.to_dict()
        for note in out.notes:
            if note not in self.notes:
                self.notes = (*self.notes, note)
        return [_ranked(table.get(q, {}), k) for q in qids]


@dataclass
class CallableSearcher:
    """Your own search, as ``fn(query, k) -> [(id, score), ...]`` (best first)."""

    fn: SearchFn
    name: str | None = None
    version: str | None = None
    mode: str = "callable"
    calls: int = 0
    degraded: bool = False
    notes: tuple[str, ...] = ()
    catalog_ids: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise ConfigError(f"a callable searcher needs a function, got {self.fn!r}")
        if self.name is None:
            self.name = callable_name(self.fn)

    @property
    def identity(self) -> dict[str, Any]:
        return {"kind": "callable", "callable": self.name, "version": self.version,
                "mode": self.mode}

    @property
    def ids(self) -> tuple[str, ...] | None:
        return self.catalog_ids

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]:
        self.calls += 1
        return [self._one(q, k) for q in queries]

    def _one(self, query: str, k: int) -> Ranking:
        got = self.fn(query, k)
        if isinstance(got, str | bytes) or not isinstance(got, Sequence):
            raise InputError(f"{self.name}: expected a list of (id, score) pairs for "
                             f"{query[:60]!r}, got {type(got).__name__}")
        hits: list[Hit] = []
        seen: set[str] = set()
        for pos, pair in enumerate(got):
            if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise InputError(f"{self.name}: result {pos} for {query[:60]!r} is not an "
                                 f"(id, score) pair: {pair!r}")
            doc, score = pair
            if not isinstance(doc, str) or not doc:
                raise InputError(f"{self.name}: result {pos} has id {doc!r}; ids are "
                                 "non-empty strings")
            if isinstance(score, bool) or not isinstance(score, int | float) \
                    or not math.isfinite(score):
                raise InputError(f"{self.name}: result {pos} ({doc!r}) has score {score!r}; "
                                 "scores are finite numbers")
            if doc in seen:
                raise InputError(f"{self.name}: {doc!r} is returned twice for {query[:60]!r}")
            if hits and score > hits[-1][1]:
                raise InputError(f"{self.name}: results for {query[:60]!r} are not best first "
                                 f"({doc!r} scores {score} after {hits[-1][1]})")
            seen.add(doc)
            hits.append((doc, float(score)))
        return tuple(hits[:k])


@dataclass
class TargetSearcher:
    """A rankproof target (an `HttpTarget` to a search service, …) as a searcher.

    Each query is sent as a `Case` (id ``q{i}``). The response's ``scores``
    are used when the target returns them (``HttpTarget(scores_key=...)``);
    without them the scores are ``1/rank`` — enough for rank measures and the
    taxonomy, meaningless for an abstention floor or a selector's thresholds —
    and the searcher is marked degraded and says so.
    """

    target: Target
    version: str | None = None
    mode: str = "target"
    calls: int = 0
    degraded: bool = False
    notes: tuple[str, ...] = ()

    @property
    def identity(self) -> dict[str, Any]:
        return {"kind": "target", "target": self.target.name, "version": self.version,
                "mode": self.mode}

    @property
    def ids(self) -> tuple[str, ...] | None:
        return None

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]:
        self.calls += 1
        cases = [Case(id=f"q{i}", query=q) for i, q in enumerate(queries)]
        many = getattr(self.target, "invoke_many", None)
        responses = many(cases) if callable(many) else [self.target.invoke(c) for c in cases]
        out: list[Ranking] = []
        for response in responses:
            ids = list(dict.fromkeys(response.ranked_ids))[:k]
            if response.scores is None:
                if not self.degraded:
                    self.degraded = True
                    self.notes = (*self.notes, f"target {self.target.name!r} returns no "
                                  "scores: scores are 1/rank, so abstention floors and "
                                  "selection thresholds are rank-based, not confidence")
                out.append(tuple((d, 1.0 / r) for r, d in enumerate(ids, 1)))
            else:
                first: dict[str, float] = {}
                for d, score in zip(response.ranked_ids, response.scores, strict=True):
                    first.setdefault(d, score)
                out.append(tuple((d, first[d]) for d in ids))
        return out


def callable_name(fn: Callable[..., Any]) -> str:
    """``MODULE:QUALNAME`` of a function (its identity in reports and calibrations)."""
    module = getattr(fn, "__module__", None) or "?"
    qual = getattr(fn, "__qualname__", None) or type(fn).__name__
    return f"{module}:{qual}"


def import_callable(spec: str) -> SearchFn:
    """The function named ``MODULE:CALLABLE`` (the current folder is importable)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"--retriever takes MODULE:CALLABLE, got {spec!r}")
    added = False
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
        added = True
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import failure is the user module's
        raise ConfigError(f"cannot import {module_name!r} for --retriever {spec}: "
                          f"{type(exc).__name__}: {exc}") from None
    finally:
        if added:
            sys.path.remove(str(Path.cwd()))
    note_user_code(getattr(module, "__file__", None))  # its errors are the user's
    fn: Any = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            raise ConfigError(f"{module_name!r} has no {attr!r} (--retriever {spec})")
    if not callable(fn):
        raise ConfigError(f"{spec} is not callable")
    return fn  # type: ignore[no-any-return]


def as_searcher(source: Any, *, mode: str = "hybrid", embedder: Embedder | None = None,
                rerank: CrossEncoder | None = None,
                search: SearchSettings | Mapping[str, Any] | None = None) -> Searcher:
    """Whatever a discovery function was given, as a `Searcher`.

    A `Searcher` is used as is (its own mode and settings win); a `Catalog`, or
    a path to one, is searched in ``mode`` with the ``search`` settings
    (`SearchSettings`); a plain callable is a `CallableSearcher`.
    """
    settings = SearchSettings.of(search)
    if isinstance(source, CatalogSearcher | CallableSearcher | TargetSearcher):
        return source
    if isinstance(source, Target):
        return TargetSearcher(source)
    if isinstance(source, str | Path):
        source = load_catalog(source)
    if isinstance(source, Catalog):
        return CatalogSearcher(source, mode=mode, embedder=embedder, rerank=rerank,
                               rrf_k=settings.rrf_k, depth=settings.depth,
                               surfaces=settings.surfaces)
    if isinstance(source, Searcher):
        return source
    if callable(source):
        return CallableSearcher(source)
    raise InputError(f"cannot search a {type(source).__name__}: give a Catalog, a catalogue "
                     "path, a Searcher or a (query, k) -> [(id, score)] function")


def retrieve(searcher: Searcher, queries: Sequence[str], k: int) -> list[Ranking]:
    """One retrieval pass: the top ``k`` of every query (the only call the evaluators make)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}", field="k")
    return searcher.search_many(list(queries), k)

