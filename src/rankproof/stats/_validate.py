"""Input validation shared by every public statistics function.

Each public function calls these helpers first, so the computations can
trust their inputs (the pattern of ``scipy.stats._resampling``). Pairing is
by query id, never by position (invariant 3), except for plain arrays, where
the caller vouches that position ``i`` is the same query on both sides.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError, PairingError
from rankproof.measures import Measure, PerQuery, parse

Alternative = Literal["two-sided", "greater", "less"]
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")

#: What a paired function accepts for each side.
Scores: TypeAlias = Mapping[str, float] | PerQuery | npt.ArrayLike
FloatArray: TypeAlias = npt.NDArray[np.float64]

#: Bytes of scratch memory one resampling call may use (beyond its inputs).
MEMORY_BUDGET = 48 * 2**20
_SHOWN = 10


@dataclass(frozen=True, eq=False)
class PairedScores:
    """Two systems' scores on the same queries, aligned and validated.

    ``a[i]`` and ``b[i]`` are the scores on query ``qids[i]``; queries are
    sorted by id so that results never depend on the order of the input.
    ``qids`` is ``None`` for positional arrays (the caller aligned them).
    """

    a: FloatArray
    b: FloatArray
    qids: tuple[str, ...] | None = None
    measure: str | None = None

    @property
    def n(self) -> int:
        """Number of paired queries."""
        return len(self.a)

    @property
    def differences(self) -> FloatArray:
        """Per-query differences ``a - b``."""
        return self.a - self.b


def _frozen(x: FloatArray) -> FloatArray:
    x.setflags(write=False)
    return x


def _shown(ids: Sequence[str]) -> str:
    head = ", ".join(repr(q) for q in ids[:_SHOWN])
    more = len(ids) - _SHOWN
    return f"{head}, … ({more} more)" if more > 0 else head


def _check_score(value: Any, qid: str, side: str) -> float:
    if isinstance(value, str | bytes) or not isinstance(value, numbers.Real):
        raise InputError(
            f"score for query {qid!r} is {value!r} ({type(value).__name__}); "
            "expected a real number",
            field=side,
        )
    f = float(value)
    if not math.isfinite(f):
        raise InputError(f"score for query {qid!r} is {f}; expected a finite number", field=side)
    return f


def _check_mapping(scores: Mapping[Any, Any], side: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for qid, value in scores.items():
        if not isinstance(qid, str):
            raise InputError(
                f"query id {qid!r} is a {type(qid).__name__}; expected str", field=side
            )
        out[qid] = _check_score(value, qid, side)
    return out


def _check_array(scores: Any, side: str) -> FloatArray:
    try:
        arr = np.array(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"cannot read scores as numbers: {exc}", field=side) from None
    if arr.ndim != 1:
        raise InputError(f"expected a 1-D array of scores, got shape {arr.shape}", field=side)
    bad = np.flatnonzero(~np.isfinite(arr))
    if len(bad):
        i = int(bad[0])
        raise InputError(
            f"score at position {i} is {arr[i]}; expected a finite number "
            f"({len(bad)} non-finite in all)",
            field=side,
        )
    return arr


def _kind(x: Any) -> str:
    if isinstance(x, PerQuery):
        return "PerQuery"
    if isinstance(x, Mapping):
        return "mapping"
    return "array"


def paired_scores(
    a: Scores, b: Scores, measure: str | Measure | None = None
) -> PairedScores:
    """Align two systems' per-query scores by query id and validate them.

    ``a`` and ``b`` are both ``{qid: score}`` mappings, both
    :class:`~rankproof.measures.PerQuery` (then ``measure`` names the
    column), or both 1-D arrays of equal length (positional: the caller's
    responsibility that position ``i`` is the same query on both sides).

    Mappings and PerQuery are paired by query id and sorted by it, so the
    result does not depend on input order. Different query sets raise
    :class:`~rankproof.PairingError` listing what each side lacks; a score
    that is not a finite number raises :class:`~rankproof.InputError` naming
    its query.
    """
    kinds = (_kind(a), _kind(b))
    if kinds[0] != kinds[1]:
        raise InputError(
            f"a is a {kinds[0]} and b is a {kinds[1]}; both sides must be the same kind "
            "({qid: score} mappings, PerQuery, or arrays)"
        )
    kind = kinds[0]
    if kind != "PerQuery" and measure is not None:
        raise InputError(f"measure={str(measure)!r} is only meaningful for PerQuery inputs")
    if kind == "array":
        xa, xb = _check_array(a, "a"), _check_array(b, "b")
        if len(xa) != len(xb):
            raise InputError(
                f"a has {len(xa)} scores and b has {len(xb)}; positional arrays "
                "must have equal length"
            )
        if len(xa) == 0:
            raise InputError("no queries to compare: both sides are empty")
        return PairedScores(_frozen(xa), _frozen(xb), None, None)

    name: str | None = None
    ma: Mapping[Any, Any]
    mb: Mapping[Any, Any]
    if isinstance(a, PerQuery) and isinstance(b, PerQuery):
        if measure is None:
            raise InputError("PerQuery inputs need measure=, e.g. measure='nDCG@10'")
        name = str(parse(measure))
        ma, mb = a.scores(measure), b.scores(measure)
    else:
        ma, mb = cast(Mapping[Any, Any], a), cast(Mapping[Any, Any], b)
    da, db = _check_mapping(ma, "a"), _check_mapping(mb, "b")
    only_a = sorted(set(da) - set(db))
    only_b = sorted(set(db) - set(da))
    if only_a or only_b:
        raise PairingError(
            "the two sides cover different queries: "
            f"{len(only_a)} only in a ({_shown(only_a) or 'none'}); "
            f"{len(only_b)} only in b ({_shown(only_b) or 'none'}). "
            "Pair by query id: evaluate both runs on the same topics.",
            only_left=only_a,
            only_right=only_b,
        )
    if not da:
        raise InputError("no queries to compare: both sides are empty")
    qids = tuple(sorted(da))
    xa = np.fromiter((da[q] for q in qids), dtype=np.float64, count=len(qids))
    xb = np.fromiter((db[q] for q in qids), dtype=np.float64, count=len(qids))
    return PairedScores(_frozen(xa), _frozen(xb), qids, name)


# -- scalar options ------------------------------------------------------------


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``, else an `InputError` listing them."""
    if not isinstance(value, str) or value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise InputError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def check_alternative(value: Any) -> Alternative:
    """A valid ``alternative`` ("two-sided", "greater" or "less")."""
    return check_choice(value, "alternative", ALTERNATIVES)  # type: ignore[return-value]


