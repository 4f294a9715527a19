"""Context packing: characters of context saved, against what the answers lost or gained.

A packing strategy (fewer passages, shorter passages, deduplicated passages)
shows the generator less text. Given the stored answers of the full-context
arm (the baseline) and of one or more packed arms over the same questions,
`compare_packing` reports, per arm, how many characters of shown context the
packing saved (per question, paired by id) beside the paired, corrected change
in token-F1, exact match, grounding and the RAG triad — one comparison
(`rankproof.comparison`'s rows) over all arms and metrics, so a saving is
never read without its cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rankproof._errors import InputError
from rankproof.comparison import Comparison
from rankproof.data import Qrels
from rankproof.rag._answers import AnswerFile, References, aligned
from rankproof.rag._score import compare_arms
from rankproof.stats import DEFAULT_ALPHA, DEFAULT_CORRECTION, DEFAULT_RESAMPLES, DEFAULT_SEED

#: What a packing comparison measures by default: answer quality, grounding, the triad.
PACKING_METRICS: tuple[str, ...] = ("token_f1", "exact_match", "grounding",
                                    "context_relevance", "answer_relevance")


def context_chars(answers: AnswerFile) -> dict[str, int]:
    """``{query id: characters of context shown}`` (the sum over the row's passages)."""
    return {row.query_id: sum(len(c.text) for c in row.contexts) for row in answers.rows}


@dataclass(frozen=True)
class PackingArm:
    """One packed arm against the full-context baseline: what it saved."""

    name: str
    chars: dict[str, int]
    saved: dict[str, int]

    @property
    def total_saved(self) -> int:
        return sum(self.saved.values())

    @property
    def mean_saved(self) -> float:
        return self.total_saved / len(self.saved) if self.saved else 0.0

    def fraction_saved(self, baseline_total: int) -> float | None:
        return None if baseline_total == 0 else self.total_saved / baseline_total

    def to_dict(self, baseline_total: int) -> dict[str, Any]:
        return {"name": self.name, "chars_total": sum(self.chars.values()),
                "chars_saved_total": self.total_saved, "chars_saved_mean": self.mean_saved,
                "fraction_saved": self.fraction_saved(baseline_total),
                "chars_saved": dict(self.saved)}


@dataclass(frozen=True)
class PackingComparison:
    """`compare_packing`'s result: characters saved per arm and the paired metric changes."""

    baseline: str
    baseline_chars: dict[str, int]
    arms: tuple[PackingArm, ...]
    metrics: tuple[str, ...]
    comparison: Comparison
    caveats: tuple[str, ...] = field(default=())

    @property
    def baseline_total(self) -> int:
        return sum(self.baseline_chars.values())

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "rankproof.rag.packing", "schema_version": 1,
                "baseline": self.baseline, "n": len(self.baseline_chars),
                "baseline_chars_total": self.baseline_total,
                "metrics": list(self.metrics),
                "arms": [a.to_dict(self.baseline_total) for a in self.arms],
                "comparison": self.comparison.to_dict(), "caveats": list(self.caveats)}


def compare_packing(full: AnswerFile, packed: Sequence[AnswerFile],
                    references: References | None = None, *, qrels: Qrels | None = None,
                    metrics: Sequence[str] = PACKING_METRICS, allow_arm_mismatch: bool = False,
                    alpha: float = DEFAULT_ALPHA, correction: str = DEFAULT_CORRECTION,
                    resamples: int = DEFAULT_RESAMPLES,
                    seed: int = DEFAULT_SEED) -> PackingComparison:
    """Each packed arm against ``full`` (see the module): characters saved, metrics changed.

    Arms are paired by query id (`aligned`) and compared with `compare_arms`
    (so a manifest difference other than the context is refused unless
    ``allow_arm_mismatch``). A packed arm that shows *more* characters than the
    baseline for some question is stated in the caveats (a negative saving).
    """
    if not packed:
        raise InputError("compare_packing needs at least one packed answer file")
    arms = [full, *packed]
    ids = aligned(arms)
    base = context_chars(full)
    out = []
    caveats = []
    for arm in packed:
        chars = context_chars(arm)
        saved = {q: base[q] - chars[q] for q in ids}
        grew = sorted(q for q, s in saved.items() if s < 0)
        if grew:
            caveats.append(f"{arm.name}: shows more context than {full.name} for {len(grew)} "
                           f"question(s) ({', '.join(grew[:5])})")
        out.append(PackingArm(arm.name, {q: chars[q] for q in ids}, saved))
    comparison, _ = compare_arms(arms, references, qrels=qrels, metrics=metrics,
                                 allow_arm_mismatch=allow_arm_mismatch, alpha=alpha,
                                 correction=correction, resamples=resamples, seed=seed)
    compared = tuple(dict.fromkeys(row.measure for row in comparison.rows))
    left_out = [m for m in metrics if m not in compared]
    if left_out:
        caveats.append(f"not compared (not scored on the same questions in every arm): "
                       f"{', '.join(left_out)}")
    return PackingComparison(baseline=full.name, baseline_chars={q: base[q] for q in ids},
                             arms=tuple(out), metrics=compared, comparison=comparison,
                             caveats=(*caveats, *comparison.caveats))
