"""The diagnostic kinds: ``discover`` (``rankproof discover``) and ``rag`` (``rankproof rag
score``), calling the library functions those commands call → ``discovery.json`` and
``rag.json``, the documents they write (``rankproof report`` renders both)."""

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
    report = score_answers(load_answers(answers), refs,
                           qrels=None if qrels is None else load_qrels(qrels), metrics=chosen)
    made = Made(document="rag.json", notes=[*notes, *report.caveats],
                input_files={"answers": answers, "references": references, "qrels": qrels})
    made.summary["means"] = dict(report.means)
    doc = {**report.to_dict(), "provenance": stamp(ctx, stage, made)}
    (work / "rag.json").write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n",
                                   encoding="utf-8")
    return made
