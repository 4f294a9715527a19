"""The one registry of measure definitions.

A definition says what a measure family *is* — its canonical name, the
spellings the parser accepts, polarity, a one-line definition, a citation and
the parameters it takes. How it is computed lives elsewhere (``_kernels``),
keyed by the same canonical name; a test checks the two tables agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from rankproof._errors import InputError

CutoffRule = Literal["required", "optional", "none"]
ParamKind = Literal["rel", "gain", "float", "floats", "gains"]
"""How a parameter is written and stored: ``rel`` (an integer label), ``gain``
(``exp``), ``float``, ``floats`` (a list ``[0.2,0.5]``, kept in the given
order) or ``gains`` (a label → gain map ``{0:0,1:1,2:3}``)."""
ParamValue = float | tuple[float, ...] | tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class Param:
    """One parameter a family takes: its kind, its default and what it means."""

    kind: ParamKind
    default: object = None
    doc: str = ""
    length: int | None = None
    """For ``floats``: the exact number of values required (None: any, at least one)."""


REL = Param("rel", None, "minimum label counted as relevant (default: the evaluation's level)")
GAIN = Param("gain", None, "exp: 2^label - 1 (default: the label itself)")
GAINS = Param("gains", None, "label -> gain map; labels not listed gain their label"
              " (trec_eval ndcg.1=3,2=9); gains may be 0 or negative, labels are 0 or above")


def _params(**params: Param) -> Mapping[str, Param]:
    return MappingProxyType(dict(params))


@dataclass(frozen=True)
class Family:
    """The definition of one measure family."""

    name: str
    higher_is_better: bool
    description: str
    citation: str
    cutoff: CutoffRule
    params: Mapping[str, Param]
    """Parameter name -> `Param` (kind and default); ``rel`` and ``gain`` as before."""
    aliases: tuple[str, ...] = ()
    trec_name: str | None = None
    """trec_eval's name without a cutoff (``map``), if trec_eval has it."""
    trec_cut_name: str | None = None
    """trec_eval's name with a cutoff (``map_cut``, printed ``map_cut_10``)."""
    trec_default_cutoffs: tuple[float, ...] = ()
    aggregate: Literal["mean", "sum", "geometric"] = "mean"
    """How trec_eval summarises the family over topics (``all`` line); ``geometric``
    is exp(mean(log(max(x, GEO_MEAN_FLOOR)))), as trec_eval's gm_map."""
    integer: bool = False
    uses_rel_level: bool = True
    cutoff_kind: Literal["int", "float"] = "int"
    """``float``: the cutoff is a fraction in [0, 1] (``IPrec@0.1``), not a rank."""
    trec_param: str | None = None
    """The parameter trec_eval's ``name.x,y`` list fills for a family whose
    trec_eval name is not a cutoff list (``Rprec_mult.0.2`` → ``mult``)."""
    trec_param_name: str | None = None
    """trec_eval's name for the family with that parameter (``Rprec_mult``)."""
    trec_param_style: Literal["values", "pairs"] = "values"
    """How trec_eval writes the parameters: ``utility.2,-1,0,0`` or ``rbp.p=0.8``."""
    trec_default_params: tuple[float, ...] = ()
    """trec_eval's default values of `trec_param` (one measure each)."""
    trec_per_topic: bool = True
    """False: trec_eval prints only the ``all`` line (gm_map, gm_bpref)."""


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
        from rankproof.measures._names import unknown_measure_message  # the error path only

        known = "known families: " + ", ".join(sorted(_REGISTRY))
        raise InputError(unknown_measure_message(name, known=known)) from None


def find_family(name: str) -> Family | None:
    """Like :func:`family`, but None for an unknown name."""
    key = _ALIASES.get(name.lower())
    return None if key is None else _REGISTRY[key]


def families() -> tuple[Family, ...]:
    """Every registered family, in registration order."""
    return tuple(_REGISTRY.values())


_TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
GEO_MEAN_FLOOR = 0.00001
"""trec_eval's MIN_GEO_MEAN: values below it count as it in a geometric mean."""

