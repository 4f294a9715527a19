"""The one view model every file report renders: HTML, Markdown and LaTeX read a `View`.

A JSON document (an eval report, a comparison, a gate verdict, a discovery or
RAG report) is turned into a `View` once, by `rankproof.report.views`; each
renderer then decides only how to draw it. That keeps the three formats in
agreement: the same verdict rows, the same intervals (the ones the verdicts
use), the same caveats, in the same order.

Everything here is plain data (strings, floats, tuples) already taken out of
the document: a renderer never reads JSON. Strings that came from files stay
raw here; escaping is each renderer's job, for its own format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankproof.comparison import NullSummary

__all__ = ["Bars", "Browser", "BrowserQuery", "Curve", "Deltas", "Folded", "Latency", "Matrix",
           "MatrixCell", "MatrixRow", "Series", "Table", "Verdict", "View"]


@dataclass(frozen=True)
class Verdict:
    """One paired comparison row: a candidate against a baseline on one measure.

    ``ci_low``/``ci_high`` are the row's own interval at ``ci_level``, the one
    its verdict agrees with (None when the document has none, e.g. a
    threshold check). ``qids`` and the value tuples are the paired per-query
    values (empty when the document did not keep them). ``null`` is the row's null
    distribution as the comparison layer stored it, for the figure (None when the row
    has none, or was saved before rows stored it).
    """

    baseline: str
    candidate: str
    measure: str
    higher_is_better: bool
    verdict: str
    difference: float | None
    baseline_mean: float | None = None
    candidate_mean: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_level: float | None = None
    ci_method: str | None = None
    ci_label: str | None = None
    """The interval's construction in words, as the comparison layer names it."""
    p_value: float | None = None
    p_corrected: float | None = None
    correction: str | None = None
    alpha: float | None = None
    test: str | None = None
    resamples: int | None = None
    seed: int | None = None
    n: int | None = None
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    underpowered: bool = False
    queries_needed: int | None = None
    notes: tuple[str, ...] = ()
    qids: tuple[str, ...] = ()
    baseline_values: tuple[float, ...] = ()
    candidate_values: tuple[float, ...] = ()
    null: NullSummary | None = None

    @property
    def significant(self) -> bool:
        """Whether the verdict is a detected difference (better or worse)."""
        return self.verdict in ("better", "worse", "non-inferior", "not shown non-inferior")

    @property
    def deltas(self) -> tuple[float, ...]:
        """Per-query candidate − baseline, in ``qids`` order."""
        return tuple(a - b for a, b in zip(self.candidate_values, self.baseline_values,
                                           strict=True))


@dataclass(frozen=True)
class Table:
    """A plain table: a title, column names, rows of already formatted cells."""

    key: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...] = ()
    """Per column, whether it holds numbers (right-aligned); empty: all text."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Series:
    """One named line of a curve; ``low``/``high`` an optional band around it."""

    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    low: tuple[float, ...] | None = None
    high: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Curve:
    """A figure of one or more lines (precision–recall, calibration, distractor curves)."""

    key: str
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    x_log: bool = False
    y_range: tuple[float, float] | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Bars:
    """Grouped bars: one value per label and group (taxonomy counts, RAG metrics)."""

    key: str
    title: str
    labels: tuple[str, ...]
    groups: tuple[tuple[str, tuple[float, ...]], ...]
    value_label: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Deltas:
    """A verdict row whose per-query differences and null distribution are drawn."""

    verdict: Verdict


@dataclass(frozen=True)
class Latency:
    """Per-stage latency: the stored summary and, when kept, each query's milliseconds."""

    stages: tuple[tuple[str, dict[str, float]], ...]
    values: dict[str, tuple[float, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class BrowserQuery:
    """One query in the regression browser."""

    qid: str
    text: str | None
    gold: dict[str, int]
    values: dict[str, dict[str, float]]
    """system -> measure -> value."""
    top: dict[str, tuple[str, ...]]
    """system -> its first k ids."""
    category: str | None = None


@dataclass(frozen=True)
class Browser:
    """The per-query table of the regression browser: every query, every system.

    ``baseline`` and ``candidates`` name the systems; ``measures`` the per-query
    values kept; ``k`` how many top ids each system kept (0: none stored).
    """

    baseline: str
    candidates: tuple[str, ...]
    measures: tuple[str, ...]
    higher_is_better: dict[str, bool]
    queries: tuple[BrowserQuery, ...]
    k: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class MatrixCell:
    """One system's value on one measure in the systems × measures table.

    ``mark`` is the verdict against the baseline at the corrected level
    (``"better"``, ``"worse"`` or ``""``); ``beats`` the letters of the systems
    this one is significantly better than (all-pairs comparisons); ``notes``
    the 1-based numbers of the table's footnotes that concern this cell.
    """

    value: float | None
    text: str
    best: bool = False
    mark: str = ""
    beats: tuple[str, ...] = ()
    notes: tuple[int, ...] = ()


@dataclass(frozen=True)
class MatrixRow:
    """One system of the systems × measures table (the baseline first)."""

    system: str
    letter: str
    is_baseline: bool
    cells: tuple[MatrixCell, ...]


@dataclass(frozen=True)
class Folded:
    """The verdict rows of one measure, split for a report that leads with the answer:
    ``shown`` are the detected differences, ``folded`` the rows with no detectable
    difference (one line per measure unless a detailed report is asked for)."""

    measure: str
    shown: tuple[Verdict, ...]
    folded: tuple[Verdict, ...]


@dataclass(frozen=True)
class Matrix:
    """The systems × measures table papers print, computed once (`rankproof.report.matrix`).

    ``columns`` are the measures' labels; ``column_notes`` per column the
    footnotes that concern every candidate of that column (printed on the
    header, not on each cell); ``legend`` the sentences that say what the
    marks mean (test, correction and family size, α, best value);
    ``footnotes`` numbered from 1, each printed once; ``caveats`` the
    document's caveats, every one of them; ``levels`` the intervals' level,
    said once per table; ``verdicts`` the verdict rows per measure.
    """

    title: str
    baseline: str
    pairs: str
    measures: tuple[str, ...]
    columns: tuple[str, ...]
    higher_is_better: tuple[bool, ...]
    rows: tuple[MatrixRow, ...]
    legend: tuple[str, ...] = ()
    column_notes: tuple[tuple[int, ...], ...] = ()
    footnotes: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()
    levels: str = ""
    verdicts: tuple[Folded, ...] = ()


@dataclass(frozen=True)
class View:
    """A document ready to render (see the module docstring).

    ``summary`` is the verdict summary in a few sentences; ``verdicts`` the
    comparison rows (forest plots, verdict tables); ``deltas`` the rows whose
    per-query picture is drawn; ``tables`` everything else tabular, in
    reading order.
    """

    kind: str
    schema_version: int
    title: str
    source: str
    digest: str
    summary: tuple[str, ...] = ()
    passed: bool | None = None
    verdicts: tuple[Verdict, ...] = ()
    deltas: tuple[Deltas, ...] = ()
    tables: tuple[Table, ...] = ()
    curves: tuple[Curve, ...] = ()
    bars: tuple[Bars, ...] = ()
    latency: Latency | None = None
    browser: Browser | None = None
    matrix: Matrix | None = None
    """The systems × measures table of a comparison or an eval report (None for others)."""
    caveats: tuple[str, ...] = ()
    provenance: tuple[tuple[str, str], ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def measures(self) -> tuple[str, ...]:
        """The measures of the verdict rows, in first-seen order."""
        return tuple(dict.fromkeys(v.measure for v in self.verdicts))
