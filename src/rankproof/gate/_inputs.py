"""What a gate can check: any rankproof JSON that keeps per-query values, as a `RunResult`.

The gate pairs a run with its baseline case by case, so it needs every
query's value, not just means. Four rankproof documents keep them, and each
becomes the same `RunResult`:

* an **eval report** (``rankproof eval -o``): one stage
  (`rankproof.harness.run_result_from_report`);
* **``rankproof measure`` JSON** (``-f json``, or ``-o FILE`` with ``-f json``):
  one of its runs; the JSON document always holds ``per_query`` values;
* a **comparison** (``rankproof compare -o``, kind ``rankproof.comparison``):
  one of its systems, rebuilt from the paired per-query values its rows keep;
* a **rag report** (``rankproof rag score -o``, kind ``rankproof.rag``): its
  per-case values of every RAG metric;
* a **run result** (`RunResult.to_json`, kind ``rankproof.run``) or a
  **baseline** file (kind ``rankproof.baseline``).

Which system of a document to check is chosen by name (``stage``). Without
a name a document's system is taken only where the document itself says
which it is: a document with one system; as the run under test, the one
candidate of a comparison; as the baseline, a comparison's baseline or an
eval report's baseline stage (its first). Otherwise the name is required,
and the message lists the names.

Files that keep no per-query values — a gate verdict, ``rankproof measure``'s
JSONL/CSV records, a measure document stripped of ``per_query`` — are
refused with a message saying what to pass instead.

Provenance: a result read from a measure or comparison document was made
from TREC runs and qrels, so its ``granularity`` records that and the
relevance level (``trec runs, rel_level 1``) — two results judged at
different levels are not compared — and its ``judgments_digest`` is the
qrels digest the document records (a comparison records none; the verdict
then says the judgments could not be checked). Its ``measures`` are left
empty: those documents have no evaluation config whose measure list could
drift, and a checked measure missing on either side is refused by name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from rankproof._errors import InputError, RankproofError
from rankproof._limits import shown
from rankproof.comparison import rows_from_document
from rankproof.data import Input, parse_document, read_document, validate_model
from rankproof.gate._baseline import (
    DEFAULT_DIR,
    Baseline,
    baseline_from_document,
    load_baseline,
    run_from_document,
)
from rankproof.harness import EvalReport, run_result_from_report
from rankproof.measures import lookup
from rankproof.targets import CaseRow, RunProvenance, RunResult

Role = Literal["run", "baseline"]

ACCEPTED = ("an eval report (rankproof eval -o), rankproof measure JSON (-f json), a comparison "
            "(rankproof compare -o), a rag report (rankproof rag score -o), a run result "
            "(RunResult.to_json) or a baseline")
"""What a gate input may be, as messages say it."""

_MEANS_ONLY = ("rankproof measure's JSONL/CSV records; the gate needs the JSON document, which "
               "keeps every query's value: rankproof measure QRELS RUN... -f json -o FILE.json")


def load_result(path: str | os.PathLike[str], stage: str | None = None, *,
                role: Role = "run") -> RunResult:
    """The `RunResult` of one system of the rankproof JSON at ``path`` (module docstring).

    ``stage`` names the eval report stage, measure run or comparison system;
    ``role`` (``"run"`` or ``"baseline"``) decides the default (module
    docstring). Every failure is an `InputError` naming the path.
    """
    what = "report" if role == "run" else "baseline"
    label = os.fspath(path)
    try:
        raw = read_document(path, what=what)
    except InputError as exc:
        if "invalid JSON" in str(exc) and _is_records(path):
            raise InputError(f"this is {_MEANS_ONLY}", path=label) from None
        raise
    return result_from_document(raw, label, stage, role=role)


def load_baseline_input(ref: str | os.PathLike[str],
                        directory: str | os.PathLike[str] = DEFAULT_DIR, *,
                        stage: str | None = None) -> Baseline:
    """A baseline by name, a baseline file, or one system of any document `load_result` reads.

    A reference is a path under `rankproof.gate.load_baseline`'s rule;
    a path to a document that is not a baseline file gives its system
    ``stage`` (by default the one the document declares the baseline) as a
    `Baseline` named after that system.
    """
    text = os.fspath(ref)
    is_path = "/" in text or os.sep in text or text.endswith(".json") or Path(text).is_file()
    if not is_path:
        if stage is not None:
            raise InputError(f"--baseline-stage {stage!r} needs a file to choose from, but "
                             f"baseline {text!r} is a saved baseline (one run)")
        return load_baseline(text, directory)
    try:
        raw = read_document(text, what="baseline")
    except InputError as exc:
        if "invalid JSON" in str(exc) and _is_records(text):
            raise InputError(f"this is {_MEANS_ONLY}", path=text) from None
        raise
    if isinstance(raw, Mapping) and raw.get("kind") == "rankproof.baseline" and stage is None:
        return baseline_from_document(raw, Path(text))
    result = result_from_document(raw, text, stage, role="baseline")
    return Baseline(name=result.name, result=result, created_at=result.provenance.created_at,
                    source={"file": text, "stage": result.name}, path=Path(text))


def _is_records(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts like `rankproof measure`'s JSONL or CSV records."""
    if os.fspath(path) == "-":
        return False
    try:
        first = Input.open(path).first_line().decode("utf-8", "replace").strip()
    except RankproofError:
        return False
    if first.replace(" ", "") == "run,topic,measure,value":
        return True
    if not first.startswith("{") or first.count("{") > 1:  # a record is one flat object
        return False
    try:
        row = parse_document(first, str(path), what="record")
    except ValueError:
        return False
    return isinstance(row, dict) and {"run", "topic", "measure", "value"} <= set(row)


