"""trec_eval's named measure sets, restricted to the measures rankproof implements.

``official`` is what trec_eval prints with no ``-m``; ``all_trec`` is
``-m all_trec``. A set is a *name the parser expands*, not a measure: the
parser layer (`parse_many`, `resolve_measures`, `resolve`) turns it into its
member measures, so every command and the checks file accept it the same way.

trec_eval also prints ``runid`` and ``num_q`` for these sets. They are
bookkeeping about the run, not measures of a topic, so they are not members;
`TREC_HEADER_LINES` names them for the renderers that print them.

This module holds names only (no parsing), so the parser can import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

_OFFICIAL = ("num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P")
_ALL_TREC = (*_OFFICIAL, "recall", "ndcg", "ndcg_cut", "map_cut", "success")

TREC_SETS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"official": _OFFICIAL, "all_trec": _ALL_TREC})
"""Set name -> trec_eval measure names in trec_eval's print order (bare cutoff
families stand for trec_eval's default cutoffs)."""

TREC_HEADER_LINES: tuple[str, ...] = ("runid", "num_q")
"""trec_eval's per-run lines that are not measures of a topic."""
