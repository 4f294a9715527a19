"""Built-in metrics: per-case latency, latency percentiles, and how concentrated results are.

Latency percentiles use the **nearest-rank** definition (the smallest value
with at least p% of values at or below it: rank ``ceil(p/100 · n)``), the
same as the harness's report. It is a value that was actually observed, and
it does not interpolate towards the maximum: with 20 cases, p95 is the 19th
smallest latency, not the slowest one. A gate on p95 should not be decided
by a single outlier in a small golden set.

Concentration metrics read the ranked ids of each response:

* ``max_item_share`` (``@k``: top k only) — the largest share of *cases*
  (queries) in whose results one item appears, ids deduplicated per
  response. 1.0 means some item is returned for every query (a "sticky"
  document, often a sign of a broken embedding or a boilerplate chunk).
* ``entropy`` (``@k``) — Shannon entropy of the distribution of returned
  ids over all cases (ids deduplicated per response), divided by its
  maximum ``log N`` for ``N`` returned ids, so it lies in [0, 1]: 1 when no
  item is returned for two cases, towards 0 as a few items dominate.
  Degenerate cases are defined, not NaN: nothing returned at all gives 0
  (nothing to be diverse about, and a system returning nothing must not pass
  a diversity floor); a single returned id gives 1 (it repeats nowhere).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rankproof._errors import InputError
from rankproof.measures import register_aggregate, register_metric
from rankproof.stats import nearest_rank

if TYPE_CHECKING:
    from rankproof.targets._case import Case, TargetResponse
    from rankproof.targets._run import CaseRow




def _latencies(rows: Sequence[CaseRow]) -> list[float]:
    missing = [r.case_id for r in rows if r.latency_ms is None]
    if missing:
        raise InputError(f"{len(missing)} case(s) have no latency (e.g. {missing[0]!r})")
    return [float(r.latency_ms) for r in rows if r.latency_ms is not None]


@register_metric("latency_ms", higher_is_better=False)
def latency_ms(response: TargetResponse, case: Case) -> float:
    """Wall-clock milliseconds the target took for the case, retries included."""
    return response.latency_ms


@register_aggregate("latency_p50", higher_is_better=False)
def latency_p50(rows: Sequence[CaseRow]) -> float:
    """Median latency (nearest rank), in milliseconds."""
    return nearest_rank(_latencies(rows), 50)


@register_aggregate("latency_p95", higher_is_better=False)
def latency_p95(rows: Sequence[CaseRow]) -> float:
    """95th-percentile latency (nearest rank: not the maximum of 20 cases), in milliseconds."""
    return nearest_rank(_latencies(rows), 95)


@register_aggregate("latency_p99", higher_is_better=False)
def latency_p99(rows: Sequence[CaseRow]) -> float:
    """99th-percentile latency (nearest rank), in milliseconds."""
    return nearest_rank(_latencies(rows), 99)


@register_aggregate("latency_mean", higher_is_better=False)
def latency_mean(rows: Sequence[CaseRow]) -> float:
    """Mean latency, in milliseconds."""
    values = _latencies(rows)
    return math.fsum(values) / len(values)


def _item_sets(rows: Sequence[CaseRow], k: int | None) -> list[list[str]]:
    out = []
    for r in rows:
        if r.response is None:
            raise InputError(f"case {r.case_id!r} has no response (ranked ids)")
        ids = r.response.ranked_ids if k is None else r.response.ranked_ids[:k]
        out.append(list(dict.fromkeys(ids)))
    return out


@register_aggregate("max_item_share", higher_is_better=False, cutoff="optional",
                    needs_responses=True)
def max_item_share(rows: Sequence[CaseRow], k: int | None = None) -> float:
    """Largest share of cases whose (top-k) results contain the same item; 0 if none returned."""
    sets = _item_sets(rows, k)
    counts = Counter(i for s in sets for i in s)
    if not counts:
        return 0.0
    return max(counts.values()) / len(sets)


@register_aggregate("entropy", higher_is_better=True, cutoff="optional", needs_responses=True)
def entropy(rows: Sequence[CaseRow], k: int | None = None) -> float:
    """Normalised entropy of returned (top-k) ids over all cases: 1 = no item repeats."""
    counts = Counter(i for s in _item_sets(rows, k) for i in s)
    total = sum(counts.values())
    if total == 0:
        return 0.0
    if total == 1:
        return 1.0
    h = -math.fsum((c / total) * math.log(c / total) for c in counts.values())
    return min(1.0, max(0.0, h / math.log(total)))
