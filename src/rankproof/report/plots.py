"""The plots of the HTML report, each an inline ``<svg>`` element (a string).

Every function is pure: the same arguments give the same bytes (see
`rankproof.report._svg` for how, and for why every id carries ``id_prefix``:
many plots share one page). Plots are drawn with matplotlib's object-oriented
API (never ``pyplot``, which keeps global figures), imported on first use so
that commands which draw nothing do not pay for it.

Colours mean one thing everywhere (Okabe & Ito's colour-blind-safe palette):
blue is better (a win, a "better" verdict), vermillion is worse, grey is no
difference (a tie, a non-significant verdict). Whether a per-query change is
a win depends on the measure's direction, so the caller says it.

Labels (system, measure, stage and theme names) come from files and are
drawn literally: never mathtext, never markup. Empty input gives a small
plot that says "no data" rather than an error, so one missing section never
stops a report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rankproof.report._svg import (
    BETTER,
    INK,
    MARKERS,
    MAX_LABEL_CHARS,
    NEUTRAL,
    SERIES,
    WORSE,
    Drawing,
    blank,
    literal,
    no_data,
    render,
    to_svg,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from rankproof.comparison import NullSummary

#: A forest-plot row: (label, difference, low, high, verdict, confidence level).
ForestRow = tuple[str, float, float | None, float | None, str, float | None]
#: A curve: (name, xs, ys, lows, highs); lows/highs (both or neither) draw a band.
Series = tuple[str, Sequence[float], Sequence[float | None],
               Sequence[float] | None, Sequence[float] | None]

#: Most steps a filled per-query profile draws per class (wins, ties, losses): at
#: a report's width a step is under a pixel well before this, so more only adds bytes.
MAX_STEPS = 500
#: Most markers one curve draws; the line still passes through every point.
MAX_MARKERS = 40
_WIDTH = 7.0
#: Figures narrower than this (inches) write shorter annotations (`forest_figure`).
_NARROW = 5.0
_SHORT = {"no detectable difference": "n.s."}
_NARROW_LABEL = 24
#: Fixed axes for the plots whose tick labels are numbers (see `_svg.render`).
_NUMERIC_MARGINS = (0.1, 0.16, 0.98, 0.9)


def verdict_colour(verdict: str) -> str:
    """Blue for "better", vermillion for "worse", grey for anything else."""
    return {"better": BETTER, "worse": WORSE}.get(verdict, NEUTRAL)


def _fmt(x: float) -> str:
    return f"{x:+.3g}" if math.isfinite(x) else str(x)


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def _finite(values: Sequence[float | None] | npt.ArrayLike) -> np.ndarray:
    import numpy as np

    arr = np.array([math.nan if v is None else v for v in values],  # type: ignore[union-attr]
                   dtype=np.float64)
    return arr[np.isfinite(arr)]


def _floats(values: Sequence[float | None]) -> np.ndarray:
    import numpy as np

    return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)


# -- verdicts ------------------------------------------------------------------------


def forest_plot(measure: str, rows: Sequence[ForestRow], *, id_prefix: str) -> str:
    """`forest_figure` as an inline ``<svg>`` element."""
    return to_svg(forest_figure(measure, rows), id_prefix=id_prefix)


def forest_figure(measure: str, rows: Sequence[ForestRow]) -> Drawing:
    """Each candidate's Δ against the baseline on ``measure``, with the verdict's interval.

    One line per row, top to bottom in the given order: a point at the
    difference, a horizontal bar from ``low`` to ``high`` (the interval the
    verdict uses; an infinite end runs to the edge), coloured by ``verdict``,
    and the numbers written at the right. The dashed vertical line is 0.
    """
    title = f"{measure}: Δ vs baseline"
    if not rows:
        return blank(title)
    import numpy as np

    finite = [v for _, diff, low, high, _, _ in rows for v in (diff, low, high)
              if v is not None and math.isfinite(v)]
    span = (min([0.0, *finite]), max([0.0, *finite]))
    pad = 0.06 * ((span[1] - span[0]) or 1.0)
    left, right = span[0] - pad, span[1] + pad

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        n = len(rows)
        ys = np.arange(n)[::-1].astype(np.float64)
        colours = [verdict_colour(str(r[4])) for r in rows]
        for y, (_, _, low, high, _, _), colour in zip(ys, rows, colours, strict=True):
            if low is not None and high is not None:
                lo = left if math.isinf(low) and low < 0 else low
                hi = right if math.isinf(high) and high > 0 else high
                if math.isfinite(lo) and math.isfinite(hi):
                    ax.hlines(y, lo, hi, colors=colour, linewidth=2.2)
        diffs = np.array([r[1] for r in rows], dtype=np.float64)
        ok = np.isfinite(diffs)
        ax.scatter(diffs[ok], ys[ok], c=[c for c, k in zip(colours, ok, strict=True) if k],
                   s=36, zorder=3, edgecolors=INK, linewidths=0.6)
        ax.axvline(0.0, color=INK, linewidth=0.8, linestyle="--")
        ax.set_xlim(left, right)
        ax.set_ylim(-0.7, n - 0.3)
        # A narrow figure (a paper's column) has no title (the caption says it), shorter
        # names, and writes Δ and a short verdict only: the interval is drawn, and the full
        # numbers would leave the axes no room.
        narrow = fig.get_figwidth() < _NARROW
        ax.set_yticks(ys, [literal(r[0], _NARROW_LABEL if narrow else MAX_LABEL_CHARS)
                           for r in rows])
        if narrow:
            ax.set_xlabel(literal(f"Δ {measure} (candidate − baseline)", 120))
        else:
            ax.set_xlabel(literal(f"Δ {measure} vs baseline (candidate − baseline)", 120))
            ax.set_title(literal(title, 120), loc="left")
        for y, (_, diff, low, high, verdict, level) in zip(ys, rows, strict=True):
            interval = ("" if low is None or high is None or narrow
                        else f" [{_fmt(low)}, {_fmt(high)}]")
            at = "" if level is None or narrow else f" {100 * level:.3g}%"
            word = _SHORT.get(verdict, verdict) if narrow else verdict
            ax.annotate(literal(f"{_fmt(diff)}{interval}{at} {word}", 80), (1.0, y),
                        xycoords=("axes fraction", "data"), xytext=(6, 0),
                        textcoords="offset points", va="center", fontsize="small")

    label = (f"Forest plot of the difference in {measure} against the baseline for "
             f"{len(rows)} candidate(s): " +
             "; ".join(f"{r[0]} {_fmt(r[1])} ({r[4]})" for r in rows[:20]))
    return Drawing((_WIDTH, 0.9 + 0.34 * len(rows)), draw, label, tidy=True)


def delta_plot(
    deltas: Sequence[float] | npt.ArrayLike,
    *,
    higher_is_better: bool,
    title: str,
    id_prefix: str,
) -> str:
    """`delta_figure` as an inline ``<svg>`` element."""
    return to_svg(delta_figure(deltas, higher_is_better=higher_is_better, title=title),
                  id_prefix=id_prefix)


def delta_figure(
    deltas: Sequence[float] | npt.ArrayLike,
    *,
    higher_is_better: bool,
    title: str,
) -> Drawing:
    """Per-query differences, sorted, as one filled profile per class: wins, ties, losses.

    A win is a change in the measure's good direction (``d > 0`` when
    ``higher_is_better``, else ``d < 0``). Each class is one stepped
    polygon (at most `MAX_STEPS` steps, taken at evenly spaced ranks), so
    7,000 queries cost no more bytes than 500; ties sit on the zero line.
    """
    import numpy as np

    d = np.sort(_finite(deltas))
    if len(d) == 0:
        return blank(title)
    wins = int(np.count_nonzero(d > 0 if higher_is_better else d < 0))
    losses = int(np.count_nonzero(d < 0 if higher_is_better else d > 0))
    ties = len(d) - wins - losses
    neg, zero = int(np.count_nonzero(d < 0)), int(np.count_nonzero(d == 0))
    x = np.arange(1, len(d) + 1, dtype=np.float64)
    parts = [(0, neg, WORSE if higher_is_better else BETTER),
             (neg, neg + zero, NEUTRAL),
             (neg + zero, len(d), BETTER if higher_is_better else WORSE)]

    def draw(fig: Figure) -> None:
        from matplotlib.patches import Patch

        ax = fig.add_subplot()
        for start, stop, colour in parts:
            if stop <= start:
                continue
            idx = np.arange(start, stop)
            if len(idx) > MAX_STEPS:
                idx = np.unique(np.linspace(start, stop - 1, MAX_STEPS).round().astype(int))
            if colour == NEUTRAL:
                ax.hlines(0.0, x[start] - 0.5, x[stop - 1] + 0.5, colors=NEUTRAL, linewidth=3)
            else:
                ax.fill(*_steps(x[idx], d[idx], x[start] - 0.5, x[stop - 1] + 0.5),
                        color=colour, linewidth=0)
        ax.axhline(0.0, color=INK, linewidth=0.6)
        ax.set_xlim(0.5, len(d) + 0.5)
        ax.set_xlabel(f"queries, sorted by Δ ({len(d)})")
        ax.set_ylabel("Δ per query (candidate − baseline)")
        ax.set_title(literal(title, 120), loc="left")
        handles = [Patch(color=BETTER), Patch(color=NEUTRAL), Patch(color=WORSE)]
        ax.legend(handles, [f"wins ({wins})", f"ties ({ties})", f"losses ({losses})"],
                  loc="upper left", frameon=False)

    direction = "higher" if higher_is_better else "lower"
    label = (f"{title}: per-query differences over {len(d)} queries, sorted; {wins} wins, "
             f"{ties} ties, {losses} losses ({direction} is better)")
    return Drawing((_WIDTH, 2.8), draw, label, _NUMERIC_MARGINS)


def _steps(x: np.ndarray, y: np.ndarray, left: float, right: float,
           ) -> tuple[np.ndarray, np.ndarray]:
    """One closed polygon of steps at heights ``y``, each centred on ``x``, from ``left`` to
    ``right`` and back along 0: two vertices per step (``fill_between`` would use four)."""
    import numpy as np

    edges = np.concatenate([[left], (x[:-1] + x[1:]) / 2.0, [right]])
    px = np.concatenate([[left], np.repeat(edges, 2)[1:-1], [right]])
    py = np.concatenate([[0.0], np.repeat(y, 2), [0.0]])
    return px, py


def null_plot(null: NullSummary, *, title: str, id_prefix: str) -> str:
    """`null_figure` as an inline ``<svg>`` element."""
    return to_svg(null_figure(null, title=title), id_prefix=id_prefix)


def null_figure(null: NullSummary, *, title: str) -> Drawing:
    """The test's null distribution with the observed statistic marked (and its mirror).

    Draws only what the row stored (`rankproof.comparison.NullSummary`, computed
    with the row's own test, resamples and seed when the row was): a resampling
    test's histogram, or an analytic test's reference density (t, Wilcoxon) or
    probabilities (sign). The p-value is in the legend, beside the observed value.
    """
    stat, mirror = null.statistic, null.mirror
    what, how = null.statistic_label, null.description
    if null.shape == "none":
        return blank(title, how)

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        if null.shape == "histogram":
            ax.stairs(null.y, null.x, fill=True, color=NEUTRAL, alpha=0.6, linewidth=0)
            ax.set_ylabel("resamples")
        elif null.shape == "probability":
            ax.fill_between(null.x, 0.0, null.y, step="mid", color=NEUTRAL, alpha=0.6,
                            linewidth=0)
            ax.set_ylabel("probability")
        else:
            ax.fill_between(null.x, 0.0, null.y, color=NEUTRAL, alpha=0.6, linewidth=0)
            ax.set_ylabel("density")
        if stat is not None:
            ax.axvline(stat, color=BETTER, linewidth=1.8,
                       label=f"observed {what} = {stat:.4g} (p = {_p(null.p_value)})")
        else:
            ax.plot([], [], " ", label=f"observed {what} undefined (p = {_p(null.p_value)})")
        if mirror is not None and mirror != stat:
            ax.axvline(mirror, color=BETTER, linewidth=1.2, linestyle="--",
                       label=f"as extreme, other side ({mirror:.4g})")
        if null.zero_line:
            ax.axvline(0.0, color=INK, linewidth=1.0, linestyle=":",
                       label="0 (the p-value counts means beyond it)")
        ax.set_xlabel(f"{what} under the null ({how})")
        ax.set_title(literal(title, 120), loc="left")
        ax.legend(loc="upper left", frameon=False, fontsize=8)

    shown = "undefined" if stat is None else f"{stat:.4g}"
    label = (f"{title}: null distribution of the {what} ({how}); observed {shown}, "
             f"p = {_p(null.p_value)}")
    return Drawing((_WIDTH, 2.8), draw, label, _NUMERIC_MARGINS)


# -- latency -------------------------------------------------------------------------


def _drawn_rank(values: Sequence[float], pct: float) -> float:
    """Where a box or marker of the latency picture sits: the nearest-rank percentile of the
    values drawn (``inverted_cdf``, the rule of the report's own tables), as matplotlib's
    box plots place theirs. Geometry of the drawing, not a statistic of the result: the
    tables' p50/p95/p99 come from the result."""
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=np.float64), pct,
                               method="inverted_cdf"))


