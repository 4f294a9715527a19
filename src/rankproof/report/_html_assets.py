"""The inline stylesheet of the HTML report (kept out of the renderer's logic).

The regression browser's own rules and its small, optional script live with it
in `rankproof.report._html_browser`.
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
.rel{color:var(--pass);font-weight:700}
.controls{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;margin:.5rem 0}
.controls input[type=search]{min-width:16rem}
th.sortable{cursor:pointer;text-decoration:underline dotted}
.prov td:first-child{white-space:nowrap;color:var(--muted)}
.caveats li{margin:.2rem 0}
"""