def result_from_document(raw: Any, label: str, stage: str | None = None, *,
                         role: Role = "run") -> RunResult:
    """`load_result` on an already parsed document (``label`` names it in messages)."""
    try:
        return _dispatch(raw, label, stage, role)
    except InputError as exc:
        if exc.path is not None:
            raise
        raise InputError(exc.reason, path=label, field=exc.field) from None


def _dispatch(raw: Any, label: str, stage: str | None, role: Role) -> RunResult:
    if not isinstance(raw, Mapping):
        raise InputError(f"not a rankproof eval report or other document with per-query values "
                         f"(found a JSON {type(raw).__name__}); pass {ACCEPTED}")
    kind = raw.get("kind")
    if kind == "rankproof.eval":
        report = validate_model(raw, EvalReport, label, what="report",
                                kind="rankproof eval report")
        if stage is None and role == "baseline" and report.stages:
            stage = report.stages[0].name  # the report's baseline stage
        return run_result_from_report(report, stage)
    if kind == "rankproof.comparison":
        return _from_comparison(raw, stage, role)
    if kind == "rankproof.run":
        return _named(run_from_document(raw, label), stage, "run result")
    if kind == "rankproof.rag":  # a rag report keeps its per-case values as a run
        import rankproof.rag  # noqa: F401 - registers the RAG metrics the checks may name

        if not isinstance(raw.get("run"), Mapping):
            raise InputError("a rag report without its 'run' of per-case values; rerun "
                             "rankproof rag score -o", path=label, field="run")
        return _named(run_from_document(raw["run"], label), stage, "rag report")
    if kind == "rankproof.baseline":
        return _named(baseline_from_document(raw, Path(label)).result, stage, "baseline")
    if kind == "rankproof.gate":
        raise InputError("this is a gate verdict: it keeps only its baseline checks' paired "
                         "values, not a run's per-query values; pass the eval report, measure "
                         "JSON or comparison it was computed from")
    tool = raw.get("tool")
    if kind is None and isinstance(tool, Mapping) and tool.get("name") == "rankproof" \
            and "runs" in raw:
        return _from_measure(raw, stage)
    found = f"kind {shown(kind)}" if kind is not None else "no 'kind' field"
    raise InputError(f"not a rankproof eval report or other document with per-query values "
                     f"({found}); pass {ACCEPTED}")


def _named(result: RunResult, stage: str | None, what: str) -> RunResult:
    if stage is not None and stage != result.name:
        raise InputError(f"the {what} holds one run, {shown(result.name, 60)}, not "
                         f"{shown(stage, 60)}")
    return result


def _listed(names: Sequence[str], most: int = 10) -> str:
    """Names from a file, quoted and bounded, for a message."""
    head = ", ".join(n if n.isprintable() and len(n) <= 60 else shown(n, 60)
                     for n in names[:most])
    return head + (f" and {len(names) - most} more" if len(names) > most else "")


def _choose(names: Sequence[str], stage: str | None, default: str | None, what: str) -> str:
    if stage is not None:
        if stage not in names:
            raise InputError(f"the {what} has no system {shown(stage, 60)} (systems: "
                             f"{_listed(names)})")
        return stage
    if default is not None:
        return default
    if len(names) == 1:
        return names[0]
    raise InputError(f"the {what} has {len(names)} systems ({_listed(names)}); choose one "
                     "(--stage NAME)")


def _canonical(name: str) -> str:
    try:
        return lookup(name).name
    except InputError:
        return name  # a metric registered later: resolved when the gate runs


