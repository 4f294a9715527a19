"""`ComparisonRow` and `Comparison`: the one row type every comparison produces.

`rankproof compare`, the experiment harness and the gate's baseline checks
all store this row, so a saved comparison, an eval report and a gate result
say the same thing in the same words, and any of them can serve as the pilot
of a power analysis: a row keeps the paired per-query values it was computed
from (``qids``, ``candidate_values``, ``baseline_values``), not just means.

Wins and losses follow the measure's polarity (a *win* is a query where the
candidate did better for the measure: higher for nDCG, lower for latency);
`rankproof.stats.PairedResult` keeps the raw signs of ``candidate −
baseline``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rankproof._errors import InputError, MissingExtraError
from rankproof.comparison._evidence import Evidence
from rankproof.comparison._null import NullSummary
from rankproof.measures import Measure, resolve_measures
from rankproof.stats import INTERVAL_LABELS, PairedResult, Result, TukeyHSDResult

if TYPE_CHECKING:
    import pandas as pd

Verdict = Literal["better", "worse", "no detectable difference", "non-inferior",
                  "not shown non-inferior"]
#: A difference test's verdicts, then a non-inferiority test's (a row with a ``margin``).
VERDICTS: tuple[str, ...] = ("better", "worse", "no detectable difference", "non-inferior",
                             "not shown non-inferior")
SCHEMA_VERSION = 3
#: The columns of `ComparisonRow.flat` and `Comparison.to_pandas`, in order.
FLAT_COLUMNS: tuple[str, ...] = (
    "baseline", "candidate", "measure", "higher_is_better", "n", "baseline_mean",
    "candidate_mean", "difference", "relative_difference", "ci_low", "ci_high", "ci_level",
    "ci_method", "bootstrap_low", "bootstrap_high", "confidence_level", "test", "p_value",
    "p_corrected", "correction", "alpha", "verdict", "underpowered", "wins", "ties", "losses",
    "effect_size", "power", "queries_needed", "notes", "margin",
)


def format_end(value: float, digits: int = 4) -> str:
    """An interval end as printed everywhere: signed, ``±∞`` when unbounded."""
    if math.isinf(value):
        return "+∞" if value > 0 else "−∞"
    return f"{value:+.{digits}f}"


def _key(measure: str | Measure) -> str:
    return str(measure if isinstance(measure, Measure) else resolve_measures(measure)[0])


@dataclass(frozen=True, repr=False)
class ComparisonRow(Result):
    """One (candidate vs baseline, measure) cell: the paired result and its verdict.

    ``result`` compares ``candidate`` (a) with ``baseline`` (b): a positive
    ``result.difference`` means the candidate scored higher. ``p_corrected``
    is ``result.p_value`` adjusted by ``correction`` over every row of the
    same call; ``verdict`` is *better*/*worse* when ``p_corrected ≤ alpha``,
    in the direction the measure's polarity (``higher_is_better``) gives.
    ``qids``/``candidate_values``/``baseline_values`` are the paired
    per-query values (sorted by id) every number was computed from.

    ``ci_low``/``ci_high`` is the row's interval, built from the same test
    at the level the row's correction implies (``ci_level``; see
    `rankproof.comparison.row_levels`), by ``ci_method`` (a key of
    `rankproof.stats.INTERVAL_LABELS`). It excludes 0 exactly when the
    verdict is *better* or *worse*. ``ci_adjusted`` is True in the rare
    case where the inverted interval had to be widened to reach 0 to agree
    with the test (a tie within the test's rounding tolerance, or a rank
    test whose p-value is not monotone in the shift); the notes say so.
    ``result.ci_low``/``ci_high`` is the uncorrected interval at
    ``result.confidence_level``, and ``result.bootstrap_low``/``high`` the
    percentile bootstrap, kept for reference.

    ``null`` is the test's null distribution, summarised for a figure
    (`NullSummary`, computed when the row was; None for a non-inferiority row, a
    test with no replayable null, or a row saved before it was stored), so that a
    renderer only draws it.

    A row with a ``margin`` is a non-inferiority test (a gate's
    ``no_regression_beyond``): its p-value (``result.p_value``, with
    ``result.alternative`` one-sided) tests "the candidate is worse by at
    least ``margin``", its interval is one-sided (``[low, ∞)`` when higher is
    better, ``(−∞, high]`` otherwise) and its verdict is *non-inferior*
    exactly when that interval clears ``−margin`` (``+margin``): the
    candidate is shown to lose less than the margin, at the row's level.
    """

    baseline: str
    candidate: str
    measure: str
    higher_is_better: bool
    result: PairedResult
    p_corrected: float
    verdict: Verdict
    underpowered: bool
    alpha: float
    correction: str
    qids: tuple[str, ...]
    candidate_values: tuple[float, ...]
    baseline_values: tuple[float, ...]
    ci_low: float
    ci_high: float
    ci_level: float
    ci_method: str
    ci_adjusted: bool = False
    notes: tuple[str, ...] = ()
    margin: float | None = None
    null: NullSummary | None = None

    @property
    def ci_label(self) -> str:
        """The interval's construction in words (`rankproof.stats.INTERVAL_LABELS`), so that
        a renderer shows it without knowing the statistics' tables."""
        return INTERVAL_LABELS.get(self.ci_method, self.ci_method)

    @property
    def bound(self) -> float:
        """What the interval must exclude for a positive verdict: 0, or ∓margin."""
        if self.margin is None:
            return 0.0
        return -self.margin if self.higher_is_better else self.margin

    def excludes_zero(self) -> bool:
        """True when the row's interval lies wholly above or below 0."""
        return bool(self.ci_low > 0.0 or self.ci_high < 0.0)

    def interval_text(self, digits: int = 4) -> str:
        """``[low, high]`` of the row's interval, as every table and message prints it."""
        return f"[{format_end(self.ci_low, digits)}, {format_end(self.ci_high, digits)}]"

    def clears_bound(self) -> bool:
        """True when the interval excludes `bound` (for a difference test: 0)."""
        return bool(self.ci_low > self.bound or self.ci_high < self.bound)

    @property
    def wins(self) -> int:
        """Queries where the candidate did better for the measure's polarity."""
        return self.result.wins if self.higher_is_better else self.result.losses

    @property
    def losses(self) -> int:
        """Queries where the candidate did worse for the measure's polarity."""
        return self.result.losses if self.higher_is_better else self.result.wins

    @property
    def ties(self) -> int:
        return self.result.ties

    @property
    def differences(self) -> np.ndarray:
        """Per-query ``candidate − baseline`` differences, in ``qids`` order."""
        return (np.asarray(self.candidate_values, dtype=np.float64)
                - np.asarray(self.baseline_values, dtype=np.float64))

    def deltas(self) -> dict[str, float]:
        """``{qid: candidate − baseline}``."""
        return dict(zip(self.qids, self.differences.tolist(), strict=True))

    def __repr__(self) -> str:
        r = self.result
        return (f"ComparisonRow({self.candidate} vs {self.baseline}, {self.measure}: "
                f"Δ {r.difference:+.4f} [{self.ci_low:+.4f}, {self.ci_high:+.4f}] "
                f"at {self.ci_level:.4g}, "
                f"p {r.p_value:.4g} ({self.correction} {self.p_corrected:.4g}), "
                f"{self.verdict}, n={r.n})")

    def flat(self) -> dict[str, Any]:
        """The row's headline numbers as one flat record (a table row, a DataFrame row)."""
        r = self.result
        return {
            "baseline": self.baseline, "candidate": self.candidate, "measure": self.measure,
            "higher_is_better": self.higher_is_better, "n": r.n, "baseline_mean": r.mean_b,
            "candidate_mean": r.mean_a, "difference": r.difference,
            "relative_difference": r.relative_difference, "ci_low": self.ci_low,
            "ci_high": self.ci_high, "ci_level": self.ci_level, "ci_method": self.ci_method,
            "bootstrap_low": r.bootstrap_low, "bootstrap_high": r.bootstrap_high,
            "confidence_level": r.confidence_level, "test": r.test, "p_value": r.p_value,
            "p_corrected": self.p_corrected, "correction": self.correction,
            "alpha": self.alpha, "verdict": self.verdict, "underpowered": self.underpowered,
            "wins": self.wins, "ties": self.ties, "losses": self.losses,
            "effect_size": r.effect_size, "power": r.power,
            "queries_needed": r.queries_needed, "notes": list(self.notes),
            "margin": self.margin,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ComparisonRow:
        """A row from its ``to_dict()`` form (a saved comparison, report or gate result).

        Every field is checked, so a hand-edited or truncated file fails here,
        naming the field, rather than later in a power analysis.
        """
        if not isinstance(data, Mapping):
            raise InputError(f"a comparison row must be a mapping, got {type(data).__name__}")
        names = [f.name for f in fields(cls)]
        # Rows saved before schema 3 carry no row interval: theirs was the result's.
        optional = {"notes", "ci_low", "ci_high", "ci_level", "ci_method", "ci_adjusted",
                    "margin", "null"}
        required = [n for n in names if n not in optional]
        missing = [n for n in required if n not in data]
        if missing:
            raise InputError(f"comparison row lacks {', '.join(missing)}")
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise InputError(f"comparison row has unknown field(s) {', '.join(unknown)}")
        result = _paired_from_dict(data["result"])
        qids = _strings(data["qids"], "qids")
        cand = _floats(data["candidate_values"], "candidate_values")
        base = _floats(data["baseline_values"], "baseline_values")
        if not len(qids) == len(cand) == len(base):
            raise InputError(f"comparison row: qids ({len(qids)}), candidate_values "
                             f"({len(cand)}) and baseline_values ({len(base)}) differ in length")
        verdict = data["verdict"]
        if verdict not in VERDICTS:
            raise InputError(f"comparison row: verdict {verdict!r} is not one of "
                             f"{', '.join(VERDICTS)}", field="verdict")
        return cls(
            baseline=_text(data["baseline"], "baseline"),
            candidate=_text(data["candidate"], "candidate"),
            measure=_text(data["measure"], "measure"),
            higher_is_better=_flag(data["higher_is_better"], "higher_is_better"),
            result=result, p_corrected=_number(data["p_corrected"], "p_corrected"),
            verdict=verdict, underpowered=_flag(data["underpowered"], "underpowered"),
            alpha=_number(data["alpha"], "alpha"),
            correction=_text(data["correction"], "correction"),
            qids=qids, candidate_values=cand, baseline_values=base,
            ci_low=_number(data.get("ci_low", result.ci_low), "ci_low", infinite=True),
            ci_high=_number(data.get("ci_high", result.ci_high), "ci_high", infinite=True),
            ci_level=_number(data.get("ci_level", result.confidence_level), "ci_level"),
            ci_method=_text(data.get("ci_method", result.ci_method), "ci_method"),
            ci_adjusted=_flag(data.get("ci_adjusted", False), "ci_adjusted"),
            notes=_strings(data.get("notes", ()), "notes"),
            margin=(None if data.get("margin") is None
                    else _number(data["margin"], "margin")),
            null=(None if data.get("null") is None else NullSummary.from_dict(data["null"])),
        )


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"comparison row: {name} must be a string, got {value!r}", field=name)
    return value


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"comparison row: {name} must be true or false, got {value!r}",
                         field=name)
    return value


def _number(value: Any, name: str, infinite: bool = False) -> float:
    if value is None:
        # JSON has no NaN or infinity: to_dict() writes an undefined number as null, and
        # an interval end as null when it is unbounded (no shift could be rejected).
        return math.inf if infinite and name.endswith("high") else (
            -math.inf if infinite else math.nan)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"comparison row: {name} must be a number, got {value!r}", field=name)
    return float(value)


def _strings(value: Any, name: str) -> tuple[str, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str) \
            or not all(isinstance(v, str) for v in value):
        raise InputError(f"comparison row: {name} must be a list of strings", field=name)
    return tuple(value)


def _floats(value: Any, name: str) -> tuple[float, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise InputError(f"comparison row: {name} must be a list of numbers", field=name)
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise InputError(f"comparison row: {name} holds {v!r}; expected finite numbers",
                             field=name)
        out.append(float(v))
    return tuple(out)


_INT_FIELDS = ("n", "wins", "ties", "losses")
_OPTIONAL_INT = ("resamples", "seed", "queries_needed")
_OPTIONAL_FLOAT = ("relative_difference", "effect_size", "power", "bootstrap_low",
                   "bootstrap_high", "error_bound")
_TEXT = ("ci_method", "test", "alternative")
_LATER = ("measure", "bootstrap_low", "bootstrap_high", "bootstrap_p", "procedure",
          "error_bound")  # may be absent


def _paired_from_dict(data: Any) -> PairedResult:
    if not isinstance(data, Mapping):
        raise InputError("comparison row: result must be a mapping", field="result")
    names = [f.name for f in fields(PairedResult)]
    missing = [n for n in names if n not in data and n not in _LATER]
    if missing:
        raise InputError(f"comparison row: result lacks {', '.join(missing)}", field="result")
    values: dict[str, Any] = {}
    for n in names:
        v = data.get(n)
        if n in _INT_FIELDS or n in _OPTIONAL_INT:
            if v is None and n in _OPTIONAL_INT:
                values[n] = None
            elif isinstance(v, bool) or not isinstance(v, int):
                raise InputError(f"comparison row: result.{n} must be an integer, got {v!r}",
                                 field=f"result.{n}")
            else:
                values[n] = v
        elif n in _OPTIONAL_FLOAT:
            values[n] = None if v is None else _number(v, f"result.{n}")
        elif n in _TEXT:
            values[n] = _text(v, f"result.{n}")
        elif n in ("measure", "bootstrap_p", "procedure"):
            values[n] = None if v is None else _text(v, f"result.{n}")
        elif n == "exact":
            values[n] = _flag(v, "result.exact")
        else:
            values[n] = _number(v, f"result.{n}", infinite=n in ("ci_low", "ci_high"))
    return PairedResult(**values)


@dataclass(frozen=True, repr=False)
class Comparison(Result):
    """Rows of one comparison call, and how they were made.

    All rows of one call form one family: their p-values were corrected
    together (``correction``; "tukey-hsd" for ``pairs="all"``). ``rel_level``,
    ``topics``, ``judged`` and ``complete_judgments`` describe the evaluation
    when the comparison started from runs and qrels (None/empty when it
    started from per-query scores). ``evidence`` keeps what a reader must see of the
    compared runs (top ids per query, the gold, the query text: `Evidence`) when the
    comparison started from runs and the caller collected it; it is written as the
    document's last key, and only when present. ``provenance`` is the manifest block
    (`rankproof._manifest.provenance`) a command stamps on the comparison it writes;
    written only when present.
    """

    systems: tuple[str, ...]
    baseline: str
    measures: tuple[str, ...]
    pairs: str
    test: str
    alpha: float
    correction: str
    resamples: int
    seed: int
    confidence_level: float
    n_topics: int
    rows: tuple[ComparisonRow, ...]
    rel_level: int | None = None
    topics: str | None = None
    judged: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    tukey: Mapping[str, TukeyHSDResult] = field(default_factory=dict)
    caveats: tuple[str, ...] = ()
    complete_judgments: bool = False
    schema_version: int = SCHEMA_VERSION
    evidence: Evidence | None = None
    provenance: Mapping[str, Any] | None = None

    def rows_for(self, measure: str | Measure) -> tuple[ComparisonRow, ...]:
        key = _key(measure)
        return tuple(r for r in self.rows if r.measure == key)

    @property
    def regressions(self) -> tuple[ComparisonRow, ...]:
        """Rows whose verdict is *worse*."""
        return tuple(r for r in self.rows if r.verdict == "worse")

    @property
    def per_query(self) -> dict[str, dict[str, dict[str, float]]]:
        """``per_query[system][measure][qid]``: every score the rows were computed from."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for row in self.rows:
            for system, values in ((row.baseline, row.baseline_values),
                                   (row.candidate, row.candidate_values)):
                out.setdefault(system, {}).setdefault(
                    row.measure, dict(zip(row.qids, values, strict=True)))
        return out

    def deltas(self, candidate: str, measure: str | Measure, baseline: str | None = None
               ) -> dict[str, float]:
        """Per-query ``candidate − baseline`` differences for one measure."""
        key = _key(measure)
        pq = self.per_query
        base = pq[baseline or self.baseline][key]
        cand = pq[candidate][key]
        return {q: cand[q] - base[q] for q in base}

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        evidence = out.pop("evidence")
        provenance = out.pop("provenance")
        out["kind"] = "rankproof.comparison"
        if provenance is not None:
            out["provenance"] = provenance
        if evidence is not None:
            out["evidence"] = evidence
        return out

    def to_pandas(self) -> pd.DataFrame:
        """One DataFrame row per comparison row (`ComparisonRow.flat`); needs pandas."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise MissingExtraError(
                "Comparison.to_pandas needs pandas: pip install 'rankproof[pandas]'") from exc
        return pd.DataFrame.from_records([r.flat() for r in self.rows], columns=list(FLAT_COLUMNS))

    def __repr__(self) -> str:
        counts = {v: sum(r.verdict == v for r in self.rows) for v in VERDICTS}
        return (f"Comparison({len(self.systems)} systems, baseline {self.baseline!r}, "
                f"{len(self.measures)} measure(s), {self.n_topics} topics, "
                f"{len(self.rows)} rows: {counts['better']} better, {counts['worse']} worse, "
                f"{counts['no detectable difference']} no detectable difference; "
                f"{self.test}, {self.correction}, alpha={self.alpha:g})")
