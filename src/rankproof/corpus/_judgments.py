"""`Judgments`: what a person says the right answer to each question is.

A judgments file is JSON Lines, one query per line::

    {"query_id": "chlorine-residual-target", "query": "What free chlorine ...?",
     "category": "normal",
     "gold": [{"doc": "quality/chlorine.md", "quote": "between 0.5 and 1.5 mg/L"}]}

Relevance is given as a *quote* rather than a document or chunk id, because
a quote survives re-chunking: each quote must occur verbatim in its document;
its first occurrence becomes a character span, and at evaluation time the
span becomes every chunk of the current chunking that overlaps it (all of
them relevant) — or just the document, at document granularity.

Categories say what kind of question it is, so a report can break results
down: ``normal`` (one clear answer), ``ambiguous`` (the answer is spread over,
or repeated in, several documents), ``no_answer`` (the corpus does not
answer it: empty ``gold``, no qrels rows — the harness reports these apart,
through :attr:`Judgments.no_answer`) and ``adversarial`` (the question hits a
document carrying planted instructions; gold points at the legitimate facts).

Two optional keys are accepted and preserved: ``source_id`` (a string: the id
a query had in the collection it was converted from, e.g. a BEIR query id
that was not kebab-case) and ``meta`` (any JSON object, carried verbatim).
Every other key is an error, so a misspelt ``glod`` cannot silently make a
query unanswerable.

Every error is an `InputError` naming the file, the line and the field
(``gold[1].quote`` for the second gold entry's quote).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, get_args

from rankproof._errors import InputError
from rankproof._io import PathLike, atomic_write
from rankproof._limits import MAX_SHOWN_CHARS, shown
from rankproof.corpus._corpus import Corpus, is_encodable
from rankproof.data import Input, Qrels, read_jsonl

Category = Literal["normal", "ambiguous", "no_answer", "adversarial"]
Granularity = Literal["chunk", "document"]
CATEGORIES: tuple[Category, ...] = get_args(Category)
QUERY_ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_REQUIRED = ("query_id", "query", "category", "gold")
_OPTIONAL = ("source_id", "meta")
_GOLD_KEYS = ("doc", "quote")


@dataclass(frozen=True)
class Gold:
    """One piece of evidence: ``quote`` is ``corpus.document(doc).text[start:end]``.

    ``start`` is the first occurrence of the quote in the document.
    """

    doc: str
    quote: str
    start: int
    end: int


@dataclass(frozen=True)
class JudgedQuery:
    """One judged question; ``gold`` is empty exactly when ``category == "no_answer"``."""

    query_id: str
    query: str
    category: Category
    gold: tuple[Gold, ...]
    source_id: str | None = None
    meta: Mapping[str, Any] | None = field(default=None, hash=False)

    def to_row(self) -> dict[str, Any]:
        """The JSONL row this query reads from (spans are recomputed on reading)."""
        row: dict[str, Any] = {
            "query_id": self.query_id, "query": self.query, "category": self.category,
            "gold": [{"doc": g.doc, "quote": g.quote} for g in self.gold],
        }
        if self.source_id is not None:
            row["source_id"] = self.source_id
        if self.meta is not None:
            row["meta"] = _thaw(self.meta)
        return row


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_thaw(v) for v in value]
    return value


def _freeze(value: Any) -> Any:
    """A read-only deep copy of a JSON value, so a frozen `Judgments` stays frozen."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class Judgments:
    """Judged queries, in file order, with a digest of their content.

    ``digest`` is sha256 over the canonical JSON of every row sorted by query
    id, so it does not change with line order or key order; it does not cover
    the corpus (a report records the corpus digest beside it).
    """

    queries: tuple[JudgedQuery, ...]
    digest: str
    source: str | None = None
    _by_id: Mapping[str, JudgedQuery] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {q.query_id: q for q in self.queries})

    @classmethod
    def from_rows(
        cls, rows: Iterable[Mapping[str, Any]], corpus: Corpus, *, source: str | None = None
    ) -> Judgments:
        """Validate rows (dicts shaped like the JSONL lines) against ``corpus``.

        Errors name the row's position (1-based) as its line.
        """
        return _build([(i, row) for i, row in enumerate(rows, start=1)], corpus, source)

    def __len__(self) -> int:
        return len(self.queries)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._by_id

    def query(self, query_id: str) -> JudgedQuery:
        """The query with id ``query_id`` (KeyError when absent)."""
        return self._by_id[query_id]

    @property
    def query_ids(self) -> tuple[str, ...]:
        """Every query id, in file order."""
        return tuple(q.query_id for q in self.queries)

    @property
    def answerable(self) -> tuple[str, ...]:
        """Ids of queries with gold evidence: the topics of :meth:`to_qrels`."""
        return tuple(q.query_id for q in self.queries if q.gold)

    @property
    def no_answer(self) -> tuple[str, ...]:
        """Ids of ``no_answer`` queries: they have no qrels rows and are reported apart."""
        return tuple(q.query_id for q in self.queries if q.category == "no_answer")

    def by_category(self) -> dict[Category, tuple[str, ...]]:
        """Query ids per category (every category present as a key, in fixed order)."""
        return {c: tuple(q.query_id for q in self.queries if q.category == c)
                for c in CATEGORIES}

    def relevant(
        self, query_id: str, corpus: Corpus, granularity: Granularity = "chunk"
    ) -> tuple[str, ...]:
        """The relevant chunk (or document) ids of one query, first-seen order, no repeats."""
        _check_granularity(granularity)
        q = self._by_id[query_id]
        out: dict[str, None] = {}
        for i, g in enumerate(q.gold):
            _check_against(corpus, q, i, g, self.source)
            if granularity == "document":
                out[g.doc] = None
            else:
                for c in corpus.overlapping_chunks(g.doc, g.start, g.end):
                    out[c.id] = None
        return tuple(out)

    def to_qrels(self, corpus: Corpus, granularity: Granularity = "chunk") -> Qrels:
        """Binary qrels (rel = 1) for the answerable queries.

        ``chunk``: every chunk of ``corpus`` overlapping a gold span is
        relevant (a quote cut by a chunk boundary makes both chunks relevant —
        either one hands the reader part of the answer). ``document``: the
        gold documents. ``no_answer`` queries contribute no rows; see
        :attr:`no_answer`. ``corpus`` must hold the documents the judgments
        were resolved against (checked quote by quote).
        """
        _check_granularity(granularity)
        qids: list[str] = []
        docids: list[str] = []
        for qid in self.answerable:
            for d in self.relevant(qid, corpus, granularity):
                qids.append(qid)
                docids.append(d)
        if not qids:
            raise InputError("the judgments have no answerable queries, so no qrels",
                             path=self.source)
        return Qrels.from_columns(qids, docids, [1] * len(qids), source=self.source)

    def to_rows(self) -> list[dict[str, Any]]:
        """Every query as its JSONL row, in order."""
        return [q.to_row() for q in self.queries]


