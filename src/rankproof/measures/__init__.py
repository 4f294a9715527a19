"""Measures: the `Measure` value type, its parser, the one metric namespace, the evaluator.

One namespace holds every name a user can ask for: retrieval measure families
(``nDCG@10``, ``ndcg_cut.10``), per-case metrics over a target's responses and
run-level aggregates (`register_metric`, `register_aggregate`), and trec_eval's
named sets (``official``, ``all_trec``). `lookup` resolves any single name;
`resolve` resolves a list, expanding sets.
"""

from rankproof.measures._evaluate import DEFAULT_MEASURES, evaluate, resolve_measures
from rankproof.measures._families import Family, families, family
from rankproof.measures._measure import Measure, parse, parse_many
from rankproof.measures._perquery import PerQuery
from rankproof.measures._registry import (
    MetricDef,
    lookup,
    polarity,
    register_aggregate,
    register_metric,
    registered,
    resolve,
)

__all__ = [
    "DEFAULT_MEASURES",
    "Family",
    "Measure",
    "MetricDef",
    "PerQuery",
    "evaluate",
    "families",
    "family",
    "lookup",
    "parse",
    "parse_many",
    "polarity",
    "register_aggregate",
    "register_metric",
    "registered",
    "resolve",
    "resolve_measures",
]