def latency_plot(
    stages: Sequence[tuple[str, Sequence[float]]],
    *,
    id_prefix: str,
    title: str = "latency per query",
) -> str:
    """Per-stage latency (ms): the range as a thin line, the middle half as a box, and
    markers at p50, p95 and p99 (nearest rank, as the report's tables). The axis is
    logarithmic when the values span more than two orders of magnitude."""
    import numpy as np

    data = [(name, _finite(values)) for name, values in stages]
    data = [(name, v[v >= 0]) for name, v in data]
    if not data or not any(len(v) for _, v in data):
        return no_data(title, id_prefix=id_prefix)
    everything = np.concatenate([v for _, v in data])
    positive = everything[everything > 0]
    log = len(positive) > 0 and float(positive.max()) / float(positive.min()) > 100.0
    floor = float(positive.min()) / 2.0 if log else 0.0
    marks = (("p50", 50.0, "o", SERIES[0]), ("p95", 95.0, "s", SERIES[1]),
             ("p99", 99.0, "D", SERIES[3]))

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        n = len(data)
        ys = np.arange(n)[::-1].astype(np.float64)
        for y, (_, v) in zip(ys, data, strict=True):
            if len(v) == 0:
                continue
            w = np.maximum(v, floor)
            values = sorted(w.tolist())
            ax.hlines(y, values[0], values[-1], colors=NEUTRAL, linewidth=1)
            q1, q3 = _drawn_rank(values, 25.0), _drawn_rank(values, 75.0)
            ax.barh(y, q3 - q1, left=q1, height=0.45, color=SERIES[4], alpha=0.5, linewidth=0)
        for name, pct, marker, colour in marks:
            px = [_drawn_rank(sorted(np.maximum(v, floor).tolist()), pct)
                  for _, v in data if len(v)]
            py = [y for y, (_, v) in zip(ys, data, strict=True) if len(v)]
            ax.plot(px, py, linestyle="none", marker=marker, color=colour, markersize=6,
                    markeredgecolor=INK, markeredgewidth=0.5, label=name)
        if log:
            ax.set_xscale("log")
        ax.set_yticks(ys, [literal(f"{name} (n = {len(v)})" if len(v) else f"{name} (no data)")
                           for name, v in data])
        ax.set_ylim(-0.7, n - 0.3)
        ax.set_xlabel("latency per query (ms)" + (", log scale" if log else ""))
        ax.set_title(literal(title, 120), loc="left")
        ax.legend(loc="lower right", frameon=False, fontsize=8, ncols=3)

    summary = "; ".join(
        f"{name}: p50 {_drawn_rank(v.tolist(), 50.0):.3g} ms, "
        f"p95 {_drawn_rank(v.tolist(), 95.0):.3g} ms" for name, v in data[:20] if len(v))
    return render((_WIDTH, 1.1 + 0.42 * len(data)), draw, id_prefix=id_prefix,
                  label=f"{title}: {summary}")


