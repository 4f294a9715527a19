"""Measures: the `Measure` value type, its parser, the one metric namespace, the evaluator.

One namespace holds every name a user can ask for: retrieval measure families
(``nDCG@10``, ``ndcg_cut.10``), per-case metrics over a target's responses and
run-level aggregates (`register_metric`, `register_aggregate`), and trec_eval's
named sets (``official``, ``all_trec``). `lookup` resolves any single name;
`resolve` resolves a list, expanding sets; `parse_many` and `resolve_measures`
expand sets too, so a set is accepted wherever measures are named.

Errors: a bad name or value is a `rankproof.InputError` (a ``ValueError``).
"""

from rankproof.measures._crosscheck import CrossCheck, RunCrossCheck, cross_check
from rankproof.measures._distributed import (
    PartitionResult,
    TopicSlices,
    combine_partitions,
    evaluate_partition,
)
from rankproof.measures._evaluate import DEFAULT_MEASURES, evaluate, resolve_measures
from rankproof.measures._families import TREC_PRINT_ORDER, Family, families, family
from rankproof.measures._families_beyond import DIVERSITY_FAMILIES
from rankproof.measures._measure import Measure, expand_set, parse, parse_many
from rankproof.measures._names import (
    TREC_EVAL_MEASURES,
    TREC_EVAL_NICKNAMES,
    TrecEvalMeasure,
    closest_names,
    split_measure_list,
    split_measure_text,
    trec_missing,
)
from rankproof.measures._options import EvalOptions
from rankproof.measures._partitioned import evaluate_partitions
from rankproof.measures._perquery import PerQuery, TopicPolicy
from rankproof.measures._prefs import JG_MEASURES, PREFS_MEASURES, jg_values, prefs_values
from rankproof.measures._registry import (
    MetricDef,
    is_set,
    lookup,
    polarity,
    register_aggregate,
    register_metric,
    registered,
    resolve,
)
from rankproof.measures._sets import TREC_HEADER_LINES, TREC_SETS
from rankproof.measures._treceval import (
    TrecColumn,
    TrecMeasureError,
    TrecSelection,
    rel_format_of,
    relstring_length,
    relstring_request,
    relstrings,
    select_trec_eval,
    trec_eval_run,
)
from rankproof.measures._treceval_artefacts import (
    trec_eval_collection_size,
    trec_eval_iprec_nan,
    trec_eval_leftovers,
    trec_eval_stand_in,
)

__all__ = [
    "DEFAULT_MEASURES",
    "DIVERSITY_FAMILIES",
    "JG_MEASURES",
    "PREFS_MEASURES",
    "TREC_EVAL_MEASURES",
    "TREC_EVAL_NICKNAMES",
    "TREC_HEADER_LINES",
    "TREC_PRINT_ORDER",
    "TREC_SETS",
    "CrossCheck",
    "EvalOptions",
    "Family",
    "Measure",
    "MetricDef",
    "PartitionResult",
    "PerQuery",
    "RunCrossCheck",
    "TopicPolicy",
    "TopicSlices",
    "TrecColumn",
    "TrecEvalMeasure",
    "TrecMeasureError",
    "TrecSelection",
    "closest_names",
    "combine_partitions",
    "cross_check",
    "evaluate",
    "evaluate_partition",
    "evaluate_partitions",
    "expand_set",
    "families",
    "family",
    "is_set",
    "jg_values",
    "lookup",
    "parse",
    "parse_many",
    "polarity",
    "prefs_values",
    "register_aggregate",
    "register_metric",
    "registered",
    "rel_format_of",
    "relstring_length",
    "relstring_request",
    "relstrings",
    "resolve",
    "resolve_measures",
    "select_trec_eval",
    "split_measure_list",
    "split_measure_text",
    "trec_eval_collection_size",
    "trec_eval_iprec_nan",
    "trec_eval_leftovers",
    "trec_eval_run",
    "trec_eval_stand_in",
    "trec_missing",
]