def _granularity(rel_level: object) -> str | None:
    if isinstance(rel_level, int) and not isinstance(rel_level, bool):
        return f"trec runs, rel_level {rel_level}"
    return None


def _text_list(value: object) -> tuple[str, ...]:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def _from_measure(raw: Mapping[str, Any], stage: str | None) -> RunResult:
    runs = raw.get("runs")
    if not isinstance(runs, Sequence) or isinstance(runs, str) or not runs \
            or not all(isinstance(r, Mapping) for r in runs):
        raise InputError("rankproof measure JSON: 'runs' must be a non-empty list of runs",
                         field="runs")
    names = [r.get("run") for r in runs]
    if not all(isinstance(n, str) and n for n in names):
        raise InputError("rankproof measure JSON: every run needs a name ('run')", field="runs")
    if len(set(names)) != len(names):
        raise InputError(f"rankproof measure JSON: run names repeat ({_listed(names)}), so a "
                         "run cannot be chosen by name", field="runs")
    name = _choose(names, stage, None, "measure JSON")
    run = runs[names.index(name)]
    per_query = run.get("per_query")
    if per_query is None:
        raise InputError(f"rankproof measure JSON: run {shown(name, 60)} keeps means only (no "
                         "'per_query'); the gate pairs queries, so write the document with "
                         "rankproof measure QRELS RUN... -f json -o FILE.json",
                         field="per_query")
    if not isinstance(per_query, Mapping):
        raise InputError(f"rankproof measure JSON: run {shown(name, 60)}: 'per_query' must map "
                         "query ids to {measure: value}", field="per_query")
    rows = []
    for qid, values in per_query.items():
        if not isinstance(values, Mapping):
            raise InputError(f"rankproof measure JSON: run {shown(name, 60)}, query "
                             f"{shown(qid, 60)}: "
                             "expected {measure: value}", field="per_query")
        rows.append(CaseRow(case_id=qid, values={_canonical(str(m)): v
                                                 for m, v in values.items()}))
    measures = [_canonical(m) for m in _text_list(run.get("measures"))]
    metrics = tuple(dict.fromkeys([*measures, *(m for r in rows for m in r.values)]))
    digest = run.get("qrels_digest")
    notes = [*_text_list(run.get("notes")), *_text_list(run.get("warnings"))]
    zero = _text_list(run.get("zero_filled"))
    if zero:
        notes.append(f"{len(zero)} qrels topic(s) were not retrieved and score 0 (trec_eval -c)")
    tool = raw.get("tool")
    version = tool.get("version") if isinstance(tool, Mapping) else None
    return RunResult(
        name=name, rows=tuple(rows), metrics=metrics,
        provenance=RunProvenance(
            kind="report", granularity=_granularity(run.get("rel_level")),
            judgments_digest=digest if isinstance(digest, str) else None, stage=name,
            tool_version=version if isinstance(version, str) else "unknown"),
        notes=tuple(notes))


def _from_comparison(raw: Mapping[str, Any], stage: str | None, role: Role) -> RunResult:
    rows = rows_from_document(raw)
    systems = list(_text_list(raw.get("systems"))) or list(dict.fromkeys(
        s for r in rows for s in (r.baseline, r.candidate)))
    base = raw.get("baseline") if isinstance(raw.get("baseline"), str) else None
    candidates = [s for s in systems if s != base]
    default = base if role == "baseline" else (candidates[0] if len(candidates) == 1 else None)
    name = _choose(systems, stage, default, "comparison")
    values: dict[str, dict[str, float]] = {}  # qid -> measure -> value
    measures: list[str] = []
    for r in rows:
        side = r.candidate_values if r.candidate == name else (
            r.baseline_values if r.baseline == name else None)
        if side is None:
            continue
        measure = _canonical(r.measure)
        if measure in measures:
            continue  # the same system's values again, from another pair
        measures.append(measure)
        for qid, v in zip(r.qids, side, strict=True):
            values.setdefault(qid, {})[measure] = v
    if not values:
        raise InputError(f"the comparison keeps no per-query values for {shown(name, 60)} (it "
                         "is in no row); choose a system that was compared (--stage NAME)")
    digest = raw.get("qrels_digest")
    return RunResult(
        name=name, rows=tuple(CaseRow(case_id=q, values=v) for q, v in values.items()),
        metrics=tuple(measures),
        provenance=RunProvenance(
            kind="report", granularity=_granularity(raw.get("rel_level")),
            judgments_digest=digest if isinstance(digest, str) else None, stage=name,
            tool_version="unknown"),
        notes=_text_list(raw.get("caveats")))
