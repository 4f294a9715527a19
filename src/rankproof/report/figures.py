"""The report's figures as files: PNG, SVG or PDF, with publication defaults.

`rankproof plot` and this module draw the very figures the HTML report inlines: the
same `Drawing` (`rankproof.report.plots`) feeds both, so a saved figure and the
report cannot disagree. What differs is only how it is put on paper:

* **Column width.** A figure is `COLUMN_WIDTH` (3.5 in, one column of a two-column
  paper) wide by default, with 7-point text, so it is printed at 100 % and its text
  matches a paper's footnotes; ``width`` changes it (7.0 in spans a page). Every
  figure uses matplotlib's constrained layout, which fits the axes to the labels.
* **No overlapping tick labels.** After layout, each axis whose tick labels overlap
  (as the x axis of a narrow forest plot of ``Success@5`` did: numbers such as
  ``−0.025`` and ``0.000`` side by side) gets fewer ticks until none overlap
  (`declutter`).
* **Fonts embedded.** PDF uses TrueType (Type 42) fonts, embedded — what publishers
  ask for, instead of Type 3; SVG draws glyphs as paths, so it looks the same
  without the font installed.
* **Deterministic bytes.** No dates, no creator/producer strings with versions, and
  SVG ids from a fixed salt (``svg.hashsalt``): the same input gives the same bytes
  (PNG, SVG and PDF alike).

Which figures a result supports (`supported_kinds`): a result with verdicts (a
comparison, an eval report, a gate verdict) → ``forest`` (every candidate's
Δ and interval on one measure), ``per-query`` (one candidate's sorted per-query
differences) and ``null`` (the null distribution of one candidate's test, as the
comparison layer stored it in the row: `rankproof.comparison.NullSummary`, the same
one the HTML draws; nothing is recomputed here); a
result with curves (discovery's calibration and distractor curves, interpolated
precision–recall of measure results) → ``curve``; a results-history trend (the JSON
of ``rankproof history trend -f json``) → ``trend``. Asking for another kind is an
`InputError` that lists the kinds the result supports.

matplotlib is the ``report`` extra: it is imported when a figure is drawn, and a
missing install raises `MissingExtraError` naming the pip line.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from rankproof._errors import InputError, MissingExtraError

if TYPE_CHECKING:
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

    from rankproof.comparison import NullSummary
    from rankproof.report._svg import Drawing
    from rankproof.report.view import Verdict, View

__all__ = ["COLUMN_WIDTH", "FIGURE_FORMATS", "FIGURE_KINDS", "NULL_MISSING_NOTE",
           "PUBLICATION_RC", "TREND_KIND", "FigureKind", "FigureRequest", "declutter",
           "draw_figure", "figure_format", "fit_text", "load_result", "null_of", "save_figure",
           "supported_kinds"]

NULL_MISSING_NOTE = ("the null distributions are not drawn: this result was saved before "
                     "comparison rows stored them (compare again to draw them)")
"""What a report says where an old result's rows carry no `NullSummary` to draw."""

FigureKind = Literal["forest", "per-query", "null", "curve", "trend"]
FIGURE_KINDS: tuple[str, ...] = ("forest", "per-query", "null", "curve", "trend")
FIGURE_FORMATS: tuple[str, ...] = ("png", "svg", "pdf")
COLUMN_WIDTH = 3.5
"""Default figure width in inches: one column of a two-column paper (ACM, IEEE, Springer)."""
TREND_KIND = "rankproof.history.trend"
"""The kind of the trend JSON ``rankproof history trend -f json`` writes."""
_DPI = 300
_MAX_HEIGHT = 12.0

PUBLICATION_RC: dict[str, Any] = {
    "font.size": 7,
    "axes.titlesize": 7.5,
    "axes.labelsize": 7,
    "xtick.labelsize": 6.5,
    "ytick.labelsize": 6.5,
    "legend.fontsize": 6.5,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "path",
    "figure.dpi": 100,
    "savefig.dpi": _DPI,
    "lines.linewidth": 1.0,
}
"""matplotlib settings of saved figures, over the report's own (`rankproof.report._svg.RC`)."""

_METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None, "ModDate": None},
}


@dataclass(frozen=True)
class FigureRequest:
    """Which figure of a result to draw: the ``kind``, the ``measure`` (for curves: the
    curve's key) and the ``system`` (the candidate of a per-query or null figure)."""

    kind: str
    measure: str | None = None
    system: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FIGURE_KINDS:
            raise InputError(f"--kind must be one of {', '.join(FIGURE_KINDS)}, got "
                             f"{self.kind!r}", field="kind")
        if self.system is not None and self.kind not in ("per-query", "null"):
            raise InputError(f"--system chooses the candidate of a per-query or null figure; "
                             f"a {self.kind} figure takes none", field="system")


def figure_format(path: Path, fmt: str | None = None) -> str:
    """The output format: ``fmt`` when given, else the file's suffix (png, svg, pdf)."""
    chosen = (fmt or path.suffix.lstrip(".")).lower()
    if chosen not in FIGURE_FORMATS:
        raise InputError(f"the figure format comes from the file name: expected .png, .svg "
                         f"or .pdf, got {path.name!r}", path=str(path), field="format")
    return chosen