def _check_granularity(granularity: str) -> None:
    if granularity not in ("chunk", "document"):
        raise InputError(f"granularity must be 'chunk' or 'document', got {shown(granularity)}",
                         field="granularity")


def _check_against(corpus: Corpus, q: JudgedQuery, i: int, g: Gold, source: str | None) -> None:
    if g.doc not in corpus or corpus.document(g.doc).text[g.start:g.end] != g.quote:
        raise InputError(
            f"query {shown(q.query_id)}: gold quote from document {shown(g.doc)} is not at "
            f"[{g.start}, {g.end}) of that document in this corpus; the judgments were "
            "read against different documents", path=source, field=f"gold[{i}]",
        )


def judgments_digest(queries: Sequence[JudgedQuery]) -> str:
    """sha256 of the canonical JSON rows, sorted by query id."""
    h = hashlib.sha256()
    for q in sorted(queries, key=lambda q: q.query_id):
        h.update(json.dumps(q.to_row(), sort_keys=True, ensure_ascii=False,
                            separators=(",", ":")).encode("utf-8"))
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


# -- validation ---------------------------------------------------------------


def _build(rows: list[tuple[int, Any]], corpus: Corpus, source: str | None) -> Judgments:
    if not rows:
        raise InputError("the judgments have no queries", path=source)
    seen: dict[str, int] = {}
    queries = []
    for line, row in rows:
        q = _parse_row(row, corpus, source, line)
        if q.query_id in seen:
            raise InputError(f"duplicate query_id {shown(q.query_id)} (first on line "
                             f"{seen[q.query_id]})", path=source, line=line, field="query_id")
        seen[q.query_id] = line
        queries.append(q)
    return Judgments(queries=tuple(queries), digest=judgments_digest(queries), source=source)


