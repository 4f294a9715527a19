"""Answer files, reference files and arm manifests: what a RAG evaluation reads.

An *answer file* is JSONL, one row per query: ``{"query_id", "answer",
"contexts": [{"id", "text"}], "citations"?, "meta"?}`` — the answer and the
passages the generator was shown, in the order shown (``[N]`` markers in an
answer are 1-based indexes into ``contexts``). A *references file* is JSONL
``{"query_id", "answers": [...]}`` (one or more acceptable answers; an empty
list marks a question with no answer). An optional first line
``{"__manifest__": {...}}`` in an answer file describes the arm: prompt
template digest, generator checkpoint, decoding settings, upstream run
digest — what makes two arms comparable.

Every problem is an `InputError` naming the file, the line and the field;
a file with any bad line yields nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof.data import check_keys, read_jsonl

MANIFEST_KEY = "__manifest__"
#: The manifest fields two arms must share to be compared without a caveat.
ARM_FIELDS = ("prompt_template_digest", "generator_checkpoint", "decoding")
MANIFEST_FIELDS = (*ARM_FIELDS, "upstream_run_digest", "name", "notes")
_ROW_KEYS = ("query_id", "answer", "contexts", "citations", "meta", "query")
_REF_KEYS = ("query_id", "answers", "query")


@dataclass(frozen=True)
class Context:
    """One passage shown to the generator: its ``id`` and ``text``."""

    id: str
    text: str


@dataclass(frozen=True)
class AnswerRow:
    """One generated answer and the passages it was generated from.

    ``citations`` are what the generator declared, as 1-based indexes into
    ``contexts`` or as passage ids; None when the row has no ``citations``
    field (then ``[N]`` markers in the answer are read instead).
    """

    query_id: str
    answer: str
    contexts: tuple[Context, ...] = ()
    citations: tuple[int | str, ...] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    query: str | None = None


@dataclass(frozen=True)
class ArmManifest:
    """How an arm's answers were generated (all optional; recorded when given)."""

    prompt_template_digest: str | None = None
    generator_checkpoint: str | None = None
    decoding: Mapping[str, Any] | None = None
    upstream_run_digest: str | None = None
    name: str | None = None
    notes: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k in MANIFEST_FIELDS if (v := getattr(self, k)) is not None}

    def differences(self, other: ArmManifest) -> list[str]:
        """The `ARM_FIELDS` on which two arms differ (a field absent on both is equal)."""
        return [f for f in ARM_FIELDS if getattr(self, f) != getattr(other, f)]


@dataclass(frozen=True)
class AnswerFile:
    """The rows of one answer file (by query id, file order kept) and its manifest."""

    rows: tuple[AnswerRow, ...]
    manifest: ArmManifest | None = None
    path: str | None = None
    name: str = "answers"

    @property
    def query_ids(self) -> tuple[str, ...]:
        return tuple(r.query_id for r in self.rows)

    def by_id(self) -> dict[str, AnswerRow]:
        return {r.query_id: r for r in self.rows}


def _where(path: str, line: int, fld: str | None, message: str) -> InputError:
    return InputError(message, path=path, line=line, field=fld)


def _text(obj: Mapping[str, Any], key: str, path: str, line: int, *, empty: bool = True
          ) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or (not empty and not value.strip()):
        kind = "a non-empty string" if not empty else "a string"
        raise _where(path, line, key, f"{key} must be {kind}, got {value!r}")
    return value


