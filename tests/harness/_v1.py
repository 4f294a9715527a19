"""Eval reports as the version-1 code wrote them, to test that they still load."""

from __future__ import annotations

from typing import Any


def as_version_1(doc: dict[str, Any], rows: int | None = None) -> dict[str, Any]:
    """A version-2 report document (``model_dump(mode="json")``) rewritten as version 1:
    flat ``StageComparison`` rows without per-query values (the first ``rows`` of them)."""
    out = dict(doc, schema_version=1)
    out["comparisons"] = [
        {"stage": c["candidate"], "baseline": c["baseline"], "measure": c["measure"],
         "n": c["result"]["n"], "baseline_mean": c["result"]["mean_b"],
         "mean": c["result"]["mean_a"], "difference": c["result"]["difference"],
         "relative_difference": c["result"]["relative_difference"],
         "ci_low": c["result"]["ci_low"], "ci_high": c["result"]["ci_high"],
         "ci_method": c["result"]["ci_method"],
         "confidence_level": c["result"]["confidence_level"],
         "p_value": c["result"]["p_value"], "p_corrected": c["p_corrected"],
         "test": c["result"]["test"], "wins": c["result"]["wins"],
         "ties": c["result"]["ties"], "losses": c["result"]["losses"],
         "effect_size": c["result"]["effect_size"],
         "queries_needed": c["result"]["queries_needed"], "verdict": c["verdict"],
         "underpowered": c["underpowered"], "notes": c["notes"]}
        for c in doc["comparisons"][:rows]]
    return out
