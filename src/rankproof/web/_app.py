"""The dashboard's Starlette application: read-only pages over one history store.

Every page is built on request from `rankproof.history` (results, trend, since, compare)
and drawn by `rankproof.report` (the trend figure, a result's HTML view), so the dashboard
shows what the CLI and the HTML report show. Only GET and HEAD are routed (anything else is
405). Every string from the database is HTML-escaped, and each response carries a
Content-Security-Policy that forbids every fetch and every script except, on a result page,
the report's own regression-browser script (allowed by its hash): a stored run name such as
``<script>…</script>`` is text on the page, never code.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import re
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from rankproof._errors import RankproofError
from rankproof.history import HistoryStore, compare_results, open_store, since, trend

__all__ = ["create_app"]

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:72rem;color:#1b1b1b}
nav a{margin-right:1rem}table{border-collapse:collapse;margin:.8rem 0}
td,th{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f4f4f4}tr.worse td{background:#fde8e8}tr.better td{background:#e6f4ea}
.mark{font-weight:600}form label{margin-right:.8rem}code{font-size:90%}
.answer{padding:.6rem .8rem;background:#f6f6f6;border-left:4px solid #888}
.error{padding:.6rem .8rem;background:#fde8e8;border-left:4px solid #b00}
"""
_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        "script-src {scripts}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
_MARKS = {"worse": "▼ worse", "better": "▲ better", "no detectable difference": "·", None: ""}


def _e(value: object) -> str:
    return html.escape("—" if value is None else str(value), quote=True)


def _page(title: str, body: str, *, status: int = 200, scripts: str = "'none'") -> Response:
    nav = ('<nav><a href="/">results</a><a href="/trend">trend</a>'
           '<a href="/compare">compare</a></nav>')
    doc = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           f"<title>{_e(title)} · rankproof history</title><style>{_STYLE}</style></head>"
           f"<body>{nav}<h1>{_e(title)}</h1>{body}</body></html>\n")
    return _secure(HTMLResponse(doc, status_code=status), scripts)


