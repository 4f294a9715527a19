"""`Measure`: a measure as a value, and the one parser that builds it.

A measure is a family, an optional cutoff and optional parameters. Its
canonical text form — ``P(rel=2)@5``, ``nDCG(gain=exp)@10``, ``AP`` — decides
equality, and ``parse(str(m)) == m`` for every measure.

The parser also reads the spellings people already use:

* ir_measures: ``nDCG@10``, ``P(rel=2)@5``, ``RR@10``, ``R@1000``, ``AP``,
  ``nDCG(dcg=exp-log2)@10``;
* trec_eval: ``ndcg_cut.10``, ``recip_rank``, ``map``, ``map_cut.100``,
  ``P.5``, ``recall.100``, ``Rprec``, ``bpref``, ``success.10``, and the
  printed forms ``P_5``, ``ndcg_cut_10``; ``parse_many`` also expands
  lists (``P.5,10``) and bare families (``P`` → trec_eval's cutoffs);
* lower-case aliases: ``ndcg@10``, ``mrr@10``, ``recall@100``, ``map``,
  ``hit@10``;
* trec_eval's named sets (``official``, ``all_trec``): ``parse_many`` and
  `expand_set` expand them to their members; ``parse`` refuses them, since
  a set is not one measure.

Every refusal is an `InputError` (also a ``ValueError``) saying what was
expected; a wrong *type* (not a string) is a ``TypeError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

from rankproof._errors import InputError
from rankproof.measures._families import Family, family, find_family
from rankproof.measures._sets import TREC_SETS

_GAINS = ("exp",)
_GENERAL = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z_]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<k>[^@()]+))?$"
)
_TREC = re.compile(r"^(?P<name>[A-Za-z][A-Za-z_]*?)[._](?P<ks>[0-9][0-9.,]*)$")
# trec_eval's cutoff families, by their trec_eval names.
_TREC_CUT = {"p": "P", "recall": "R", "map_cut": "AP", "ndcg_cut": "nDCG", "success": "Success"}


@total_ordering
@dataclass(frozen=True)
class Measure:
    """One measure: a family, an optional cutoff and optional parameters.

    ``rel`` is the minimum label counted as relevant (None: the evaluation's
    relevance level, 1 by default). ``gain`` is None for linear gains
    (trec_eval) or ``"exp"`` for 2^label − 1.
    """

    family: str
    cutoff: int | None = None
    rel: int | None = None
    gain: str | None = None

    def __post_init__(self) -> None:
        fam = family(self.family)
        if fam.name != self.family:
            object.__setattr__(self, "family", fam.name)
        if self.cutoff is not None:
            if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int):
                raise InputError(f"{fam.name}: cutoff must be an integer, got {self.cutoff!r}")
            if self.cutoff < 1:
                raise InputError(f"{fam.name}: cutoff must be at least 1, got {self.cutoff}")
            if fam.cutoff == "none":
                raise InputError(f"{fam.name} takes no cutoff (got @{self.cutoff})")
        elif fam.cutoff == "required":
            raise InputError(f"{fam.name} needs a cutoff, e.g. {fam.name}@10")
        if self.rel is not None:
            if "rel" not in fam.params:
                raise InputError(f"{fam.name} takes no rel= parameter")
            if isinstance(self.rel, bool) or not isinstance(self.rel, int):
                raise InputError(f"{fam.name}: rel must be an integer, got {self.rel!r}")
        if self.gain is not None:
            if "gain" not in fam.params:
                raise InputError(f"{fam.name} takes no gain= parameter")
            if self.gain not in _GAINS:
                raise InputError(f"{fam.name}: gain must be one of {_GAINS}, got {self.gain!r}")

    # -- text -------------------------------------------------------------
    def __str__(self) -> str:
        params = []
        if self.gain is not None:
            params.append(f"gain={self.gain}")
        if self.rel is not None:
            params.append(f"rel={self.rel}")
        text = self.family
        if params:
            text += "(" + ",".join(params) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Measure):
            return NotImplemented
        return str(self) < str(other)

    # -- definition -------------------------------------------------------
    @property
    def definition(self) -> Family:
        """The registry entry of this measure's family."""
        return family(self.family)

    @property
    def higher_is_better(self) -> bool:
        return self.definition.higher_is_better

    @property
    def trec_name(self) -> str | None:
        """trec_eval's printed name (``ndcg_cut_10``), or None if trec_eval has no such measure."""
        fam = self.definition
        if self.rel is not None or self.gain is not None:
            return None
        if self.cutoff is None:
            return fam.trec_name
        if fam.trec_cut_name is None:
            return None
        return f"{fam.trec_cut_name}_{self.cutoff}"

    @property
    def trec_family(self) -> str | None:
        """trec_eval's measure family name (``ndcg_cut``), for print order."""
        fam = self.definition
        if self.trec_name is None:
            return None
        return fam.trec_name if self.cutoff is None else fam.trec_cut_name


