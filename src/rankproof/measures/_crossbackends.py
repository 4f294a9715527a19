"""The second evaluators a cross-check can ask: ir_measures and pytrec_eval.

Each backend turns rankproof's canonical measures into its own names, runs
once over plain ``{qid: {docid: ...}}`` dicts and returns per-topic values
keyed by rankproof's canonical measure string. A measure a backend cannot
compute is returned with the reason, never dropped. Both packages are
optional (the ``crosscheck`` extra) and imported only here, inside functions.

Name tables (rankproof → backend), with ``r`` the measure's effective
relevance level (its own ``rel=``, else the evaluation's ``-l``):

=============== ============================== =====================================
rankproof       ir_measures                    pytrec_eval (``relevance_level=r``)
=============== ============================== =====================================
``P@k``         ``P@k`` / ``P(rel=r)@k``       ``P.k``
``R@k``         ``R@k`` / ``R(rel=r)@k``       ``recall.k``
``AP``, ``AP@k`` ``AP``, ``AP@k`` (+ rel)      ``map``, ``map_cut.k``
``RR``          ``RR`` (+ rel)                 ``recip_rank``
``RR@k``        ``RR@k`` (+ rel)               ``recip_rank`` over the run cut at k
``nDCG@k``      ``nDCG@k``                     ``ndcg_cut.k`` (``ndcg`` without k)
``nDCG(gain=exp)@k`` ``nDCG(dcg='exp-log2')@k`` not computable
``Rprec``       ``Rprec`` (+ rel)              ``Rprec``
``Bpref``       ``Bpref`` (+ rel)              ``bpref``
``Success@k``   ``Success@k`` (+ rel)          ``success.k``
``Judged@k``    ``Judged@k`` (judged provider) not computable
``NumRet``      ``NumRet``                     ``num_ret``
``NumRel``      ``NumRel`` (rel 1 only)        ``num_rel``
``NumRelRet``   ``NumRet(rel=r)``              ``num_rel_ret``
``ERR@k``       ``ERR@k`` (gdeval, gmax 4)     not computable
``Compat(p,n)`` ``Compat(p=p,normalize=n)``    not computable
``RBP(p,rel=r)`` ``RBP(p=p,rel=r)`` (cwl_eval) not computable
=============== ============================== =====================================

Not mapped, with the reason recorded: ``RBP`` without ``rel`` (trec_eval's graded
gains; cwl_eval's RBP is binary), ``ERR`` without a cutoff or with another
``gmax`` (gdeval's scale is 0..4), ``RBPResid`` (cwl_eval's residual is not an
ir_measures measure), and the other parameterised measures.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from rankproof._errors import MissingExtraError
from rankproof.measures._measure import Measure

BACKENDS: tuple[str, ...] = ("ir-measures", "pytrec-eval")
"""The backends a cross-check can use, in the order ``auto`` tries them."""

_MODULES = {"ir-measures": "ir_measures", "pytrec-eval": "pytrec_eval"}
_DISTRIBUTIONS = {"ir-measures": ("ir-measures", "ir_measures"),
                  "pytrec-eval": ("pytrec-eval-terrier", "pytrec-eval", "pytrec_eval")}

QrelsDict = Mapping[str, Mapping[str, int]]
RunDict = Mapping[str, Mapping[str, float]]


def _import(module: str) -> ModuleType:
    """Import a backend module (one seam, so that a test can make it unimportable)."""
    return importlib.import_module(module)


def load_backend(name: str) -> ModuleType:
    """The backend's module, or `MissingExtraError` naming the extra to install."""
    try:
        return _import(_MODULES[name])
    except ImportError as exc:
        raise MissingExtraError(
            f"the cross-check backend {name!r} is not installed ({exc}); install it with "
            "pip install 'rankproof[crosscheck]' (ir-measures) or pip install "
            "pytrec-eval-terrier") from None