def _parse_row(row: Any, corpus: Corpus, source: str | None, line: int) -> JudgedQuery:
    def err(message: str, where: str | None = None) -> InputError:
        return InputError(message, path=source, line=line, field=where)

    if not isinstance(row, Mapping):
        raise err(f"expected a JSON object, found {_json_type(row)}")
    missing = [k for k in _REQUIRED if k not in row]
    if missing:
        raise err(f"missing key {missing[0]!r}; a row needs {', '.join(_REQUIRED)}", missing[0])
    extra = sorted(k for k in row if k not in _REQUIRED and k not in _OPTIONAL)
    if extra:
        raise err(f"unexpected key {shown(extra[0])}; allowed keys are "
                  f"{', '.join(_REQUIRED + _OPTIONAL)}", _cut(extra[0]))
    qid = row["query_id"]
    if not isinstance(qid, str):
        raise err(f"query_id must be a string, found {_json_type(qid)}", "query_id")
    if not QUERY_ID_PATTERN.match(qid):
        raise err(f"query_id must be kebab-case lowercase ([a-z0-9] words joined by '-'), "
                  f"found {shown(qid)}", "query_id")
    text = row["query"]
    if not isinstance(text, str) or not text.strip():
        raise err(f"query must be a non-empty string, found {shown(text)}", "query")
    if not is_encodable(text):
        raise err("query holds an unpaired surrogate and cannot be encoded as UTF-8", "query")
    category = row["category"]
    if category not in CATEGORIES:
        raise err(f"category must be one of {', '.join(CATEGORIES)}, found {shown(category)}",
                  "category")
    source_id = row.get("source_id")
    if source_id is not None and not isinstance(source_id, str):
        raise err(f"source_id must be a string, found {_json_type(source_id)}", "source_id")
    if source_id is not None and not is_encodable(source_id):
        raise err("source_id holds an unpaired surrogate and cannot be encoded as UTF-8",
                  "source_id")
    meta = row.get("meta")
    if meta is not None and not isinstance(meta, Mapping):
        raise err(f"meta must be a JSON object, found {_json_type(meta)}", "meta")
    if meta is not None:
        try:
            json.dumps(meta, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
            raise err(f"meta must hold plain JSON values: {exc}", "meta") from None
    gold_raw = row["gold"]
    if not isinstance(gold_raw, list | tuple):
        raise err(f"gold must be a list, found {_json_type(gold_raw)}", "gold")
    if category == "no_answer" and gold_raw:
        raise err(f"a no_answer query must have empty gold, found {len(gold_raw)} entries",
                  "gold")
    if category != "no_answer" and not gold_raw:
        raise err(f"a {category} query needs at least one gold entry (only no_answer "
                  "queries have none)", "gold")
    gold = tuple(_parse_gold(g, i, corpus, err) for i, g in enumerate(gold_raw))
    return JudgedQuery(query_id=qid, query=text, category=category, gold=gold,
                       source_id=source_id, meta=None if meta is None else _freeze(meta))


def _parse_gold(g: Any, i: int, corpus: Corpus, err: Any) -> Gold:
    where = f"gold[{i}]"
    if not isinstance(g, Mapping):
        raise err(f"expected an object {{doc, quote}}, found {_json_type(g)}", where)
    for k in _GOLD_KEYS:
        if k not in g:
            raise err(f"missing key {k!r}; a gold entry needs doc and quote", f"{where}.{k}")
    extra = sorted(k for k in g if k not in _GOLD_KEYS)
    if extra:
        raise err(f"unexpected key {shown(extra[0])}; a gold entry has only doc and quote",
                  _cut(f"{where}.{extra[0]}"))
    doc, quote = g["doc"], g["quote"]
    if not isinstance(doc, str):
        raise err(f"doc must be a string, found {_json_type(doc)}", f"{where}.doc")
    if doc not in corpus:
        raise err(f"unknown document {shown(doc)} (not in the corpus of {len(corpus)} "
                  "documents)",
                  f"{where}.doc")
    if not isinstance(quote, str) or not quote:
        raise err(f"quote must be a non-empty string, found {shown(quote)}", f"{where}.quote")
    start = corpus.document(doc).text.find(quote)
    if start < 0:
        cut = quote if len(quote) <= 80 else quote[:77] + "..."
        raise err(f"quote not found verbatim in document {shown(doc)}: {cut!r}",
                  f"{where}.quote")
    return Gold(doc=doc, quote=quote, start=start, end=start + len(quote))


def _cut(key: str) -> str:
    """A key from the file as a field name, cut to `MAX_SHOWN_CHARS`."""
    return key if len(key) <= MAX_SHOWN_CHARS else key[: MAX_SHOWN_CHARS - 1] + "…"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({shown(value)})"
    if isinstance(value, str):
        return f"a string ({shown(value)})"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def read_judgments(path: PathLike, corpus: Corpus) -> Judgments:
    """Read and validate a judgments JSONL file against ``corpus``.

    Read through the project's one JSONL reader: UTF-8 (a BOM is tolerated,
    gzip is read by content, ``-`` is standard input); blank lines are
    skipped; a key repeated within one object is an error (``json`` would
    silently keep the last).
    """
    src = Input.open(path, what="the judgments file")
    return _build(list(read_jsonl(src, allow_empty=True)), corpus, src.label)


def parse_judgments(data: bytes, corpus: Corpus, *, source: str | None = None) -> Judgments:
    """Parse and validate judgments JSONL held in memory (see :func:`read_judgments`)."""
    src = Input.from_bytes(data, source if source is not None else "<judgments>")
    return _build(list(read_jsonl(src, allow_empty=True)), corpus, source)


def write_judgments(judgments: Judgments | Iterable[JudgedQuery], path: PathLike) -> None:
    """Write queries as JSONL (UTF-8, one row per line), atomically."""
    queries = judgments.queries if isinstance(judgments, Judgments) else tuple(judgments)
    with atomic_write(path) as fh:
        for q in queries:
            fh.write(json.dumps(q.to_row(), ensure_ascii=False) + "\n")
