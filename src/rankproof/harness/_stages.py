"""Any two stages of a saved eval report, compared after the fact.

An eval report compares every stage with the BM25 baseline. Whether fusion
beats dense is a question asked later, of the same evidence: the per-query
values the report stored. `compare_report_stages` answers it with the one
comparison engine (`rankproof.comparison.compare_scores`), so the row is the
same kind of row ``rankproof compare`` and the report make, and it never
reruns retrieval (the numbers cannot drift from the report's).
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rankproof._errors import InputError
from rankproof._limits import shown
from rankproof.comparison import Comparison, compare_scores
from rankproof.data import read_document, validate_model
from rankproof.harness._report import EvalReport
from rankproof.measures import parse
from rankproof.stats import StatSettings

_KIND = "rankproof eval report"


def _duplicates(names: Sequence[Any]) -> list[Any]:
    return [n for n, c in Counter(names).items() if c > 1]


def _refuse_duplicates(names: Sequence[Any], where: str) -> None:
    dup = _duplicates(names)
    if dup:
        raise InputError(f"{where} has more than one stage named {shown(dup)}: a comparison "
                         "could not say which of them it measured", field="stages")


def read_report(path: str | os.PathLike[str]) -> EvalReport:
    """Read an `EvalReport` file; a repeated stage name is refused by name, before the
    rest of the validation (which would refuse it too, less plainly)."""
    raw = read_document(path, what="report")
    if isinstance(raw, dict) and isinstance(raw.get("stages"), list):
        names = [s.get("name") for s in raw["stages"] if isinstance(s, dict)]
        try:
            _refuse_duplicates(names, "the report")
        except InputError as exc:
            raise InputError(exc.reason, path=str(path), field="stages") from None
    return validate_model(raw, EvalReport, str(path), what="report", kind=_KIND)


def _measures(report: EvalReport, measures: Sequence[str] | str | None) -> list[str]:
    """The requested measures in the report's canonical names (all stored ones by default)."""
    if measures is None:
        return list(report.measures)
    wanted = [measures] if isinstance(measures, str) else list(measures)
    if not wanted:
        raise InputError("measures is empty; omit it to compare every stored measure")
    out: list[str] = []
    for spec in wanted:
        name = str(parse(spec))
        if name not in report.measures:
            raise InputError(f"measure {spec!r} is not stored in the report (stored: "
                             f"{', '.join(report.measures)}); a saved report can only be "
                             "compared on what it measured", field="measures")
        if name not in out:
            out.append(name)
    return out


def _values(stage: str, per_query: Mapping[str, Mapping[str, float]], measure: str
            ) -> dict[str, float]:
    out = {}
    for qid, values in per_query.items():
        if measure not in values:
            raise InputError(f"stage {stage!r} stores no {measure} value for query {qid!r}",
                             field="stages")
        out[qid] = values[measure]
    return out


def compare_report_stages(
    report: EvalReport | str | os.PathLike[str],
    *,
    baseline: str,
    candidate: str,
    measures: Sequence[str] | str | None = None,
    test: str | None = None,
    alpha: float | None = None,
    correction: str | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    confidence_level: float | None = None,
) -> Comparison:
    """Compare ``candidate`` with ``baseline``, two stages of one saved eval report.

    ``report`` is an `EvalReport` or the path of one (``rankproof eval``'s JSON).
    The rows come from the stages' stored per-query values, paired by query
    id, one row per measure (default: every measure the report stored), their
    p-values corrected together. ``test``, ``alpha``, ``correction``,
    ``resamples`` and ``seed`` default to the report's own configuration, so
    the comparison is made the way the report made its own;
    ``confidence_level`` defaults to the comparison layer's.

    Refused with an `InputError`: a report with two stages of one name, an
    unknown stage (the message lists the report's stages), the same stage on
    both sides, a measure the report did not store.

    >>> # compare_report_stages("evals/results/latest.json",
    >>> #                       baseline="dense", candidate="fusion")
    """
    loaded = report if isinstance(report, EvalReport) else read_report(report)
    names = [s.name for s in loaded.stages]
    _refuse_duplicates(names, "the report")
    for role, stage in (("baseline", baseline), ("candidate", candidate)):
        if not isinstance(stage, str) or stage not in names:
            raise InputError(f"the report has no stage {shown(stage)} (its stages: "
                             f"{', '.join(names)})", field=role)
    if baseline == candidate:
        raise InputError(f"baseline and candidate are the same stage {baseline!r}; name two "
                         f"different stages of: {', '.join(names)}", field="candidate")
    chosen = _measures(loaded, measures)
    config = loaded.config
    base, cand = loaded.stage(baseline), loaded.stage(candidate)
    scores = {s.name: {m: _values(s.name, s.per_query, m) for m in chosen} for s in (base, cand)}
    # The report's own settings (a field it lacks takes the default), then the overrides.
    keys = ("test", "alpha", "correction", "resamples", "seed")
    recorded: dict[str, Any] = {k: config[k] for k in keys if k in config}
    given = {"test": test, "alpha": alpha, "correction": correction, "resamples": resamples,
             "seed": seed, "confidence_level": confidence_level}
    merged: dict[str, Any] = {**recorded, **{k: v for k, v in given.items() if v is not None}}
    stats = StatSettings(**merged)
    result = compare_scores(scores, baseline=baseline, stats=stats)
    caveats = [f"from the saved report's per-query values ({loaded.inputs.name}, created "
               f"{loaded.created_at}); retrieval was not rerun",
               *dict.fromkeys([*base.notes, *cand.notes])]
    return dataclasses.replace(result, caveats=tuple(caveats), rel_level=1, topics="complete")
