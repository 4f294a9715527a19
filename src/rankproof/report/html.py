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
  the per-query data embedded as JSON.
* **Text is data.** Everything from a document is HTML-escaped here; the
  embedded JSON escapes ``<``, ``>`` and ``&`` so that nothing in it can close
  its script element; the script writes with ``textContent`` only.
* **Large inputs stay usable.** Ids are interned once for the browser's data,
  the server-rendered page is bounded, and per-query plots are capped
  (`rankproof.report._view_parts.MAX_DELTA_PLOTS`).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rankproof._version import __version__
from rankproof.report._html_assets import CSS, SCRIPT
from rankproof.report.compare import p_text
from rankproof.report.view import Browser, Table, Verdict, View

if TYPE_CHECKING:
    from rankproof.stats import TestName

__all__ = ["STATIC_ROWS", "render_html"]

STATIC_ROWS = 100
"""Rows of the regression browser rendered without JavaScript (and rows per page with it)."""

_NULL_TESTS: dict[str, TestName] = {"randomization": "randomization", "bootstrap": "bootstrap",
                                    "t": "t", "wilcoxon": "wilcoxon", "sign": "sign"}
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
    keep = [i for i in range(len(cols)) if not (i == 2 and len(baselines) == 1)]
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
            f"<td class=num>{level}</td><td class=num>{p_text(v.p_value)}</td>"
            f"<td class=num>{p_text(v.p_corrected)}</td><td class=num>{wtl}</td>"
            f'<td class=nowrap><span class="{_cls(v.verdict)}">{_e(v.verdict)}</span>{flag}</td>'
            f"<td class=num>{needed}</td></tr>")
    methods = sorted({v.ci_method for v in verdicts if v.ci_method})
    corrections = sorted({v.correction for v in verdicts if v.correction})
    caption = ((f"Baseline: {baselines[0]}. " if len(baselines) == 1 else "")
               + f"Intervals: {', '.join(methods) or '—'}, each at its row's level "
               f"(correction: {', '.join(corrections) or '—'}); an interval excludes 0 exactly "
               "when its verdict is better or worse. W/T/L counts queries by the measure's "
               "polarity.")
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
    from rankproof.stats import null_distribution

    # A non-inferiority row tests a shifted, one-sided hypothesis: its null is not this one.
    if v.test not in _NULL_TESTS or v.verdict in ("non-inferior", "not shown non-inferior"):
        return None
    try:
        null = null_distribution(dict(zip(v.qids, v.deltas, strict=True)),
                                 test=_NULL_TESTS[v.test], resamples=v.resamples or 10_000,
                                 seed=v.seed if v.seed is not None else 0)
    except ValueError:  # too few queries, or no variation: nothing to draw
        return None
    svg: str = null_plot(null, title=f"null distribution of the {v.test} statistic",
                         id_prefix=prefix)
    return svg



def _deltas(view: View) -> str:
    from rankproof.report.plots import delta_plot

    out = []
    for i, d in enumerate(view.deltas):
        v = d.verdict
        title = f"{v.measure}: {v.candidate} − {v.baseline}"
        svg = delta_plot(list(v.deltas), higher_is_better=v.higher_is_better,
                         title=f"per-query Δ, sorted ({title})", id_prefix=f"delta{i}-")
        null = _null_svg(v, f"null{i}-")
        parts = [_figure(svg, "per-query differences, sorted; wins and losses coloured by "
                              "the measure's polarity")]
        if null is not None:
            parts.append(_figure(null, "null distribution recomputed from the stored per-query "
                                       f"differences with seed {v.seed}; observed value marked"))
        open_ = " open" if i < 2 else ""
        out.append(f'<details class="delta"{open_}><summary>{_e(title)} — '
                   f'<span class="{_cls(v.verdict)}">{_e(v.verdict)}</span></summary>'
                   f'<div class="plots">{"".join(parts)}</div></details>')
    return "".join(out)


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


def _browser_data(b: Browser) -> dict[str, Any]:
    """The browser's per-query data, ids interned (see the module docstring)."""
    systems = [b.baseline, *b.candidates]
    index: dict[str, int] = {}

    def intern(i: str) -> int:
        if i not in index:
            index[i] = len(index)
        return index[i]

    def value(x: float | None) -> float | None:
        return None if x is None or math.isnan(x) else float(f"{x:.6g}")

    queries = []
    for q in b.queries:
        gold = sorted(((intern(i), g) for i, g in q.gold.items()), key=lambda p: -p[1])
        values = [[value(q.values.get(s, {}).get(m)) for m in b.measures] for s in systems]
        top = [[intern(i) for i in q.top.get(s, ())] for s in systems]
        queries.append([q.qid, q.text, q.category, [list(g) for g in gold], values, top])
    return {"systems": systems, "candidates": list(b.candidates), "measures": list(b.measures),
            "hib": [b.higher_is_better.get(m, True) for m in b.measures], "k": b.k,
            "page": STATIC_ROWS, "ids": list(index), "queries": queries}