register(Family(
    "P", True, "Precision at k: relevant documents in the top k, divided by k.",
    "trec_eval P; Manning, Raghavan & Schütze, Introduction to IR (2008), ch. 8.",
    "required", _params(rel=REL), aliases=("precision", "prec"),
    trec_cut_name="P", trec_default_cutoffs=_TREC_CUTOFFS,
))
register(Family(
    "R", True, "Recall at k: relevant documents in the top k, divided by all relevant.",
    "trec_eval recall; Manning, Raghavan & Schütze (2008), ch. 8.",
    "required", _params(rel=REL), aliases=("recall",),
    trec_cut_name="recall", trec_default_cutoffs=_TREC_CUTOFFS,
))
register(Family(
    "AP", True,
    "Average precision: mean of precision at each relevant document's rank, over all relevant"
    " (AP@k: only ranks up to k).",
    "trec_eval map / map_cut; Buckley & Voorhees, 'Evaluating evaluation measure stability',"
    " SIGIR 2000.",
    "optional", _params(rel=REL), aliases=("map",), trec_name="map", trec_cut_name="map_cut",
    trec_default_cutoffs=_TREC_CUTOFFS,
))
register(Family(
    "RR", True,
    "Reciprocal rank of the first relevant document (RR@k: 0 when it is below rank k).",
    "trec_eval recip_rank; Voorhees, 'The TREC-8 Question Answering Track Report', TREC 1999.",
    "optional", _params(rel=REL), aliases=("mrr", "recip_rank"), trec_name="recip_rank",
))
register(Family(
    "nDCG", True,
    "Normalised discounted cumulative gain: sum of gain/log2(rank+1), divided by the ideal;"
    " gain is the raw label (gain=exp: 2^label - 1). Ignores the relevance level.",
    "trec_eval ndcg / ndcg_cut; Järvelin & Kekäläinen, 'Cumulated gain-based evaluation of"
    " IR techniques', ACM TOIS 20(4), 2002.",
    "optional", _params(gain=GAIN, gains=GAINS), aliases=("ndcg",), trec_name="ndcg",
    trec_cut_name="ndcg_cut", trec_default_cutoffs=_TREC_CUTOFFS, uses_rel_level=False,
))
register(Family(
    "Rprec", True, "R-precision: precision at rank R, where R is the number of relevant documents.",
    "trec_eval Rprec; Buckley & Voorhees, SIGIR 2000.",
    "none", _params(rel=REL, mult=Param(
        "float", 1.0, "multiple of R: precision at rank (long)(mult x R + 0.9), as trec_eval")),
    aliases=("r_prec", "rprecision"), trec_name="Rprec", trec_param="mult",
    trec_param_name="Rprec_mult",
    trec_default_params=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
))
register(Family(
    "Bpref", True,
    "Binary preference: how often judged relevant documents rank above judged non-relevant"
    " ones (unjudged documents are skipped).",
    "trec_eval bpref; Buckley & Voorhees, 'Retrieval evaluation with incomplete information',"
    " SIGIR 2004.",
    "none", _params(rel=REL), trec_name="bpref",
))
register(Family(
    "Success", True, "Success at k (hit rate): 1 if any relevant document is in the top k, else 0.",
    "trec_eval success; Craswell & Hawking, TREC 2004 Web Track overview.",
    "required", _params(rel=REL), aliases=("hit", "hits", "hitrate", "hit_rate"),
    trec_cut_name="success", trec_default_cutoffs=(1, 5, 10),
))
register(Family(
    "Judged", True,
    "Judged at k: share of the top min(k, retrieved) documents that have any judgment."
    " Low values mean the other measures rest on unjudged documents.",
    "ir_measures Judged; Sakai, 'Alternatives to Bpref', SIGIR 2007 (condensed lists).",
    "required", _params(), uses_rel_level=False,
))
register(Family(
    "NumRet", True, "Number of documents retrieved for the topic.",
    "trec_eval num_ret.", "none", _params(), aliases=("num_ret",), trec_name="num_ret",
    aggregate="sum", integer=True, uses_rel_level=False,
))
register(Family(
    "NumRel", True, "Number of relevant documents in the judgments for the topic.",
    "trec_eval num_rel.", "none", _params(rel=REL), aliases=("num_rel",), trec_name="num_rel",
    aggregate="sum", integer=True,
))
register(Family(
    "NumRelRet", True, "Number of relevant documents retrieved.",
    "trec_eval num_rel_ret.", "none", _params(rel=REL), aliases=("num_rel_ret",),
    trec_name="num_rel_ret", aggregate="sum", integer=True,
))

_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

