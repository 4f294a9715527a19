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
* parameters of float and list types (ir_measures' spellings):
  ``IPrec@0.1``, ``RBP(p=0.8)``, ``Rprec(mult=0.2)``,
  ``Utility(a=2,b=-1,c=0,d=0)``, ``IPrecAvg(levels=[0.2,0.5,0.8])``,
  ``nDCG(gains={0:0,1:1,2:3})@10``; and trec_eval's parameter forms
  ``iprec_at_recall.0.1`` / ``iprec_at_recall_0.10``, ``Rprec_mult.0.2``,
  ``utility.2,-1,0,0``, ``11pt_avg..2,.5,.8``, ``ndcg.1=3,2=9``,
  ``set_F.0.5``, ``relative_P.5``;
* trec_eval's named sets (``official``, ``all_trec``): ``parse_many`` and
  `expand_set` expand them to their members; ``parse`` refuses them, since
  a set is not one measure.

Every refusal is an `InputError` (also a ``ValueError``) saying what was
expected; a wrong *type* (not a string) is a ``TypeError``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import total_ordering
from typing import Any

from rankproof._errors import InputError
from rankproof.measures._families import Family, ParamValue, families, family, find_family
from rankproof.measures._params import (
    coerce,
    float_text,
    fmt_number,
    number,
    show,
    split_top,
    value_text,
)
from rankproof.measures._sets import TREC_SETS

_GAINS = ("exp",)
_GENERAL = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z_]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<k>[^@()]+))?$"
)
# trec_eval's ``name.params`` / printed ``name_params``: the name is the shortest
# prefix followed by '.' or '_' and a parameter list.
_TREC = re.compile(r"^(?P<name>[0-9A-Za-z][A-Za-z0-9_]*?)[._](?P<ks>[-+0-9.,=]+)$")
# ``rbp.p=0.8``, ``rbp.p=0.8,1=3,2=9``: named parameters and label=gain pairs.
_TREC_PAIRS = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9_]*?)[._]"
    r"(?P<ks>(?:[A-Za-z]\w*|[-+]?\d+)=[^,]+(?:,(?:[A-Za-z]\w*|[-+]?\d+)=[^,]+)*)$")

Params = tuple[tuple[str, ParamValue], ...]



