"""The kinds that run a whole command or read other stages' documents: eval, gate, report.

* ``eval`` is ``rankproof eval`` in one stage (`rankproof.harness.run_experiment` with an
  `rankproof.harness.EvalConfig` made of the stage's fields) → ``report.json``;
* ``gate`` is ``rankproof gate`` over a measure, compare or eval stage's document, with
  another such stage as the optional baseline → ``verdict.json`` and ``verdict.md``; a
  failed blocking check is the stage's result (the run exits 1), not an error;
* ``report`` is ``rankproof report`` over any stage's JSON → ``report.html``,
  ``report.md``, ``report.tex`` (with ``report.sources.json``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from rankproof.comparison import MAX_INLINE_EVIDENCE_IDS, Evidence, sidecar_name, split_evidence
from rankproof.gate import load_baseline_input, load_checks, load_result, run_gate
from rankproof.harness import EvalConfig, run_experiment
from rankproof.pipeline._context import Context, Made
from rankproof.pipeline._kinds import embed_model_spec, stamp


def eval_config(ctx: Context, stage: Any) -> EvalConfig:
    """The stage's `EvalConfig`: its fields, the inputs' granularity and chunking and the
    file's seed where the stage leaves them out, ``rankproof eval``'s defaults otherwise."""
    given = {k: v for k, v in stage.model_dump(exclude={"id", "kind"}).items() if v is not None}
    src = ctx.exp.inputs
    given.setdefault("granularity", src.default_granularity)
    given.setdefault("chunk_size", src.chunk_size)
    given.setdefault("overlap", src.overlap)
    given.setdefault("seed", ctx.exp.seed)
    for name in ("stages", "measures"):
        if name in given:
            given[name] = tuple(given[name])
    if given.get("rerank_model") is not None:
        given["rerank_model"] = str(ctx.exp.resolve(given["rerank_model"]))
    if given.get("embed_model") is not None:
        given["embed_model"] = embed_model_spec(ctx, given["embed_model"])
    config = EvalConfig(**given)
    config.check()
    return config


def eval_stage(ctx: Context, stage: Any, work: Path) -> Made:
    config = eval_config(ctx, stage)
    inputs = ctx.sources.load(config.granularity, config.chunk_size, config.overlap)
    report, _ = run_experiment(inputs, config)
    made = Made(document="report.json", input_files=ctx.sources.files(),
                notes=list(report.caveats))
    report = report.stamped(inputs=made.input_files, output=ctx.folder(stage.id) / "report.json",
                            scope={"pool": ctx.exp.scope.pool})
    evidence = report.evidence
    if isinstance(evidence, Evidence) and evidence.ids > MAX_INLINE_EVIDENCE_IDS:
        ref, blob = split_evidence(evidence, sidecar_name(work / "report.json"))
        (work / ref.sidecar).write_bytes(blob)
        report = report.model_copy(update={"evidence": ref})
    (work / "report.json").write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    made.summary["means"] = {s.name: dict(s.means) for s in report.stages}
    made.summary["rows"] = [{"baseline": r.baseline, "candidate": r.candidate,
                             "measure": r.measure, "verdict": r.verdict}
                            for r in report.comparisons]
    return made


def gate_stage(ctx: Context, stage: Any, work: Path) -> Made:
    from rankproof.report.gate import verdict_markdown

    source = ctx.document_path(stage.input)
    checks = ctx.exp.resolve(stage.checks)
    result = load_result(source, stage.system)
    spec = load_checks(checks, known_case_ids=result.case_ids)
    base = None
    upstream = [source]
    if stage.baseline is not None:
        base_path = ctx.document_path(stage.baseline)
        upstream.append(base_path)
        base = load_baseline_input(str(base_path), stage=stage.baseline_system)
    verdict = run_gate(spec, result, base)
    made = Made(document="verdict.json", input_files={"checks": checks},
                upstream_files=upstream, passed=verdict.passed)
    verdict = dataclasses.replace(verdict, provenance=stamp(ctx, stage, made))
    (work / "verdict.json").write_text(verdict.to_json() + "\n", encoding="utf-8")
    (work / "verdict.md").write_text(verdict_markdown(verdict), encoding="utf-8")
    made.summary["passed"] = verdict.passed
    made.summary["failed"] = [c.id for c in verdict.checks if not c.passed]
    return made


REPORT_FILES = {"html": "report.html", "md": "report.md", "latex": "report.tex"}


def report_stage(ctx: Context, stage: Any, work: Path) -> Made:
    from rankproof.report.document import read
    from rankproof.report.views import build

    source = ctx.document_path(stage.input)
    view = build(read(source))
    for fmt in dict.fromkeys(stage.formats):
        name = REPORT_FILES[fmt]
        if fmt == "html":
            from rankproof.report.html import render_html

            text = render_html(view)
        elif fmt == "md":
            from rankproof.report.markdown import render_markdown

            text = render_markdown(view)
        else:
            from rankproof.report.latex import latex_sources, render_latex

            text = render_latex(view)
            sources = latex_sources(view, command=["rankproof", "run", str(ctx.exp.path),
                                                   "--only", stage.id], output=name)
            (work / "report.sources.json").write_text(json.dumps(sources, indent=2) + "\n",
                                                      encoding="utf-8")
        (work / name).write_text(text, encoding="utf-8")
    return Made(upstream_files=[source], summary={"formats": list(dict.fromkeys(stage.formats))})
