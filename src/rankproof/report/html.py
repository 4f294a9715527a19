"""One self-contained HTML file: every section of a `View`, plots inline, nothing fetched.

Why this shape:

* **Opens anywhere, offline.** CSS and SVG are inline, the script is inline,
  and a Content-Security-Policy of ``default-src 'none'`` tells the browser
  to fetch nothing at all, so a report mailed or attached to a ticket looks
  the same everywhere and cannot phone home.
* **Readable without JavaScript.** Every section is plain HTML; the
  regression browser's first page (the largest regressions of the first
  candidate on the first measure) is rendered here. The script only adds
  sorting, filtering, paging and the choice of candidate and measure, over
  the per-query data embedded as JSON (the browser, its rules and its script:
  `rankproof.report._html_browser`).
* **Text is data.** Everything from a document is HTML-escaped here; the
  embedded JSON escapes ``<``, ``>`` and ``&`` so that nothing in it can close
  its script element; the script writes with ``textContent`` only.
* **Large inputs stay usable.** Ids are interned once for the browser's data,
  the server-rendered page is bounded, and per-query plots are capped
  (`rankproof.report._view_parts.MAX_DELTA_PLOTS`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from rankproof._version import __version__
from rankproof.report._html_assets import CSS
from rankproof.report._html_browser import CSS as BROWSER_CSS
from rankproof.report._html_browser import SCRIPT, STATIC_ROWS, browser_html
from rankproof.report._html_matrix import CSS as MATRIX_CSS
from rankproof.report._html_matrix import answer_html
from rankproof.report.compare import decided_by, p_text
from rankproof.report.view import Table, Verdict, View

__all__ = ["STATIC_ROWS", "render_html"]

_CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
        "img-src data:")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _num(value: float | None, digits: int = 4, sign: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _cls(verdict: str) -> str:
    if verdict in ("better", "non-inferior"):
        return "better"
    if verdict in ("worse", "not shown non-inferior"):
        return "worse"
    return "ns"


def _table(t: Table) -> str:
    numeric = t.numeric or (False,) * len(t.columns)
    head = "".join(f'<th{" class=num" if n else ""}>{_e(c)}</th>'
                   for c, n in zip(t.columns, numeric, strict=False))
    rows = "".join("<tr>" + "".join(f'<td{" class=num" if n else ""}>{_e(c)}</td>'
                                    for c, n in zip(r, numeric, strict=False)) + "</tr>"
                   for r in t.rows)
    notes = "".join(f'<p class="note">{_e(n)}</p>' for n in t.notes)
    return (f'<h3 id="table-{_e(t.key)}">{_e(t.title)}</h3><div class="scroll"><table>'
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>{notes}")


def _verdict_rows(verdicts: Sequence[Verdict]) -> str:
    baselines = list(dict.fromkeys(v.baseline for v in verdicts))
    cols = ("measure", "candidate", "baseline", "baseline mean", "candidate mean", "Δ",
            "interval", "level", "p", "p corr", "W/T/L", "verdict", "n for 80% power")
    numeric = {3, 4, 5, 7, 8, 9, 10, 12}
    levels = {v.ci_level for v in verdicts if v.ci_level is not None}
    one_level = len(levels) <= 1  # then it is said once, in the caption, and on no row
    keep = [i for i in range(len(cols))
            if not (i == 2 and len(baselines) == 1) and not (i == 7 and one_level)]
    head = "".join(f'<th{" class=num" if i in numeric else ""}>{_e(cols[i])}</th>'
                   for i in keep)
    body = []
    for v in verdicts:
        interval = (f"[{_num(v.ci_low, 4, True)}, {_num(v.ci_high, 4, True)}]"
                    if v.ci_low is not None else "—")
        level = f"{v.ci_level * 100:.4g}%" if v.ci_level is not None else "—"
        wtl = (f"{v.wins}/{v.ties}/{v.losses}" if v.wins is not None else "—")
        flag = ' <span class="note" title="the test had under 80% power for the observed ' \
               'effect">underpowered</span>' if v.underpowered else ""
        needed = str(v.queries_needed) if v.queries_needed is not None else "—"
        base = f"<td>{_e(v.baseline)}</td>" if len(baselines) > 1 else ""
        body.append(
            f'<tr class="{_cls(v.verdict)}-row"><td>{_e(v.measure)}</td><td>{_e(v.candidate)}</td>'
            f"{base}<td class=num>{_num(v.baseline_mean)}</td>"
            f"<td class=num>{_num(v.candidate_mean)}</td>"
            f"<td class=num>{_num(v.difference, 4, True)}</td><td class=nowrap>{interval}</td>"
            f"{'' if one_level else f'<td class=num>{level}</td>'}"
            f"<td class=num>{p_text(v.p_value)}</td>"
            f"<td class=num>{p_text(v.p_corrected)}</td><td class=num>{wtl}</td>"
            f'<td class=nowrap><span class="{_cls(v.verdict)}">{_e(v.verdict)}</span>{flag}</td>'
            f"<td class=num>{needed}</td></tr>")
    methods = sorted({v.ci_method for v in verdicts if v.ci_method})
    corrections = sorted({v.correction for v in verdicts if v.correction})
    caption = ((f"Baseline: {baselines[0]}. " if len(baselines) == 1 else "")
               + f"Intervals: {', '.join(methods) or '—'}, "
               + (f"each at the {next(iter(levels)) * 100:.4g}% level " if len(levels) == 1
                  else "each at its row's level " if levels else "")
               + f"(correction: {', '.join(corrections) or '—'}); an interval excludes 0 exactly "
               "when its verdict is better or worse. W/T/L counts queries by the measure's "
               "polarity. " + decided_by(verdicts))
    return (f'<div class="scroll"><table id="verdict-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div><p class=note>{_e(caption)}</p>")


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


def _forest(view: View) -> str:
    from rankproof.report.plots import forest_plot

    one_baseline = len({v.baseline for v in view.verdicts}) == 1
    out = []
    for i, measure in enumerate(view.measures):
        rows = [(v.candidate if one_baseline else f"{v.candidate} vs {v.baseline}",
                 v.difference or 0.0, v.ci_low, v.ci_high, v.verdict, v.ci_level)
                for v in view.verdicts if v.measure == measure]
        out.append(f"<figure>{forest_plot(measure, rows, id_prefix=f'forest{i}-')}</figure>")
    caption = ("Each candidate's Δ against the baseline with the row's own interval (the one "
               "its verdict uses, at the level its correction implies); the dashed line is 0.")
    return f'<p class="note">{_e(caption)}</p><div class="plots two">{"".join(out)}</div>'


def _null_svg(v: Verdict, prefix: str) -> str | None:
    from rankproof.report.plots import null_plot

    # The row's stored null distribution, drawn as stored (None: the row has none).
    if v.null is None:
        return None
    svg: str = null_plot(v.null, title=f"null distribution of the {v.test} statistic",
                         id_prefix=prefix)
    return svg


def _deltas(view: View) -> str:
    from rankproof.comparison import NULL_TESTS
    from rankproof.report.figures import NULL_MISSING_NOTE
    from rankproof.report.plots import delta_plot

    out = []
    missing = False  # an old result's row whose test has a null it did not store
    for i, d in enumerate(view.deltas):
        v = d.verdict
        missing = missing or (v.null is None and v.test in NULL_TESTS
                              and v.verdict not in ("non-inferior", "not shown non-inferior"))
        title = f"{v.measure}: {v.candidate} − {v.baseline}"
        svg = delta_plot(list(v.deltas), higher_is_better=v.higher_is_better,
                         title=f"per-query Δ, sorted ({title})", id_prefix=f"delta{i}-")
        null = _null_svg(v, f"null{i}-")
        parts = [_figure(svg, "per-query differences, sorted; wins and losses coloured by "
                              "the measure's polarity")]
        if null is not None:
            parts.append(_figure(null, "null distribution of the row's test (its own "
                                       f"resamples and seed {v.seed}), as the comparison "
                                       "stored it; observed value marked"))
        open_ = " open" if i < 2 else ""
        out.append(f'<details class="delta"{open_}><summary>{_e(title)} — '
                   f'<span class="{_cls(v.verdict)}">{_e(v.verdict)}</span></summary>'
                   f'<div class="plots">{"".join(parts)}</div></details>')
    note = f'<p class="note">{_e(NULL_MISSING_NOTE)}</p>' if missing else ""
    return note + "".join(out)


def _latency(view: View) -> str:
    from rankproof.report.plots import latency_plot

    lat = view.latency
    assert lat is not None
    rows = Table(key="latency", title="latency per stage (ms, nearest-rank percentiles)",
                 columns=("stage", "n", "p50", "p95", "p99", "mean", "max"),
                 rows=tuple((name, str(int(s.get("n", 0))), *(_num(s.get(k), 1) for k in
                                                             ("p50", "p95", "p99", "mean", "max")))
                            for name, s in lat.stages),
                 numeric=(False, True, True, True, True, True, True), notes=lat.notes)
    svg = ""
    if any(lat.values.values()):
        svg = _figure(latency_plot([(n, list(v)) for n, v in lat.values.items()],
                                   id_prefix="latency-"), "per-query latency by stage")
    return svg + _table(rows)


def _curves(view: View) -> str:
    from rankproof.report.plots import curve_plot

    out = []
    for c in view.curves:
        series = [(s.name, list(s.x), list(s.y), list(s.low) if s.low else None,
                   list(s.high) if s.high else None) for s in c.series]
        svg = curve_plot(c.title, c.x_label, c.y_label, series, id_prefix=f"curve-{c.key}-",
                         x_log=c.x_log, y_range=c.y_range)
        out.append(f'<div id="curve-{_e(c.key)}">'
                   + _figure(svg, "; ".join((c.title, *c.notes))) + "</div>")
    return f'<div class="plots">{"".join(out)}</div>'


def _bars(view: View) -> str:
    from rankproof.report.plots import bar_plot

    out = []
    for b in view.bars:
        svg = bar_plot(b.title, list(b.labels), [(n, list(v)) for n, v in b.groups],
                       value_label=b.value_label, id_prefix=f"bars-{b.key}-")
        out.append(f'<div id="bars-{_e(b.key)}">' + _figure(svg, b.title) + "</div>")
    return f'<div class="plots">{"".join(out)}</div>'


def _section(key: str, title: str, body: str) -> str:
    return f'<section id="{key}"><h2>{_e(title)}</h2>{body}</section>'


def render_html(view: View, *, detail: bool = False) -> str:
    """The complete HTML document for ``view`` (see the module docstring). A comparison or
    an eval leads with its systems × measures table and verdicts
    (`rankproof.report._html_matrix`); ``detail`` lists every verdict row there instead of
    folding those with no detectable difference."""
    sections: list[tuple[str, str, str]] = []
    if view.matrix is not None and view.matrix.rows:
        sections.append(("answer", "Systems × measures", answer_html(view.matrix,
                                                                     detail=detail)))
    summary = ""
    if view.passed is not None:
        summary += (f'<p><span class="banner {"pass" if view.passed else "fail"}">'
                    f'{"PASSED" if view.passed else "FAILED"}</span></p>')
    summary += "<ul>" + "".join(f"<li>{_e(s)}</li>" for s in view.summary) + "</ul>"
    sections.append(("summary", "Verdict summary", summary))
    if view.verdicts:
        sections.append(("forest", "Forest plots", _forest(view)))
        sections.append(("verdicts", "Verdicts", _verdict_rows(view.verdicts)))
    if view.deltas:
        sections.append(("deltas", "Per-query differences and null distributions",
                         _deltas(view)))
    if view.latency is not None:
        sections.append(("latency", "Latency", _latency(view)))
    if view.curves:
        sections.append(("curves", "Curves", _curves(view)))
    if view.bars:
        sections.append(("bars", "Breakdown", _bars(view)))
    if view.tables:
        sections.append(("tables", "Tables", "".join(_table(t) for t in view.tables)))
    if view.browser is not None:
        sections.append(("browser", "Regression browser", browser_html(view.browser)))
    caveats = "".join(f"<li>{_e(c)}</li>" for c in view.caveats) or "<li>none</li>"
    sections.append(("caveats", "Caveats", f'<ul class="caveats">{caveats}</ul>'))
    prov = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in view.provenance)
    sections.append(("provenance", "Provenance",
                     f'<table class="prov"><tbody>{prov}</tbody></table>'))
    nav = "".join(f'<a href="#{k}">{_e(t)}</a>' for k, t, _ in sections)
    body = "".join(_section(k, t, b) for k, t, b in sections)
    meta = (f"{view.kind} (schema {view.schema_version}) · {view.source} · {view.digest} · "
            f"rendered by rankproof {__version__}")
    script = f"<script>{SCRIPT}</script>" if view.browser is not None else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="rankproof {_e(__version__)}">'
        f"<title>{_e(view.title)}</title><style>{CSS}{MATRIX_CSS if view.matrix else ''}"
        f"{BROWSER_CSS if view.browser else ''}</style></head><body>"
        f'<header><h1>{_e(view.title)}</h1><p class="meta">{_e(meta)}</p></header>'
        f"<nav>{nav}</nav>{body}{script}</body></html>\n")
