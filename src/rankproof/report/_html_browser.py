"""The regression browser of the HTML report: one row per query, readable on deep judgments.

On a deeply judged collection (TREC DL: 100–300 relevant passages per query) a row
that lists every judged document is unreadable. Each row therefore shows:

* **gold found**: the relevant documents that either shown system (the baseline
  and the chosen candidate) retrieved within the stored depth ``k``, each with its
  grade and its rank in each system (``—``: not in that system's top ``k``),
  highest grade first; the rest as one count ("+143 judged relevant, not retrieved
  in either top 10");
* **top k side by side**: rank by rank, the baseline's and the candidate's
  documents, relevant ones with a badge carrying their grade;
* the query, Δ on the chosen measure and both values, sortable by Δ (by the
  measure's polarity: largest falls first), qid or either value.

Nothing is clipped at 1280 × 800: the table takes the page's width, long ids and
query text wrap anywhere, and a headless-Chromium test
(``tests/report/test_regression_browser.py``) checks that no cell overflows.

The first page (the first candidate's largest falls on the first measure) is
rendered here, so the browser reads without JavaScript; the inline script
(`SCRIPT`; allowed by the report's CSP, nothing fetched) redraws the same markup
from the per-query data embedded as JSON, with ``textContent`` only.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rankproof.report.view import Browser, BrowserQuery

__all__ = ["CSS", "SCRIPT", "STATIC_ROWS", "browser_data", "browser_html", "gold_found"]

STATIC_ROWS = 100
"""Rows of the regression browser rendered without JavaScript (and rows per page with it)."""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _num(value: float | None, digits: int = 4, sign: bool = False) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def gold_found(gold: Mapping[str, int], tops: Sequence[Sequence[str]]
               ) -> tuple[list[tuple[str, int, tuple[int | None, ...]]], int]:
    """The gold documents found in any of ``tops`` (each a system's top ids), with their
    grade and 1-based rank in each (None: not there), highest grade first, then best rank,
    then id; and how many gold documents none of them retrieved."""
    ranks = [{d: r for r, d in enumerate(top, 1)} for top in tops]
    found = []
    for doc, grade in gold.items():
        where = tuple(rk.get(doc) for rk in ranks)
        if any(r is not None for r in where):
            found.append((doc, grade, where))
    found.sort(key=lambda f: (-f[1], min(r for r in f[2] if r is not None), f[0]))
    return found, len(gold) - len(found)


def rest_text(rest: int, k: int) -> str:
    """The count line under the found gold."""
    return f"+{rest} judged relevant, not retrieved in either top {k}"


def _badge(grade: int | None) -> str:
    if not grade:
        return ""
    return f'<b class="g g{min(grade, 4)}" title="grade {grade}">{grade}</b>'


def _gold_cell(q: BrowserQuery, tops: Sequence[Sequence[str]], k: int) -> str:
    if not k:
        return "<td class=gold>—</td>"
    if not q.gold:
        return '<td class=gold><span class="note">no judged relevant document</span></td>'
    found, rest = gold_found(q.gold, tops)
    items = []
    for doc, grade, where in found:
        ranks = " | ".join("—" if r is None else str(r) for r in where)
        items.append(f'<li class="rel"><span class="id">{_e(doc)}</span>{_badge(grade)}'
                     f'<span class="rk">{ranks}</span></li>')
    if rest:
        items.append(f'<li class="rest">{_e(rest_text(rest, k))}</li>')
    return f"<td class=gold><ul>{''.join(items)}</ul></td>"


def _topk_cell(gold: Mapping[str, int], base: Sequence[str], cand: Sequence[str]) -> str:
    depth = max(len(base), len(cand))
    if not depth:
        return "<td class=topk>—</td>"

    def doc(ids: Sequence[str], r: int) -> str:
        if r >= len(ids):
            return '<span class="d none">—</span>'
        g = gold.get(ids[r])
        return (f'<span class="d{" rel" if g else ""}"><span class="id">{_e(ids[r])}</span>'
                f"{_badge(g)}</span>")

    rows = "".join(f'<li><span class="r">{r + 1}</span>{doc(base, r)}{doc(cand, r)}</li>'
                   for r in range(depth))
    return f"<td class=topk><ol>{rows}</ol></td>"


def _rows(b: Browser) -> Iterable[str]:
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
        top_b, top_c = q.top.get(b.baseline, ()), q.top.get(cand, ())
        delta = "" if math.isnan(d) else f' data-delta="{d!r}"'
        yield (f'<tr data-qid="{_e(q.qid)}"><td class=qid>{_e(q.qid)}</td>'
               f'<td class=q>{_e(q.text or "—")}</td>'
               f'<td class="num {cls}"{delta}>{_num(None if math.isnan(d) else d, 4, True)}</td>'
               f"<td class=num>{_num(bv)}</td><td class=num>{_num(cv)}</td>"
               + _gold_cell(q, (top_b, top_c), b.k) + _topk_cell(q.gold, top_b, top_c)
               + "</tr>")


def browser_data(b: Browser) -> dict[str, Any]:
    """The per-query data the script reads, ids interned once.

    Each query is ``[qid, text, category, gold, values, top, relevant]``: ``gold`` holds
    ``[id, grade]`` only for the relevant documents some system retrieved within ``k``
    (the rest is the count ``relevant − found``, so a query with 300 judged passages
    costs a few entries, not 300).
    """
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
        tops = [q.top.get(s, ()) for s in systems]
        retrieved = {d for t in tops for d in t}
        gold = sorted(((intern(i), g) for i, g in q.gold.items() if i in retrieved),
                      key=lambda p: -p[1])
        values = [[value(q.values.get(s, {}).get(m)) for m in b.measures] for s in systems]
        top = [[intern(i) for i in t] for t in tops]
        queries.append([q.qid, q.text, q.category, [list(g) for g in gold], values, top,
                        len(q.gold)])
    return {"systems": systems, "candidates": list(b.candidates), "measures": list(b.measures),
            "hib": [b.higher_is_better.get(m, True) for m in b.measures], "k": b.k,
            "page": STATIC_ROWS, "ids": list(index), "queries": queries}


def _script_json(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def browser_html(b: Browser) -> str:
    """The browser section's body: notes, controls, the first page, the embedded data."""
    cand = b.candidates[0] if b.candidates else b.baseline
    m = b.measures[0] if b.measures else "—"
    k = f"top {b.k}" if b.k else "top"
    heads = (("qid", "qid", "qid"), ("query", None, "q"), ("Δ", "delta", "num"),
             ("baseline", "base", "num"), ("candidate", "cand", "num"))
    head = "".join(f'<th class="{c}"{f" data-sort={s}" if s else ""}>{_e(h)}</th>'
                   for h, s, c in heads)
    head += (f'<th class=gold>gold found in either {_e(k)}<span class="sub">grade; rank in '
             f'baseline | candidate</span></th>'
             f'<th class=topk>{_e(k)} side by side<span class="sub"><span class="sys">'
             f'{_e(b.baseline)}</span> | <span class="sys" id="rp-cand-head">{_e(cand)}'
             "</span></span></th>")
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
    data = _script_json(browser_data(b))
    return (f'<p class="note" id="rp-static-note">{_e(static_note)}</p>{notes}{controls}'
            f'<div class="scroll" id="rp-scroll"><table id="rp-table"><thead><tr>{head}</tr>'
            f'</thead><tbody id="rp-rows">{"".join(_rows(b))}</tbody></table></div>'
            f'<script type="application/json" id="rp-browser-data">{data}</script>')


CSS = """
#rp-table{width:100%}
#rp-table td,#rp-table th{overflow-wrap:anywhere}
#rp-table td.num,#rp-table th.num{overflow-wrap:normal}
#rp-table th .sub{display:block;font-weight:400;color:var(--muted);font-size:.75rem}
#rp-table td.qid{min-width:6.5rem;width:9%;font-family:ui-monospace,SFMono-Regular,Menlo,
monospace;font-size:.78rem}
#rp-table td.q{min-width:10rem;width:17%}
#rp-table .gold,#rp-table .topk{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;
font-size:.78rem}
#rp-table th.gold,#rp-table th.topk{font-family:inherit;font-size:inherit}
#rp-table td.gold{min-width:13rem;width:24%}#rp-table td.topk{min-width:22rem;width:36%}
#rp-table ul,#rp-table ol{margin:0;padding:0;list-style:none}
#rp-table .gold li{display:flex;gap:.35rem;align-items:baseline;color:inherit;font-weight:400}
#rp-table .gold .id{color:var(--pass);font-weight:700}
#rp-table .gold li.rest{color:var(--muted);font-family:system-ui,sans-serif;display:block}
#rp-table .rk{color:var(--muted);margin-left:auto;white-space:nowrap}
#rp-table .topk li{display:grid;grid-template-columns:1.8rem minmax(0,1fr) minmax(0,1fr);
gap:.5rem;border-bottom:1px dotted var(--line)}
#rp-table .topk .r{color:var(--muted);text-align:right}
#rp-table .d{min-width:0}#rp-table .d.rel .id{color:var(--pass);font-weight:700}
#rp-table .d.none{color:var(--muted)}
#rp-table .g{display:inline-block;min-width:1.2em;margin-left:.25rem;padding:0 .2em;
border-radius:.6em;font-size:.7rem;line-height:1.35;text-align:center;color:#fff;
background:#8c959f;font-family:system-ui,sans-serif}
#rp-table .g1{background:#d0d7de;color:#1f2328}#rp-table .g2{background:#2da44e}
#rp-table .g3{background:#0b6bcb}#rp-table .g4{background:#8250df}
#rp-table th[data-sort]::after{content:" \\2195";color:var(--muted)}
#rp-table th[aria-sort=ascending]::after{content:" \\2191"}
#rp-table th[aria-sort=descending]::after{content:" \\2193"}
"""
"""The browser's rules, added to the report's stylesheet."""

SCRIPT = r"""
(function(){
"use strict";
var holder=document.getElementById("rp-browser-data");
if(!holder){return;}
var D=JSON.parse(holder.textContent);
var root=document.getElementById("browser");
var body=document.getElementById("rp-rows");
var candSel=document.getElementById("rp-candidate");
var measSel=document.getElementById("rp-measure");
var filt=document.getElementById("rp-filter");
var onlyReg=document.getElementById("rp-regressions");
var info=document.getElementById("rp-info");
var prev=document.getElementById("rp-prev"),next=document.getElementById("rp-next");
var PAGE=D.page,page=0,sortKey="delta",sortDir=1;
root.classList.add("js");
document.getElementById("rp-static-note").hidden=true;
document.getElementById("rp-controls").hidden=false;
function opt(sel,values){values.forEach(function(v){var o=document.createElement("option");
o.value=v;o.textContent=v;sel.appendChild(o);});}
opt(candSel,D.candidates);opt(measSel,D.measures);
function sysIndex(name){return D.systems.indexOf(name);}
function val(q,s,m){var v=q[4][s][m];return v===null?NaN:v;}
function rows(){
var c=sysIndex(candSel.value),b=0,m=D.measures.indexOf(measSel.value);
var hib=D.hib[m],needle=filt.value.trim().toLowerCase(),out=[];
D.queries.forEach(function(q){
var bv=val(q,b,m),cv=val(q,c,m),d=cv-bv,good=hib?d:-d;
if(onlyReg.checked&&!(good<0)){return;}
if(needle){var hay=(q[0]+" "+(q[1]||"")+" "+(q[2]||"")).toLowerCase();
if(hay.indexOf(needle)<0){return;}}
out.push({q:q,b:bv,c:cv,d:d,good:good});});
var key=sortKey;
function num(v){return isNaN(v)?Infinity:v;}
out.sort(function(x,y){var a,z;
if(key==="qid"){a=x.q[0];z=y.q[0];return sortDir*(a<z?-1:a>z?1:0);}
if(key==="delta"){a=num(x.good);z=num(y.good);}else if(key==="base"){a=num(x.b);z=num(y.b);}
else{a=num(x.c);z=num(y.c);}
if(a===z){return x.q[0]<y.q[0]?-1:1;}return sortDir*(a<z?-1:1);});
return {rows:out,c:c,m:m};}
function el(tag,cls,text){var e=document.createElement(tag);if(cls){e.className=cls;}
if(text!==undefined){e.textContent=text;}return e;}
function cell(tr,text,cls){var td=el("td",cls,text);tr.appendChild(td);return td;}
function fmt(v){return isNaN(v)?"\u2014":v.toFixed(4);}
function badge(parent,g){if(!g){return;}var b=el("b","g g"+Math.min(g,4),String(g));
b.title="grade "+g;parent.appendChild(b);}
function gold(td,q,tops){
if(!D.k){td.textContent="\u2014";return;}
if(!q[6]){td.appendChild(el("span","note","no judged relevant document"));return;}
var ranks=tops.map(function(t){var r={};t.forEach(function(i,n){r[i]=n+1;});return r;});
var found=[];q[3].forEach(function(g){var where=ranks.map(function(r){
return r.hasOwnProperty(g[0])?r[g[0]]:null;});
if(where.some(function(w){return w!==null;})){found.push({i:g[0],g:g[1],w:where,
best:Math.min.apply(null,where.filter(function(w){return w!==null;}))});}});
found.sort(function(x,y){if(x.g!==y.g){return y.g-x.g;}if(x.best!==y.best){
return x.best-y.best;}var a=D.ids[x.i],z=D.ids[y.i];return a<z?-1:a>z?1:0;});
var ul=el("ul");found.forEach(function(f){var li=el("li","rel");
li.appendChild(el("span","id",D.ids[f.i]));badge(li,f.g);
li.appendChild(el("span","rk",f.w.map(function(w){return w===null?"\u2014":String(w);})
.join(" | ")));ul.appendChild(li);});
var rest=q[6]-found.length;
if(rest>0){ul.appendChild(el("li","rest","+"+rest+
" judged relevant, not retrieved in either top "+D.k));}
td.appendChild(ul);}
function topk(td,q,tops){
var depth=Math.max(tops[0].length,tops[1].length);
if(!depth){td.textContent="\u2014";return;}
var grade={};q[3].forEach(function(g){grade[g[0]]=g[1];});
var ol=el("ol");for(var r=0;r<depth;r++){var li=el("li");li.appendChild(el("span","r",
String(r+1)));tops.forEach(function(t){if(r>=t.length){li.appendChild(el("span","d none",
"\u2014"));return;}var g=grade[t[r]];var s=el("span",g?"d rel":"d");
s.appendChild(el("span","id",D.ids[t[r]]));badge(s,g);li.appendChild(s);});
ol.appendChild(li);}td.appendChild(ol);}
function render(){
var r=rows(),n=r.rows.length,pages=Math.max(1,Math.ceil(n/PAGE));
if(page>=pages){page=pages-1;}
while(body.firstChild){body.removeChild(body.firstChild);}
r.rows.slice(page*PAGE,(page+1)*PAGE).forEach(function(x){
var tr=document.createElement("tr");tr.dataset.qid=x.q[0];
cell(tr,x.q[0],"qid");cell(tr,x.q[1]||"\u2014","q");
var dc=cell(tr,isNaN(x.d)?"\u2014":(x.d>0?"+":"")+x.d.toFixed(4),"num "+
(x.good>0?"better":x.good<0?"worse":"ns"));if(!isNaN(x.d)){dc.dataset.delta=x.d;}
cell(tr,fmt(x.b),"num");cell(tr,fmt(x.c),"num");
var tops=[x.q[5][0]||[],x.q[5][r.c]||[]];
gold(cell(tr,undefined,"gold"),x.q,tops);topk(cell(tr,undefined,"topk"),x.q,tops);
body.appendChild(tr);});
info.textContent=n+" of "+D.queries.length+" queries; page "+(page+1)+" of "+pages;
prev.disabled=page===0;next.disabled=page>=pages-1;
document.getElementById("rp-cand-head").textContent=candSel.value;
Array.prototype.forEach.call(document.querySelectorAll("#browser th[data-sort]"),
function(th){if(th.dataset.sort===sortKey){th.setAttribute("aria-sort",
sortDir>0?"ascending":"descending");}else{th.removeAttribute("aria-sort");}});}
Array.prototype.forEach.call(document.querySelectorAll("#browser th[data-sort]"),
function(th){th.classList.add("sortable");th.tabIndex=0;
function go(){var k=th.dataset.sort;if(sortKey===k){sortDir=-sortDir;}else{sortKey=k;
sortDir=1;}page=0;render();}
th.addEventListener("click",go);th.addEventListener("keydown",function(ev){
if(ev.key==="Enter"||ev.key===" "){ev.preventDefault();go();}});});
[candSel,measSel,onlyReg].forEach(function(e){e.addEventListener("change",function(){
page=0;render();});});
filt.addEventListener("input",function(){page=0;render();});
prev.addEventListener("click",function(){page--;render();});
next.addEventListener("click",function(){page++;render();});
render();
})();
"""
"""The browser's script (see the module docstring)."""
