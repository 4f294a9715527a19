"""Benchmark: ``rankproof report`` on inputs of about 7,000 queries (issue 13, item 6).

Two documents, each rendered to HTML, Markdown and LaTeX by the whole CLI in a
child process (start-up and import included), timed and sized:

* **eval**: an eval report of 7,020 scored queries. No bundled corpus has
  that many queries, so the golden-corpus eval (bm25, the hashing dense
  double, fusion) is scaled: each of its 78 scored queries is repeated 90
  times under new ids (``qid~i``), with its per-query values, latency, top
  ids and gold, and the comparison rows are **recomputed** on the scaled
  per-query values (`rankproof.comparison.compare_scores`, 10,000
  resamples), so the document is exactly what an eval of that size stores.
* **compare**: ``rankproof compare`` of three generated runs (100 results per
  topic) over the 6,980 MS MARCO dev topics, with the topics' text
  (``--queries``), so the evidence is the real shape.

Printed: seconds per render, the HTML size against the issue's ~10 MB bound,
and the Markdown length against GitHub's 65,536. Timings are one run each on
a shared machine: read them as orders of magnitude. Writes
``bench-data/report-results.json``.

Run: ``.venv/bin/python benchmarks/bench_report.py``
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "msmarco_passage_dev_small"
OUT = REPO / "bench-data"
RANKPROOF = str(Path(sys.executable).with_name("rankproof"))


def scaled_eval(copies: int = 90) -> dict[str, Any]:
    from rankproof.comparison import compare_scores
    from rankproof.harness import EvalConfig, EvalReport, golden_inputs, run_experiment

    config = EvalConfig(stages=("bm25", "dense", "fusion"), embedder="hashing", resamples=2000)
    report, _ = run_experiment(golden_inputs("chunk", 800, 100), config)
    doc = report.model_dump(mode="json")

    def grow(mapping: dict[str, Any]) -> dict[str, Any]:
        return {f"{q}~{i}": v for q, v in mapping.items() for i in range(copies)}

    for stage in doc["stages"]:
        for key in ("per_query", "latency_ms", "top_scores"):
            stage[key] = grow(stage[key])
    doc["inputs"]["query_categories"] = grow(doc["inputs"]["query_categories"])
    doc["inputs"]["scored_queries"] *= copies
    doc["inputs"]["queries"] *= copies
    ev = doc["evidence"]
    ev["queries"], ev["gold"] = grow(ev["queries"]), grow(ev["gold"])
    ev["top"] = {s: grow(t) for s, t in ev["top"].items()}
    scores = {s["name"]: {m: {q: v[m] for q, v in s["per_query"].items()}
                          for m in doc["measures"]} for s in doc["stages"]}
    comparison = compare_scores(scores, baseline="bm25", resamples=10_000, seed=0)
    doc["comparisons"] = [r.to_dict() for r in comparison.rows]
    doc["config"]["resamples"] = 10_000
    EvalReport.model_validate(doc)  # what the report command will read: a valid report
    return doc


def synthetic_runs(qrels: Path, depth: int = 100, seed: int = 0) -> list[Path]:
    """Three runs over the qrels' topics: the relevant passage at a geometric rank whose
    spread differs per run, the rest random passage ids."""
    rng = np.random.default_rng(seed)
    rel: dict[str, list[str]] = {}
    for line in qrels.read_text().splitlines():
        q, _, d, r = line.split()
        if int(r) > 0:
            rel.setdefault(q, []).append(d)
    paths = []
    for name, p in (("a", 0.25), ("b", 0.30), ("c", 0.22)):
        path = OUT / f"report-run-{name}.trec"
        paths.append(path)
        if path.exists():
            continue
        lines = []
        for q, docs in rel.items():
            ids = list(dict.fromkeys(str(x) for x in rng.integers(0, 8_841_823, size=depth + 8)
                                     if str(x) not in docs))[:depth]
            at = min(int(rng.geometric(p)) - 1, depth + 5)
            if at < depth:
                ids[at] = docs[0]
            for rank, d in enumerate(ids, 1):
                lines.append(f"{q} Q0 {d} {rank} {depth - rank + 1}.0 run-{name}\n")
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(lines))
        tmp.replace(path)
    return paths


def render(doc: Path, stem: str) -> dict[str, Any]:
    html, md, tex = OUT / f"{stem}.html", OUT / f"{stem}.md", OUT / f"{stem}.tex"
    start = time.perf_counter()
    subprocess.run([RANKPROOF, "report", str(doc), "--html", str(html), "--md", str(md),
                    "--latex", str(tex), "--force"], check=True, capture_output=True)
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 2), "html_bytes": html.stat().st_size,
            "markdown_chars": len(md.read_text(encoding="utf-8")),
            "input_bytes": doc.stat().st_size}


def main() -> int:
    OUT.mkdir(exist_ok=True)
    results: dict[str, Any] = {"load": os.getloadavg()}
    doc = scaled_eval()
    eval_path = OUT / "report-eval-7020.json"
    eval_path.write_text(json.dumps(doc), encoding="utf-8")
    results["eval"] = {"queries": len(doc["stages"][0]["per_query"]),
                       **render(eval_path, "report-eval-7020")}

    qrels = DATA / "qrels.msmarco-passage.dev-subset.txt"
    runs = synthetic_runs(qrels)
    cmp_path = OUT / "report-compare-6980.json"
    start = time.perf_counter()
    subprocess.run([RANKPROOF, "compare", str(qrels), *map(str, runs), "--queries",
                    str(DATA / "topics.msmarco-passage.dev-subset.txt"), "-m", "RR@10",
                    "-m", "nDCG@10", "-m", "R@100", "-o", str(cmp_path), "--force"],
                   check=True, capture_output=True)
    results["compare_seconds"] = round(time.perf_counter() - start, 2)
    results["compare"] = {"queries": 6980, **render(cmp_path, "report-compare-6980")}

    for kind in ("eval", "compare"):
        r = results[kind]
        print(f"{kind:8s} {r['queries']:,} queries: report --html --md --latex "
              f"{r['seconds']:.1f} s; HTML {r['html_bytes'] / 1e6:.2f} MB "
              f"({r['html_bytes'] / 10e6:.0%} of the 10 MB bound); Markdown "
              f"{r['markdown_chars']:,} chars (limit 65,536); "
              f"input {r['input_bytes'] / 1e6:.1f} MB")
    print(f"load average at start: {results['load'][0]:.2f}")
    (OUT / "report-results.json").write_text(json.dumps(results, indent=2) + "\n")
    ok = all(results[k]["html_bytes"] < 10_000_000 and results[k]["markdown_chars"] <= 65_536
             for k in ("eval", "compare"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