@total_ordering
@dataclass(frozen=True)
class Measure:
    """One measure: a family, an optional cutoff and optional parameters.

    ``rel`` is the minimum label counted as relevant (None: the evaluation's
    relevance level, 1 by default). ``gain`` is None for linear gains
    (trec_eval) or ``"exp"`` for 2^label − 1. ``cutoff`` is a rank (an int),
    or a recall level in [0, 1] for families with float cutoffs (``IPrec``).
    ``params`` holds every other parameter the family declares, as
    ``(name, value)`` pairs sorted by name (a mapping is accepted too); a
    parameter not given takes the family's default, and one given explicitly
    stays in the canonical text even when it equals the default
    (``Rprec(mult=1)`` is trec_eval's ``Rprec_mult_1.00``, not ``Rprec``).
    """

    family: str
    cutoff: int | float | None = None
    rel: int | None = None
    gain: str | None = None
    params: Params = ()

    def __post_init__(self) -> None:
        fam = family(self.family)
        if fam.name != self.family:
            object.__setattr__(self, "family", fam.name)
        if self.cutoff is not None:
            if fam.cutoff_kind == "float":
                k = number(fam.name, "cutoff", self.cutoff)
                if not 0.0 <= k <= 1.0:
                    raise InputError(f"{fam.name}: cutoff must be a recall level in [0, 1], "
                                     f"got {self.cutoff!r}")
                object.__setattr__(self, "cutoff", k)
            elif isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int):
                raise InputError(f"{fam.name}: cutoff must be an integer, got {self.cutoff!r}")
            elif self.cutoff < 1:
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
        raw: Any = self.params
        items = list(raw.items()) if isinstance(raw, Mapping) else list(raw)
        stored: dict[str, ParamValue] = {}
        for item in items:
            name, value = item
            if name in ("rel", "gain"):
                raise InputError(f"{fam.name}: {name}= is a field of its own "
                                 f"(Measure(..., {name}=...)), not one of params")
            if name not in fam.params or fam.params[name].kind in ("rel", "gain"):
                free = [n for n, p in fam.params.items() if p.kind not in ("rel", "gain")]
                allowed = ", ".join(sorted(free)) or "none"
                raise InputError(f"{fam.name} takes no {name}= parameter (allowed: {allowed})")
            if name in stored:
                raise InputError(f"{fam.name}: parameter {name!r} given twice")
            stored[name] = coerce(fam, name, value)
        if self.gain is not None and "gains" in stored:
            raise InputError(f"{fam.name}: give gain= or gains=, not both")
        if self.rel is not None and "gains" in stored:
            raise InputError(f"{fam.name}: give rel= (binary gains) or gains=, not both")
        object.__setattr__(self, "params", tuple(sorted(stored.items())))

    def param(self, name: str) -> Any:
        """The value of parameter ``name``: as given, else the family's default."""
        for key, value in self.params:
            if key == name:
                return value
        return self.definition.params[name].default

    # -- text -------------------------------------------------------------
    def __str__(self) -> str:
        shown: dict[str, str] = {k: show(v) for k, v in self.params}
        if self.gain is not None:
            shown["gain"] = self.gain
        if self.rel is not None:
            shown["rel"] = str(self.rel)
        text = self.family
        if shown:
            text += "(" + ",".join(f"{k}={shown[k]}" for k in sorted(shown)) + ")"
        if self.cutoff is not None:
            text += f"@{fmt_number(self.cutoff) if isinstance(self.cutoff, float) else self.cutoff}"
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
        """trec_eval's printed name (``ndcg_cut_10``), or None if trec_eval has no such measure.

        Parameterised names follow trec_eval: one value per measure is printed
        with ``%.2f`` (``iprec_at_recall_0.10``, ``Rprec_mult_0.20``); a
        parameter list is printed after the name (``utility_2,-1,0,0``,
        ``ndcg_1=3,2=9``), here in canonical number form (trec_eval echoes
        the list as typed).
        """
        fam = self.definition
        if self.rel is not None or self.gain is not None:
            return None
        if self.params:
            if self.cutoff is not None:
                return None
            gains: Any = dict(self.params).get("gains")
            pairs = [] if gains is None else [f"{k}={fmt_number(v)}" for k, v in gains]
            if fam.trec_param_style != "pairs" and fam.trec_name is not None and pairs and len(
                    self.params) == 1:  # G.1=3,2=9, ndcg.1=3, ndcg_rel.., Rndcg..
                return f"{fam.trec_name}_" + ",".join(pairs)
            if fam.trec_param_name is None or fam.trec_param is None:
                return None
            names = fam.trec_param.split(",")
            if fam.trec_param_style == "pairs":  # rbp.p=0.8,1=3: named values, then gains
                return f"{fam.trec_param_name}_" + ",".join(
                    [f"{k}={show(v)}" for k, v in self.params if k != "gains"] + pairs)
            if fam.trec_default_params:  # one measure per value: trec_eval's %.2f
                return f"{fam.trec_param_name}_{self.param(names[0]):.2f}"
            values: list[float] = []
            for n in names:
                v = self.param(n)
                values.extend(v if isinstance(v, tuple) else (v,))
            return f"{fam.trec_param_name}_" + ",".join(fmt_number(v) for v in values)
        if self.cutoff is None:
            return fam.trec_name
        if fam.trec_cut_name is None:
            return None
        if isinstance(self.cutoff, float):
            return f"{fam.trec_cut_name}_{self.cutoff:.2f}"
        return f"{fam.trec_cut_name}_{self.cutoff}"

    @property
    def trec_family(self) -> str | None:
        """trec_eval's measure family name (``ndcg_cut``), for print order."""
        fam = self.definition
        if self.trec_name is None:
            return None
        if self.params:
            return fam.trec_param_name or fam.trec_name
        return fam.trec_name if self.cutoff is None else fam.trec_cut_name

    @property
    def depth(self) -> int | None:
        """The rank the measure looks down to (its cutoff when that is a rank), else None.

        ``IPrec@0.1``'s cutoff is a recall level, not a rank: its depth is None.
        """
        return self.cutoff if isinstance(self.cutoff, int) else None

    @property
    def trec_sort_value(self) -> float:
        """Order within a trec_eval family: the cutoff, or the one listed parameter."""
        if self.cutoff is not None:
            return float(self.cutoff)
        fam = self.definition
        if self.params and fam.trec_default_params and fam.trec_param is not None:
            return float(self.param(fam.trec_param))
        return 0.0



