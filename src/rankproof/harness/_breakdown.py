"""What a stage's single mean hides: means per judgment category, and abstention.

Both are derived from what the report keeps per query (the measure values of
scored queries, the top retrieval score of every query run), so a report can
be re-derived, and checked, without running retrieval again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rankproof.data import Run
from rankproof.harness._abstention import bootstrap_auroc
from rankproof.harness._report import Abstention, CategoryResult

INCOMPLETE_REASON = ("the judgments are incomplete (pooled): a query without a relevant "
                     "judgment is unjudged, not known to have no answer")
NO_NEGATIVES_REASON = "no no-answer queries (every query run has a relevant judgment)"
NO_POSITIVES_REASON = "no answerable queries (no query run has a relevant judgment)"


def category_results(per_query: Mapping[str, Mapping[str, float]],
                     query_categories: Mapping[str, str],
                     measures: Sequence[str]) -> dict[str, CategoryResult]:
    """Means of each measure over each category's scored queries, categories in the order
    they first appear in the judgments; empty when no scored query has a category."""
    groups: dict[str, list[str]] = {c: [] for c in query_categories.values()}
    for qid in per_query:
        category = query_categories.get(qid)
        if category is not None:
            groups[category].append(qid)
    order = [c for c, qids in groups.items() if qids]
    return {c: CategoryResult(
        n=len(groups[c]),
        means={m: float(np.mean([per_query[q][m] for q in groups[c]])) for m in measures})
        for c in order}


def top_scores(run: Run, qids: Sequence[str]) -> dict[str, float | None]:
    """Each of ``qids``' highest score in ``run`` (None: nothing retrieved for it)."""
    best = np.full(len(run.topics), -np.inf)
    np.maximum.at(best, run.qid_codes, run.scores)
    by_qid = dict(zip(run.topics, best.tolist(), strict=True))
    return {q: (float(by_qid[q]) if q in by_qid else None) for q in qids}


def score_basis(config: Mapping[str, Any]) -> str:
    """What a stage's top score is, in words a table can show.

    RRF's fused score is a sum of ``1/(k + rank)``: it depends on the inputs'
    ranks only, never on how confident either input was. Fusion of per-query
    normalised scores loses the scale across queries the same way.
    """
    if config.get("stage") == "fusion":
        if config.get("method") == "rrf":
            return "rank-based (RRF)"
        if config.get("norm"):
            return f"{config.get('method')} of per-query {config.get('norm')}-normalised scores"
    return "score"


def abstention(top: Mapping[str, float | None], answerable: Sequence[str],
               no_answer: Sequence[str], *, basis: str, reason: str | None, resamples: int,
               seed: int, confidence_level: float) -> Abstention:
    """The stage's `Abstention`: AUROC of ``top`` over answerable vs no-answer queries with
    its bootstrap interval, or the ``reason`` (given, or an empty class) it is absent."""
    if reason is None and not no_answer:
        reason = NO_NEGATIVES_REASON
    if reason is None and not answerable:
        reason = NO_POSITIVES_REASON
    if reason is not None:
        return Abstention(answerable=len(answerable), no_answer=len(no_answer), score=basis,
                          reason=reason)
    r = bootstrap_auroc([top[q] for q in answerable], [top[q] for q in no_answer],
                        resamples=resamples, seed=seed, confidence_level=confidence_level)
    return Abstention(answerable=len(answerable), no_answer=len(no_answer), score=basis,
                      auroc=r.auroc, ci_low=r.ci_low, ci_high=r.ci_high,
                      confidence_level=r.confidence_level, resamples=r.resamples, seed=r.seed,
                      method=r.method)
