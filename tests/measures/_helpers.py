"""Helpers shared by the measures tests."""

from __future__ import annotations

from typing import Any

from rankproof.data import Qrels, Run
from rankproof.measures import PerQuery
from rankproof.measures import evaluate as _evaluate


def evaluate(qrels: Qrels, run: Run, measures: Any = None, **kw: Any) -> PerQuery:
    """`rankproof.evaluate`, opting in to a run that shares no topic with the qrels.

    Generated inputs may be disjoint; the default ``topics="complete"`` refuses
    such a run (it looks like swapped columns), and ``complete-allow-disjoint``
    is the same computation with that refusal turned off, so every property
    is checked on exactly the inputs it was checked on before.
    """
    if kw.get("topics", "complete") == "complete" and not set(qrels.topics) & set(run.topics):
        kw["topics"] = "complete-allow-disjoint"
    return _evaluate(qrels, run, measures, **kw)
