"""The one registry of measure definitions.

A definition says what a measure family *is* — its canonical name, the
spellings the parser accepts, polarity, a one-line definition, a citation and
the parameters it takes. How it is computed lives elsewhere (``_kernels``),
keyed by the same canonical name; a test checks the two tables agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rankproof._errors import InputError

CutoffRule = Literal["required", "optional", "none"]


@dataclass(frozen=True)
class Family:
    """The definition of one measure family."""

    name: str
    higher_is_better: bool
    description: str
    citation: str
    cutoff: CutoffRule
    params: frozenset[str]
    aliases: tuple[str, ...] = ()
    trec_name: str | None = None
    """trec_eval's name without a cutoff (``map``), if trec_eval has it."""
    trec_cut_name: str | None = None
    """trec_eval's name with a cutoff (``map_cut``, printed ``map_cut_10``)."""
    trec_default_cutoffs: tuple[int, ...] = ()
    aggregate: Literal["mean", "sum"] = "mean"
    """How trec_eval summarises the family over topics (``all`` line)."""
    integer: bool = False
    uses_rel_level: bool = True


_REGISTRY: dict[str, Family] = {}
_ALIASES: dict[str, str] = {}


def register(family: Family) -> Family:
    """Add a family; a name or alias that is already taken is an error."""
    keys = [family.name.lower(), *[a.lower() for a in family.aliases]]
    if family.name in _REGISTRY:
        raise InputError(f"measure family {family.name!r} is already registered")
    for key in keys:
        if key in _ALIASES:
            raise InputError(f"measure name {key!r} already means {_ALIASES[key]!r}")
    _REGISTRY[family.name] = family
    for key in keys:
        _ALIASES[key] = family.name
    return family


def family(name: str) -> Family:
    """The family registered under ``name`` (canonical name or alias, any case)."""
    try:
        return _REGISTRY[_ALIASES[name.lower()]]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise InputError(f"unknown measure {name!r}; known families: {known}") from None


def find_family(name: str) -> Family | None:
    """Like :func:`family`, but None for an unknown name."""
    key = _ALIASES.get(name.lower())
    return None if key is None else _REGISTRY[key]


def families() -> tuple[Family, ...]:
    """Every registered family, in registration order."""
    return tuple(_REGISTRY.values())


_TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

register(Family(
    "P", True, "Precision at k: relevant documents in the top k, divided by k.",
    "trec_eval P; Manning, Raghavan & Schütze, Introduction to IR (2008), ch. 8.",
    "required", frozenset({"rel"}), aliases=("precision", "prec"),
    trec_cut_name="P", trec_default_cutoffs=_TREC_CUTOFFS,
))
register(Family(
    "R", True, "Recall at k: relevant documents in the top k, divided by all relevant.",
    "trec_eval recall; Manning, Raghavan & Schütze (2008), ch. 8.",
    "required", frozenset({"rel"}), aliases=("recall",),
    trec_cut_name="recall", trec_default_cutoffs=_TREC_CUTOFFS,
))
register(Family(
    "AP", True,
    "Average precision: mean of precision at each relevant document's rank, over all relevant"
    " (AP@k: only ranks up to k).",
    "trec_eval map / map_cut; Buckley & Voorhees, 'Evaluating evaluation measure stability',"
    " SIGIR 2000.",
    "optional", frozenset({"rel"}), aliases=("map",), trec_name="map", trec_cut_name="map_cut",
    trec_default_cutoffs=_TREC_CUTOFFS,
))
register(Family(
    "RR", True,
    "Reciprocal rank of the first relevant document (RR@k: 0 when it is below rank k).",
    "trec_eval recip_rank; Voorhees, 'The TREC-8 Question Answering Track Report', TREC 1999.",
    "optional", frozenset({"rel"}), aliases=("mrr", "recip_rank"), trec_name="recip_rank",
))
register(Family(
    "nDCG", True,
    "Normalised discounted cumulative gain: sum of gain/log2(rank+1), divided by the ideal;"
    " gain is the raw label (gain=exp: 2^label - 1). Ignores the relevance level.",
    "trec_eval ndcg / ndcg_cut; Järvelin & Kekäläinen, 'Cumulated gain-based evaluation of"
    " IR techniques', ACM TOIS 20(4), 2002.",
    "optional", frozenset({"gain"}), aliases=("ndcg",), trec_name="ndcg",
    trec_cut_name="ndcg_cut", trec_default_cutoffs=_TREC_CUTOFFS, uses_rel_level=False,
))
register(Family(
    "Rprec", True, "R-precision: precision at rank R, where R is the number of relevant documents.",
    "trec_eval Rprec; Buckley & Voorhees, SIGIR 2000.",
    "none", frozenset({"rel"}), aliases=("r_prec", "rprecision"), trec_name="Rprec",
))
register(Family(
    "Bpref", True,
    "Binary preference: how often judged relevant documents rank above judged non-relevant"
    " ones (unjudged documents are skipped).",
    "trec_eval bpref; Buckley & Voorhees, 'Retrieval evaluation with incomplete information',"
    " SIGIR 2004.",
    "none", frozenset({"rel"}), trec_name="bpref",
))
register(Family(
    "Success", True, "Success at k (hit rate): 1 if any relevant document is in the top k, else 0.",
    "trec_eval success; Craswell & Hawking, TREC 2004 Web Track overview.",
    "required", frozenset({"rel"}), aliases=("hit", "hits", "hitrate", "hit_rate"),
    trec_cut_name="success", trec_default_cutoffs=(1, 5, 10),
))
register(Family(
    "Judged", True,
    "Judged at k: share of the top min(k, retrieved) documents that have any judgment."
    " Low values mean the other measures rest on unjudged documents.",
    "ir_measures Judged; Sakai, 'Alternatives to Bpref', SIGIR 2007 (condensed lists).",
    "required", frozenset(), uses_rel_level=False,
))
register(Family(
    "NumRet", True, "Number of documents retrieved for the topic.",
    "trec_eval num_ret.", "none", frozenset(), aliases=("num_ret",), trec_name="num_ret",
    aggregate="sum", integer=True, uses_rel_level=False,
))
register(Family(
    "NumRel", True, "Number of relevant documents in the judgments for the topic.",
    "trec_eval num_rel.", "none", frozenset({"rel"}), aliases=("num_rel",), trec_name="num_rel",
    aggregate="sum", integer=True,
))
register(Family(
    "NumRelRet", True, "Number of relevant documents retrieved.",
    "trec_eval num_rel_ret.", "none", frozenset({"rel"}), aliases=("num_rel_ret",),
    trec_name="num_rel_ret", aggregate="sum", integer=True,
))

# trec_eval prints measures in the order of its own measure table, whatever
# order they were asked for in; `--format trec` does the same.
TREC_PRINT_ORDER: tuple[str, ...] = (
    "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P", "recall",
    "ndcg", "ndcg_cut", "map_cut", "success",
)
