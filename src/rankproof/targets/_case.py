"""`Case` (one golden query) and `TargetResponse` (what a system returned for it).

Both are frozen: a case is an input that several targets are run against, and
a response is a result that reports, baselines and gates are built from, so
neither may change after it is made. Mappings are copied into read-only
proxies for the same reason.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from rankproof._errors import InputError

_CASE_KEYS = ("id", "query", "relevant", "relevance", "tags", "meta")


def _frozen_mapping(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


def _str_tuple(value: Any, field_name: str, *, allow_empty_items: bool = False) -> tuple[str, ...]:
    """A tuple of strings from a list/tuple; a bare string is refused.

    A bare ``"d1"`` would otherwise be read as the ids ``d``, ``1``.
    """
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InputError(
            f"expected a list of strings, found {type(value).__name__} {value!r}",
            field=field_name)
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InputError(
                f"item {i + 1} must be a string, found {type(item).__name__} {item!r}"
                + (" (quote it)" if isinstance(item, int | float) else ""),
                field=field_name)
        if not item and not allow_empty_items:
            raise InputError(f"item {i + 1} is an empty string", field=field_name)
        out.append(item)
    return tuple(out)


@dataclass(frozen=True)
class Case:
    """One golden query: an id, the query text, and (optionally) its judgments.

    Judgments come in one of two forms. ``relevant`` lists the relevant
    document ids (binary judgments); ``relevance`` maps document ids to graded
    labels (trec_eval's convention: a label > 0 is relevant, 0 is judged
    non-relevant, a negative label is judged-unjudgeable). Give either; the
    other is derived, so every metric can read whichever it needs:

    * ``relevant=("a", "b")`` gives ``relevance == {"a": 1, "b": 1}``;
    * ``relevance={"a": 2, "c": 0}`` gives ``relevant == ("a",)``.

    Both may be given when they agree (which is what `dataclasses.replace`
    does). A case with neither is *unjudged* (``judged`` is False): it is
    allowed, because latency, diversity or text metrics need no judgments,
    but a metric that needs them must refuse it rather than score it 0.
    ``relevance={}`` is different: the case is judged and nothing is relevant
    (a no-answer query).

    ``tags`` label the case for slicing reports; ``meta`` is free-form and is
    carried along untouched.
    """

    id: str
    query: str
    relevant: tuple[str, ...] = ()
    relevance: Mapping[str, int] | None = None
    tags: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            hint = " (quote it)" if isinstance(self.id, int | float) else ""
            raise InputError(
                f"case id must be a non-empty string, found {type(self.id).__name__} "
                f"{self.id!r}{hint}", field="id")
        if not isinstance(self.query, str) or not self.query:
            raise InputError(
                f"case {self.id!r}: query must be a non-empty string, "
                f"found {type(self.query).__name__} {self.query!r}", field="query")
        relevant = _str_tuple(self.relevant, "relevant")
        seen: set[str] = set()
        for doc in relevant:
            if doc in seen:
                raise InputError(f"case {self.id!r}: document {doc!r} is listed twice",
                                 field="relevant")
            seen.add(doc)
        relevance: dict[str, int] | None = None
        if self.relevance is not None:
            if not isinstance(self.relevance, Mapping):
                raise InputError(
                    f"case {self.id!r}: relevance must be a mapping of document id to grade, "
                    f"found {type(self.relevance).__name__}", field="relevance")
            relevance = {}
            for doc, raw_grade in self.relevance.items():
                grade: Any = raw_grade
                if not isinstance(doc, str) or not doc:
                    raise InputError(
                        f"case {self.id!r}: document ids must be non-empty strings, found "
                        f"{type(doc).__name__} {doc!r}", field="relevance")
                if isinstance(grade, float) and math.isfinite(grade) and grade.is_integer():
                    grade = int(grade)  # 2.0 from a JSON writer that emits floats
                if isinstance(grade, bool) or not isinstance(grade, int):
                    raise InputError(
                        f"case {self.id!r}: grade of {doc!r} must be an integer, found "
                        f"{type(grade).__name__} {grade!r}", field="relevance")
                relevance[doc] = grade
            derived = tuple(d for d, g in relevance.items() if g > 0)
            if relevant and set(relevant) != set(derived):
                raise InputError(
                    f"case {self.id!r}: relevant {list(relevant)} disagrees with the documents "
                    f"graded > 0 in relevance {derived!r}; give one of the two",
                    field="relevant")
            if not relevant:
                relevant = derived
        elif relevant:
            relevance = dict.fromkeys(relevant, 1)
        tags = _str_tuple(self.tags, "tags")
        if not isinstance(self.meta, Mapping):
            raise InputError(f"case {self.id!r}: meta must be a mapping, found "
                             f"{type(self.meta).__name__}", field="meta")
        object.__setattr__(self, "relevant", relevant)
        object.__setattr__(self, "relevance",
                           None if relevance is None else _frozen_mapping(relevance))
        object.__setattr__(self, "tags", tags)
        object.__setattr__(self, "meta", _frozen_mapping(self.meta))

    __hash__ = None  # type: ignore[assignment]  # mappings inside: equal, not hashable

    def __reduce__(self) -> tuple[Any, ...]:
        # Read-only proxies do not pickle; a case travels to worker processes and Ray tasks
        # as plain values and is validated again on arrival.
        relevance = None if self.relevance is None else dict(self.relevance)
        return (Case, (self.id, self.query, self.relevant, relevance, self.tags,
                       dict(self.meta)))

    @property
    def judged(self) -> bool:
        """True when the case carries judgments (even if nothing is relevant)."""
        return self.relevance is not None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Case:
        """Build a case from a mapping with the golden-file keys.

        Keys: ``id`` and ``query`` (required), ``relevant`` or ``relevance``
        (not both), ``tags``, ``meta``. Unknown keys are refused, so that a
        typo such as ``relevent`` is not read as an unjudged case. Errors are
        `InputError` with ``field`` set.
        """
        if not isinstance(data, Mapping):
            raise InputError(f"a case must be a mapping, found {type(data).__name__}")
        unknown = [k for k in data if k not in _CASE_KEYS]
        if unknown:
            raise InputError(
                f"unknown key {unknown[0]!r}; a case has keys {', '.join(_CASE_KEYS)}",
                field=str(unknown[0]))
        for key in ("id", "query"):
            if key not in data:
                raise InputError(f"missing required key {key!r}", field=key)
        if "relevant" in data and "relevance" in data:
            raise InputError("give either 'relevant' (ids) or 'relevance' (graded map), "
                             "not both", field="relevance")
        relevant = data.get("relevant", ())
        relevance = data.get("relevance")
        if "relevance" in data and not isinstance(relevance, Mapping):
            raise InputError(
                f"expected a mapping of document id to grade, found "
                f"{type(relevance).__name__} {relevance!r}", field="relevance")
        if "relevant" in data and not relevant and relevant is not None:
            # An explicit empty list: judged, nothing relevant.
            relevance = {}
        return cls(
            id=data["id"], query=data["query"],
            relevant=() if relevant is None else relevant,
            relevance=relevance,
            tags=() if data.get("tags") is None else data["tags"],
            meta={} if data.get("meta") is None else data["meta"],
        )


@dataclass(frozen=True)
class TargetResponse:
    """What a target returned for one case.

    ``ranked_ids``: document ids, best first, exactly as the system returned
    them (duplicates are kept; metrics that must not count them twice
    deduplicate). ``text``: generated text, when the system produces any.
    ``latency_ms``: wall-clock milliseconds the target took for this case,
    retries included, because that is what a user of the system waits.
    ``meta``: extra fields the target chose to keep (e.g. cost, model name).
    ``scores``: the system's score of each ranked id, when it returns them
    (same length as ``ranked_ids``, finite, never increasing): what a
    calibrated abstention floor or a selector needs.
    """

    ranked_ids: tuple[str, ...]
    text: str | None = None
    latency_ms: float = 0.0
    meta: Mapping[str, Any] = field(default_factory=dict)
    scores: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        ids = _str_tuple(self.ranked_ids, "ranked_ids")
        if self.text is not None and not isinstance(self.text, str):
            raise TypeError(f"text must be a string or None, found {type(self.text).__name__}")
        latency = self.latency_ms
        if isinstance(latency, bool) or not isinstance(latency, int | float) \
                or not math.isfinite(latency) or latency < 0:
            raise InputError(f"latency_ms must be a finite number >= 0, found {latency!r}",
                             field="latency_ms")
        if not isinstance(self.meta, Mapping):
            raise TypeError(f"meta must be a mapping, found {type(self.meta).__name__}")
        object.__setattr__(self, "ranked_ids", ids)
        object.__setattr__(self, "latency_ms", float(latency))
        object.__setattr__(self, "meta", _frozen_mapping(self.meta))
        if self.scores is not None:
            object.__setattr__(self, "scores", _scores(self.scores, len(ids)))

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        # As `Case.__reduce__`: plain values across a process boundary, checked on arrival.
        return (TargetResponse, (self.ranked_ids, self.text, self.latency_ms, dict(self.meta),
                                 self.scores))


def _scores(values: Any, n: int) -> tuple[float, ...]:
    """Finite, never-increasing scores, one per ranked id."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise InputError(f"scores must be a list of numbers, found {type(values).__name__}",
                         field="scores")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise InputError(f"scores must be finite numbers, found {v!r}", field="scores")
        out.append(float(v))
    if len(out) != n:
        raise InputError(f"{len(out)} scores for {n} ranked ids", field="scores")
    if any(b > a for a, b in itertools.pairwise(out)):
        raise InputError("scores must not increase down the ranking (best first)",
                         field="scores")
    return tuple(out)