def backend_version(name: str) -> str | None:
    for dist in _DISTRIBUTIONS[name]:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


@dataclass
class BackendValues:
    """What one backend said about one run."""

    names: dict[str, str] = field(default_factory=dict)
    """rankproof measure → the backend's name for it."""
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    """rankproof measure → {qid: value}, for the topics the backend returned."""
    unchecked: dict[str, str] = field(default_factory=dict)
    """rankproof measure → why this backend cannot compute it."""


def effective_rel(m: Measure, rel_level: int) -> int | None:
    """The relevance level ``m`` counts at (None: it uses graded labels, not a level)."""
    if not m.definition.uses_rel_level:
        return None
    return m.rel if m.rel is not None else rel_level


# -- ir_measures ---------------------------------------------------------------


def ir_measures_name(m: Measure, rel_level: int) -> tuple[str | None, str]:
    """ir_measures' spelling of ``m`` (or None and the reason it has none)."""
    fam, k = m.family, m.cutoff
    beyond = _ir_measures_beyond(m)
    if beyond is not None:
        return beyond
    if m.params:
        return None, f"{m}: parameters beyond rel and gain are not mapped to ir_measures"
    rel = effective_rel(m, rel_level)
    at = f"@{k}" if k is not None else ""
    rel_param = f"(rel={rel})" if rel is not None and rel != 1 else ""
    if fam == "nDCG":
        return (f"nDCG(dcg='exp-log2'){at}" if m.gain == "exp" else f"nDCG{at}"), ""
    if fam in ("P", "R", "AP", "RR", "Rprec", "Bpref", "Success"):
        return f"{fam}{rel_param}{at}", ""
    if fam == "Judged":
        return f"Judged{at}", ""
    if fam == "NumRet":
        return "NumRet", ""
    if fam == "NumRelRet":
        return f"NumRet(rel={rel})", ""
    if fam == "NumRel":
        if rel_param:
            return None, "ir_measures computes NumRel at relevance level 1 only"
        return "NumRel", ""
    return None, f"ir_measures has no {fam} measure"


def _ir_measures_beyond(m: Measure) -> tuple[str | None, str] | None:
    """ir_measures' spelling of ERR, Compat and binary RBP (None: not one of those)."""
    if m.family == "ERR":
        if float(m.param("gmax")) != 4.0:
            return None, "ir_measures' ERR is gdeval's, whose labels run 0..4 (gmax=4) only"
        if m.cutoff is None:
            return None, "ir_measures' ERR is gdeval's, which needs a cutoff (ERR@k)"
        return f"ERR@{m.cutoff}", ""
    if m.family == "Compat":
        normalize = float(m.param("normalize"))
        if normalize not in (0.0, 1.0):
            return None, "Compat's normalize is 0 or 1"
        return f"Compat(p={float(m.param('p'))!r},normalize={normalize == 1.0})", ""
    if m.family == "RBP":
        if m.rel is None:
            return None, ("ir_measures' RBP (cwl_eval) has binary gains (RBP(rel=r)); "
                          "trec_eval's graded RBP has no counterpart there")
        return f"RBP(p={float(m.param('p'))!r},rel={m.rel})", ""
    if m.family == "RBPResid":
        return None, "cwl_eval's RBP residual is not an ir_measures measure"
    return None


