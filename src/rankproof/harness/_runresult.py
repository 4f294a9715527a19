"""One stage of an `EvalReport` as a `rankproof.targets.RunResult`.

The gate checks a target's run and a stage of a ``rankproof eval`` report the
same way, so both must become the same shape. The conversion lives here, with
the report, because the harness sits above `rankproof.targets`: a target's
result type must not know about the harness that produced a report.
"""

from __future__ import annotations

from rankproof._errors import InputError
from rankproof.harness._report import EvalReport
from rankproof.measures import Measure, lookup
from rankproof.targets import CaseRow, RunProvenance, RunResult, compute_aggregate


def _parse_measure(spec: str) -> Measure:
    d = lookup(spec)
    if d.measure is None:
        raise InputError(f"report measure {spec!r} is not a retrieval measure")
    return d.measure


def run_result_from_report(report: EvalReport, stage: str | None = None) -> RunResult:
    """Rows of one stage of a ``rankproof eval`` report: per-query values and latencies.

    ``stage`` may be omitted only when the report has a single stage: which
    stage is "the system under test" is the caller's decision, not a
    default. Queries the report did not score (no-answer queries) become
    rows with a latency but no retrieval values; a note says so. Every row
    carries the per-case ``latency_ms`` metric when the report timed it.
    """
    names = [s.name for s in report.stages]
    if stage is None:
        if len(names) != 1:
            raise InputError(f"the report has {len(names)} stages ({', '.join(names)}); "
                             "choose one (--stage NAME)")
        stage = names[0]
    if stage not in names:
        raise InputError(f"the report has no stage {stage!r} (stages: {', '.join(names)})")
    s = report.stage(stage)
    measures = tuple(str(_parse_measure(m)) for m in report.measures)
    canonical = {m: str(_parse_measure(m)) for q in s.per_query.values() for m in q}
    order = list(dict.fromkeys([*s.per_query, *s.latency_ms]))
    rows = []
    for qid in order:
        values = {canonical[m]: v for m, v in s.per_query.get(qid, {}).items()}
        lat = s.latency_ms.get(qid)
        if lat is not None:
            values["latency_ms"] = lat
        rows.append(CaseRow(case_id=qid, values=values, latency_ms=lat))
    metrics = (*measures, *(("latency_ms",) if s.latency_ms else ()))
    unscored = [q for q in order if q not in s.per_query]
    notes = list(s.notes)
    if unscored:
        notes.append(f"{len(unscored)} quer{'y has' if len(unscored) == 1 else 'ies have'} "
                     "no retrieval values (not scored in the report: no-answer queries)")
    config = report.config
    result_rows = tuple(rows)
    aggregates = {}
    if all(r.latency_ms is not None for r in result_rows) and result_rows:
        for name in ("latency_p50", "latency_p95", "latency_p99", "latency_mean"):
            aggregates[name] = compute_aggregate(lookup(name), result_rows, stage)
    return RunResult(
        name=stage, rows=result_rows, metrics=metrics, aggregates=aggregates,
        provenance=RunProvenance(
            kind="report", measures=measures,
            granularity=str(config.get("granularity", report.inputs.granularity)),
            judgments_digest=report.provenance.judgments_digest,
            corpus_digest=report.provenance.corpus_digest,
            config_digest=report.provenance.config_digest, stage=stage,
            tool_version=report.provenance.tool_version, created_at=report.created_at),
        notes=tuple(notes))
