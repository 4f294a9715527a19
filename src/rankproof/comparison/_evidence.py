"""What a reader of a report must see to judge a verdict: each system's top results, the
gold and the query text, stored beside the numbers.

A verdict table says *that* something changed; the per-query picture says *where* and
*why*, and a reviewer can only read it if the report keeps what the measures looked at.
Eval reports and comparisons therefore carry an optional ``evidence`` object:

* ``k``: how many of each ranking were kept;
* ``queries``: ``{qid: text}`` (``{}`` when the text is unknown, as for runs without a
  topics file);
* ``gold``: ``{qid: {docid: grade}}``, the judgments at or above the relevance level (the
  relevant ones; a query without any maps to ``{}``);
* ``top``: ``{system: {qid: [docid, ...]}}``, each system's first ``k`` ids **in the order
  the measures rank them** (`rankproof.data.ranked_order`: score descending, ties by docid
  descending, or the rank column with ``order="rank"``), so that what a reader sees at rank
  3 is what nDCG counted at rank 3.

Inline evidence is bounded: beyond `MAX_INLINE_EVIDENCE_IDS` ids (ranked plus gold) a
report written to a file moves it to a *sidecar* beside the report (`split_evidence`) and
keeps a reference: ``{"sidecar": NAME, "sha256": "sha256:<hex>", "ids": N, "k": K}``. The
sidecar is ``{"kind": "rankproof.evidence", "schema_version": 1, "k", "queries", "gold",
"top"}``; `load_evidence` reads either form, verifying the digest, so a report and its
sidecar cannot drift apart unnoticed. Null distributions are not stored: they are recomputed
from the rows' per-query differences and recorded seed.

Evidence may come from a file someone else wrote, so `Evidence.from_dict` checks every type
and bounds what a document may hold (`MAX_EVIDENCE_DEPTH`, `MAX_EVIDENCE_IDS`), and a sidecar
is read only from the report's own folder, by a name that is one path component.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankproof._errors import InputError
from rankproof._io import input_error
from rankproof._limits import shown
from rankproof.data import Input, read_document
from rankproof.stats import Result

MAX_INLINE_EVIDENCE_IDS = 200_000
"""Most ids (ranked and gold) a report holds inline; beyond it, a sidecar file (about
10,000 queries × 10 ids × two systems)."""
MAX_EVIDENCE_IDS = 50_000_000
"""Most ids, and query or ranking entries, an evidence document may hold when read."""
MAX_EVIDENCE_DEPTH = 10_000
"""Largest ``k`` an evidence document may declare (and `collect_evidence` accepts)."""
MAX_SIDECAR_BYTES = 1 << 30
"""Largest sidecar file `load_evidence` reads."""
EVIDENCE_KIND = "rankproof.evidence"
EVIDENCE_SCHEMA_VERSION = 1
SIDECAR_SUFFIX = ".evidence.json"
"""A report ``NAME.json`` keeps its sidecar in ``NAME.evidence.json`` beside it."""

_KEYS = ("k", "queries", "gold", "top")
_REF_KEYS = ("sidecar", "sha256", "ids", "k")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_INT64 = 2**63


def _label(key: str) -> str:
    return key if key.isprintable() and len(key) <= 60 and "." not in key else shown(key, 60)


class _Budget:
    """Counts what a document holds and refuses it past `MAX_EVIDENCE_IDS`, as it is read."""

    def __init__(self, path: str | None) -> None:
        self.used = 0
        self.path = path

    def spend(self, n: int, where: str) -> None:
        self.used += n
        if self.used > MAX_EVIDENCE_IDS:
            raise InputError(f"evidence holds more than {MAX_EVIDENCE_IDS:,} ids and entries",
                             path=self.path, field=where)


def _mapping(value: Any, where: str, path: str | None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"must be an object, found {type(value).__name__}", path=path,
                         field=where)
    for key in value:
        if not isinstance(key, str):
            raise InputError(f"keys must be strings, found {shown(key, 60)}", path=path,
                             field=where)
    return value


def _count(value: Any, where: str, path: str | None, *, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"must be an integer from {low} to {high:,}, found {shown(value, 60)}",
                         path=path, field=where)
    return value


@dataclass(frozen=True, repr=False)
class Evidence(Result):
    """Each system's top ``k`` ids per query, the gold and the query text (module docstring).

    ``queries[qid]`` is the query's text; ``gold[qid]`` maps each relevant document to its
    grade; ``top[system][qid]`` lists the system's first ``k`` ids in the measures' rank
    order (fewer when it retrieved fewer; ``[]`` when it retrieved nothing for the query).
    """

    k: int
    queries: dict[str, str]
    gold: dict[str, dict[str, int]]
    top: dict[str, dict[str, list[str]]]

    @property
    def ids(self) -> int:
        """How many ids the evidence holds: every ranked id plus every gold id."""
        ranked = sum(len(ids) for per_q in self.top.values() for ids in per_q.values())
        return ranked + sum(len(g) for g in self.gold.values())

    @property
    def topics(self) -> list[str]:
        """Every query the evidence speaks of, in the order it first names them."""
        seen = dict.fromkeys(self.queries)
        seen.update(dict.fromkeys(self.gold))
        for per_q in self.top.values():
            seen.update(dict.fromkeys(per_q))
        return list(seen)

    def __repr__(self) -> str:
        return (f"Evidence(k={self.k}, {len(self.topics)} queries, {len(self.top)} systems, "
                f"{self.ids:,} ids)")

    def to_dict(self) -> dict[str, Any]:
        """The inline JSON form: ``{"k", "queries", "gold", "top"}``."""
        return {
            "k": self.k,
            "queries": dict(self.queries),
            "gold": {q: dict(g) for q, g in self.gold.items()},
            "top": {s: {q: list(ids) for q, ids in per_q.items()}
                    for s, per_q in self.top.items()},
        }

    @classmethod
    def from_dict(cls, data: Any, *, path: str | Path | None = None) -> Evidence:
        """Evidence from its inline form, every field checked (`InputError` naming it).

        ``path`` names the file in messages (a sidecar). Unknown keys are refused, a
        ranking longer than ``k`` or holding an id twice is refused, and so is a document
        past `MAX_EVIDENCE_IDS` or a ``k`` past `MAX_EVIDENCE_DEPTH`.
        """
        where = None if path is None else str(path)
        doc = _mapping(data, "evidence", where)
        unknown = sorted(set(doc) - set(_KEYS))
        if unknown:
            raise InputError(f"unknown key(s) {', '.join(map(shown, unknown))}; evidence has "
                             f"{', '.join(_KEYS)}", path=where, field=f"evidence.{unknown[0]}")
        missing = [key for key in ("k", "gold", "top") if key not in doc]
        if missing:
            raise InputError(f"evidence lacks {', '.join(missing)}", path=where,
                             field=f"evidence.{missing[0]}")
        k = _count(doc["k"], "evidence.k", where, low=1, high=MAX_EVIDENCE_DEPTH)
        budget = _Budget(where)
        return cls(k=k, queries=_queries(doc.get("queries", {}), budget),
                   gold=_gold(doc["gold"], budget), top=_top(doc["top"], k, budget))

    def capped(self, limit: int) -> tuple[Evidence, int]:
        """The evidence of as many whole queries (in `topics` order) as fit in ``limit``
        ids, and how many queries were left out."""
        kept: list[str] = []
        used = 0
        topics = self.topics
        for q in topics:
            cost = len(self.gold.get(q, ())) + sum(len(per_q.get(q, ()))
                                                   for per_q in self.top.values())
            if used + cost > limit:
                break
            used += cost
            kept.append(q)
        if len(kept) == len(topics):
            return self, 0
        keep = set(kept)
        return Evidence(
            k=self.k,
            queries={q: t for q, t in self.queries.items() if q in keep},
            gold={q: g for q, g in self.gold.items() if q in keep},
            top={s: {q: ids for q, ids in per_q.items() if q in keep}
                 for s, per_q in self.top.items()},
        ), len(topics) - len(kept)


def _queries(value: Any, budget: _Budget) -> dict[str, str]:
    doc = _mapping(value, "evidence.queries", budget.path)
    budget.spend(len(doc), "evidence.queries")
    for qid, text in doc.items():
        if not isinstance(text, str):
            raise InputError(f"a query's text must be a string, found {type(text).__name__}",
                             path=budget.path, field=f"evidence.queries.{_label(qid)}")
    return dict(doc)


def _gold(value: Any, budget: _Budget) -> dict[str, dict[str, int]]:
    doc = _mapping(value, "evidence.gold", budget.path)
    budget.spend(len(doc), "evidence.gold")
    out: dict[str, dict[str, int]] = {}
    for qid, grades in doc.items():
        where = f"evidence.gold.{_label(qid)}"
        per_q = _mapping(grades, where, budget.path)
        budget.spend(len(per_q), where)
        for docid, grade in per_q.items():
            if isinstance(grade, bool) or not isinstance(grade, int) \
                    or not -_INT64 <= grade < _INT64:
                raise InputError(f"a grade must be an integer, found {shown(grade, 60)}",
                                 path=budget.path, field=f"{where}.{_label(docid)}")
        out[qid] = dict(per_q)
    return out


def _top(value: Any, k: int, budget: _Budget) -> dict[str, dict[str, list[str]]]:
    doc = _mapping(value, "evidence.top", budget.path)
    out: dict[str, dict[str, list[str]]] = {}
    for system, per_system in doc.items():
        s_where = f"evidence.top.{_label(system)}"
        per_q = _mapping(per_system, s_where, budget.path)
        budget.spend(len(per_q), s_where)
        ranked: dict[str, list[str]] = {}
        for qid, ids in per_q.items():
            where = f"{s_where}.{_label(qid)}"
            if not isinstance(ids, list | tuple) or not all(isinstance(i, str) for i in ids):
                raise InputError("must be a list of document ids (strings)", path=budget.path,
                                 field=where)
            if len(ids) > k:
                raise InputError(f"holds {len(ids)} ids, more than k = {k}", path=budget.path,
                                 field=where)
            if len(set(ids)) != len(ids):
                raise InputError("a ranking holds the same id twice", path=budget.path,
                                 field=where)
            budget.spend(len(ids), where)
            ranked[qid] = list(ids)
        out[system] = ranked
    return out


@dataclass(frozen=True)
class EvidenceSidecar(Result):
    """A report's reference to evidence kept in a sidecar file beside it.

    ``sidecar`` is the file's name (one path component, read from the report's folder
    only); ``sha256`` is ``sha256:<hex>`` of the file's bytes; ``ids`` and ``k`` repeat
    what it holds, so that a reader can size it without opening it.
    """

    sidecar: str
    sha256: str
    ids: int
    k: int

    @classmethod
    def from_dict(cls, data: Any, *, path: str | Path | None = None) -> EvidenceSidecar:
        """A reference from its JSON form, every field checked (`InputError` naming it)."""
        where = None if path is None else str(path)
        doc = _mapping(data, "evidence", where)
        unknown = sorted(set(doc) - set(_REF_KEYS))
        if unknown:
            raise InputError(f"unknown key(s) {', '.join(map(shown, unknown))}; a sidecar "
                             f"reference has {', '.join(_REF_KEYS)}", path=where,
                             field=f"evidence.{unknown[0]}")
        missing = [key for key in _REF_KEYS if key not in doc]
        if missing:
            raise InputError(f"the sidecar reference lacks {', '.join(missing)}", path=where,
                             field=f"evidence.{missing[0]}")
        name = doc["sidecar"]
        if not isinstance(name, str):
            raise InputError(f"must be a file name, found {shown(name, 60)}", path=where,
                             field="evidence.sidecar")
        check_sidecar_name(name, path=where)
        digest = doc["sha256"]
        if not isinstance(digest, str) or not _DIGEST.match(digest):
            raise InputError(f"must be 'sha256:' and 64 lowercase hex digits, found "
                             f"{shown(digest, 80)}", path=where, field="evidence.sha256")
        return cls(sidecar=name, sha256=digest,
                   ids=_count(doc["ids"], "evidence.ids", where, low=0, high=MAX_EVIDENCE_IDS),
                   k=_count(doc["k"], "evidence.k", where, low=1, high=MAX_EVIDENCE_DEPTH))

    def load(self, base_dir: str | Path) -> Evidence:
        """The evidence in the sidecar beside the report in ``base_dir``, its digest checked.

        Refused (`InputError` naming the sidecar's path): a missing or unreadable file, one
        outside ``base_dir`` (a symbolic link elsewhere), one over `MAX_SIDECAR_BYTES`, bytes
        whose digest is not the recorded one, invalid JSON, another kind or schema version,
        and contents that disagree with the reference's ``k`` or ``ids``.
        """
        check_sidecar_name(self.sidecar)
        folder = Path(base_dir)
        path = folder / self.sidecar
        label = str(path)
        try:
            inside = path.resolve().parent == folder.resolve()
            size = os.stat(path).st_size
        except OSError:
            inside, size = True, 0  # reading it names the problem
        if not inside:
            raise InputError("the sidecar is not a file in the report's folder (it leads "
                             "elsewhere); it is not read", path=label)
        if size > MAX_SIDECAR_BYTES:
            raise InputError(f"the sidecar is {size:,} bytes, more than the {MAX_SIDECAR_BYTES:,}"
                             " a sidecar may hold", path=label)
        try:
            blob = path.read_bytes()  # the digest is of the bytes as stored: no gunzip
        except OSError as exc:
            raise input_error(path, exc, "the evidence sidecar") from None
        found = "sha256:" + hashlib.sha256(blob).hexdigest()
        if found != self.sha256:
            raise InputError(f"the sidecar's digest is {found}, not the {self.sha256} the "
                             "report recorded: it was changed or belongs to another report",
                             path=label)
        doc = read_document(Input.from_bytes(blob, label), what="evidence sidecar")
        doc = dict(_mapping(doc, "(top level)", label))
        if doc.pop("kind", None) != EVIDENCE_KIND:
            raise InputError(f"not a rankproof evidence sidecar (kind is not {EVIDENCE_KIND!r})",
                             path=label, field="kind")
        version = doc.pop("schema_version", None)
        if type(version) is not int or version != EVIDENCE_SCHEMA_VERSION:
            raise InputError(f"unsupported evidence schema_version {shown(version, 40)}; this "
                             f"rankproof reads {EVIDENCE_SCHEMA_VERSION}", path=label,
                             field="schema_version")
        evidence = Evidence.from_dict(doc, path=label)
        if evidence.k != self.k or evidence.ids != self.ids:
            raise InputError(f"the sidecar holds k = {evidence.k} and {evidence.ids} ids; the "
                             f"report recorded k = {self.k} and {self.ids} ids", path=label)
        return evidence


def check_sidecar_name(name: str, *, path: str | None = None) -> str:
    """Refuse a sidecar name that is not one plain path component (`InputError`).

    The name comes from a report that may come from anyone; a separator, ``..`` or an
    absolute path would let it read a file anywhere.
    """
    bad = (not name or name in (".", "..") or ".." in name or "/" in name or "\\" in name
           or not name.isprintable())
    if bad:
        raise InputError(f"a sidecar must be a plain file name beside the report (no folders, "
                         f"no '..'), found {shown(name, 80)}", path=path,
                         field="evidence.sidecar")
    return name


def sidecar_name(report: str | Path) -> str:
    """The sidecar's file name for a report written to ``report`` (``NAME.evidence.json``)."""
    return Path(report).stem + SIDECAR_SUFFIX


def split_evidence(evidence: Evidence, name: str) -> tuple[EvidenceSidecar, bytes]:
    """The sidecar file's bytes for ``evidence``, and the reference a report keeps instead.

    The reference records the digest of exactly these bytes, so write them as they are.
    """
    check_sidecar_name(name)
    doc = {"kind": EVIDENCE_KIND, "schema_version": EVIDENCE_SCHEMA_VERSION,
           **evidence.to_dict()}
    blob = (json.dumps(doc, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8")
    ref = EvidenceSidecar(sidecar=name, sha256="sha256:" + hashlib.sha256(blob).hexdigest(),
                          ids=evidence.ids, k=evidence.k)
    return ref, blob


def load_evidence(doc: Mapping[str, Any], base_dir: str | Path) -> Evidence | None:
    """The evidence of a report or comparison document, or None when it stores none.

    ``doc`` is the parsed JSON document; ``base_dir`` the folder the report was read
    from, where its sidecar (if any) lies. Inline evidence is validated
    (`Evidence.from_dict`); a sidecar reference is followed and verified
    (`EvidenceSidecar.load`).
    """
    if not isinstance(doc, Mapping):
        raise InputError(f"expected a JSON object, found {type(doc).__name__}")
    raw = doc.get("evidence")
    if raw is None:
        return None
    if isinstance(raw, Evidence):
        return raw
    if isinstance(raw, EvidenceSidecar):
        return raw.load(base_dir)
    if isinstance(raw, Mapping) and "sidecar" in raw:
        return EvidenceSidecar.from_dict(raw).load(base_dir)
    return Evidence.from_dict(raw)


def evidence_value(value: Any) -> Evidence | EvidenceSidecar | None:
    """A document's ``evidence`` field as an object: inline `Evidence` or a sidecar
    reference, checked (for models that store either, such as the eval report)."""
    if value is None or isinstance(value, Evidence | EvidenceSidecar):
        return value
    if isinstance(value, Mapping) and "sidecar" in value:
        return EvidenceSidecar.from_dict(value)
    return Evidence.from_dict(value)