# -- what a result supports ----------------------------------------------------------


def _null_verdict(v: Verdict) -> bool:
    return v.null is not None


def supported_kinds(result: View | Mapping[str, Any]) -> tuple[str, ...]:
    """The figure kinds ``result`` (a report `View`, or a trend's dict) can be drawn as."""
    if isinstance(result, Mapping):
        return ("trend",) if result.get("kind") == TREND_KIND else ()
    kinds = []
    if result.verdicts:
        kinds.append("forest")
        if any(v.qids for v in result.verdicts):
            kinds.append("per-query")
        if any(v.qids and _null_verdict(v) for v in result.verdicts):
            kinds.append("null")
    if result.curves:
        kinds.append("curve")
    return tuple(kinds)


def null_of(v: Verdict) -> NullSummary | None:
    """The null distribution of ``v``'s test as its row stored it (what the HTML report and
    ``plot --kind null`` draw); None when the row has none: a non-inferiority row (its null
    is shifted and one-sided), a test with no replayable null, or a result saved before
    rows stored theirs (`NULL_MISSING_NOTE`)."""
    return v.null


def _canonical(measure: str) -> str:
    from rankproof.measures import parse

    try:
        return str(parse(measure))
    except ValueError:
        return measure


def _choose(what: str, option: str, asked: str | None, available: Sequence[str],
            match: str | None = None) -> str:
    """``asked`` (matched as ``match``) among ``available``, or the only one there is."""
    shown = ", ".join(available)
    if asked is None:
        if len(available) == 1:
            return available[0]
        raise InputError(f"the result holds several {what}s ({shown}); choose one with "
                         f"{option}", field=option.lstrip("-"))
    key = asked if match is None else match
    if key not in available:
        raise InputError(f"{option} {asked!r}: the result holds no such {what}; it holds "
                         f"{shown}", field=option.lstrip("-"))
    return key


def _verdict(view: View, measure: str, system: str | None, *, null: bool) -> Verdict:
    rows = [v for v in view.verdicts if v.measure == measure and v.qids
            and (not null or _null_verdict(v))]
    names = list(dict.fromkeys(v.candidate for v in rows))
    if not names:
        raise InputError(f"no row on {measure} stores per-query values"
                         + (" and a null distribution (a result saved before rows stored "
                            "theirs: compare again to draw it)" if null else ""),
                         field="measure")
    chosen = _choose("candidate", "--system", system, names)
    return next(v for v in rows if v.candidate == chosen)


def draw_figure(result: View | Mapping[str, Any], request: FigureRequest) -> Drawing:
    """The `Drawing` of ``request`` from ``result`` (a `View` or a trend dict): the same one
    the HTML report inlines. `InputError` when the result does not support the kind
    (listing those it does), or the measure, curve or system is not in it."""
    kinds = supported_kinds(result)
    if request.kind not in kinds:
        what = "this trend" if isinstance(result, Mapping) else f"this {result.kind} result"
        old = (request.kind == "null" and not isinstance(result, Mapping)
               and any(v.qids for v in result.verdicts))
        raise InputError(f"{what} cannot be drawn as --kind {request.kind}; it supports "
                         + (", ".join(kinds) if kinds else "no figure kind")
                         + (f" ({NULL_MISSING_NOTE})" if old else ""), field="kind")
    if isinstance(result, Mapping):
        from rankproof.report.history import trend_figure

        if request.measure is not None and _canonical(request.measure) != _canonical(
                str(result.get("measure"))):
            raise InputError(f"-m {request.measure!r}: the trend is of {result.get('measure')}",
                             field="measure")
        return trend_figure(result)
    from rankproof.report import plots

    if request.kind == "curve":
        keys = [c.key for c in result.curves]
        key = _choose("curve", "-m", request.measure, keys)
        c = next(c for c in result.curves if c.key == key)
        series: list[plots.Series] = [
            (s.name, list(s.x), list(s.y), list(s.low) if s.low else None,
             list(s.high) if s.high else None) for s in c.series]
        return plots.curve_figure(c.title, c.x_label, c.y_label, series, x_log=c.x_log,
                                  y_range=c.y_range)
    measures = list(dict.fromkeys(v.measure for v in result.verdicts))
    asked = request.measure
    measure = _choose("measure", "-m", asked, measures,
                      None if asked is None else _canonical(asked))
    if request.kind == "forest":
        one_baseline = len({v.baseline for v in result.verdicts}) == 1
        rows = [(v.candidate if one_baseline else f"{v.candidate} vs {v.baseline}",
                 v.difference or 0.0, v.ci_low, v.ci_high, v.verdict, v.ci_level)
                for v in result.verdicts if v.measure == measure]
        return plots.forest_figure(measure, rows)
    v = _verdict(result, measure, request.system, null=request.kind == "null")
    title = f"{v.measure}: {v.candidate} − {v.baseline}"
    if request.kind == "per-query":
        return plots.delta_figure(list(v.deltas), higher_is_better=v.higher_is_better,
                                  title=f"per-query Δ, sorted ({title})")
    null = null_of(v)
    assert null is not None  # _verdict chose a row that stores one
    return plots.null_figure(null, title=f"null distribution of the {v.test} statistic "
                                         f"({title})")


