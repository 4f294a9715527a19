"""trec_eval's named measure sets, restricted to the measures rankproof implements.

``official`` is what trec_eval prints with no ``-m``; ``all_trec`` is
``-m all_trec``. Both also print the ``runid`` and ``num_q`` lines.
"""

from __future__ import annotations

from rankproof.measures._measure import Measure, parse_many

_OFFICIAL = ("num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P")
_ALL_TREC = (*_OFFICIAL, "recall", "ndcg", "ndcg_cut", "map_cut", "success")

TREC_SETS: dict[str, tuple[str, ...]] = {"official": _OFFICIAL, "all_trec": _ALL_TREC}
"""Set name -> trec_eval measure names (bare cutoff families expand to trec_eval's cutoffs)."""

HEADER_LINES = ("runid", "num_q")
"""trec_eval's per-run lines that are not measures of a topic."""


def expand_set(name: str) -> tuple[Measure, ...]:
    """The measures of a trec_eval set (``official`` or ``all_trec``)."""
    try:
        names = TREC_SETS[name]
    except KeyError:
        raise ValueError(f"unknown measure set {name!r}; known: {', '.join(TREC_SETS)}") from None
    out: list[Measure] = []
    for n in names:
        out.extend(parse_many(n))
    return tuple(out)
