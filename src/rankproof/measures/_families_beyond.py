"""Definitions of the measures the field uses beyond trec_eval.

gdeval's ERR, ir_measures' compatibility, and ndeval's diversity measures over
subtopic qrels (`rankproof.data.SubtopicQrels`). Spellings follow ir_measures
(``ERR@20``, ``Compat(p=0.95)``, ``alpha_nDCG@20``, ``ERR_IA@20``, ``NRBP``,
``P_IA@20``, ``StRecall@20``). gdeval's nDCG is not a family of its own: it is
``nDCG(gain=exp)@k`` (ir_measures writes it ``nDCG(dcg=exp-log2)@k``), whose
per-topic values gdeval reproduces. Kernels: `rankproof.measures._kernels_beyond`.
"""

from __future__ import annotations

from rankproof.measures._families import REL, Family, Param, _params, register

ALPHA = Param("float", 0.5, "redundancy intolerance: a subtopic's gain falls by (1 - alpha)"
              " each time a document covers it again (ndeval -alpha)")

register(Family(
    "ERR", True,
    "Expected reciprocal rank (cascade model): sum over ranks i of R_i/i x prod_{j<i}(1 - R_j),"
    " with R = (2^label - 1) / 2^gmax (gmax = 4, as gdeval); labels <= 0 gain nothing, a label"
    " above gmax is refused.",
    "gdeval (TREC Web track 2010-2014); Chapelle, Metzler, Zhang & Grinspan, 'Expected"
    " reciprocal rank for graded relevance', CIKM 2009.",
    "optional", _params(gmax=Param("float", 4.0, "the highest label of the scale")),
    aliases=("err",), uses_rel_level=False,
))
register(Family(
    "Compat", True,
    "Compatibility: rank-biased overlap (persistence p) of the run with an ideal ranking"
    " (relevant documents by label, ties in the run's order), over depth max(retrieved,"
    " relevant); normalize=1 divides by the ideal's own overlap.",
    "ir_measures compat; Clarke, Vtyurina & Smucker, 'Assessing top-k preferences',"
    " ACM TOIS 39(3), 2021.",
    "none", _params(p=Param("float", 0.95, "persistence"),
                    normalize=Param("float", 1.0, "1: divide by the ideal ranking's score; 0:"
                                    " raw overlap")),
    aliases=("compat",), uses_rel_level=False,
))
register(Family(
    "alpha_nDCG", True,
    "alpha-nDCG at k: DCG whose gain at a rank is the sum over the subtopics the document"
    " covers of (1 - alpha)^(times the subtopic was covered above), divided by the same for"
    " ndeval's greedy ideal ranking.",
    "ndeval (TREC Web track); Clarke et al., 'Novelty and diversity in information retrieval"
    " evaluation', SIGIR 2008.",
    "required", _params(rel=REL, alpha=ALPHA), aliases=("alpha_ndcg",),
))
register(Family(
    "ERR_IA", True,
    "Intent-aware ERR at k (ndeval, collection-independent): sum over ranks i of the"
    " alpha-novelty gain / i, divided by the same for a list covering every subtopic at every"
    " rank.",
    "ndeval ERR-IA; Chapelle et al., 'Intent-based diversity metrics', CIKM 2011;"
    " Clarke et al., SIGIR 2008.",
    "required", _params(rel=REL, alpha=ALPHA), aliases=("err_ia",),
))
register(Family(
    "NRBP", True,
    "Novelty- and rank-biased precision: (1 - (1 - alpha) beta) / subtopics x sum over ranks i"
    " of the alpha-novelty gain x beta^(i-1), over the whole list.",
    "ndeval NRBP; Clarke, Kolla & Vechtomova, 'An effectiveness measure for ambiguous and"
    " underspecified queries', ICTIR 2009.",
    "none", _params(rel=REL, alpha=ALPHA, beta=Param("float", 0.5, "patience (ndeval -beta)")),
    aliases=("nrbp",),
))
register(Family(
    "P_IA", True,
    "Intent-aware precision at k: (document, subtopic) relevance pairs in the top k, divided"
    " by k x the number of subtopics.",
    "ndeval P-IA; Agrawal, Gollapudi, Halverson & Ieong, 'Diversifying search results',"
    " WSDM 2009.",
    "required", _params(rel=REL), aliases=("p_ia",),
))
register(Family(
    "StRecall", True,
    "Subtopic recall at k: share of the topic's subtopics covered by the top k.",
    "ndeval strec; Zhai, Cohen & Lafferty, 'Beyond independent relevance', SIGIR 2003.",
    "required", _params(rel=REL), aliases=("strec", "s_recall"),
))

BEYOND_FAMILIES: tuple[str, ...] = (
    "ERR", "Compat", "alpha_nDCG", "ERR_IA", "NRBP", "P_IA", "StRecall")
"""The families this module registers."""

DIVERSITY_FAMILIES: frozenset[str] = frozenset(
    {"alpha_nDCG", "ERR_IA", "NRBP", "P_IA", "StRecall"})
"""The families that read subtopic judgments."""
