"""Measures: the `Measure` value type, its parser and registry, and the evaluator."""

from rankproof.measures._evaluate import DEFAULT_MEASURES, evaluate, resolve_measures
from rankproof.measures._measure import Measure, parse, parse_many
from rankproof.measures._order import RankedOrder, ranked_order
from rankproof.measures._perquery import PerQuery
from rankproof.measures._registry import Family, families, family

__all__ = [
    "DEFAULT_MEASURES",
    "Family",
    "Measure",
    "PerQuery",
    "RankedOrder",
    "evaluate",
    "families",
    "family",
    "parse",
    "parse_many",
    "ranked_order",
    "resolve_measures",
]