# -- curves and bars -----------------------------------------------------------------


def curve_plot(
    title: str,
    x_label: str,
    y_label: str,
    series: Sequence[Series],
    *,
    id_prefix: str,
    x_log: bool = False,
    y_range: tuple[float, float] | None = None,
) -> str:
    """`curve_figure` as an inline ``<svg>`` element."""
    return to_svg(curve_figure(title, x_label, y_label, series, x_log=x_log, y_range=y_range),
                  id_prefix=id_prefix)


def curve_figure(
    title: str,
    x_label: str,
    y_label: str,
    series: Sequence[Series],
    *,
    x_log: bool = False,
    y_range: tuple[float, float] | None = None,
) -> Drawing:
    """Lines with markers, one per series, with an optional shaded band (``lows``–``highs``).

    Serves interpolated precision–recall curves, the discovery calibration
    grid and the distractor curve. A ``None`` in ``ys`` leaves a gap. Each
    series gets its own colour and marker shape (colour is never the only
    cue). Raises ValueError when a series' lists differ in length.
    """
    import numpy as np

    clean: list[tuple[str, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]] = []
    for name, xs, ys, lows, highs in series:
        x, y = _floats(list(xs)), _floats(list(ys))
        lo = None if lows is None or highs is None else _floats(list(lows))
        hi = None if lows is None or highs is None else _floats(list(highs))
        if len(x) != len(y) or (lo is not None and hi is not None
                                and not len(lo) == len(hi) == len(x)):
            raise ValueError(f"series {name!r}: xs, ys, lows and highs must have equal lengths "
                             f"(got {len(x)}, {len(y)}, "
                             f"{None if lo is None else len(lo)}, "
                             f"{None if hi is None else len(hi)})")
        if x_log:
            keep = x > 0
            x, y = x[keep], y[keep]
            lo, hi = (None, None) if lo is None or hi is None else (lo[keep], hi[keep])
        clean.append((name, x, y, lo, hi))
    if not any(np.isfinite(y).any() for _, _, y, _, _ in clean):
        return blank(title)

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        handles = []
        for i, (_, x, y, lo, hi) in enumerate(clean):
            colour, marker = SERIES[i % len(SERIES)], MARKERS[i % len(MARKERS)]
            if lo is not None and hi is not None:
                ax.fill_between(x, lo, hi, color=colour, alpha=0.18, linewidth=0)
            every = max(1, math.ceil(len(x) / MAX_MARKERS))
            handles += ax.plot(x, y, color=colour, marker=marker, markersize=4,
                               markevery=every, linewidth=1.4)
        if x_log:
            ax.set_xscale("log")
        if y_range is not None:
            ax.set_ylim(*y_range)
        _labels(ax, title, x_label, y_label)
        # Handles and labels passed explicitly: a name starting with "_" is still shown.
        ax.legend(handles, [literal(name) for name, *_ in clean], loc="best", frameon=False,
                  fontsize=8)

    label = f"{title}: {y_label} against {x_label} for " + ", ".join(
        name for name, *_ in clean[:20])
    return Drawing((_WIDTH, 3.2), draw, label)