def _contexts(value: Any, path: str, line: int) -> tuple[Context, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _where(path, line, "contexts", "contexts must be a list of {id, text} objects")
    out = []
    seen: set[str] = set()
    for i, c in enumerate(value):
        where = f"contexts[{i}]"
        if not isinstance(c, Mapping) or set(c) - {"id", "text"}:
            raise _where(path, line, where, "each context is an object with id and text only")
        cid, text = c.get("id"), c.get("text")
        if not isinstance(cid, str) or not cid:
            raise _where(path, line, f"{where}.id", f"id must be a non-empty string, got {cid!r}")
        if not isinstance(text, str):
            raise _where(path, line, f"{where}.text", "text must be a string")
        if cid in seen:
            raise _where(path, line, f"{where}.id", f"context {cid!r} is shown twice")
        seen.add(cid)
        out.append(Context(cid, text))
    return tuple(out)


def _citations(value: Any, path: str, line: int) -> tuple[int | str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise _where(path, line, "citations", "citations must be a list of passage numbers "
                                              "(1-based) or passage ids")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int | str) or v == "":
            raise _where(path, line, "citations", f"a citation is a passage number or id, "
                                                  f"got {v!r}")
    return tuple(value)


def _manifest(obj: Any, path: str, line: int) -> ArmManifest:
    if not isinstance(obj, Mapping):
        raise _where(path, line, MANIFEST_KEY, f"{MANIFEST_KEY} must be an object")
    unknown = sorted(set(obj) - set(MANIFEST_FIELDS))
    if unknown:
        raise _where(path, line, f"{MANIFEST_KEY}.{unknown[0]}",
                     f"unknown manifest field(s) {', '.join(unknown)}; known: "
                     f"{', '.join(MANIFEST_FIELDS)}")
    for k in MANIFEST_FIELDS:
        v = obj.get(k)
        if k == "decoding":
            if v is not None and not isinstance(v, Mapping):
                raise _where(path, line, f"{MANIFEST_KEY}.decoding", "decoding must be an object")
        elif v is not None and not isinstance(v, str):
            raise _where(path, line, f"{MANIFEST_KEY}.{k}", f"{k} must be a string")
    return ArmManifest(**{k: obj.get(k) for k in MANIFEST_FIELDS})


def load_answers(path: PathLike, *, name: str | None = None) -> AnswerFile:
    """Read an answer file (optional leading ``__manifest__`` line); refuse a bad line."""
    label = str(path)
    rows: list[AnswerRow] = []
    manifest: ArmManifest | None = None
    seen: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        if MANIFEST_KEY in obj:
            if rows or manifest is not None or len(obj) != 1:
                raise _where(label, line, MANIFEST_KEY, f"{MANIFEST_KEY} is alone on the first "
                                                        "line")
            manifest = _manifest(obj[MANIFEST_KEY], label, line)
            continue
        check_keys(obj, _ROW_KEYS, "a row", path=label, line=line)
        qid = _text(obj, "query_id", label, line, empty=False)
        if qid in seen:
            raise _where(label, line, "query_id", f"query {qid!r} is answered twice (first on "
                                                  f"line {seen[qid]})")
        seen[qid] = line
        meta = obj.get("meta") or {}
        if not isinstance(meta, Mapping):
            raise _where(label, line, "meta", "meta must be an object")
        query = obj.get("query")
        if query is not None and not isinstance(query, str):
            raise _where(label, line, "query", "query must be a string")
        contexts = _contexts(obj.get("contexts"), label, line)
        declared = _citations(obj.get("citations"), label, line)
        ids = {c.id for c in contexts}
        for ref in declared or ():
            if (isinstance(ref, int) and not 1 <= ref <= len(contexts)) or (
                    isinstance(ref, str) and ref not in ids):
                raise _where(label, line, "citations",
                             f"citation {ref!r} points to no shown passage (the row shows "
                             f"{len(contexts)}); a declared citation is part of the row, not "
                             "the model's text — [N] markers in the answer are counted as "
                             "dangling instead")
        rows.append(AnswerRow(qid, _text(obj, "answer", label, line), contexts, declared,
                              dict(meta), query))
    if not rows:
        raise InputError("the file holds no answers", path=label)
    stem = name or getattr(path, "stem", None) or label.rsplit("/", 1)[-1].split(".")[0]
    return AnswerFile(tuple(rows), manifest, label, str(stem))


@dataclass(frozen=True)
class References:
    """Acceptable answers per query id (an empty tuple: the question has no answer)."""

    answers: Mapping[str, tuple[str, ...]]
    queries: Mapping[str, str] = field(default_factory=dict)
    path: str | None = None

    def check_covers(self, query_ids: Iterable[str], *, source: str) -> None:
        """Refuse (naming them) answer rows whose query has no reference."""
        missing = [q for q in query_ids if q not in self.answers]
        if missing:
            shown = ", ".join(map(repr, missing[:5])) + (
                f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            what = "query has" if len(missing) == 1 else "queries have"
            raise InputError(f"{len(missing)} answered {what} no reference in "
                             f"{self.path or 'the references'}: {shown}",
                             path=source, field="query_id")


def load_references(path: PathLike) -> References:
    """Read a references file; refuse a bad line by file, line and field."""
    label = str(path)
    answers: dict[str, tuple[str, ...]] = {}
    queries: dict[str, str] = {}
    for line, obj in read_jsonl(path):
        check_keys(obj, _REF_KEYS, "a reference", path=label, line=line)
        qid = _text(obj, "query_id", label, line, empty=False)
        if qid in answers:
            raise _where(label, line, "query_id", f"query {qid!r} has two reference rows")
        value = obj.get("answers")
        if not isinstance(value, list) or not all(isinstance(a, str) and a.strip()
                                                  for a in value):
            raise _where(label, line, "answers", "answers must be a list of non-empty strings")
        answers[qid] = tuple(value)
        if isinstance(obj.get("query"), str):
            queries[qid] = obj["query"]
    return References(answers, queries, label)


def aligned(files: Sequence[AnswerFile]) -> tuple[str, ...]:
    """The query ids every file answers; refuse files that answer different queries."""
    first = files[0]
    ids = set(first.query_ids)
    for other in files[1:]:
        only_a = sorted(ids - set(other.query_ids))
        only_b = sorted(set(other.query_ids) - ids)
        if only_a or only_b:
            raise InputError(f"{first.name} and {other.name} answer different queries "
                             f"({len(only_a)} only in {first.name}: {only_a[:5]}; "
                             f"{len(only_b)} only in {other.name}: {only_b[:5]}); arms are "
                             "paired by query id", path=other.path, field="query_id")
    return tuple(sorted(ids))