def _parse_params(fam: Family, text: str, spec: str) -> dict[str, object]:
    out: dict[str, object] = {}
    free: dict[str, object] = {}
    seen: dict[str, str] = {}  # canonical key -> the spelling first used
    for item in filter(None, (p.strip() for p in split_top(text))):
        key, sep, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not sep or not value:
            raise InputError(f"{spec!r}: parameter {item!r} is not key=value")
        if key == "gains" and value.startswith("{"):
            canonical = "gains"
        elif key in ("gain", "dcg", "gains"):
            canonical = "gain"
        else:
            canonical = key
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
        elif canonical in fam.params and fam.params[canonical].kind not in ("rel", "gain"):
            free[canonical] = value_text(fam, spec, canonical, value)
        else:
            allowed = ", ".join(sorted(fam.params)) or "none"
            raise InputError(f"{spec!r}: unknown parameter {key!r} (allowed: {allowed})")
    if free:
        out["params"] = free
    return out


# -- trec_eval's parameter forms ------------------------------------------------

def _trec_table() -> dict[str, tuple[str, Family]]:
    """trec_eval name (lower case) -> (how its parameter list reads, family)."""
    table: dict[str, tuple[str, Family]] = {}
    for fam in families():
        if fam.trec_cut_name is not None:
            table[fam.trec_cut_name.lower()] = ("cut", fam)
        if fam.trec_param_name is not None:
            table[fam.trec_param_name.lower()] = (
                "pairs" if fam.trec_param_style == "pairs" else "param", fam)
        if ("gains" in fam.params and fam.trec_name is not None
                and fam.trec_param_style != "pairs"):  # ndcg.1=3,2=9, G.1=3, ndcg_rel, Rndcg
            table[fam.trec_name.lower()] = ("gains", fam)
    return table


def _trec_cutoffs(spec: str, ks: str, fam: Family | None = None) -> list[Any]:
    cutoffs: list[Any] = []
    for part in filter(None, ks.split(",")):
        try:
            if fam is not None and fam.cutoff_kind == "float":
                cutoffs.append(float(part))  # atof
            else:
                # trec_eval reads cutoffs with atol-like truncation ("23.4" -> 23).
                cutoffs.append(int(float(part)))
        except ValueError:
            raise InputError(f"{spec!r}: cutoff {part!r} is not a number") from None
    if not cutoffs:
        raise InputError(f"{spec!r}: no cutoff given")
    return cutoffs


def _trec_measures(spec: str, kind: str, fam: Family, ks: str) -> tuple[Measure, ...]:
    """The measures trec_eval's ``name.ks`` stands for (repeats collapse, order kept)."""
    out: list[Measure] = []
    if kind == "cut":
        made = [_make(spec, fam.name, cutoff=k) for k in _trec_cutoffs(spec, ks, fam)]
    elif kind == "gains":
        pairs: list[tuple[int, float]] = []
        for item in filter(None, ks.split(",")):
            label, sep, gain = item.partition("=")
            if not sep:
                raise InputError(f"{spec!r}: {item!r} is not label=gain")
            try:
                lab = int(label)
            except ValueError:
                raise InputError(f"{spec!r}: label {label!r} is not an integer") from None
            pairs.append((lab, float_text(spec, f"gain of {lab}", gain)))
        made = [_make(spec, fam.name, params={"gains": tuple(pairs)})]
    elif kind == "pairs":
        named: dict[str, object] = {}
        label_gains: list[tuple[int, float]] = []
        for item in filter(None, ks.split(",")):
            key, sep, value = item.partition("=")
            if sep and "gains" in fam.params and re.fullmatch(r"[-+]?\d+", key):
                label_gains.append((int(key), float_text(spec, f"gain of {key}", value)))
                continue
            if not sep or key not in fam.params or fam.params[key].kind != "float":
                extra = " or label=gain (1=3)" if "gains" in fam.params else ""
                raise InputError(f"{spec!r}: {item!r} is not one of "
                                 f"{', '.join(f'{n}=' for n in fam.trec_param.split(','))}"
                                 f"{extra}"
                                 if fam.trec_param else f"{spec!r}: unexpected {item!r}")
            named[key] = float_text(spec, key, value)
        if label_gains:
            named["gains"] = tuple(label_gains)
        made = [_make(spec, fam.name, params=named)]
    else:
        assert fam.trec_param is not None
        values = [float_text(spec, "parameter", v) for v in filter(None, ks.split(","))]
        if not values:
            raise InputError(f"{spec!r}: no parameter given")
        names = fam.trec_param.split(",")
        if fam.trec_default_params:  # one measure per value
            made = [_make(spec, fam.name, params={names[0]: v}) for v in values]
        elif len(names) > 1:
            if len(values) != len(names):
                raise InputError(f"{spec!r}: {fam.trec_param_name} takes {len(names)} values "
                                 f"({','.join(names)}), got {len(values)}")
            made = [_make(spec, fam.name, params=dict(zip(names, values, strict=True)))]
        elif fam.params[names[0]].kind == "floats":
            made = [_make(spec, fam.name, params={names[0]: tuple(values)})]
        else:
            made = [_make(spec, fam.name, params={names[0]: values[0]})]
    for m in made:
        if m not in out:
            out.append(m)
    return tuple(out)