register(Family(
    "NumNonRelJudgedRet", False,
    "Number of judged non-relevant documents retrieved (unjudged ones are not counted).",
    "trec_eval num_nonrel_judged_ret.", "none", _params(rel=REL),
    aliases=("num_nonrel_judged_ret",), trec_name="num_nonrel_judged_ret", aggregate="sum",
    integer=True,
))
register(Family(
    "SetP", True, "Set precision: relevant retrieved divided by retrieved (the whole list).",
    "trec_eval set_P; ir_measures SetP.", "none", _params(rel=REL), aliases=("set_P",),
    trec_name="set_P",
))
register(Family(
    "SetR", True, "Set recall: relevant retrieved divided by relevant.",
    "trec_eval set_recall; ir_measures SetR.", "none", _params(rel=REL),
    aliases=("set_recall",), trec_name="set_recall",
))
register(Family(
    "SetRelP", True,
    "Set relative precision: relevant retrieved divided by min(retrieved, relevant).",
    "trec_eval set_relative_P.", "none", _params(rel=REL), aliases=("set_relative_P",),
    trec_name="set_relative_P",
))
register(Family(
    "SetAP", True,
    "Set (unranked) average precision: relevant retrieved^2 / (retrieved x relevant),"
    " i.e. set precision x set recall.",
    "trec_eval set_map; ir_measures SetAP.", "none", _params(rel=REL), aliases=("set_map",),
    trec_name="set_map",
))
register(Family(
    "SetF", True,
    "Set F: (beta+1) P R / (beta P + R) over the whole retrieved set (beta weighs recall).",
    "trec_eval set_F; van Rijsbergen, Information Retrieval (1979), ch. 7.", "none",
    _params(rel=REL, beta=Param("float", 1.0, "relative weight of recall")),
    aliases=("set_F",), trec_name="set_F", trec_param="beta", trec_param_name="set_F",
))
register(Family(
    "IPrec", True,
    "Interpolated precision at recall level r (IPrec@0.1): the highest precision at any"
    " rank at or below the one where the lround(r x R)-th relevant document is retrieved.",
    "trec_eval iprec_at_recall (lround positions, trec_eval 10); ir_measures IPrec.",
    "required", _params(rel=REL), cutoff_kind="float",
    trec_cut_name="iprec_at_recall", trec_default_cutoffs=_LEVELS,
))
register(Family(
    "IPrecAvg", True,
    "Interpolated precision averaged over recall levels (default the 11 points 0, 0.1 .. 1).",
    "trec_eval 11pt_avg; Salton & McGill, Introduction to Modern IR (1983).", "none",
    _params(rel=REL, levels=Param("floats", _LEVELS, "recall levels, ascending")),
    aliases=("11pt_avg",), trec_name="11pt_avg", trec_param="levels",
    trec_param_name="11pt_avg",
))
register(Family(
    "GMAP", True,
    "Average precision per topic, summarised by the geometric mean over topics"
    " (values below 0.00001 count as 0.00001).",
    "trec_eval gm_map; Robertson, 'On GMAP', CIKM 2006.", "none", _params(rel=REL),
    aliases=("gm_map",), trec_name="gm_map", aggregate="geometric", trec_per_topic=False,
))
register(Family(
    "YAAP", True,
    "Yet another average precision: log((1 + S) / (1 + R - S)), S the sum of precision at"
    " each relevant document retrieved, R the relevant documents; monotonic with AP on a"
    " topic, but not bounded by 0 and 1, so its mean is less dominated by extreme topics.",
    "trec_eval yaap; Robertson, 'On smoothing average precision', ECIR 2012.", "none",
    _params(rel=REL), aliases=("yaap",), trec_name="yaap",
))
register(Family(
    "GMBpref", True,
    "Bpref per topic, summarised by the geometric mean over topics (floor 0.00001).",
    "trec_eval gm_bpref.", "none", _params(rel=REL), aliases=("gm_bpref",),
    trec_name="gm_bpref", aggregate="geometric", trec_per_topic=False,
))
register(Family(
    "Utility", True,
    "Set utility a x relret + b x nonrelret + c x relnotret + d x nonrelnotret (retrieved"
    " documents that are not relevant, judged or not, count as non-relevant; the collection"
    " size is taken as 0).",
    "trec_eval utility (default 1,-1,0,0); Hull & Robertson, TREC-8 filtering track.", "none",
    _params(rel=REL, a=Param("float", 1.0), b=Param("float", -1.0), c=Param("float", 0.0),
            d=Param("float", 0.0)),
    aliases=("utility",), trec_name="utility", trec_param="a,b,c,d",
    trec_param_name="utility",
))
register(Family(
    "RelP", True,
    "Relative precision at k: relevant in the top k divided by min(k, R) (precision up to"
    " R, recall after).",
    "trec_eval relative_P.", "required", _params(rel=REL),
    trec_cut_name="relative_P", trec_default_cutoffs=_TREC_CUTOFFS,
))

