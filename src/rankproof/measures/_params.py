"""Parameter values of measures: checking, canonical text and parsing.

A family declares each parameter's kind (`rankproof.measures._families.Param`);
these helpers turn a value given in code or in text into the stored form
(a float, a tuple of floats, or sorted ``(label, gain)`` pairs) and back into
the one canonical text (``2``, ``0.25``, ``[0.2,0.5]``, ``{0:0,1:1,2:3}``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from rankproof._errors import InputError
from rankproof.measures._families import Family, ParamValue


def fmt_number(x: float) -> str:
    """The canonical text of a float parameter: integers without ``.0``, else ``repr``."""
    if x == math.floor(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def number(fam: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{fam}: {name} must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise InputError(f"{fam}: {name} must be finite, got {value!r}")
    return x


def coerce(fam: Family, name: str, value: object) -> ParamValue:
    """Check one parameter value against the family's declaration; return its stored form."""
    spec = fam.params[name]
    if spec.kind == "float":
        return number(fam.name, name, value)
    if spec.kind == "floats":
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            raise InputError(f"{fam.name}: {name} must be a list of numbers, got {value!r}")
        values = tuple(number(fam.name, name, v) for v in value)
        if not values:
            raise InputError(f"{fam.name}: {name} needs at least one value")
        if spec.length is not None and len(values) != spec.length:
            raise InputError(f"{fam.name}: {name} needs {spec.length} values, got {len(values)}")
        return values
    if spec.kind == "gains":
        if isinstance(value, Mapping):
            items: list[Any] = list(value.items())
        elif isinstance(value, Iterable) and not isinstance(value, str | bytes):
            items = list(value)
        else:
            raise InputError(f"{fam.name}: {name} must map labels to gains, got {value!r}")
        pairs: dict[int, float] = {}
        for item in items:
            try:
                label, gain = item
            except (TypeError, ValueError):
                raise InputError(f"{fam.name}: {name} must map labels to gains, got {value!r}") \
                    from None
            if isinstance(label, bool) or not isinstance(label, int):
                raise InputError(f"{fam.name}: {name}: label {label!r} is not an integer")
            if label < 0:
                raise InputError(f"{fam.name}: {name}: label {label} is negative; gains are"
                                 " given to judgment labels 0 and above (trec_eval would give"
                                 " it to unjudged documents, which rankproof does not do)")
            if label in pairs:
                raise InputError(f"{fam.name}: {name}: label {label} given twice")
            pairs[label] = number(fam.name, f"{name}[{label}]", gain)
        if not pairs:
            raise InputError(f"{fam.name}: {name} needs at least one label:gain pair")
        return tuple(sorted(pairs.items()))
    raise InputError(f"{fam.name}: {name} is not a free parameter")  # pragma: no cover


def show(value: ParamValue) -> str:
    if isinstance(value, float | int):
        return fmt_number(value)
    if value and isinstance(value[0], tuple):
        return "{" + ",".join(f"{k}:{fmt_number(v)}" for k, v in value) + "}"
    return "[" + ",".join(fmt_number(v) for v in value) + "]"  # type: ignore[arg-type]



def split_top(text: str) -> list[str]:
    """Split ``text`` at commas outside ``[]`` and ``{}``."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def float_text(spec: str, name: str, text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise InputError(f"{spec!r}: {name} must be a number, got {text!r}") from None
    if not math.isfinite(x):
        raise InputError(f"{spec!r}: {name} must be finite, got {text!r}")
    return x


def value_text(fam: Family, spec: str, key: str, value: str) -> ParamValue:
    kind = fam.params[key].kind
    if kind == "float":
        return float_text(spec, key, value)
    if kind == "floats":
        if not (value.startswith("[") and value.endswith("]")):
            raise InputError(f"{spec!r}: {key} must be a list like [0.2,0.5], got {value!r}")
        inner = value[1:-1].strip()
        if not inner:
            raise InputError(f"{spec!r}: {key} needs at least one value")
        return tuple(float_text(spec, key, v.strip()) for v in inner.split(","))
    # gains: {label:gain,...}
    if not (value.startswith("{") and value.endswith("}")):
        raise InputError(f"{spec!r}: {key} must be a map like {{0:0,1:1,2:3}}, got {value!r}")
    pairs: list[tuple[int, float]] = []
    for item in filter(None, (v.strip() for v in value[1:-1].split(","))):
        label, sep, gain = item.partition(":")
        try:
            lab = int(label.strip())
        except ValueError:
            raise InputError(f"{spec!r}: {key}: label {label.strip()!r} is not an integer") \
                from None
        if not sep:
            raise InputError(f"{spec!r}: {key}: {item!r} is not label:gain")
        pairs.append((lab, float_text(spec, f"{key}[{lab}]", gain.strip())))
    return tuple(pairs)