def check_int(value: Any, name: str, minimum: int) -> int:
    """``value`` as an int ≥ ``minimum`` (bools rejected)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{name} must be an integer; got {value!r}")
    if int(value) < minimum:
        raise InputError(f"{name} must be at least {minimum}; got {value}")
    return int(value)


def check_seed(value: Any) -> int:
    """A seed for ``numpy.random.default_rng``: a non-negative integer (it is recorded)."""
    return check_int(value, "seed", 0)


def check_batch(value: Any) -> int | None:
    """``None`` (choose from the memory budget) or a positive int."""
    return None if value is None else check_int(value, "batch", 1)


def check_probability(value: Any, name: str) -> float:
    """A float strictly between 0 and 1 (confidence levels, α, power)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a number strictly between 0 and 1; got {value!r}")
    f = float(value)
    if not 0.0 < f < 1.0:
        raise InputError(f"{name} must be strictly between 0 and 1; got {value!r}")
    return f


def check_real(value: Any, name: str, *, positive: bool = False) -> float:
    """A finite real number (optionally > 0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a finite number; got {value!r}")
    f = float(value)
    if not math.isfinite(f):
        raise InputError(f"{name} must be a finite number; got {value!r}")
    if positive and f <= 0.0:
        raise InputError(f"{name} must be greater than 0; got {value!r}")
    return f


def described(name: str, resamples: int, batch: int | None, n: int, unit: str = "queries") -> str:
    """How a cost message names a request: ``"name with resamples=R (batch=B) on n queries"``."""
    chunk = "" if batch is None else f", batch={batch}"
    return f"{name} with resamples={resamples}{chunk} on {n} {unit}"


def rows_per_batch(batch: int | None, bytes_per_row: int, total: int) -> int:
    """Rows to process at once: ``batch``, or as many as fit the memory budget."""
    if batch is None:
        batch = max(1, MEMORY_BUDGET // max(1, bytes_per_row))
    return max(1, min(batch, total))
