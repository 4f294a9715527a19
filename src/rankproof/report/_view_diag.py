"""Views of the diagnostic documents: discovery reports and RAG reports.

A discovery document holds up to five parts (the evaluation, a calibrated
floor, a selector sweep, a distractor curve, an indexing comparison); each
part present becomes a table and, where it has a shape worth seeing, a
figure: the failure taxonomy as bars, the calibration grid and the distractor
curve as lines. A RAG report's metric means are grouped by the dimension
they measure (answer, grounding, citations, the triad).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rankproof.report._view_parts import fmt, provenance_rows
from rankproof.report.document import Document
from rankproof.report.view import Bars, Curve, Series, Table, View

Base = Callable[..., View]

_DIMENSIONS = {
    "exact_match": "answer", "token_f1": "answer", "rouge_l": "answer", "bleu": "answer",
    "judge_score": "answer", "grounding": "grounding", "grounding_cited": "grounding",
    "quotes_unsupported": "grounding", "citations_dangling": "citations",
    "citation_precision": "citations", "citation_recall": "citations",
    "context_relevance": "triad", "answer_relevance": "triad", "groundedness": "triad",
}


def dimension(metric: str) -> str:
    """The RAG dimension a metric measures (n-gram grounding variants are grounding)."""
    if metric.startswith("grounding_"):
        return "grounding"
    if metric.startswith("citation"):
        return "citations"
    return _DIMENSIONS.get(metric, "other")


def _table(key: str, title: str, mapping: Mapping[str, Any]) -> Table:
    rows = tuple((str(k), fmt(v) if isinstance(v, float) else str(v))
                 for k, v in mapping.items() if not isinstance(v, Mapping | list))
    return Table(key=key, title=title, columns=("", "value"), rows=rows, numeric=(False, True))


def _evaluation(part: Mapping[str, Any]) -> tuple[list[Table], list[Bars], list[str]]:
    metrics = part["retrieval"]["metrics"]
    tables = [Table(key="discovery-metrics",
                    title=f"retrieval over {part['n_gold']} cases with a gold capability",
                    columns=("measure", "value"),
                    rows=tuple((str(m), fmt(v)) for m, v in metrics.items()),
                    numeric=(False, True))]
    summary = {k: part.get(k) for k in ("n_cases", "n_gold", "n_abstention", "primary_k",
                                        "primary", "abstention_accuracy", "abstain_threshold",
                                        "mode", "degraded")}
    tables.append(_table("discovery-summary", "cases and settings", summary))
    classes = part["failure_classes"]
    bars = [Bars(key="taxonomy", title="failure taxonomy (cases per class)",
                 labels=tuple(str(c) for c in classes),
                 groups=(("cases", tuple(float(n) for n in classes.values())),),
                 value_label="cases")]
    tables.append(Table(key="taxonomy", title="failure taxonomy",
                        columns=("class", "cases"),
                        rows=tuple((str(c), str(n)) for c, n in classes.items()),
                        numeric=(False, True)))
    return tables, bars, [str(n) for n in part.get("notes", ())]


def _calibration(part: Mapping[str, Any]) -> tuple[Table, Curve | None]:
    keep = {k: part.get(k) for k in ("min_score", "sensitivity", "specificity", "youden_j",
                                     "balanced_accuracy", "separable", "n_positive",
                                     "n_abstention", "reason", "objective")}
    table = _table("calibration", "calibrated abstention floor", keep)
    grid = part.get("grid") or []
    if len(grid) < 2:
        return table, None
    xs = tuple(float(g["min_score"]) for g in grid)
    curve = Curve(key="calibration", title="calibration: sensitivity and specificity by floor",
                  x_label="min_score (top-score floor)", y_label="rate",
                  series=(Series("sensitivity", xs, tuple(float(g["sensitivity"]) for g in grid)),
                          Series("specificity", xs, tuple(float(g["specificity"]) for g in grid))),
                  y_range=(0.0, 1.0),
                  notes=(f"chosen floor {fmt(part.get('min_score'))}",))
    return table, curve


def _sweep(part: Mapping[str, Any]) -> Table:
    objective = str(part.get("objective", "selection_f1"))
    rows = []
    for p in part.get("points", ()):
        rep = p.get("report", {})
        rows.append((str(p.get("max_k")), str(p.get("rel")), fmt(p.get("min_score")),
                     fmt(rep.get("selection_precision")), fmt(rep.get("selection_recall")),
                     fmt(rep.get("selection_f1")), fmt(rep.get("abstention_accuracy"))))
    return Table(key="sweep", title=f"selector sweep (objective {objective})",
                 columns=("max_k", "rel", "min_score", "precision", "recall", "F1",
                          "abstention acc."),
                 rows=tuple(rows), numeric=(True,) * 7)


def _distractor(part: Mapping[str, Any]) -> tuple[Table, Curve]:
    points = part["points"]
    xs = tuple(float(p["size"]) for p in points)
    curve = Curve(key="distractor", title="distractor curve: accuracy as the catalogue grows",
                  x_label="catalogue size", y_label="top-1 accuracy",
                  series=(Series("accuracy", xs, tuple(float(p["accuracy"]) for p in points),
                                 tuple(float(p["ci_low"]) for p in points),
                                 tuple(float(p["ci_high"]) for p in points)),),
                  x_log=True, y_range=(0.0, 1.0))
    table = Table(key="distractor", title="distractor curve",
                  columns=("size", "accuracy", "interval", "trials", "hits/attempts"),
                  rows=tuple((str(p["size"]), fmt(p["accuracy"]),
                              f"[{fmt(p['ci_low'], 3)}, {fmt(p['ci_high'], 3)}]",
                              str(p["trials"]), f"{p['hits']}/{p['attempts']}")
                             for p in points), numeric=(True, True, False, True, True))
    return table, curve


def _indexings(part: Mapping[str, Any]) -> tuple[Table, list[str]]:
    labels = [str(x) for x in part["labels"]]
    themes = [str(t) for t in part["themes"]]
    rows = []
    for lab in labels:
        for theme in themes:
            m = part["metrics"][lab][theme]
            rows.append((lab, theme, fmt(m.get("ndcg")), fmt(m.get("fp_rate")),
                         fmt(m.get("hard_positive_recall"))))
    table = Table(key="indexings",
                  title=f"indexings by theme (nDCG@{part['k']}, baseline {part['baseline']})",
                  columns=("indexing", "theme", "nDCG", "FP rate", "hard-positive recall"),
                  rows=tuple(rows), numeric=(False, False, True, True, True))
    return table, [str(n) for n in part.get("notes", ())]


def discovery_view(doc: Document, base: Base) -> View:
    data = doc.data
    tables: list[Table] = []
    bars: list[Bars] = []
    curves: list[Curve] = []
    notes: list[str] = []
    summary: list[str] = []
    if isinstance(data.get("discovery"), Mapping):
        part = data["discovery"]
        t, b, n = _evaluation(part)
        tables += t
        bars += b
        notes += n
        classes = part["failure_classes"]
        summary.append(f"{part['n_cases']} cases: {classes.get('hit_rank_1', 0)} found first, "
                       f"{classes.get('surfaced_low_rank', 0)} found lower, "
                       f"{classes.get('retrieval_miss', 0)} missed; primary "
                       f"{fmt(part.get('primary'))}")
    if isinstance(data.get("calibration"), Mapping):
        table, curve = _calibration(data["calibration"])
        tables.append(table)
        curves += [curve] if curve is not None else []
    if isinstance(data.get("sweep"), Mapping):
        tables.append(_sweep(data["sweep"]))
    if isinstance(data.get("curve"), Mapping):
        table, curve = _distractor(data["curve"])
        tables.append(table)
        curves.append(curve)
    if isinstance(data.get("comparison"), Mapping):
        table, n = _indexings(data["comparison"])
        tables.append(table)
        notes += n
        summary.append(f"indexings compared: {', '.join(map(str, data['comparison']['labels']))}")
    identity = data.get("identity")
    prov = provenance_rows(data.get("provenance"), ("input digest", doc.digest),
                           *(("identity", identity),) if isinstance(identity, str) else ())
    if isinstance(identity, Mapping):
        prov = (*prov, *provenance_rows({"identity": identity}))
    return base(doc, "discovery report", summary=tuple(summary), tables=tuple(tables),
                bars=tuple(bars), curves=tuple(curves),
                caveats=tuple(dict.fromkeys(notes)), provenance=prov)


def rag_view(doc: Document, base: Base) -> View:
    data = doc.data
    means: Mapping[str, float] = data["means"]
    metrics = [str(m) for m in data.get("metrics", means)]
    dims = list(dict.fromkeys(dimension(m) for m in metrics))
    table = Table(key="rag-means", title=f"{data.get('name')!s}: {data.get('n')} answers",
                  columns=("dimension", "metric", "mean"),
                  rows=tuple((dimension(m), m, fmt(means.get(m))) for m in metrics),
                  numeric=(False, False, True))
    tables = [table]
    bars = []
    for dim in dims:
        names = tuple(m for m in metrics if dimension(m) == dim and means.get(m) is not None)
        if names:
            bars.append(Bars(key=f"rag-{dim}", title=f"{dim}: means", labels=names,
                             groups=((str(data.get("name", "mean")),
                                      tuple(float(means[m]) for m in names)),),
                             value_label="mean"))
    if isinstance(data.get("judge"), Mapping):
        tables.append(_table("judge", "LLM judge (advisory)", data["judge"]))
    unscored = data.get("unscored") or {}
    if unscored:
        tables.append(Table(key="unscored", title="answers not scored, by metric",
                            columns=("metric", "answers"),
                            rows=tuple((str(k), str(v if not isinstance(v, list) else len(v)))
                                       for k, v in unscored.items()), numeric=(False, True)))
    manifest = data.get("manifest")
    prov = provenance_rows(data.get("provenance"), ("input digest", doc.digest),
                           ("answers", data.get("source")))
    if isinstance(manifest, Mapping):
        prov = (*prov, *provenance_rows({"manifest": manifest}))
    summary = tuple(f"{dim}: " + ", ".join(f"{m} {fmt(means.get(m), 3)}" for m in metrics
                                          if dimension(m) == dim) for dim in dims)
    return base(doc, f"RAG report: {data.get('name')!s}", summary=summary, tables=tuple(tables),
                bars=tuple(bars), caveats=tuple(str(c) for c in data.get("caveats", ())),
                provenance=prov)
