"""A metric a project registers for its gate: ``rankproof gate --plugin examples/gate/metrics.py``.

The checks file may name it before it exists: names resolve when the gate
runs, after every ``--plugin`` module was imported.
"""

from collections.abc import Sequence

from rankproof.measures import register_aggregate
from rankproof.targets import CaseRow


@register_aggregate("worst_ndcg10", higher_is_better=True)
def worst_ndcg10(rows: Sequence[CaseRow]) -> float:
    """The lowest nDCG@10 of any query: a floor no single query may fall through."""
    return min(r.values["nDCG@10"] for r in rows if "nDCG@10" in r.values)