def _parse_params(fam: Family, text: str, spec: str) -> dict[str, object]:
    out: dict[str, object] = {}
    seen: dict[str, str] = {}  # canonical key -> the spelling first used
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not sep or not value:
            raise InputError(f"{spec!r}: parameter {item!r} is not key=value")
        canonical = "gain" if key in ("gain", "dcg", "gains") else key
        if canonical in seen:
            also = "" if seen[canonical] == key else f" (as {seen[canonical]!r} and {key!r})"
            raise InputError(f"{spec!r}: parameter {canonical!r} given twice{also}")
        seen[canonical] = key
        if key == "rel":
            try:
                out["rel"] = int(value)
            except ValueError:
                raise InputError(f"{spec!r}: rel must be an integer, got {value!r}") from None
        elif canonical == "gain":
            mapped = {"exp": "exp", "exp-log2": "exp", "linear": None, "log2": None,
                      "lin": None}.get(value.lower(), value)
            if mapped is not None:
                out["gain"] = mapped
        else:
            allowed = ", ".join(sorted(fam.params)) or "none"
            raise InputError(f"{spec!r}: unknown parameter {key!r} (allowed: {allowed})")
    return out


def _trec_cutoffs(spec: str, ks: str) -> list[int]:
    cutoffs = []
    for part in filter(None, ks.split(",")):
        try:
            # trec_eval reads cutoffs with atol-like truncation ("23.4" -> 23).
            cutoffs.append(int(float(part)))
        except ValueError:
            raise InputError(f"{spec!r}: cutoff {part!r} is not a number") from None
    if not cutoffs:
        raise InputError(f"{spec!r}: no cutoff given")
    return cutoffs


def _cut_measure(spec: str, fam: str, k: int) -> Measure:
    try:
        return Measure(fam, cutoff=k)
    except ValueError as exc:
        raise InputError(f"{spec!r}: {exc}") from None


def expand_set(name: str) -> tuple[Measure, ...]:
    """The member measures of trec_eval's set ``name`` (``official`` or ``all_trec``).

    Members come in trec_eval's print order, each once; the set's
    bookkeeping lines (``runid``, ``num_q``) are not measures and are not
    included.
    """
    try:
        names = TREC_SETS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown measure set {name!r}; known: {', '.join(TREC_SETS)}") \
            from None
    out: list[Measure] = []
    for n in names:
        out.extend(m for m in parse_many(n) if m not in out)
    return tuple(out)


def parse_many(spec: str | Measure) -> tuple[Measure, ...]:
    """Parse one measure spelling that may stand for several measures.

    ``P.5,10`` → (P@5, P@10); bare trec_eval cutoff families (``P``,
    ``recall``, ``ndcg_cut``, ``map_cut``, ``success``) → trec_eval's default
    cutoffs; a trec_eval set (``official``, ``all_trec``) → its members
    (`expand_set`). Every other spelling gives exactly one measure.
    """
    if isinstance(spec, Measure):
        return (spec,)
    if not isinstance(spec, str):
        raise TypeError(f"a measure is a string or a Measure, got {type(spec).__name__}")
    text = spec.strip()
    if not text:
        raise InputError("empty measure name")
    if text in TREC_SETS:
        return expand_set(text)
    m = _TREC.match(text)
    if m and m.group("name").lower() in _TREC_CUT:
        fam = _TREC_CUT[m.group("name").lower()]
        ks = _trec_cutoffs(text, m.group("ks"))
        seen: list[Measure] = []
        for k in ks:
            measure = _cut_measure(text, fam, k)
            if measure not in seen:
                seen.append(measure)
        return tuple(seen)
    if text == "P" or (text.lower() in _TREC_CUT and text.lower() != "p"):
        fam = _TREC_CUT[text.lower()]
        return tuple(Measure(fam, cutoff=k) for k in family(fam).trec_default_cutoffs)
    return (parse(text),)


def parse(spec: str | Measure) -> Measure:
    """Parse exactly one measure; raise `InputError` naming what was wrong."""
    if isinstance(spec, Measure):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"a measure is a string or a Measure, got {type(spec).__name__}")
    text = spec.strip()
    if not text:
        raise InputError("empty measure name")
    if text in TREC_SETS:
        raise InputError(f"{spec!r} is trec_eval's measure set of {len(expand_set(text))} "
                         "measures, not one measure; use parse_many or resolve_measures")
    m = _TREC.match(text)
    if m and m.group("name").lower() in _TREC_CUT:
        ks = _trec_cutoffs(text, m.group("ks"))
        if len(ks) != 1:
            raise InputError(f"{spec!r} names {len(ks)} measures; use parse_many")
        return _cut_measure(text, _TREC_CUT[m.group("name").lower()], ks[0])
    g = _GENERAL.match(text)
    if not g:
        raise InputError(
            f"cannot parse measure {spec!r}; expected e.g. nDCG@10, P(rel=2)@5, AP, ndcg_cut.10"
        )
    name = g.group("name")
    fam = find_family(name)
    if fam is None:
        if name.lower() in _TREC_CUT:
            fam = family(_TREC_CUT[name.lower()])
            if g.group("k") is None:
                # Bare ``map_cut`` / ``ndcg_cut`` mean trec_eval's default
                # cutoffs, not the uncut measure.
                n = len(fam.trec_default_cutoffs)
                raise InputError(
                    f"{spec!r} names {n} measures (trec_eval's default cutoffs); use"
                    f" parse_many, or give one cutoff, e.g. {name}.10"
                )
        else:
            family(name)  # raises with the list of known families
            raise AssertionError  # pragma: no cover
    params = _parse_params(fam, g.group("params") or "", text)
    cutoff: int | None = None
    if g.group("k") is not None:
        k = g.group("k").strip()
        if not k.isdigit():
            raise InputError(f"{spec!r}: cutoff {k!r} is not a positive integer")
        cutoff = int(k)
    try:
        return Measure(fam.name, cutoff=cutoff, **params)  # type: ignore[arg-type]
    except ValueError as exc:
        raise InputError(f"{spec!r}: {exc}") from None
