"""`PerQuery`: the topics × measures matrix every result is derived from."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError, MissingExtraError, NotComputedError
from rankproof.measures._families import GEO_MEAN_FLOOR
from rankproof.measures._measure import Measure, parse

TopicPolicy = Literal["complete", "intersection", "complete-allow-disjoint"]
"""Which topics a `PerQuery` holds (see `rankproof.evaluate`): ``complete`` (every qrels
topic, missing ones 0; a run sharing no topic with the qrels is refused),
``intersection`` (topics in both), ``complete-allow-disjoint`` (as ``complete``, and a
run sharing no topic is accepted: every topic scores 0)."""
_SHOWN = 6


@dataclass(frozen=True, eq=False)
class PerQuery:
    """Per-query values of several measures for one run, plus how they were made.

    ``values[i, j]`` is measure ``measures[j]`` on topic ``qids[i]``. Means are
    derived from it, never stored instead of it. ``zero_filled`` lists qrels
    topics the run did not retrieve for (scored 0, trec_eval ``-c``);
    ``dropped`` lists run topics absent from the qrels (ignored), and
    ``not_evaluated`` qrels topics left out by ``topics="intersection"``.
    ``notes`` say how the values were made (ties broken, rows deduplicated);
    ``warnings`` say the input looks like a mistake the numbers cannot show
    (a score column that holds ranks): commands print them and reports keep them.
    """

    qids: tuple[str, ...]
    measures: tuple[Measure, ...]
    values: npt.NDArray[np.float64]
    run_name: str = "run"
    run_tag: str | None = None
    qrels_digest: str | None = None
    rel_level: int = 1
    topics: TopicPolicy = "complete"
    order: str = "score"
    zero_filled: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    not_evaluated: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    warnings: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.float64)
        if values.shape != (len(self.qids), len(self.measures)):
            raise InputError(
                f"values has shape {values.shape}, expected ({len(self.qids)}, "
                f"{len(self.measures)})"
            )
        values = values.copy() if values.flags.writeable else values
        values.setflags(write=False)
        object.__setattr__(self, "values", values)

    def __repr__(self) -> str:
        names = [str(m) for m in self.measures]
        shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more"
                                             if len(names) > _SHOWN else "")
        return (f"PerQuery({self.run_name!r}, {self.n:,} topic{'s' * (self.n != 1)} × "
                f"{len(names)} measure{'s' * (len(names) != 1)}: {shown})")

    @property
    def n(self) -> int:
        """Number of topics."""
        return len(self.qids)

    def _index(self, measure: str | Measure) -> int:
        m = parse(measure)
        try:
            return self.measures.index(m)
        except ValueError:
            have = ", ".join(map(str, self.measures))
            raise NotComputedError(f"{m} was not computed (have: {have})") from None

    def column(self, measure: str | Measure) -> npt.NDArray[np.float64]:
        """Per-topic values of one measure, aligned with ``qids``."""
        return self.values[:, self._index(measure)]

    def scores(self, measure: str | Measure) -> dict[str, float]:
        """``{qid: value}`` for one measure."""
        return dict(zip(self.qids, self.column(measure).tolist(), strict=True))

    def mean(self, measure: str | Measure | None = None) -> Any:
        """Mean over topics of one measure (a float), or of all (a dict)."""
        if measure is not None:
            col = self.column(measure)
            return float(col.mean()) if len(col) else math.nan
        return {str(m): self.mean(m) for m in self.measures}

    def aggregate(self, measure: str | Measure) -> float:
        """trec_eval's ``all`` value: the sum for counts (``NumRet`` …), the geometric
        mean exp(mean(log(max(x, 0.00001)))) for ``GMAP`` / ``GMBpref``, else the mean."""
        m = parse(measure)
        col = self.column(m)
        if m.definition.aggregate == "sum":
            return float(col.sum())
        if m.definition.aggregate == "geometric":
            if not len(col):
                return math.nan
            return float(np.exp(np.mean(np.log(np.maximum(col, GEO_MEAN_FLOOR)))))
        return float(col.mean()) if len(col) else math.nan

    def select(self, measures: Sequence[str | Measure]) -> PerQuery:
        """A PerQuery with only the given measures, in the given order."""
        idx = [self._index(m) for m in measures]
        return _replace(self, measures=tuple(self.measures[i] for i in idx),
                        values=self.values[:, idx])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict: provenance, per-query values and means."""
        return {
            "run": self.run_name,
            "run_tag": self.run_tag,
            "qrels_digest": self.qrels_digest,
            "rel_level": self.rel_level,
            "topics": self.topics,
            "order": self.order,
            "measures": [str(m) for m in self.measures],
            "n_topics": self.n,
            "means": {str(m): self.aggregate(m) for m in self.measures},
            "per_query": {
                q: {str(m): float(v) for m, v in zip(self.measures, row, strict=True)}
                for q, row in zip(self.qids, self.values.tolist(), strict=True)
            },
            "zero_filled": list(self.zero_filled),
            "dropped": list(self.dropped),
            "not_evaluated": list(self.not_evaluated),
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def to_pandas(self) -> Any:
        """A pandas DataFrame: one row per topic (index ``qid``), one column per measure.

        Column names are the canonical measure strings (``nDCG@10``), in the
        order of ``measures``; ``df.mean()`` gives the means (for counts such
        as ``NumRet`` trec_eval's ``all`` line is the sum: use `aggregate`).
        pandas is optional (the ``pandas`` extra) and imported only here.
        """
        try:
            import pandas as pd
        except ImportError:
            raise MissingExtraError("PerQuery.to_pandas needs pandas: pip install "
                                    "'rankproof[pandas]'") from None
        return pd.DataFrame(np.array(self.values), index=pd.Index(list(self.qids), name="qid"),
                            columns=[str(m) for m in self.measures])


def _replace(pq: PerQuery, **changes: Any) -> PerQuery:
    import dataclasses

    return dataclasses.replace(pq, **changes)