def load_result(path: str | Path) -> View | Mapping[str, Any]:
    """What ``path`` holds, ready for `draw_figure`: the report `View` of any document
    `rankproof report` renders, or a trend's dict (``rankproof history trend -f json``).
    `InputError` naming the file when it is neither, or a trend field has the wrong shape."""
    from rankproof.data import read_document

    p = Path(path)
    data = read_document(p, what="plot input")
    if isinstance(data, dict) and data.get("kind") == TREND_KIND:
        points = data.get("points")
        if not isinstance(points, list) or not all(
                isinstance(q, dict) and all(isinstance(q.get(k), int | float)
                                            and not isinstance(q.get(k), bool)
                                            for k in ("index", "mean")) for q in points):
            raise InputError("a trend's points must be a list of objects with numeric "
                             "'index' and 'mean'", path=str(p), field="points")
        if not isinstance(data.get("measure"), str):
            raise InputError("a trend needs its 'measure' (a string)", path=str(p),
                             field="measure")
        return data
    from rankproof.report.document import read
    from rankproof.report.views import build

    return build(read(p))


# -- drawing to a file ---------------------------------------------------------------


def _overlaps(axis: Axis) -> bool:
    boxes = [t.get_window_extent() for t in axis.get_ticklabels()
             if t.get_visible() and t.get_text()]
    boxes.sort(key=lambda b: (b.x0, b.y0))
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def declutter(fig: Figure) -> None:
    """Thin the ticks of every numeric axis whose tick labels overlap, until none do.

    Category axes (the forest plot's candidate names) keep every label: their rows are
    spaced for the text. A log axis keeps its decades.
    """
    from matplotlib.ticker import FixedLocator, MaxNLocator

    for _ in range(6):
        fig.draw_without_rendering()  # lays out: tick labels get their final places
        crowded = [a for ax in fig.axes for a in (ax.xaxis, ax.yaxis)
                   if a.get_scale() == "linear"
                   and not isinstance(a.get_major_locator(), FixedLocator) and _overlaps(a)]
        if not crowded:
            return
        for a in crowded:
            lo, hi = sorted(a.get_view_interval())
            inside = [t for t in a.get_majorticklocs() if lo <= t <= hi]
            a.set_major_locator(MaxNLocator(nbins=max(2, len(inside) - 2)))


def fit_text(fig: Figure) -> None:
    """Make a figure's text fit a column: titles and axis labels wrap at the figure's edge
    instead of running off it, and legends use the publication size (the report's plots
    ask for 8 points, sized for a 7-inch page)."""
    import matplotlib

    size = matplotlib.rcParams["legend.fontsize"]
    for ax in fig.axes:
        for text in (ax.title, ax._left_title, ax._right_title,  # type: ignore[attr-defined]
                     ax.xaxis.label, ax.yaxis.label):
            text.set_wrap(True)
        legend = ax.get_legend()
        if legend is not None:
            for text in legend.get_texts():
                text.set_fontsize(size)


def save_figure(drawing: Drawing, fmt: str, *, width: float = COLUMN_WIDTH) -> bytes:
    """``drawing`` as the bytes of a ``fmt`` file (png, svg, pdf), ``width`` inches wide,
    with the publication defaults of the module docstring; the same input gives the same
    bytes."""
    if fmt not in FIGURE_FORMATS:
        raise InputError(f"format must be one of {', '.join(FIGURE_FORMATS)}, got {fmt!r}",
                         field="format")
    if not 1.0 <= width <= 20.0:
        raise InputError(f"width must be between 1 and 20 inches, got {width!r}",
                         field="width")
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingExtraError("saving figures needs matplotlib: pip install "
                                "'rankproof[report]'") from exc
    from rankproof.report._svg import RC

    canvas: Any
    if fmt == "png":
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        canvas = FigureCanvasAgg
    elif fmt == "svg":
        from matplotlib.backends.backend_svg import FigureCanvasSVG
        canvas = FigureCanvasSVG
    else:
        from matplotlib.backends.backend_pdf import FigureCanvasPdf
        canvas = FigureCanvasPdf
    h = drawing.size[1]
    # The report's sizes are for a 7-inch page at 9 points; text here is 7 points, so the
    # height (rows of text, mostly) shrinks by that ratio, whatever the width.
    height = min(_MAX_HEIGHT, max(1.2, h * 7.0 / 9.0))
    with matplotlib.rc_context(cast(Any, {**RC, **PUBLICATION_RC})):
        fig = Figure(figsize=(width, height), layout="constrained")
        canvas(fig)
        drawing.draw(fig)
        fit_text(fig)
        declutter(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, metadata=_METADATA[fmt])
    return buf.getvalue()
