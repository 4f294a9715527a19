"""The `Target` protocol and `CallableTarget`, the target for an in-process function.

A target is the system under test seen from outside: give it a `Case`, get a
`TargetResponse`. The harness and the gate never need to know whether the
answer came from a Python function, a built-in retrieval stage or an HTTP
service, so all three are measured and reported the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypedDict, runtime_checkable

from rankproof._errors import InputError, TargetError
from rankproof.targets._case import Case, TargetResponse


@runtime_checkable
class Target(Protocol):
    """A system under test: ``invoke(case)`` returns its `TargetResponse`.

    ``name`` labels the target in reports and must be unique within one
    experiment. ``invoke`` raises `TargetError` (naming the case) when the
    system failed; it never returns a made-up empty answer, because a silent
    empty list would be scored as a bad ranking instead of a broken system.
    The built-in targets also offer ``invoke_many(cases)`` for batches.
    """

    name: str

    def invoke(self, case: Case) -> TargetResponse:
        """Ask the system about one case."""
        ...


def check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"a target needs a non-empty name, got {name!r}", field="name")
    return name


def case_label(target: str, case: Case) -> str:
    return f"target {target!r}, case {case.id!r}"


class Where(TypedDict):
    """The structured half of a `TargetError` about one case (its message says the same)."""

    case_id: str
    target: str


def where_of(case: Case, target: str) -> Where:
    return {"case_id": case.id, "target": target}


def ids_from(value: object, where: str, *, case_id: str | None = None,
             target: str | None = None) -> tuple[str, ...]:
    """Validate a system's ranked ids: a list/tuple of non-empty strings.

    A bare string is refused (it would be read as one id per character), and
    so are numbers: ``7`` and ``"7"`` must not silently become the same id.
    ``case_id`` and ``target`` are stamped on the `TargetError`.
    """
    if isinstance(value, str | bytes | bytearray) or not isinstance(value, Sequence):
        raise TargetError(
            f"{where}: expected a sequence of document ids, got {type(value).__name__} "
            f"{_short(value)}", case_id=case_id, target=target)
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item:
            raise TargetError(
                f"{where}: expected document ids to be non-empty strings, item {i + 1} is "
                f"{type(item).__name__} {_short(item)}", case_id=case_id, target=target)
    return tuple(value)


def _short(value: object, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class CallableTarget:
    """A target backed by a Python function ``fn(case)``.

    ``fn`` may return:

    * a sequence of document ids, best first;
    * a mapping with ``ids`` (required), ``text`` and ``meta`` (optional;
      any other key is refused so that a misspelt key is not dropped);
    * a `TargetResponse` (its ``latency_ms`` is replaced, see below).

    ``latency_ms`` is always the wall-clock time around the call
    (``time.perf_counter``), never a number the function reports about
    itself, so that a callable target and an HTTP target are timed the same
    way. An exception inside ``fn`` becomes a `TargetError` naming the case,
    chained to the original.
    """

    def __init__(self, fn: Callable[[Case], Any], name: str) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.name = check_name(name)

    def __repr__(self) -> str:
        return f"CallableTarget(name={self.name!r}, fn={getattr(self.fn, '__name__', self.fn)!r})"

    def invoke(self, case: Case) -> TargetResponse:
        """Call ``fn(case)`` and time it."""
        where = case_label(self.name, case)
        ctx = where_of(case, self.name)
        start = time.perf_counter()
        try:
            value = self.fn(case)
        except Exception as exc:
            raise TargetError(f"{where}: the function raised {type(exc).__name__}: {exc}",
                              **ctx) from exc
        latency_ms = (time.perf_counter() - start) * 1000.0
        if isinstance(value, TargetResponse):
            return TargetResponse(ranked_ids=value.ranked_ids, text=value.text,
                                  latency_ms=latency_ms, meta=value.meta)
        if isinstance(value, Mapping):
            unknown = [k for k in value if k not in ("ids", "text", "meta")]
            if unknown:
                raise TargetError(f"{where}: unknown key {unknown[0]!r} in the returned mapping; "
                                  "expected 'ids', 'text', 'meta'", **ctx)
            if "ids" not in value:
                raise TargetError(f"{where}: the returned mapping has no 'ids'", **ctx)
            text = value.get("text")
            if text is not None and not isinstance(text, str):
                raise TargetError(f"{where}: 'text' must be a string or None, got "
                                  f"{type(text).__name__}", **ctx)
            meta = value.get("meta") or {}
            if not isinstance(meta, Mapping):
                raise TargetError(f"{where}: 'meta' must be a mapping, got {type(meta).__name__}",
                                  **ctx)
            return TargetResponse(ranked_ids=ids_from(value["ids"], where, **ctx), text=text,
                                  latency_ms=latency_ms, meta=meta)
        return TargetResponse(ranked_ids=ids_from(value, where, **ctx), latency_ms=latency_ms)

    def invoke_many(self, cases: Sequence[Case]) -> list[TargetResponse]:
        """``invoke`` each case in order (sequentially: a function shares the caller's GIL)."""
        return [self.invoke(c) for c in cases]
