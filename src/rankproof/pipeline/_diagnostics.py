"""The diagnostic kinds: ``discover`` (``rankproof discover``), ``rag`` (``rankproof rag
score``) and ``rag_compare`` (``rankproof rag compare``, with the context-packing comparison),
calling the library functions those commands call → ``discovery.json``, ``rag.json``
(``rankproof report`` renders both) and ``rag_compare.json`` + ``rag_compare.md``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rankproof._errors import ConfigError
from rankproof.pipeline._context import Context, Made
from rankproof.pipeline._kinds import stamp


def discover_stage(ctx: Context, stage: Any, work: Path) -> Made:
    from rankproof.discovery import (
        DFLT_DISTRACTOR_SIZES,
        EXAMPLE_CASES,
        EXAMPLE_CATALOG,
        CatalogSearcher,
        calibrate_min_score,
        discovery_document,
        distractor_curve_from_cases,
        evaluate_discovery,
        load_cases,
        load_catalog,
        read_meta,
        sweep_selector,
    )
    from rankproof.retrieval import HashingEmbedder

    cases = ctx.exp.resolve(stage.cases) if stage.cases else EXAMPLE_CASES
    if stage.catalog is not None:
        catalog = ctx.exp.resolve(stage.catalog)
    elif stage.cases is None:
        catalog = EXAMPLE_CATALOG
    else:
        named = read_meta(cases).get("catalog")
        if not isinstance(named, str) or not named:
            raise ConfigError(f"{ctx.exp.path}: stage {stage.id!r}: give catalog (the cases "
                              "file names no catalogue in its __meta__ line)")
        catalog = (cases.parent / named).resolve()

    def embedder(mode: str) -> Any:
        return None if mode == "bm25" or stage.embedder != "hashing" else HashingEmbedder()

    loaded = load_cases(cases)
    cat = load_catalog(catalog)
    searcher = CatalogSearcher(cat, mode=stage.mode, embedder=embedder(stage.mode))
    calibration = calibrate_min_score(searcher, loaded, k=stage.k) if stage.calibrate else None
    threshold = stage.abstain_threshold
    if threshold is None and calibration is not None and calibration.min_score is not None:
        threshold = calibration.min_score
    report = evaluate_discovery(searcher, loaded, primary_k=stage.k, abstain_threshold=threshold)
    swept = sweep_selector(searcher, loaded, k=stage.k) if stage.sweep else None
    curve = (distractor_curve_from_cases(cat, loaded, mode=stage.curve_mode, trials=stage.trials,
                                         seed=ctx.exp.seed, sizes=DFLT_DISTRACTOR_SIZES,
                                         embedder=embedder(stage.curve_mode))
             if stage.curve else None)
    doc = discovery_document(identity=searcher.identity, seed=ctx.exp.seed,
                             inputs={"cases": cases, "catalog": catalog}, discovery=report,
                             calibration=calibration, sweep=swept, curve=curve)
    made = Made(document="discovery.json", input_files={"cases": cases, "catalog": catalog},
                notes=list(searcher.notes))
    doc["provenance"] = stamp(ctx, stage, made)
    (work / "discovery.json").write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n",
                                         encoding="utf-8")
    return made


def rag_stage(ctx: Context, stage: Any, work: Path) -> Made:
    from rankproof.data import load_qrels
    from rankproof.rag import (
        ANSWER_METRICS,
        DEFAULT_METRICS,
        load_answers,
        load_references,
        score_answers,
    )

    answers = ctx.exp.resolve(stage.answers)
    references = ctx.exp.resolve(stage.references) if stage.references else None
    qrels = ctx.exp.resolve(stage.qrels) if stage.qrels else None
    refs = None if references is None else load_references(references)
    chosen = tuple(stage.metrics) if stage.metrics else DEFAULT_METRICS
    notes = []
    if refs is None and not stage.metrics:
        chosen = tuple(m for m in DEFAULT_METRICS if m not in ANSWER_METRICS)
        notes.append("no references: the answer metrics (exact match, token-F1, ROUGE-L, "
                     "BLEU) are left out")
    arm = load_answers(answers)
    report = score_answers(arm, refs, qrels=None if qrels is None else load_qrels(qrels),
                           metrics=chosen)
    summary = None
    provider = ctx.exp.resolve(stage.provider) if stage.provider else None
    if stage.llm_metrics is not None and provider is not None:
        from rankproof.providers import Provider, load_provider_config
        from rankproof.rag import load_metric_labels, score_llm_metrics

        labels = ctx.exp.resolve(stage.llm_labels) if stage.llm_labels else None
        human = None if labels is None else load_metric_labels(labels)
        with Provider(load_provider_config(provider)) as client:
            report, summary, failed = score_llm_metrics(report, arm, stage.llm_metrics, client,
                                                        refs, human)
        notes += failed
    made = Made(document="rag.json", notes=[*notes, *report.caveats],
                input_files={"answers": answers, "references": references, "qrels": qrels,
                             "provider": provider,
                             "llm_labels": ctx.exp.resolve(stage.llm_labels)
                             if stage.llm_labels else None})
    made.summary["means"] = dict(report.means)
    doc = {**report.to_dict(), "provenance": stamp(ctx, stage, made)}
    if summary is not None:
        doc["llm_metrics"] = summary
    (work / "rag.json").write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n",
                                   encoding="utf-8")
    return made


def _packing_markdown(result: Any) -> str:
    from rankproof.report.console import escape_controls

    lines = [f"## Context packing against {escape_controls(result.baseline)}\n",
             f"{len(result.baseline_chars)} questions; the baseline shows "
             f"{result.baseline_total} characters of context.\n",
             "| arm | characters shown | saved | saved per question | share saved |",
             "|---|---:|---:|---:|---:|"]
    for arm in result.arms:
        share = arm.fraction_saved(result.baseline_total)
        lines.append(f"| {escape_controls(arm.name).replace('|', chr(92) + '|')} | "
                     f"{sum(arm.chars.values())} | {arm.total_saved} | {arm.mean_saved:.1f} | "
                     f"{'–' if share is None else f'{share:.1%}'} |")
    return "\n".join(lines) + "\n"


def rag_compare_stage(ctx: Context, stage: Any, work: Path) -> Made:
    """Paired answer arms (``rankproof rag compare``), and the context-packing comparison."""
    from rankproof.data import load_qrels
    from rankproof.rag import (
        ANSWER_METRICS,
        DEFAULT_METRICS,
        PACKING_METRICS,
        compare_arms,
        compare_packing,
        load_answers,
        load_references,
    )
    from rankproof.report.compare import comparison_markdown
    from rankproof.report.console import escape_controls

    paths = [ctx.exp.resolve(p) for p in (stage.baseline, *stage.candidates)]
    arms = [load_answers(p) for p in paths]
    references = ctx.exp.resolve(stage.references) if stage.references else None
    refs = None if references is None else load_references(references)
    qrels_path = ctx.exp.resolve(stage.qrels) if stage.qrels else None
    qrels = None if qrels_path is None else load_qrels(qrels_path)
    default = PACKING_METRICS if stage.packing else DEFAULT_METRICS
    chosen = tuple(stage.metrics) if stage.metrics else default
    notes: list[str] = []
    if refs is None and not stage.metrics:
        chosen = tuple(m for m in chosen if m not in ANSWER_METRICS)
        notes.append("no references: the answer metrics are left out")
    common = {"qrels": qrels, "metrics": chosen, "allow_arm_mismatch": stage.allow_arm_mismatch,
              "alpha": stage.alpha, "correction": stage.correction,
              "resamples": stage.resamples, "seed": ctx.exp.seed}
    packing = None
    if stage.packing:
        packing = compare_packing(arms[0], arms[1:], refs, **common)
        comparison = packing.comparison
    else:
        comparison, _ = compare_arms(arms, refs, **common)
    files: dict[str, Path | None] = {"references": references, "qrels": qrels_path}
    files.update({f"arm {i}": p for i, p in enumerate(paths)})
    made = Made(document="rag_compare.json", input_files=files,
                notes=[*notes, *(packing.caveats if packing else comparison.caveats)])
    made.summary["rows"] = [{"baseline": r.baseline, "candidate": r.candidate,
                             "measure": r.measure, "baseline_mean": r.result.mean_b,
                             "candidate_mean": r.result.mean_a, "p_corrected": r.p_corrected,
                             "verdict": r.verdict} for r in comparison.rows]
    if packing is not None:
        made.summary["chars_saved"] = {a.name: a.total_saved for a in packing.arms}
    bert = None
    if stage.bertscore_n is not None:
        from rankproof.rag import BERTScorer, bertscore_arms

        assert refs is not None  # the stage model requires references with bertscore_n
        bert = bertscore_arms(arms, refs, n=stage.bertscore_n, seed=ctx.exp.seed,
                              scorer=BERTScorer(layer=stage.bertscore_layer),
                              alpha=stage.alpha, correction=stage.correction,
                              resamples=stage.resamples)
        made.summary["bertscore"] = {"n": len(bert.ids), "layer": bert.model["layer"],
                                     "means": {a.name: bert.means(a.name) for a in arms}}
        made.notes.extend(bert.caveats)
    doc: dict[str, Any] = {"kind": "rankproof.rag.compare", "schema_version": 1,
                           "comparison": comparison.to_dict(),
                           "packing": None if packing is None else packing.to_dict(),
                           "bertscore": None if bert is None else bert.to_dict(),
                           "provenance": stamp(ctx, stage, made)}
    md = [f"# Answer arms against {escape_controls(arms[0].name)}\n"]
    if packing is not None:
        md.append(_packing_markdown(packing))
    md.append(comparison_markdown(comparison))
    if bert is not None and bert.comparison is not None:
        md.append(f"## BERTScore ({len(bert.ids)} of {bert.n_pool} questions, seed "
                  f"{bert.seed}; {escape_controls(str(bert.model['model']))}, layer "
                  f"{bert.model['layer']})\n")
        md.append(comparison_markdown(bert.comparison))
    text = json.dumps(doc, indent=2, allow_nan=False) + "\n"
    (work / "rag_compare.json").write_text(text, encoding="utf-8")
    (work / "rag_compare.md").write_text("\n".join(md), encoding="utf-8")
    return made