def _trec_match(text: str) -> tuple[str, Family, str] | None:
    """(how the list reads, family, the list) for trec_eval's ``name.list`` forms."""
    for pattern in (_TREC, _TREC_PAIRS):
        m = pattern.match(text)
        if m:
            hit = _trec_table().get(m.group("name").lower())
            if hit is not None and (pattern is _TREC) == (hit[0] != "pairs"):
                return hit[0], hit[1], m.group("ks")
    return None


def _trec_defaults(fam: Family) -> tuple[Measure, ...]:
    if fam.trec_default_params and fam.trec_param is not None:
        return tuple(Measure(fam.name, params=((fam.trec_param, v),))
                     for v in fam.trec_default_params)
    return tuple(Measure(fam.name, cutoff=k) for k in fam.trec_default_cutoffs)


def _trec_bare(text: str) -> Family | None:
    """The family whose trec_eval defaults a bare name stands for (``P``, ``Rprec_mult``)."""
    key = text.lower()
    kind_fam = _trec_table().get(key)
    if kind_fam is None or (key == "p" and text != "P"):
        return None
    kind, fam = kind_fam
    if kind == "cut" or fam.trec_default_params:
        return fam
    return None


def _make(spec: str, fam: str, **fields: Any) -> Measure:
    try:
        return Measure(fam, **fields)
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

    ``P.5,10`` → (P@5, P@10); ``iprec_at_recall..1,.2`` → (IPrec@0.1,
    IPrec@0.2); ``Rprec_mult.0.2,0.4`` → (Rprec(mult=0.2), Rprec(mult=0.4));
    bare trec_eval cutoff families (``P``, ``recall``, ``ndcg_cut``,
    ``map_cut``, ``success``, ``iprec_at_recall``, ``relative_P``,
    ``Rprec_mult``) → trec_eval's default cutoffs or parameters; a trec_eval
    set (``official``, ``all_trec``) → its members (`expand_set`). Every
    other spelling gives exactly one measure.
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
    found = _trec_match(text)
    if found is not None:
        return _trec_measures(text, *found)
    fam = _trec_bare(text)
    if fam is not None:
        return _trec_defaults(fam)
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
    found = _trec_match(text)
    if found is not None:
        made = _trec_measures(text, *found)
        if len(made) != 1:
            raise InputError(f"{spec!r} names {len(made)} measures; use parse_many")
        return made[0]
    if text.lower() == "11pt_avg":  # the one trec_eval name that starts with a digit
        return Measure("IPrecAvg")
    g = _GENERAL.match(text)
    if not g:
        from rankproof.measures._names import cannot_parse_message

        raise InputError(cannot_parse_message(spec))
    name = g.group("name")
    fam = find_family(name)
    if fam is None:
        hit = _trec_table().get(name.lower())
        if hit is not None and hit[0] == "cut":
            fam = hit[1]
            if g.group("k") is None:
                # Bare ``map_cut`` / ``ndcg_cut`` mean trec_eval's default
                # cutoffs, not the uncut measure.
                n = len(fam.trec_default_cutoffs)
                example = f"{name}.10" if fam.cutoff_kind == "int" else f"{name}.0.1"
                raise InputError(
                    f"{spec!r} names {n} measures (trec_eval's default cutoffs); use"
                    f" parse_many, or give one cutoff, e.g. {example}"
                )
        elif hit is not None and g.group("k") is None and g.group("params") is None:
            fam = hit[1]
            n = len(fam.trec_default_params)
            raise InputError(
                f"{spec!r} names {n} measures (trec_eval's default parameters); use"
                f" parse_many, or give one, e.g. {name}.0.2"
            )
        else:
            family(name)  # raises with the list of known families
            raise AssertionError  # pragma: no cover
    params = _parse_params(fam, g.group("params") or "", text)
    cutoff: int | float | None = None
    if g.group("k") is not None:
        k = g.group("k").strip()
        if fam.cutoff_kind == "float":
            cutoff = float_text(text, "cutoff", k)
        elif not k.isdigit():
            raise InputError(f"{spec!r}: cutoff {k!r} is not a positive integer")
        else:
            cutoff = int(k)
    return _make(text, fam.name, cutoff=cutoff, **params)
