"""trec_eval's named measure sets, restricted to the measures rankproof implements
(all of trec_eval 10's ``all_trec`` but ``relstring``, a string, not a number).

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

_OFFICIAL = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
             "iprec_at_recall", "P")
_ALL_TREC = (
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility",
    "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P",
    "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj",
)

TREC_SETS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"official": _OFFICIAL, "all_trec": _ALL_TREC})
"""Set name -> trec_eval measure names in trec_eval's print order (bare cutoff
families stand for trec_eval's default cutoffs)."""

TREC_JUDGMENT_SETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "all_prefs": (
        "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
        "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
        "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
        "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
    ),
    "qrels_jg": ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
})
"""trec_eval's sets whose members read other judgments than qrels (``-R prefs`` /
``qrels_prefs``: ``all_prefs``; ``-R qrels_jg``: ``qrels_jg``), in print order.
Only `rankproof trec_eval -R ...` computes them (`rankproof.measures._prefs`);
they are not in `TREC_SETS`, which the parser expands over qrels."""

TREC_HEADER_LINES: tuple[str, ...] = ("runid", "num_q")
"""trec_eval's per-run lines that are not measures of a topic."""
