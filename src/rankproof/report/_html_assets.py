"""The inline stylesheet and script of the HTML report (kept out of the renderer's logic).

The script is small, vanilla and optional: without it the page still shows
every section and the first page of the regression browser, rendered on the
server. With it, the browser reads the per-query data embedded as JSON
(``<script type="application/json">``, never executed) and sorts, filters and
pages through every query. It writes only with ``textContent``, so no text
from a document can become markup.
"""

from __future__ import annotations

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;
--better:#0b6bcb;--worse:#c4320a;--ns:#6e7781;--pass:#1a7f37;--fail:#cf222e}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg);margin:0 auto;max-width:1200px;padding:1rem 1.5rem 4rem}
h1{font-size:1.5rem;margin:.5rem 0}h2{font-size:1.2rem;margin:2rem 0 .5rem;
border-bottom:1px solid var(--line);padding-bottom:.25rem}h3{font-size:1rem;margin:1rem 0 .25rem}
.meta,.note,figcaption{color:var(--muted);font-size:.85rem}
nav{display:flex;flex-wrap:wrap;gap:.25rem .75rem;font-size:.85rem;margin:.5rem 0 1rem}
nav a{color:var(--better);text-decoration:none}
table{border-collapse:collapse;margin:.5rem 0;font-size:.85rem}
th,td{border-bottom:1px solid var(--line);padding:.25rem .5rem;text-align:left;
vertical-align:top}
th{background:var(--soft);position:sticky;top:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.better{color:var(--better);font-weight:600}.worse{color:var(--worse);font-weight:600}
.ns{color:var(--ns)}
.banner{padding:.5rem .75rem;border-radius:6px;font-weight:600;display:inline-block}
.banner.pass{background:#dafbe1;color:var(--pass)}.banner.fail{background:#ffebe9;color:var(--fail)}
figure{margin:.5rem 0 1rem;max-width:820px}figure svg{width:100%;height:auto}
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(360px,1fr));gap:1rem}
.plots.two{grid-template-columns:repeat(auto-fit,minmax(520px,1fr))}
details{margin:.25rem 0}summary{cursor:pointer}
.scroll{overflow-x:auto}
.nowrap{white-space:nowrap}
.ids{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.78rem}
.ids li{list-style:none}.ids ol{margin:0;padding:0}
.rel{color:var(--pass);font-weight:700}
.controls{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;margin:.5rem 0}
.controls input[type=search]{min-width:16rem}
th.sortable{cursor:pointer;text-decoration:underline dotted}
.prov td:first-child{white-space:nowrap;color:var(--muted)}
.caveats li{margin:.2rem 0}
"""

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
out.sort(function(x,y){var a,z;
if(key==="qid"){a=x.q[0];z=y.q[0];return sortDir*(a<z?-1:a>z?1:0);}
if(key==="delta"){a=x.good;z=y.good;}else if(key==="base"){a=x.b;z=y.b;}else{a=x.c;z=y.c;}
if(a===z){return x.q[0]<y.q[0]?-1:1;}return sortDir*(a<z?-1:1);});
return {rows:out,c:c,m:m};}
function cell(tr,text,cls){var td=document.createElement("td");td.textContent=text;
if(cls){td.className=cls;}tr.appendChild(td);return td;}
function fmt(v){return isNaN(v)?"\u2014":v.toFixed(4);}
function ids(td,q,s){var top=q[5][s];if(!top||!top.length){td.textContent="\u2014";return;}
var gold={};q[3].forEach(function(g){gold[g[0]]=g[1];});
var ol=document.createElement("ol");top.forEach(function(i,r){var li=document.createElement("li");
var g=gold[i];li.textContent=(r+1)+". "+D.ids[i]+(g?"  \u2713"+g:"");
if(g){li.className="rel";li.title="relevant (grade "+g+")";}ol.appendChild(li);});
td.className="ids";td.appendChild(ol);}
function render(){
var r=rows(),n=r.rows.length,pages=Math.max(1,Math.ceil(n/PAGE));
if(page>=pages){page=pages-1;}
while(body.firstChild){body.removeChild(body.firstChild);}
r.rows.slice(page*PAGE,(page+1)*PAGE).forEach(function(x){
var tr=document.createElement("tr");tr.dataset.qid=x.q[0];
cell(tr,x.q[0]);cell(tr,x.q[1]||"\u2014");
var dc=cell(tr,isNaN(x.d)?"\u2014":(x.d>0?"+":"")+x.d.toFixed(4),"num "+
(x.good>0?"better":x.good<0?"worse":"ns"));dc.dataset.delta=x.d;
cell(tr,fmt(x.b),"num");cell(tr,fmt(x.c),"num");
var gtd=cell(tr,"","ids");gtd.textContent=x.q[3].map(function(g){
return D.ids[g[0]]+" ("+g[1]+")";}).join(", ")||"\u2014";
ids(cell(tr,""),x.q,0);ids(cell(tr,""),x.q,r.c);body.appendChild(tr);});
info.textContent=n+" of "+D.queries.length+" queries; page "+(page+1)+" of "+pages;
prev.disabled=page===0;next.disabled=page>=pages-1;
document.getElementById("rp-cand-head").textContent=candSel.value+" top "+D.k;}
Array.prototype.forEach.call(document.querySelectorAll("#browser th[data-sort]"),
function(th){th.classList.add("sortable");th.addEventListener("click",function(){
var k=th.dataset.sort;if(sortKey===k){sortDir=-sortDir;}else{sortKey=k;sortDir=1;}
page=0;render();});});
[candSel,measSel,onlyReg].forEach(function(e){e.addEventListener("change",function(){
page=0;render();});});
filt.addEventListener("input",function(){page=0;render();});
prev.addEventListener("click",function(){page--;render();});
next.addEventListener("click",function(){page++;render();});
render();
})();
"""