def bar_plot(
    title: str,
    labels: Sequence[str],
    groups: Sequence[tuple[str, Sequence[float | None]]],
    *,
    value_label: str,
    id_prefix: str,
    horizontal: bool = True,
) -> str:
    """Grouped bars: one bar per (label, group), valued and written at its end.

    Serves the discovery failure taxonomy (counts per kind) and RAG metrics
    per dimension. A ``None`` value draws no bar. Labels read top to bottom
    (or left to right) in the given order. Raises ValueError when a group
    does not have one value per label.
    """
    import numpy as np

    for name, values in groups:
        if len(values) != len(labels):
            raise ValueError(f"group {name!r} has {len(values)} values for {len(labels)} labels")
    values_of = [(name, _floats(list(values))) for name, values in groups]
    if not labels or not any(np.isfinite(v).any() for _, v in values_of):
        return no_data(title, id_prefix=id_prefix)
    m = max(1, len(values_of))
    width = 0.8 / m
    pos = np.arange(len(labels), dtype=np.float64)
    if horizontal:
        pos = pos[::-1]

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        handles = []
        for j, (_, v) in enumerate(values_of):
            offset = (j - (m - 1) / 2.0) * width * (-1 if horizontal else 1)
            ok = np.isfinite(v)
            at, vals = pos[ok] + offset, v[ok]
            colour = SERIES[j % len(SERIES)]
            bars = (ax.barh(at, vals, height=width * 0.92, color=colour) if horizontal
                    else ax.bar(at, vals, width=width * 0.92, color=colour))
            handles.append(bars)
            ax.bar_label(bars, labels=[f"{x:.3g}" for x in vals], padding=2, fontsize=7)
        ticks = [literal(s) for s in labels]
        if horizontal:
            ax.set_yticks(pos, ticks)
            ax.set_xlabel(literal(value_label, 120))
        else:
            ax.set_xticks(pos, ticks, rotation=30, ha="right")
            ax.set_ylabel(literal(value_label, 120))
        ax.axvline(0.0, color=INK, linewidth=0.6) if horizontal else ax.axhline(
            0.0, color=INK, linewidth=0.6)
        if horizontal:
            ax.margins(x=0.12)
        else:
            ax.margins(y=0.12)
        ax.set_title(literal(title, 120), loc="left")
        if len(values_of) > 1 or any(name for name, _ in values_of):
            ax.legend(handles, [literal(name) for name, _ in values_of], loc="best",
                      frameon=False, fontsize=8)

    rows = len(labels) * (m if horizontal else 1)
    size = (_WIDTH, 1.2 + 0.22 * rows) if horizontal else (_WIDTH, 3.4)
    label = f"{title}: {value_label} for " + ", ".join(labels[:30])
    return render(size, draw, id_prefix=id_prefix, label=label)


def _labels(ax: Axes, title: str, x_label: str, y_label: str) -> None:
    ax.set_title(literal(title, 120), loc="left")
    ax.set_xlabel(literal(x_label, 120))
    ax.set_ylabel(literal(y_label, 120))
