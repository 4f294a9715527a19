"""The one metric registry: retrieval measures, per-case metrics and run-level aggregates.

Three kinds of name resolve through `lookup`:

* **retrieval measures** — anything `rankproof.measures.parse` accepts
  (``nDCG@10``, ``RR@10``, ``R@5``, ``ndcg_cut.10`` …). They are not copied
  into this registry: the measures registry stays the single source of their
  definitions and polarity, and a name resolves to its canonical form
  (``ndcg@10`` → ``nDCG@10``) so that two spellings can never become two
  metrics;
* **per-case metrics** — ``fn(response, case) -> float``, registered with
  `register_metric`;
* **aggregates** — ``fn(rows) -> float`` over a whole run (latency
  percentiles, diversity), registered with `register_aggregate`.

trec_eval's named sets (``official``, ``all_trec``) are names too, for
several measures at once: `resolve` expands them to their members, and
`lookup`, which returns one definition, refuses them with a message that
says so.

A name belongs to exactly one kind. Registering a name twice, or a name the
measures parser already accepts (a set name included), raises `InputError`
at registration rather than letting two definitions compete at lookup time.

Polarity (``higher_is_better``) is a required keyword with no default: a gate
decides which direction is a regression from it, so guessing it would make a
wrong verdict look right.

**Bare family words.** A measure family's word that means nothing on its
own — ``precision``, ``prec``, ``R``, ``hit``, ``hits``, ``hitrate``,
``hit_rate``, ``Judged``: the family needs a cutoff, so the parser
refuses the bare word — may name a *per-case* metric when the registration
says so (``register_metric("precision", fn, higher_is_better=True,
family_word=True)``). The family keeps every name with a cutoff or
parameters: ``precision@10``, ``P@10`` and ``P(rel=2)@10`` stay the
retrieval measure, and only the bare word resolves to the registered
metric. The opt-in is required because ``precision`` and ``precision@10``
then name two different things, which should be a visible decision in the
code that registers it. Words that already mean something alone stay
refused: a word the parser accepts (``map``, ``ndcg``, ``AP``), and
trec_eval's bare cutoff families ``P``, ``recall`` and ``Success``, which
`parse_many` expands to trec_eval's default cutoffs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

from rankproof._errors import InputError
from rankproof.measures._families import families, find_family
from rankproof.measures._measure import Measure, expand_set, parse, parse_many
from rankproof.measures._sets import TREC_HEADER_LINES, TREC_SETS

Kind = Literal["retrieval", "case", "aggregate"]
CutoffRule = Literal["none", "optional", "required"]

CaseFn = Callable[[Any, Any], float]
"""``fn(response, case)``: a `rankproof.targets.TargetResponse` and its `Case`."""
AggregateFn = Callable[..., float]
"""``fn(rows)``, or ``fn(rows, k)`` for an aggregate that takes a cutoff (k may be None)."""

F = TypeVar("F", bound=Callable[..., Any])

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:\-]*$")
_WITH_CUTOFF = re.compile(r"^(?P<base>[^@]+)@(?P<k>[0-9]+)$")


@dataclass(frozen=True)
class MetricDef:
    """A resolved metric name: what it is, which way is better, and how to compute it.

    ``name`` is canonical (``nDCG@10`` for ``ndcg@10``; ``max_item_share@5``).
    ``kind`` is ``"retrieval"``, ``"case"`` or ``"aggregate"``; the first two
    give one value per case (and so can be compared case by case with a
    baseline), an aggregate gives one value per run. ``needs_judgments``:
    the metric cannot be computed for a case without judgments.
    ``needs_responses``: an aggregate that reads each case's ranked ids, which
    a report (per-query values only) does not keep.
    """

    name: str
    kind: Kind
    higher_is_better: bool
    description: str
    needs_judgments: bool = False
    needs_responses: bool = False
    cutoff: int | float | None = None
    measure: Measure | None = None
    fn: Callable[..., float] | None = None
    takes_cutoff: bool = False
    """An aggregate whose function receives ``k`` (registered with a cutoff rule)."""

    @property
    def per_case(self) -> bool:
        """True for retrieval measures and per-case metrics (one value per case)."""
        return self.kind != "aggregate"

    def aggregate(self, rows: Sequence[Any]) -> float:
        """Call an aggregate's function on a run's rows, passing the cutoff when it takes one."""
        return call_aggregate(self, rows)


@dataclass(frozen=True)
class _Entry:
    name: str
    kind: Literal["case", "aggregate"]
    higher_is_better: bool
    fn: Callable[..., float]
    description: str
    needs_judgments: bool
    needs_responses: bool
    cutoff: CutoffRule
    family_word: bool = False
    """Registered with ``family_word=True`` (see the module docstring)."""


_ENTRIES: dict[str, _Entry] = {}


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"a metric name must be a string, got {type(name).__name__}")
    if not _NAME.match(name):
        raise InputError(
            f"metric name {name!r} is not valid: use letters, digits, '_', '.', ':' or '-', "
            "starting with a letter or '_' (no '@': a cutoff is declared with cutoff=)")
    return name


def _check_free(name: str, *, family_word: bool = False) -> None:
    """Refuse a name already taken by any kind (case-insensitively) or by the measures parser.

    With ``family_word`` a measure family's bare word is allowed when the
    parser gives the word alone no meaning (see the module docstring).
    """
    for reserved in (*TREC_SETS, *TREC_HEADER_LINES):
        if reserved.lower() == name.lower():
            raise InputError(f"metric {name!r} is reserved: {reserved!r} is a trec_eval name "
                             "for a set of measures or a per-run line")
    for taken in _ENTRIES.values():
        if taken.name.lower() == name.lower():
            what = "a per-case metric" if taken.kind == "case" else "an aggregate"
            raise InputError(f"metric {name!r} is already registered as {what} "
                             f"({taken.name!r}); a name means one thing")
    try:
        measure = parse(name)
    except InputError:
        measure = None
    if measure is not None:
        raise InputError(f"metric {name!r} is a retrieval measure (parsed as {measure}); "
                         "the measures registry already defines it")
    fam = find_family(name)
    if fam is None:
        return
    if not family_word:
        raise InputError(
            f"metric {name!r} names the retrieval measure family {fam.name!r}; only a per-case "
            f"metric may take the bare word, and only by saying so (register_metric({name!r}, "
            f"..., family_word=True)), while {name}@k keeps meaning {fam.name}@k")
    try:
        expands = parse_many(name)
    except InputError:
        return
    shown_ = ", ".join(str(m) for m in expands[:2])
    raise InputError(f"metric {name!r} cannot be registered: {name!r} alone already names "
                     f"trec_eval's default cutoffs of {fam.name} ({shown_}, ...)")


def _check_polarity(higher_is_better: object) -> bool:
    if not isinstance(higher_is_better, bool):
        raise TypeError("higher_is_better must be True or False, got "
                        f"{type(higher_is_better).__name__} {higher_is_better!r}")
    return higher_is_better


def _description(fn: Callable[..., Any], given: str | None) -> str:
    if given is not None:
        return given
    doc = (fn.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def _add(entry: _Entry) -> None:
    _check_free(entry.name, family_word=entry.family_word)
    _ENTRIES[entry.name] = entry


@overload
def register_metric(name: str, fn: None = None, *, higher_is_better: bool,
                    needs_judgments: bool = False, description: str | None = None,
                    family_word: bool = False) -> Callable[[F], F]: ...
@overload
def register_metric(name: str, fn: F, *, higher_is_better: bool,
                    needs_judgments: bool = False, description: str | None = None,
                    family_word: bool = False) -> F: ...
def register_metric(name: str, fn: Callable[..., float] | None = None, *,
                    higher_is_better: bool, needs_judgments: bool = False,
                    description: str | None = None, family_word: bool = False) -> Any:
    """Register a per-case metric ``fn(response, case) -> float``.

    Use as a decorator or call with the function::

        @register_metric("cites_source", higher_is_better=True)
        def cites_source(response, case):
            "1 when the answer text names a relevant document."
            return float(any(d in (response.text or "") for d in case.relevant))

    ``higher_is_better`` is required: the gate reads the direction of a
    regression from it. ``needs_judgments=True`` makes `run` refuse cases
    without judgments for this metric instead of scoring them.
    ``description`` defaults to the first line of the docstring.
    ``family_word=True`` allows a measure family's bare word that means
    nothing alone (``precision``, ``hit``): the bare word then resolves to
    this metric while ``precision@10`` stays ``P@10`` (module docstring).
    Raises `InputError` when the name is taken (by a metric, an aggregate or
    the measures parser) and TypeError for a non-bool polarity.
    """
    _check_name(name)
    polarity_ = _check_polarity(higher_is_better)
    if not isinstance(family_word, bool):
        raise TypeError(f"family_word must be True or False, got {type(family_word).__name__}")
    _check_free(name, family_word=family_word)

    def decorator(f: F) -> F:
        if not callable(f):
            raise TypeError(f"a metric function must be callable, got {type(f).__name__}")
        _add(_Entry(name, "case", polarity_, f, _description(f, description),
                    bool(needs_judgments), False, "none", family_word))
        return f

    return decorator if fn is None else decorator(fn)


@overload
def register_aggregate(name: str, fn: None = None, *, higher_is_better: bool,
                       cutoff: CutoffRule = "none", needs_responses: bool = False,
                       needs_judgments: bool = False,
                       description: str | None = None) -> Callable[[F], F]: ...
@overload
def register_aggregate(name: str, fn: F, *, higher_is_better: bool,
                       cutoff: CutoffRule = "none", needs_responses: bool = False,
                       needs_judgments: bool = False, description: str | None = None) -> F: ...
def register_aggregate(name: str, fn: Callable[..., float] | None = None, *,
                       higher_is_better: bool, cutoff: CutoffRule = "none",
                       needs_responses: bool = False, needs_judgments: bool = False,
                       description: str | None = None) -> Any:
    """Register a run-level aggregate ``fn(rows) -> float`` (``fn(rows, k)`` with a cutoff).

    ``rows`` is the tuple of `CaseRow` of one run (or of a check's scope).
    ``cutoff="optional"`` or ``"required"`` lets the name carry ``@k``
    (``max_item_share@5``); ``fn`` then receives ``k`` (None without one).
    ``needs_responses=True`` declares that ``fn`` reads ``row.response``
    (ranked ids), which results built from a report do not have.
    Same name rules and required polarity as `register_metric`.
    """
    _check_name(name)
    polarity_ = _check_polarity(higher_is_better)
    if cutoff not in ("none", "optional", "required"):
        raise InputError(f"cutoff must be 'none', 'optional' or 'required', got {cutoff!r}")
    _check_free(name)

    def decorator(f: F) -> F:
        if not callable(f):
            raise TypeError(f"an aggregate function must be callable, got {type(f).__name__}")
        _add(_Entry(name, "aggregate", polarity_, f, _description(f, description),
                    bool(needs_judgments), bool(needs_responses), cutoff))
        return f

    return decorator if fn is None else decorator(fn)


def _unregister(name: str) -> None:
    """Remove a registered metric or aggregate (for tests); unknown names are ignored."""
    _ENTRIES.pop(name, None)


def _from_entry(entry: _Entry, k: int | None, spelled: str) -> MetricDef:
    if k is None and entry.cutoff == "required":
        raise InputError(f"metric {spelled!r} needs a cutoff, e.g. {entry.name}@10")
    if k is not None:
        if entry.cutoff == "none":
            raise InputError(f"metric {entry.name!r} takes no cutoff (got {spelled!r})")
        if k < 1:
            raise InputError(f"metric {spelled!r}: the cutoff must be at least 1")
    name = entry.name if k is None else f"{entry.name}@{k}"
    return MetricDef(name=name, kind=entry.kind, higher_is_better=entry.higher_is_better,
                     description=entry.description, needs_judgments=entry.needs_judgments,
                     needs_responses=entry.needs_responses, cutoff=k, fn=entry.fn,
                     takes_cutoff=entry.cutoff != "none")


def lookup(name: str | Measure | MetricDef) -> MetricDef:
    """Resolve a metric name of any kind; raise `InputError` (with suggestions) if unknown.

    A trec_eval set name (``official``) stands for several metrics, so it is
    refused here with a pointer to `resolve`, which expands it.
    """
    if isinstance(name, MetricDef):
        return name
    if isinstance(name, Measure):
        return _retrieval(name)
    if not isinstance(name, str):
        raise TypeError(f"a metric name must be a string, got {type(name).__name__}")
    text = name.strip()
    if not text:
        raise InputError("empty metric name")
    if text in _ENTRIES:
        return _from_entry(_ENTRIES[text], None, text)
    if text in TREC_SETS:
        raise InputError(f"{text!r} is trec_eval's set of {len(expand_set(text))} measures, "
                         "not one metric; resolve() expands it to its members")
    try:
        measure = parse(text)
    except InputError as exc:
        reason = str(exc)
    else:  # before name@k: a family word registered bare keeps the family's precision@10
        return _retrieval(measure)
    m = _WITH_CUTOFF.match(text)
    if m and m.group("base") in _ENTRIES and find_family(m.group("base")) is None:
        return _from_entry(_ENTRIES[m.group("base")], int(m.group("k")), text)
    raise InputError(f"unknown metric {text!r}: not a registered metric or aggregate, and not a "
                     f"retrieval measure ({reason}){_suggest(text)}")


def _retrieval(measure: Measure) -> MetricDef:
    return MetricDef(name=str(measure), kind="retrieval",
                     higher_is_better=measure.higher_is_better,
                     description=measure.definition.description, needs_judgments=True,
                     cutoff=measure.cutoff, measure=measure)


def _suggest(text: str) -> str:
    base, at, k = text.partition("@")
    candidates: dict[str, str] = {e.name.lower(): e.name for e in _ENTRIES.values()}
    for fam in families():
        for spelling in (fam.name, *fam.aliases):
            candidates.setdefault(spelling.lower(), fam.name)
    close = difflib.get_close_matches(base.lower(), list(candidates), n=3, cutoff=0.6)
    shown = list(dict.fromkeys(candidates[c] + (at + k if at else "") for c in close))
    return f"; did you mean {' or '.join(map(repr, shown))}?" if shown else ""


def polarity(name: str | Measure) -> bool:
    """``higher_is_better`` of any metric name; raises `InputError` on an unknown name."""
    return lookup(name).higher_is_better


def registered() -> tuple[MetricDef, ...]:
    """Every registered per-case metric and aggregate (retrieval measures not included:
    `rankproof.measures.families` lists those)."""
    out = []
    for e in _ENTRIES.values():
        out.append(MetricDef(name=e.name, kind=e.kind, higher_is_better=e.higher_is_better,
                             description=e.description, needs_judgments=e.needs_judgments,
                             needs_responses=e.needs_responses, fn=e.fn,
                             takes_cutoff=e.cutoff != "none"))
    return tuple(out)


def is_set(name: object) -> bool:
    """Whether ``name`` is a trec_eval set name (``official``, ``all_trec``)."""
    return isinstance(name, str) and name.strip() in TREC_SETS


def resolve(names: str | Sequence[str | Measure | MetricDef]) -> tuple[MetricDef, ...]:
    """Resolve several names, dropping repeats of the same canonical metric (order kept).

    A trec_eval set expands in place to its member measures (trec_eval's
    order, bookkeeping lines ``runid``/``num_q`` left out), so
    ``resolve(["official"])`` is the same as naming each member.
    """
    if isinstance(names, str):
        names = [names]
    out: dict[str, MetricDef] = {}
    for n in names:
        if isinstance(n, str) and is_set(n):
            for m in expand_set(n.strip()):
                out.setdefault(str(m), _retrieval(m))
            continue
        d = lookup(n)
        out.setdefault(d.name, d)
    return tuple(out.values())


def call_aggregate(d: MetricDef, rows: Sequence[Any]) -> float:
    """Call an aggregate's function, passing the cutoff when it takes one."""
    if d.kind != "aggregate" or d.fn is None:
        raise TypeError(f"{d.name!r} is a {d.kind} metric, not an aggregate")
    return float(d.fn(rows, d.cutoff) if d.takes_cutoff else d.fn(rows))
