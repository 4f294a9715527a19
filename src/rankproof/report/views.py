"""Build the `View` of a document: one builder per kind, the same view for every format.

`build` dispatches on the document's kind (`rankproof.report.document`).
Eval reports and comparison rows are validated by the models that wrote them
(`EvalReport`, `ComparisonRow.from_dict`), so the numbers shown are the ones
the rest of rankproof would read; the other kinds are read field by field,
and any field of the wrong shape is refused by `build` as bad input (exit 2),
never as a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rankproof._errors import InputError
from rankproof.comparison import ComparisonRow
from rankproof.report._view_diag import discovery_view, rag_view
from rankproof.report._view_parts import (
    browser_part,
    delta_parts,
    evidence_of,
    fmt,
    pr_curve,
    provenance_rows,
    summary_lines,
    verdict_of,
)
from rankproof.report._view_synthesis import synthesis_tables
from rankproof.report.compare import label
from rankproof.report.document import Document
from rankproof.report.matrix import build_matrix, eval_matrix
from rankproof.report.view import Latency, Table, View

__all__ = ["build"]


def build(doc: Document) -> View:
    """The view of ``doc``; `InputError` naming the file when a field has the wrong shape."""
    builder = _BUILDERS[doc.kind]
    try:
        return builder(doc)
    except InputError as exc:
        if exc.path is None:
            raise InputError(exc.reason, path=str(doc.path), field=exc.field) from None
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise InputError(f"the {doc.what} is malformed ({type(exc).__name__}: "
                         f"{str(exc)[:200]})", path=str(doc.path)) from None


def _scoped(summary: tuple[str, ...], block: Any) -> tuple[str, ...]:
    """The summary and, when the provenance block records one, its scope line (seed 003's
    reporting rule: full query set or a subset, full corpus or a sampled pool)."""
    from rankproof._manifest import scope_line

    scope = block.get("scope") if isinstance(block, Mapping) else None
    return (*summary, scope_line(scope)) if isinstance(scope, Mapping) else summary


def _base(doc: Document, title: str, **fields: Any) -> View:
    return View(kind=doc.kind, schema_version=doc.schema_version, title=title,
                source=str(doc.path), digest=doc.digest, **fields)


def _eval(doc: Document) -> View:
    from rankproof.data import validate_model
    from rankproof.harness import EvalReport

    report = validate_model(doc.data, EvalReport, str(doc.path), what="report",
                            kind="rankproof eval report")
    verdicts = tuple(verdict_of(r) for r in report.comparisons)
    deltas, delta_notes = delta_parts(verdicts)
    inputs = report.inputs
    title = (f"eval: {inputs.name} — {inputs.scored_queries} scored queries, "
             f"{len(report.stages)} stages, {inputs.granularity} granularity")
    timing = tuple(f"latency {s.name}: {s.latency.describe()}" for s in report.stages
                   if s.latency.conditions() is not None)
    stages = Table(
        key="stages", title="stage means (and per-query latency, ms)",
        columns=("stage", *(label(m) for m in report.measures), "p50 ms", "p95 ms", "p99 ms"),
        rows=tuple((s.name, *(fmt(s.means.get(m)) for m in report.measures),
                    fmt(s.latency.p50, 1), fmt(s.latency.p95, 1), fmt(s.latency.p99, 1))
                   for s in report.stages),
        numeric=(False, *(True for _ in report.measures), True, True, True),
        notes=timing)
    tables = [stages]
    categories = list(dict.fromkeys(c for s in report.stages for c in s.categories))
    if len(categories) > 1:
        tables.append(Table(
            key="categories", title="means by judgment category",
            columns=("category", "n", "stage", *(label(m) for m in report.measures)),
            rows=tuple((c, str(s.categories[c].n), s.name,
                        *(fmt(s.categories[c].means.get(m)) for m in report.measures))
                       for c in categories for s in report.stages if c in s.categories),
            numeric=(False, True, False, *(True for _ in report.measures))))
    abst = [s for s in report.stages if s.abstention is not None]
    if abst:
        tables.append(Table(
            key="abstention", title="abstention: AUROC of the top score (0.5 = chance)",
            columns=("stage", "AUROC", "interval", "answerable", "no-answer", "note"),
            rows=tuple((s.name, fmt(a.auroc), f"[{fmt(a.ci_low, 3)}, {fmt(a.ci_high, 3)}]"
                        if a.ci_low is not None else "—", str(a.answerable), str(a.no_answer),
                        a.reason or a.score)
                       for s in abst if (a := s.abstention) is not None),
            numeric=(False, True, False, True, True, False)))
    tables.extend(synthesis_tables(report.synthesis))
    evidence, missing = evidence_of(doc.data, doc.path)
    per_query = {s.name: s.per_query for s in report.stages}
    browser = browser_part(
        evidence, per_query, report.baseline, [s.name for s in report.stages[1:]],
        report.measures, {m: v.higher_is_better for v in verdicts for m in [v.measure]},
        inputs.query_categories)
    latency = Latency(
        stages=tuple((s.name, s.latency.model_dump()) for s in report.stages),
        values={s.name: tuple(s.latency_ms.values()) for s in report.stages}, notes=timing)
    curves = tuple(c for c in (pr_curve({s.name: s.means for s in report.stages}),)
                   if c is not None)
    prov = provenance_rows(report.provenance.model_dump(exclude_unset=True),
                           ("created_at", report.created_at), ("input digest", doc.digest))
    caveats = (*report.caveats, *missing, *delta_notes)
    matrix = eval_matrix(report, caveats=caveats)
    return _base(doc, title, summary=_scoped(summary_lines(verdicts),
                                             report.provenance.model_dump()), verdicts=verdicts,
                 deltas=deltas, tables=tuple(tables), curves=curves, latency=latency,
                 browser=browser, matrix=matrix, caveats=caveats, provenance=prov)


def _rows(data: Mapping[str, Any]) -> list[ComparisonRow]:
    rows = data.get("rows")
    if not isinstance(rows, list):
        raise InputError("the comparison has no list of rows", field="rows")
    out = []
    for i, raw in enumerate(rows):
        try:
            out.append(ComparisonRow.from_dict(raw))
        except InputError as exc:
            raise InputError(exc.reason, field=f"rows[{i}]") from None
    return out


def _comparison(doc: Document) -> View:
    from rankproof.comparison import load_comparison, rows_from_document

    data = load_comparison(doc.data)
    rows = list(rows_from_document(data)) if doc.schema_version == 1 else _rows(data)
    verdicts = tuple(verdict_of(r) for r in rows)
    deltas, delta_notes = delta_parts(verdicts)
    baseline = str(data["baseline"])
    systems = [str(s) for s in data.get("systems", ())] or list(
        dict.fromkeys(s for r in rows for s in (r.baseline, r.candidate)))
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    for r in rows:
        for system, values in ((r.baseline, r.baseline_values),
                               (r.candidate, r.candidate_values)):
            table = per_query.setdefault(system, {})
            for q, v in zip(r.qids, values, strict=True):
                table.setdefault(q, {})[r.measure] = v
    evidence, missing = evidence_of(data, doc.path)
    measures = [str(m) for m in data.get("measures", ())] or list(
        dict.fromkeys(r.measure for r in rows))
    browser = browser_part(evidence, per_query, baseline,
                           [s for s in systems if s != baseline], measures,
                           {r.measure: r.higher_is_better for r in rows})
    title = (f"comparison: {len(systems)} systems against {baseline}, "
             f"{data.get('n_topics', '?')} topics, {data.get('test', '?')} test")
    prov = provenance_rows(data.get("provenance"), ("input digest", doc.digest),
                           ("test", data.get("test")), ("resamples", data.get("resamples")),
                           ("seed", data.get("seed")), ("correction", data.get("correction")),
                           ("alpha", data.get("alpha")), ("pairs", data.get("pairs")),
                           ("rel_level", data.get("rel_level")), ("topics", data.get("topics")))
    caveats = (*map(str, data.get("caveats", ())), *missing, *delta_notes)
    matrix = build_matrix(
        verdicts, systems=systems, baseline=baseline, measures=measures,
        pairs=str(data.get("pairs") or "baseline"), caveats=caveats,
        title=f"{len(systems)} systems × {len(measures)} measures, baseline {baseline}, "
              f"{data.get('n_topics', '?')} topics")
    return _base(doc, title, summary=_scoped(summary_lines(verdicts), data.get("provenance")),
                 verdicts=verdicts,
                 deltas=deltas, browser=browser, matrix=matrix, caveats=caveats,
                 provenance=prov)


def _rule(check: Mapping[str, Any]) -> str:
    """A check's rule in words, by its own kind: a threshold's bound, a baseline check's
    "no regression", and for any other kind the rule it recorded (else its kind's name),
    never a baseline check's words for a check that is not one. Files written before
    checks recorded their kind are read by their fields, as they were then."""
    kind = check.get("kind")
    if kind is None:
        kind = "threshold" if check.get("op") is not None else "vs_baseline"
    if kind == "threshold":
        return f"{check.get('op')} {check.get('threshold'):g}"
    if kind == "vs_baseline":
        return ("no regression" if check.get("margin") is None
                else f"no regression beyond {check['margin']:g}")
    return str(check.get("rule") or kind)


def _gate(doc: Document) -> View:
    data = doc.data
    checks = data["checks"]
    if not isinstance(checks, list):
        raise InputError("the gate verdict has no list of checks", field="checks")
    rows = []
    verdicts = []
    for c in checks:
        rule = _rule(c)
        interval = "—"
        if c.get("ci_low") is not None and c.get("ci_high") is not None:
            interval = (f"{c['difference']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}]"
                        f" ({c['ci_level']:.4g})")
        rows.append((str(c["id"]), label(str(c.get("metric") or "—")), fmt(c.get("value")),
                     fmt(c.get("baseline_value")), interval, fmt(c.get("p_corrected")), rule,
                     str(c.get("level")), str(c.get("coverage") or "—"), str(c["outcome"])))
        if isinstance(c.get("comparison"), Mapping):
            verdicts.append(verdict_of(ComparisonRow.from_dict(c["comparison"])))
    passed = bool(data["passed"])
    failed = [c for c in checks if not c.get("passed")]
    summary = (f"gate {'PASSED' if passed else 'FAILED'}: {len(checks)} checks, "
               f"{len(failed)} failed" + (f" ({', '.join(str(c['id']) for c in failed)})"
                                          if failed else ""),
               *(str(c.get("message")) for c in failed))
    table = Table(key="checks", title=f"checks of run {data.get('run')!s}"
                  + (f" against {data['baseline']}" if data.get("baseline") else ""),
                  columns=("check", "metric", "value", "baseline", "Δ [interval] (level)",
                           "p corr", "rule", "level", "coverage", "outcome"),
                  rows=tuple(rows),
                  numeric=(False, False, True, True, False, True, False, False, False, False))
    deltas, delta_notes = delta_parts(verdicts)
    prov = provenance_rows(data.get("provenance"), ("input digest", doc.digest),
                           ("checks", data.get("source")), ("seed", data.get("seed")),
                           ("resamples", data.get("resamples")),
                           ("correction", data.get("correction")))
    return _base(doc, f"gate: run {data.get('run')!s}", summary=summary, passed=passed,
                 verdicts=tuple(verdicts), deltas=deltas, tables=(table,),
                 caveats=(*map(str, data.get("notes", ())), *delta_notes), provenance=prov)


def _measure(doc: Document) -> View:
    runs = doc.data["runs"]
    if not isinstance(runs, list) or not runs:
        raise InputError("the measure results hold no runs", field="runs")
    names = [str(r["run"]) for r in runs]
    measures = list(dict.fromkeys(str(m) for r in runs for m in r["measures"]))
    table = Table(key="means", title="means over topics",
                  columns=("run", "topics", *(label(m) for m in measures)),
                  rows=tuple((str(r["run"]), str(r.get("n_topics", "?")),
                              *(fmt(r["means"].get(m)) for m in measures)) for r in runs),
                  numeric=(False, True, *(True for _ in measures)))
    from rankproof.measures import polarity

    per_query = {str(r["run"]): r.get("per_query") or {} for r in runs}
    browser = browser_part(None, per_query, names[0], names[1:], measures,
                           {m: polarity(m) for m in measures})
    notes = [str(n) for r in runs for n in (*r.get("notes", ()), *r.get("warnings", ()))]
    curves = tuple(c for c in (pr_curve({str(r["run"]): r["means"] for r in runs}),)
                   if c is not None)
    tool = doc.data.get("tool") or {}
    prov = provenance_rows(doc.data.get("provenance"), ("input digest", doc.digest),
                           ("tool_version", tool.get("version")),
                           ("qrels digest", runs[0].get("qrels_digest")))
    return _base(doc, f"measure: {len(runs)} run(s), {len(measures)} measure(s)",
                 summary=_scoped((), doc.data.get("provenance")),
                 tables=(table,), curves=curves, browser=browser,
                 caveats=tuple(dict.fromkeys(notes)), provenance=prov)


#: Cases listed in a run's or baseline's table (the JSON keeps them all).
MAX_CASE_ROWS = 200


def _run(doc: Document) -> View:
    """A run result (``rankproof.run``) or a saved baseline holding one (``rankproof.baseline``)."""
    data = doc.data
    run = data["run"] if doc.kind == "rankproof.baseline" else data
    metrics = [str(m) for m in run["metrics"]]
    rows = run["rows"]
    if not isinstance(rows, list):
        raise InputError("the run's rows are not a list", field="rows")
    means = {m: [r["values"][m] for r in rows if isinstance(r["values"].get(m), int | float)]
             for m in metrics}
    table = Table(key="run-means", title=f"{run['name']!s}: {len(rows)} cases",
                  columns=("metric", "mean", "cases"),
                  rows=tuple((label(m), fmt(sum(v) / len(v)) if v else "—", str(len(v)))
                             for m, v in means.items()),
                  numeric=(False, True, True))
    cases = Table(key="cases", title="per case" + (f" (first {MAX_CASE_ROWS} of {len(rows)})"
                                                   if len(rows) > MAX_CASE_ROWS else ""),
                  columns=("case", *(label(m) for m in metrics)),
                  rows=tuple((str(r["case_id"]), *(fmt(r["values"].get(m)) for m in metrics))
                             for r in rows[:MAX_CASE_ROWS]),
                  numeric=(False, *(True for _ in metrics)))
    latencies = tuple(float(r["latency_ms"]) for r in rows
                      if isinstance(r.get("latency_ms"), int | float))
    latency = None
    stored = run.get("latency")
    notes = [str(n) for n in run.get("notes") or ()]
    if isinstance(stored, dict) and latencies:
        latency = Latency(stages=((str(run["name"]), {
            k: float(stored[k]) for k in ("n", "p50", "p95", "p99", "mean", "max")
            if isinstance(stored.get(k), int | float)}),), values={str(run["name"]): latencies})
    elif latencies:  # a result written before its latency summary was stored
        notes.append("the cases were timed, but this result stores no latency summary (it "
                     "was written by an earlier rankproof): run it again to see one")
    what = (f"baseline {data['name']!s}, run" if doc.kind == "rankproof.baseline" else "run")
    prov = provenance_rows(run.get("provenance"), ("input digest", doc.digest),
                           *((("baseline", data.get("name")), ("created_at",
                                                               data.get("created_at")))
                             if doc.kind == "rankproof.baseline" else ()))
    return _base(doc, f"{what}: {run['name']!s}", tables=(table, cases), latency=latency,
                 caveats=tuple(notes), provenance=prov)


def _discovery(doc: Document) -> View:
    return discovery_view(doc, _base)


def _rag(doc: Document) -> View:
    return rag_view(doc, _base)


_BUILDERS: dict[str, Callable[[Document], View]] = {
    "rankproof.eval": _eval, "rankproof.comparison": _comparison, "rankproof.gate": _gate,
    "rankproof.measure": _measure, "rankproof.discovery": _discovery, "rankproof.rag": _rag,
    "rankproof.run": _run, "rankproof.baseline": _run,
}