def _script_json(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _ids_cell(top: Sequence[str], gold: dict[str, int]) -> str:
    if not top:
        return "<td class=ids>—</td>"
    items = []
    for r, i in enumerate(top, 1):
        g = gold.get(i)
        mark = f"  ✓{g}" if g else ""
        cls = ' class="rel"' if g else ""
        items.append(f"<li{cls}>{r}. {_e(i)}{mark}</li>")
    return f"<td class=ids><ol>{''.join(items)}</ol></td>"


def _static_rows(b: Browser) -> Iterable[str]:
    """The first page: the first candidate's largest falls on the first measure."""
    if not b.candidates or not b.measures:
        return
    cand, m = b.candidates[0], b.measures[0]
    hib = b.higher_is_better.get(m, True)
    rows = []
    for q in b.queries:
        bv = q.values.get(b.baseline, {}).get(m)
        cv = q.values.get(cand, {}).get(m)
        d = (cv - bv) if bv is not None and cv is not None else math.nan
        good = d if hib else -d
        rows.append((math.inf if math.isnan(good) else good, q.qid, q, bv, cv, d))
    rows.sort(key=lambda r: (r[0], r[1]))
    for good, _, q, bv, cv, d in rows[:STATIC_ROWS]:
        cls = "better" if good > 0 and good != math.inf else "worse" if good < 0 else "ns"
        gold = ", ".join(f"{i} ({g})" for i, g in sorted(q.gold.items(), key=lambda p: -p[1]))
        yield (f'<tr data-qid="{_e(q.qid)}"><td>{_e(q.qid)}</td><td>{_e(q.text or "—")}</td>'
               f'<td class="num {cls}">{_num(None if math.isnan(d) else d, 4, True)}</td>'
               f"<td class=num>{_num(bv)}</td><td class=num>{_num(cv)}</td>"
               f"<td class=ids>{_e(gold or '—')}</td>"
               + _ids_cell(q.top.get(b.baseline, ()), q.gold)
               + _ids_cell(q.top.get(cand, ()), q.gold) + "</tr>")


def _browser(b: Browser) -> str:
    cand = b.candidates[0] if b.candidates else b.baseline
    m = b.measures[0] if b.measures else "—"
    k = f" top {b.k}" if b.k else " top"
    heads = (("qid", "qid"), ("query", None), ("Δ", "delta"), ("baseline", "base"),
             ("candidate", "cand"), ("gold (grade)", None), (f"{b.baseline}{k}", None))
    head = "".join(f'<th{f" data-sort={s}" if s else ""}'
                   f'{" class=num" if s in ("delta", "base", "cand") else ""}>{_e(h)}</th>'
                   for h, s in heads)
    head += f'<th id="rp-cand-head">{_e(cand + k)}</th>'
    shown = min(STATIC_ROWS, len(b.queries))
    static_note = (f"Showing the {shown} largest falls of {cand} on {m} (of {len(b.queries)} "
                   "queries). With JavaScript, the table sorts, filters and pages through "
                   "every query.")
    controls = (
        '<div class="controls" id="rp-controls" hidden>'
        '<label>candidate <select id="rp-candidate"></select></label>'
        '<label>measure <select id="rp-measure"></select></label>'
        '<label>filter <input type="search" id="rp-filter" '
        'placeholder="qid or query text"></label>'
        '<label><input type="checkbox" id="rp-regressions"> regressions only</label>'
        '<button id="rp-prev" type="button">previous</button>'
        '<button id="rp-next" type="button">next</button><span id="rp-info" class="note">'
        "</span></div>")
    notes = "".join(f'<p class="note">{_e(n)}</p>' for n in b.notes)
    data = _script_json(_browser_data(b))
    return (f'<p class="note" id="rp-static-note">{_e(static_note)}</p>{notes}{controls}'
            f'<div class="scroll"><table id="rp-table"><thead><tr>{head}</tr></thead>'
            f'<tbody id="rp-rows">{"".join(_static_rows(b))}</tbody></table></div>'
            f'<script type="application/json" id="rp-browser-data">{data}</script>')


def _section(key: str, title: str, body: str) -> str:
    return f'<section id="{key}"><h2>{_e(title)}</h2>{body}</section>'


def render_html(view: View) -> str:
    """The complete HTML document for ``view`` (see the module docstring)."""
    sections: list[tuple[str, str, str]] = []
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
        sections.append(("browser", "Regression browser", _browser(view.browser)))
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
        f"<title>{_e(view.title)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>{_e(view.title)}</h1><p class="meta">{_e(meta)}</p></header>'
        f"<nav>{nav}</nav>{body}{script}</body></html>\n")