def run_ir_measures(qrels: QrelsDict, run: RunDict, measures: Sequence[Measure],
                    rel_level: int) -> BackendValues:
    irm = load_backend("ir-measures")
    out = BackendValues()
    parsed: dict[Any, list[str]] = {}
    for m in measures:
        name, reason = ir_measures_name(m, rel_level)
        if name is None:
            out.unchecked[str(m)] = reason
            continue
        try:
            obj = irm.parse_measure(name)
            supported = any(p.supports(obj) and p.is_available()
                            for p in irm.DefaultPipeline.providers)
        except (ValueError, TypeError, AttributeError) as exc:
            out.unchecked[str(m)] = f"ir_measures cannot parse {name!r}: {exc}"
            continue
        if not supported:
            out.unchecked[str(m)] = f"no installed ir_measures provider computes {name}"
            continue
        out.names[str(m)] = name + (" (gdeval provider: values rounded to 5 decimals)"
                                    if m.gain == "exp" or m.family == "ERR" else "")
        parsed.setdefault(obj, []).append(str(m))
        out.values[str(m)] = {}
    if parsed:
        for metric in irm.iter_calc(list(parsed), qrels, run):
            for measure in parsed[metric.measure]:
                out.values[measure][str(metric.query_id)] = float(metric.value)
    return out


# -- pytrec_eval ---------------------------------------------------------------

_PYTREC_CUT = {"P": "P", "R": "recall", "AP": "map_cut", "nDCG": "ndcg_cut",
               "Success": "success"}
_PYTREC_PLAIN = {"AP": "map", "RR": "recip_rank", "nDCG": "ndcg", "Rprec": "Rprec",
                 "Bpref": "bpref", "NumRet": "num_ret", "NumRel": "num_rel",
                 "NumRelRet": "num_rel_ret"}


def pytrec_eval_name(m: Measure, rel_level: int) -> tuple[str | None, int, int | None, str]:
    """pytrec_eval's measure for ``m``: (name, relevance_level, cut the run at k, reason)."""
    fam, k = m.family, m.cutoff
    rel = effective_rel(m, rel_level)
    level = rel if rel is not None else rel_level
    if m.gain is not None:
        return None, level, None, "pytrec_eval computes nDCG with linear gains only"
    if m.params:
        return None, level, None, f"{m}: parameters beyond rel are not mapped to pytrec_eval"
    if fam == "RR" and k is not None:
        return "recip_rank", level, int(k), ""
    if k is not None and fam in _PYTREC_CUT:
        return f"{_PYTREC_CUT[fam]}.{k}", level, None, ""
    if k is None and fam in _PYTREC_PLAIN:
        return _PYTREC_PLAIN[fam], level, None, ""
    return None, level, None, f"pytrec_eval has no {m} measure"


def _cut(run: RunDict, k: int) -> dict[str, dict[str, float]]:
    """The top ``k`` of each topic (the run's scores are distinct: see `cross_check`)."""
    out: dict[str, dict[str, float]] = {}
    for qid, docs in run.items():
        top = sorted(docs.items(), key=lambda item: -item[1])[:k]
        out[qid] = dict(top)
    return out


def run_pytrec_eval(qrels: QrelsDict, run: RunDict, measures: Sequence[Measure],
                    rel_level: int) -> BackendValues:
    pte = load_backend("pytrec-eval")
    out = BackendValues()
    # (level, cut) → pytrec_eval name → rankproof measures
    groups: dict[tuple[int, int | None], dict[str, list[str]]] = {}
    for m in measures:
        name, level, cut, reason = pytrec_eval_name(m, rel_level)
        if name is None:
            out.unchecked[str(m)] = reason
            continue
        shown = name if cut is None else f"{name} over the run cut at {cut}"
        out.names[str(m)] = shown if level == 1 else f"{shown} (relevance_level={level})"
        groups.setdefault((level, cut), {}).setdefault(name, []).append(str(m))
        out.values[str(m)] = {}
    for (level, cut), wanted in groups.items():
        evaluator = pte.RelevanceEvaluator(dict(qrels), set(wanted), relevance_level=level)
        results = evaluator.evaluate(_cut(run, cut) if cut is not None else dict(run))
        for qid, row in results.items():
            for name, measures_here in wanted.items():
                for measure in measures_here:
                    out.values[measure][str(qid)] = float(row[name.replace(".", "_")])
    return out


RUNNERS = {"ir-measures": run_ir_measures, "pytrec-eval": run_pytrec_eval}
