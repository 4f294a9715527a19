"""The figure and table of a results-history trend, from its plain ``to_dict()`` form.

`rankproof.history.Trend.to_dict` is what the CLI writes and the dashboard serves; this
module draws it (one point per stored result in commit order, the steps declared better or
worse marked with their own marker shapes, so colour is never the only cue) and lays out its
table. It computes nothing: every verdict comes from the trend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankproof.report._svg import Drawing

__all__ = ["STEP_WORDS", "trend_figure", "trend_rows", "trend_svg"]

STEP_WORDS = {"better": "better", "worse": "worse",
              "no detectable difference": "no detectable difference", None: "—"}
"""What the table says of each step's verdict (the first point has none)."""


def _num(value: Any, digits: int = 4) -> str:
    return "—" if value is None else f"{float(value):.{digits}f}"


def trend_rows(trend: Mapping[str, Any]) -> list[list[str]]:
    """One row per point: #, commit, created, run, n, mean, step verdict, Δ, p, corrected p."""
    out = []
    for p in trend["points"]:
        out.append([str(p["index"]), (p.get("commit") or "—")[:12], str(p["created_at"]),
                    str(p["system"]), str(p["n"]), _num(p["mean"]),
                    STEP_WORDS.get(p.get("step"), str(p.get("step"))),
                    "—" if p.get("difference") is None else f"{p['difference']:+.4f}",
                    _num(p.get("p_value")), _num(p.get("p_corrected"))])
    return out


def trend_svg(trend: Mapping[str, Any], *, id_prefix: str = "trend") -> str:
    """The trend as an inline SVG: the means, and the significant steps marked."""
    from rankproof.report._svg import to_svg

    return to_svg(trend_figure(trend), id_prefix=id_prefix)


def trend_figure(trend: Mapping[str, Any]) -> Drawing:
    """The trend's drawing (`trend_svg`; `rankproof.report.figures` saves it as a file)."""
    from rankproof.report.plots import curve_figure

    points: Sequence[Mapping[str, Any]] = trend["points"]
    xs = [float(p["index"]) for p in points]
    means = [float(p["mean"]) for p in points]
    worse = [float(p["mean"]) if p.get("step") == "worse" else None for p in points]
    better = [float(p["mean"]) if p.get("step") == "better" else None for p in points]
    series: list[Any] = [("mean per result", xs, means, None, None)]
    if any(v is not None for v in worse):
        series.append(("worse than the point before (significant)", xs, worse, None, None))
    if any(v is not None for v in better):
        series.append(("better than the point before (significant)", xs, better, None, None))
    title = f"{trend['measure']} across stored results"
    if trend.get("run"):
        title += f" (run {trend['run']})"
    return curve_figure(title, "result (commit order)", str(trend["measure"]), series)
