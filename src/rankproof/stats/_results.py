"""The base of every statistics result: frozen, and JSON-serialisable via ``to_dict``."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON types.

    Non-finite floats (NaN, ±inf) become ``None``: strict JSON has no
    spelling for them, and ``None`` reads as "not defined" — for example the
    t statistic when every difference is zero.
    """
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [jsonable(v) for v in value]
    raise TypeError(f"cannot serialise {type(value).__name__} to JSON")


@dataclasses.dataclass(frozen=True)
class Result:
    """Mixin for frozen result dataclasses: ``to_dict()`` and ``to_json()``."""

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON types (non-finite floats become ``None``)."""
        return {
            f.name: jsonable(getattr(self, f.name))
            for f in dataclasses.fields(self)
        }

    def to_json(self, indent: int | None = 2) -> str:
        """``to_dict()`` as strict JSON text."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)
