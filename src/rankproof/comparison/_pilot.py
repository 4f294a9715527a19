"""Rows back from saved documents: a comparison JSON or a gate result, for a power pilot.

A saved row keeps its paired per-query values, so any document that holds
rows can start a power analysis from the observed differences. Eval reports
hold the same rows; `rankproof.harness.EvalReport` reads them (it also
upgrades version-1 reports).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rankproof._errors import InputError, RankproofError
from rankproof.comparison._row import SCHEMA_VERSION, ComparisonRow
from rankproof.measures import lookup

KINDS = ("rankproof.comparison", "rankproof.gate", "rankproof.eval")


def load_comparison(data: Mapping[str, Any]) -> dict[str, Any]:
    """Check that a parsed JSON document is a rankproof comparison (version 1 to 3).

    Version-2 rows carry no row interval: they load with the uncorrected interval
    they were saved with (`ComparisonRow.from_dict`)."""
    if not isinstance(data, Mapping) or data.get("kind") != "rankproof.comparison":
        raise InputError("not a rankproof comparison JSON document (missing kind)")
    if data.get("schema_version") not in range(1, SCHEMA_VERSION + 1):
        raise InputError(f"unsupported comparison schema_version {data.get('schema_version')!r}")
    return dict(data)


def _v1_comparison_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Version-1 rows, completed from the document's own ``per_query`` table."""
    per_query = data.get("per_query")
    if not isinstance(per_query, Mapping):
        raise InputError("version-1 comparison without per_query values", field="per_query")
    out = []
    for raw in data.get("rows", ()):
        try:
            base = per_query[raw["baseline"]][raw["measure"]]
            cand = per_query[raw["candidate"]][raw["measure"]]
        except (KeyError, TypeError):
            raise InputError("version-1 comparison: a row's per-query values are missing",
                             field="per_query") from None
        qids = sorted(base)
        if set(qids) != set(cand):
            raise InputError("version-1 comparison: a row's two sides cover different queries",
                             field="per_query")
        out.append({**raw, "alpha": data.get("alpha"), "correction": data.get("correction"),
                    "qids": qids, "candidate_values": [cand[q] for q in qids],
                    "baseline_values": [base[q] for q in qids]})
    return out


def rows_from_document(data: Mapping[str, Any]) -> tuple[ComparisonRow, ...]:
    """Every comparison row a saved comparison (v1 or v2) or gate result (v2) holds.

    Gate results hold one row per baseline check. A version-1 gate result
    kept no per-case values, and a baseline holds one run (no differences):
    both are refused with a message saying what would serve instead.
    """
    if not isinstance(data, Mapping):
        raise InputError(f"expected a JSON object, found {type(data).__name__}")
    kind = data.get("kind")
    version = data.get("schema_version")
    if kind == "rankproof.comparison":
        load_comparison(data)
        raws: Sequence[Any] = (_v1_comparison_rows(data) if version == 1
                               else data.get("rows", ()))
    elif kind == "rankproof.gate":
        if version == 1:
            raise InputError(f"a version-{version} gate result keeps no per-case values; rerun "
                             "the gate to get one that can serve as a pilot")
        raws = [c["comparison"] for c in data.get("checks", ())
                if isinstance(c, Mapping) and c.get("comparison") is not None]
    elif kind == "rankproof.eval":
        raws = data.get("comparisons", ())
        if version == 1:
            raise InputError("a version-1 eval report: read it with "
                             "rankproof.harness.EvalReport, which upgrades it")
    elif kind == "rankproof.baseline":
        raise InputError("a baseline holds one run's values, not paired differences; give a "
                         "comparison (rankproof compare -o), an eval report or a gate result")
    else:
        raise InputError(f"not a document with comparison rows (kind {kind!r}; expected one of "
                         f"{', '.join(KINDS)})")
    if not isinstance(raws, Sequence):
        raise InputError("the document's rows are not a list")
    return tuple(ComparisonRow.from_dict(r) for r in raws)


def _canonical(name: str) -> str:
    try:
        return lookup(name).name
    except RankproofError:
        return name


def select_row(rows: Sequence[ComparisonRow], *, candidate: str | None = None,
               measure: str | None = None) -> ComparisonRow:
    """The first row for ``candidate`` and ``measure`` (each defaults to the first row's)."""
    if not rows:
        raise InputError("the document holds no comparison rows (nothing was compared with a "
                         "baseline)")
    cand = candidate if candidate is not None else rows[0].candidate
    meas = _canonical(measure) if measure is not None else rows[0].measure
    systems = list(dict.fromkeys(r.candidate for r in rows))
    if cand not in systems:
        raise InputError(f"no candidate {cand!r} in the document (candidates: "
                         f"{', '.join(systems)})")
    found = [r for r in rows if r.candidate == cand and r.measure == meas]
    if not found:
        have = list(dict.fromkeys(r.measure for r in rows if r.candidate == cand))
        raise InputError(f"no measure {meas!r} for {cand!r} in the document (measures: "
                         f"{', '.join(have)})")
    return found[0]


def pilot_deltas(doc: Mapping[str, Any], *, candidate: str | None = None,
                 measure: str | None = None) -> tuple[str, str, np.ndarray]:
    """Per-query differences of one (candidate, measure) row of a saved comparison or gate."""
    row = select_row(rows_from_document(doc), candidate=candidate, measure=measure)
    return row.candidate, row.measure, row.differences
