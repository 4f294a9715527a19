"""Matplotlib figures as inline SVG elements that can share one HTML page.

Why a post-processing step at all: matplotlib writes a standalone SVG file
(XML declaration, DOCTYPE pointing at w3.org, an RDF metadata block naming
matplotlib.org, a global ``*{...}`` style, fixed point sizes, and ids such as
``patch_1`` and ``p1a2b3c4d5`` that every figure reuses). Inlined many times in
one page, those ids collide — a ``url(#...)`` clip path of one plot would
clip another — and the URLs read as external references. `to_svg` therefore
keeps only the ``<svg>`` element, prefixes every id and every reference to
one, scopes the style to the element, makes it scale to its container, and
labels it for screen readers.

Determinism: `RC` fixes ``svg.hashsalt`` (the seed of matplotlib's generated
ids) and the date is left out, so the same input gives the same bytes.
``svg.fonttype = "none"`` keeps text as ``<text>`` (small, selectable,
searchable) instead of glyph outlines.

Text from files (system, measure, stage and theme names) is data, never
markup: `literal` escapes matplotlib's mathtext dollar signs and replaces
control characters; matplotlib itself XML-escapes ``<``, ``>`` and ``&``.
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast
from xml.sax.saxutils import escape, quoteattr

from rankproof._errors import MissingExtraError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: matplotlib settings every plot is drawn with (only inside `render`; global state untouched).
RC: dict[str, Any] = {
    "svg.hashsalt": "rankproof",
    "svg.fonttype": "none",
    "svg.image_inline": True,
    "text.usetex": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "path.simplify": True,
}

#: Okabe & Ito's colour-blind-safe palette: one meaning per colour across every plot.
BETTER = "#0072B2"  # blue: a win, an improvement, a "better" verdict
WORSE = "#D55E00"  # vermillion: a loss, a "worse" verdict
NEUTRAL = "#999999"  # grey: a tie, not significant
INK = "#222222"  # observed values, reference lines
SERIES = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
          "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

#: Longest label drawn; the HTML tables beside the plots show full names.
MAX_LABEL_CHARS = 60
_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}\Z")
_TAG = re.compile(r"<[^>]*>")
_ID = re.compile(r'(\sid=")([^"]*)(")')
_URL = re.compile(r"url\(#([^)\"']*)\)")
_HREF = re.compile(r'(\s(?:xlink:)?href=")#([^"]*)(")')


def check_prefix(id_prefix: str) -> str:
    """``id_prefix`` when it can start an XML id and a CSS selector; else ValueError."""
    if not isinstance(id_prefix, str) or not _PREFIX.match(id_prefix):
        raise ValueError("id_prefix must be a letter followed by up to 63 letters, digits, "
                         f"'_' or '-'; got {id_prefix!r}")
    return id_prefix


def literal(text: object, limit: int = MAX_LABEL_CHARS) -> str:
    r"""``text`` as matplotlib must be given it to draw it literally, on one line.

    ``$`` becomes ``\$`` (matplotlib draws an escaped dollar as a dollar and
    never enters mathtext); otherwise as `plain`.
    """
    return plain(text, limit).replace("$", r"\$")


def plain(text: object, limit: int) -> str:
    """``text`` on one line that XML can carry: line breaks and tabs become spaces, other
    control characters and lone surrogates become U+FFFD, and text longer than ``limit``
    is cut with an ellipsis."""
    s = str(text)
    chars = []
    for c in s:
        if c in "\t\n\r\x0b\x0c\x85\u2028\u2029":
            chars.append(" ")
        elif unicodedata.category(c) in ("Cc", "Cs") or c in "\ufffe\uffff":
            chars.append("\ufffd")
        else:
            chars.append(c)
    s = "".join(chars)
    return s[: limit - 1] + "…" if len(s) > limit else s


@dataclass(frozen=True)
class Drawing:
    """A figure before it is drawn: its size (inches), the function that draws it on a
    matplotlib ``Figure``, its text alternative and optional fixed margins (see `render`).

    One drawing serves every output: `to_svg` inlines it in the HTML report, and
    `rankproof.report.figures.save_figure` writes it as a PNG, SVG or PDF file, so the
    report and the saved figure cannot disagree.
    """

    size: tuple[float, float]
    draw: Callable[[Figure], None]
    label: str
    margins: tuple[float, float, float, float] | None = None
    tidy: bool = False
    """Check the laid-out figure for overlapping numeric tick labels and thin them
    (`rankproof.report.figures.declutter`; one more layout pass, so only where labels
    can crowd: the forest plot's differences). Saved figures are always checked."""


def to_svg(drawing: Drawing, *, id_prefix: str) -> str:
    """``drawing`` as an inline ``<svg>`` element (`render`)."""
    draw = drawing.draw
    if drawing.tidy:
        from rankproof.report.figures import declutter

        def draw(fig: Figure) -> None:
            drawing.draw(fig)
            declutter(fig)

    return render(drawing.size, draw, id_prefix=id_prefix, label=drawing.label,
                  margins=drawing.margins)


def render(
    size: tuple[float, float],
    draw: Callable[[Figure], None],
    *,
    id_prefix: str,
    label: str,
    margins: tuple[float, float, float, float] | None = None,
) -> str:
    """Draw a ``size`` (inches) figure with ``draw`` and return it as an inline ``<svg>``.

    ``margins`` (left, bottom, right, top as figure fractions) fixes the axes instead of
    letting the constrained layout fit them to the labels: half the drawing time, for
    plots whose labels are numbers (the per-query and null plots, drawn once per row).
    """
    check_prefix(id_prefix)
    try:
        import matplotlib
        from matplotlib.backends.backend_svg import FigureCanvasSVG
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingExtraError("the HTML report's plots need the 'report' extra (matplotlib "
                                "is not installed): pip install 'rankproof[report]'") from exc

    with matplotlib.rc_context(cast(Any, RC)):
        fig = Figure(figsize=size, layout="constrained" if margins is None else None)
        FigureCanvasSVG(fig)  # attaches itself: no pyplot, no backend switch
        if margins is not None:
            left, bottom, right, top = margins
            fig.subplots_adjust(left=left, bottom=bottom, right=right, top=top)
        draw(fig)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return clean(buf.getvalue(), id_prefix=id_prefix, label=plain(label, 500))


def blank(title: str, reason: str = "no data") -> Drawing:
    """A small drawing that says there is nothing to draw (and why), titled like the real one."""

    def draw(fig: Figure) -> None:
        ax = fig.add_subplot()
        ax.set_axis_off()
        ax.set_title(literal(title, 2 * MAX_LABEL_CHARS))
        ax.text(0.5, 0.5, literal(reason, 2 * MAX_LABEL_CHARS), ha="center", va="center",
                color=NEUTRAL, transform=ax.transAxes)

    return Drawing((6.0, 1.4), draw, f"{title}: {reason}")


def no_data(title: str, *, id_prefix: str, reason: str = "no data") -> str:
    """`blank` as an inline ``<svg>`` element."""
    return to_svg(blank(title, reason), id_prefix=id_prefix)


def clean(svg: str, *, id_prefix: str, label: str) -> str:
    """matplotlib's SVG file → one ``<svg>`` element that can share a page (module doc)."""
    start = svg.index("<svg")
    body = svg[start:]
    body = re.sub(r"<metadata>.*?</metadata>\s*", "", body, flags=re.S)
    body = re.sub(r"<!--.*?-->", "", body, flags=re.S)
    root_id = f"{id_prefix}root"
    body = body.replace("<style type=\"text/css\">*{",
                        f"<style type=\"text/css\">#{root_id} *{{", 1)

    def tag(m: re.Match[str]) -> str:
        t = m.group(0)
        t = _ID.sub(lambda g: f"{g.group(1)}{id_prefix}{g.group(2)}{g.group(3)}", t)
        t = _URL.sub(lambda g: f"url(#{id_prefix}{g.group(1)})", t)
        return _HREF.sub(lambda g: f"{g.group(1)}#{id_prefix}{g.group(2)}{g.group(3)}", t)

    # Only inside tags: text content may itself contain 'id="..."' (it is data).
    body = _TAG.sub(tag, body)
    body = re.sub(r" *\n *", "\n", body)  # layout only: no text node holds a line break
    root = re.match(r"<svg\b[^>]*>", body)
    if root is None:  # pragma: no cover - matplotlib always writes one
        raise RuntimeError("matplotlib wrote no <svg> element")
    attrs = root.group(0)
    attrs = re.sub(r'\s(width|height)="[^"]*"', "", attrs)
    named = (f'<svg id="{root_id}" width="100%" role="img" aria-label={quoteattr(label)}'
             f' style="height:auto"' + attrs[len("<svg"):])
    title = f"<title>{escape(label)}</title>"
    return named + title + body[root.end():].rstrip() + "\n"
