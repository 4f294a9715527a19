"""The passages an answer is synthesized from: the best stage's top-k per answerable query.

``eval --synthesis`` answers each answerable judged query (a qrels topic that
is not a no-answer query) from the passages one stage ranked first. The stage
is the one with the highest mean of `SELECTION_MEASURE` (the report's first
measure when it lacks that one; a tie keeps the earlier stage, so BM25 wins
ties); its ranking is read from the report's evidence, so the passages are
exactly the ones the report shows. A passage is a chunk's text, or a whole
document's at document granularity.
"""

from __future__ import annotations

from dataclasses import dataclass

from rankproof._errors import ConfigError
from rankproof.comparison import Evidence
from rankproof.harness._inputs import EvalInputs
from rankproof.harness._report import EvalReport

SELECTION_MEASURE = "nDCG@10"


@dataclass(frozen=True)
class SynthesisPassages:
    """The chosen stage, why it was chosen, and ``(query id, query, [(id, text)])`` rows."""

    stage: str
    selected_by: str
    rows: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...]


def best_stage(report: EvalReport) -> tuple[str, str]:
    """The stage answers are synthesized from and the rule that chose it."""
    measure = SELECTION_MEASURE if SELECTION_MEASURE in report.measures else report.measures[0]
    best = report.stages[0]
    for stage in report.stages[1:]:
        if stage.means.get(measure, float("-inf")) > best.means.get(measure, float("-inf")):
            best = stage
    return best.name, f"the highest mean {measure} of the {len(report.stages)} stage(s)"


def synthesis_passages(inputs: EvalInputs, report: EvalReport, k: int) -> SynthesisPassages:
    """Each answerable judged query's top ``k`` passages from `best_stage`'s ranking.

    `ConfigError` when the report keeps fewer than ``k`` results per query as evidence
    (``--evidence-depth`` must be at least the synthesis ``k``).
    """
    evidence = report.evidence
    if not isinstance(evidence, Evidence) or evidence.k < k:
        kept = evidence.k if isinstance(evidence, Evidence) else 0
        raise ConfigError(f"synthesis answers from each query's top {k} passages, but the "
                          f"report keeps {kept} result(s) per query (--evidence-depth "
                          f"{kept}): give --evidence-depth {k} or more")
    stage, rule = best_stage(report)
    texts = {c.id: c.text for c in inputs.corpus.chunks}
    if inputs.granularity == "document":
        texts = {d.id: d.text for d in inputs.corpus.documents}
    no_answer = set(inputs.no_answer)
    judged = set(inputs.qrels.topics)
    top = evidence.top.get(stage, {})
    rows = []
    for qid, query in inputs.queries:
        if qid not in judged or qid in no_answer:
            continue
        ids = top.get(qid, [])[:k]
        rows.append((qid, query, tuple((i, texts[i]) for i in ids if i in texts)))
    return SynthesisPassages(stage, rule, tuple(rows))