def _secure(response: Response, scripts: str = "'none'") -> Response:
    response.headers["Content-Security-Policy"] = _CSP.format(scripts=scripts)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]],
           classes: Sequence[str] | None = None, raw: Sequence[int] = ()) -> str:
    """A table; cells are escaped except the columns in ``raw`` (links built here)."""
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{_e(classes[i])}"' if classes and classes[i] else ""
        cells = "".join(f"<td>{c if j in raw else _e(c)}</td>" for j, c in enumerate(row))
        body.append(f"<tr{cls} data-index=\"{i + 1}\">{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _link(path: str, label: str, **params: str | None) -> str:
    query = urlencode({k: v for k, v in params.items() if v})
    return f'<a href="{_e(path + ("?" + query if query else ""))}">{_e(label)}</a>'


def _param(request: Request, name: str) -> str | None:
    value = request.query_params.get(name)
    return value if value else None


def _form(fields: Sequence[tuple[str, str, str | None]], action: str) -> str:
    inputs = "".join(f'<label>{_e(label)} <input name="{_e(name)}" value="{_e(value or "")}">'
                     f"</label>" for name, label, value in fields)
    return f'<form method="get" action="{_e(action)}">{inputs}<button>show</button></form>'


class _Dashboard:
    def __init__(self, store: HistoryStore) -> None:
        self.store = store

    def guarded(self, fn: Callable[[Request], Response]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                return fn(request)
            except RankproofError as exc:  # bad ids, unknown measures: the user's to fix
                return _page("not found", f'<p class="error">{_e(exc)}</p>', status=404)
        return endpoint

    def results(self, request: Request) -> Response:
        p = {k: _param(request, k) for k in ("kind", "branch", "run", "measure", "since")}
        found = self.store.results(kind=p["kind"], branch=p["branch"], run=p["run"],
                                   measure=p["measure"], since=p["since"])
        rows = [[_link(f"/result/{r.id[7:]}", r.id[:19]), r.kind.removeprefix("rankproof."),
                 r.created_at, (r.git_commit or "—")[:12], r.git_branch or "—",
                 ", ".join(r.runs), " ".join(_link("/trend", m, measure=m,
                                                   run=r.runs[0] if len(r.runs) == 1 else None)
                                             for m in r.measures)] for r in found]
        form = _form([(k, k, v) for k, v in p.items()], "/")
        body = form + f"<p>{len(found)} results</p>" + _table(
            ("id", "kind", "created", "commit", "branch", "runs", "measures"), rows, raw=(0, 6))
        return _page("Stored results", body)

    def trend(self, request: Request) -> Response:
        from rankproof.report.history import trend_rows, trend_svg

        measure, run, branch = (_param(request, k) for k in ("measure", "run", "branch"))
        last = _param(request, "last")
        form = _form([("measure", "measure", measure), ("run", "run", run),
                      ("branch", "branch", branch), ("last", "last", last)], "/trend")
        if measure is None:
            return _page("Trend", form + "<p>Choose a measure.</p>")
        t = trend(self.store, measure, run=run, branch=branch,
                  last=int(last) if last and last.isdigit() else 50)
        data = t.to_dict()
        rows = trend_rows(data)
        for row, point in zip(rows, t.points, strict=True):
            row.insert(7, _MARKS.get(point.step, point.step or ""))
            row[1] = (f'{_link(f"/result/{point.id[7:]}", row[1])}')
        classes = [p.step if p.step in ("better", "worse") else "" for p in t.points]
        svg = trend_svg(data, id_prefix="trend")
        cols = ("#", "commit", "created", "run", "n", "mean", "step", "mark", "Δ", "p",
                "p corrected")
        body = (form + f"<p>{_e(t.test)} test per step, {_e(t.correction)} across "
                f"{len(t.rows)} steps, α = {t.alpha}; showing {len(t.points)} of {t.total} "
                f"results.</p><figure>{svg}</figure>"
                + _table(cols, rows, classes, raw=(1,)))
        return _page(f"Trend of {measure}", body)

    def result(self, request: Request) -> Response:
        from pathlib import Path

        from rankproof.report.document import KINDS, Document
        from rankproof.report.html import render_html
        from rankproof.report.views import build

        info = self.store.get(request.path_params["rid"])
        doc = self.store.document(info)
        if info.kind not in KINDS:
            return _page(f"Result {info.id[:19]}", "<p>No HTML view for this kind.</p>")
        page = render_html(build(Document(kind=info.kind, schema_version=info.schema_version,
                                          data=doc, path=Path(f"history:{info.id[:19]}"),
                                          digest=info.id)))
        hashes = [base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
                  for s in re.findall(r"<script>(.*?)</script>", page, flags=re.S)]
        scripts = " ".join(f"'sha256-{h}'" for h in hashes) or "'none'"
        return _secure(HTMLResponse(page), scripts)

    def query(self, request: Request) -> Response:
        qid = request.path_params["qid"]
        measure, run, branch = (_param(request, k) for k in ("measure", "run", "branch"))
        form = _form([("measure", "measure", measure), ("run", "run", run),
                      ("branch", "branch", branch)], f"/query/{quote(qid, safe='')}")
        if measure is None:
            return _page(f"Query {qid}", form + "<p>Choose a measure.</p>")
        s = since(self.store, qid, measure, run=run, branch=branch)
        if s.found:
            answer = (f'<p class="answer" id="since">Lost since result #{s.index}: commit '
                      f'<code class="commit">{_e(s.commit)}</code> ({_e(s.created_at)}), '
                      f"{_e(s.measure)} {s.before:.4f} → {s.after:.4f}, now {s.now:.4f}.</p>")
        else:
            answer = (f'<p class="answer" id="since">{_e(s.measure)} has not dropped and '
                      f"stayed down across {len(s.values)} results.</p>")
        rows = [[str(i + 1), _link(f"/result/{rid[7:]}", rid[:19]), (c or "—")[:12], t,
                 f"{v:.4f}"] for i, (rid, c, t, v) in enumerate(s.values)]
        classes = ["worse" if s.index == i + 1 else "" for i in range(len(rows))]
        body = form + answer + _table(("#", "result", "commit", "created", measure), rows,
                                      classes, raw=(1,))
        return _page(f"Query {qid}", body)

    def compare(self, request: Request) -> Response:
        a, b, measure, run = (_param(request, k) for k in ("a", "b", "measure", "run"))
        form = _form([("a", "baseline id", a), ("b", "candidate id", b),
                      ("measure", "measure", measure), ("run", "run", run)], "/compare")
        if a is None or b is None:
            return _page("Compare two results", form)
        c, _, _, left_out = compare_results(self.store, a, b, run=run,
                                            measures=[measure] if measure else None)
        rows, classes = [], []
        for r in c.rows:
            rows.append([r.measure, r.baseline, r.candidate, f"{r.result.mean_b:.4f}",
                         f"{r.result.mean_a:.4f}", f"{r.result.difference:+.4f}",
                         f"{r.p_corrected:.4g}", r.verdict])
            classes.append(r.verdict if r.verdict in ("better", "worse") else "")
        worst = []
        for r in c.rows:
            deltas = sorted(zip(r.qids, (x - y for x, y in zip(r.candidate_values,
                                                                r.baseline_values,
                                                                strict=True)), strict=True),
                            key=lambda qd: qd[1] if r.higher_is_better else -qd[1])
            worst += [[r.measure, _link(f"/query/{quote(q, safe='')}", q, measure=r.measure,
                                        run=run), f"{d:+.4f}"] for q, d in deltas[:20]
                      if (d < 0 if r.higher_is_better else d > 0)]
        body = (form + _table(("measure", "baseline", "candidate", "baseline mean",
                               "candidate mean", "Δ", "p corrected", "verdict"), rows, classes)
                + (f"<p>{left_out} queries held by only one side were left out.</p>"
                   if left_out else "")
                + "<h2>Regressions, largest first</h2>"
                + _table(("measure", "query", "Δ"), worst, raw=(1,)))
        return _page("Compare two results", body)


def create_app(url: str | None = None, store: HistoryStore | None = None) -> Starlette:
    """The dashboard over the store at ``url`` (or an opened ``store``)."""
    opened = store if store is not None else open_store(url)
    d = _Dashboard(opened)
    routes = [Route("/", d.guarded(d.results), methods=["GET"]),
              Route("/trend", d.guarded(d.trend), methods=["GET"]),
              Route("/result/{rid}", d.guarded(d.result), methods=["GET"]),
              Route("/query/{qid:path}", d.guarded(d.query), methods=["GET"]),
              Route("/compare", d.guarded(d.compare), methods=["GET"])]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if store is None:
                opened.close()

    return Starlette(routes=routes, lifespan=lifespan)