register(Family(
    "Unjudged", False,
    "Unjudged at k: share of the top k that the judgments do not cover (a list shorter than"
    " k counts its missing ranks as judged).",
    "trec_eval unj (trec_eval 10).", "required", _params(), trec_cut_name="unj",
    trec_default_cutoffs=(5, 10, 20), uses_rel_level=False,
))
_RBP_REL = Param("rel", None, "binary gains: 1 for a label >= rel, else 0 (ir_measures and"
                 " cwl-eval's RBP(rel=1)); without it, trec_eval's graded gains")
register(Family(
    "RBP", True,
    "Rank-biased precision: (1 - p) sum_i gain_i p^(i-1), gains the labels (or the gains= map,"
    " trec_eval rbp.p=0.8,1=3,2=9) scaled to [0, 1] per topic as trec_eval does: (g - lo) /"
    " (hi - lo) over the topic's gain table (labels 0 .. its highest, plus every listed label)"
    " with lo = min(0, gains), hi = max(0, gains), when lo < 0 or hi > 1; with rel=r, binary"
    " gains (label >= r), as ir_measures and cwl-eval.",
    "trec_eval rbp; cwl-eval RBP; Moffat & Zobel, 'Rank-biased precision for measurement of"
    " retrieval effectiveness', ACM TOIS 27(1), 2008.", "none",
    _params(p=Param("float", 0.9, "persistence"), rel=_RBP_REL, gains=GAINS),
    aliases=("rbp",),
    trec_name="rbp", trec_param="p", trec_param_name="rbp", trec_param_style="pairs",
    uses_rel_level=False,
))
register(Family(
    "RBPResid", False,
    "RBP residual: the weight RBP gives to unjudged ranks and to the ranks past the end of the"
    " list (the most RBP could still rise). Without rel, trec_eval's rbp_resid: 0 when every"
    " retrieved document is judged; with rel (cwl-eval's residual of RBP(rel=r)), the tail"
    " past the list always counts.",
    "trec_eval rbp_resid; cwl-eval residuals; Moffat & Zobel, ACM TOIS 27(1), 2008.", "none",
    _params(p=Param("float", 0.9, "persistence"), rel=_RBP_REL), aliases=("rbp_resid",),
    trec_name="rbp_resid", trec_param="p", trec_param_name="rbp_resid",
    trec_param_style="pairs", uses_rel_level=False,
))
register(Family(
    "BinG", True,
    "Binary G: sum over relevant retrieved of 1/log2(2 + non-relevant ranked above it),"
    " divided by R.",
    "trec_eval binG; Kekäläinen & Järvelin (2002).", "none", _params(rel=REL),
    aliases=("binG",), trec_name="binG",
))
register(Family(
    "G", True,
    "G: sum of gain/log2(2 + cost so far - gain so far), the cost of a rank being the ideal"
    " gain there (at least 1), divided by the sum of ideal gains; gains the labels, or the"
    " gains= map (trec_eval G.1=3,2=9).",
    "trec_eval G; Kekäläinen & Järvelin (2002).", "none", _params(gains=GAINS),
    trec_name="G", uses_rel_level=False,
))

register(Family(
    "NDCGRel", True,
    "nDCG averaged over the relevant documents: at each retrieved one's rank, and the final"
    " nDCG for each one not retrieved (labels as gains, or the gains= map: trec_eval"
    " ndcg_rel.1=3,2=9; relevant means a positive gain).",
    "trec_eval ndcg_rel.", "none", _params(gains=GAINS), aliases=("ndcg_rel",),
    trec_name="ndcg_rel",
    uses_rel_level=False,
))
register(Family(
    "RnDCG", True,
    "nDCG averaged over the ranks where the ideal list's gain drops a level (labels as"
    " gains, or the gains= map: trec_eval Rndcg.1=3,2=9); 0 for a topic with nothing"
    " relevant at the relevance level.",
    "trec_eval Rndcg.", "none", _params(gains=GAINS), aliases=("Rndcg",), trec_name="Rndcg",
))

register(Family(
    "InfAP", True,
    "Inferred AP for sampled judgment pools: a negative label marks a document pooled but"
    " not judged, one without a judgment is outside the pool; equals AP when every pooled"
    " document is judged.",
    "trec_eval infAP; Yilmaz & Aslam, 'Estimating average precision with incomplete and"
    " imperfect judgments', CIKM 2006.", "none", _params(rel=REL), aliases=("infAP",),
    trec_name="infAP",
))

# trec_eval prints measures in the order of its own measure table, whatever
# order they were asked for in; `--format trec` does the same.
TREC_PRINT_ORDER: tuple[str, ...] = (
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility",
    "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P",
    "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj",
)

# The measures beyond trec_eval (gdeval, compat, ndeval) register in their own module.
from rankproof.measures import _families_beyond  # noqa: E402,F401  (registers on import)
