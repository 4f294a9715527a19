"""The one measure grammar: canonical round trip, accepted spellings, and errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankproof.measures import Measure, families, family, parse, parse_many

_TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


_FLOATS = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False) | st.integers(-100, 100)


def _param_value(draw: st.DrawFn, kind: str, length: int | None) -> object:
    if kind == "float":
        return draw(_FLOATS)
    if kind == "floats":
        n = length if length is not None else draw(st.integers(1, 6))
        return draw(st.lists(_FLOATS, min_size=n, max_size=n))
    return draw(st.dictionaries(st.integers(0, 6), _FLOATS, min_size=1, max_size=5))


@st.composite
def measures(draw: st.DrawFn) -> Measure:
    fam = draw(st.sampled_from(families()))
    if fam.cutoff_kind == "float":
        k_st: st.SearchStrategy[object] = st.floats(0.0, 1.0) | st.sampled_from((0, 1))
    else:
        k_st = st.integers(1, 10_000)
    cutoff: object
    if fam.cutoff == "required":
        cutoff = draw(k_st)
    elif fam.cutoff == "optional":
        cutoff = draw(st.none() | k_st)
    else:
        cutoff = None
    rel = draw(st.none() | st.integers(-3, 10)) if "rel" in fam.params else None
    gain = draw(st.sampled_from((None, "exp"))) if "gain" in fam.params else None
    params: dict[str, object] = {}
    for name, spec in fam.params.items():
        if spec.kind in ("rel", "gain") or (name == "gains" and (gain, rel) != (None, None)):
            continue
        if draw(st.booleans()):
            params[name] = _param_value(draw, spec.kind, spec.length)
    return Measure(fam.name, cutoff=cutoff, rel=rel, gain=gain,  # type: ignore[arg-type]
                   params=params)  # type: ignore[arg-type]


@settings(derandomize=True, max_examples=300, deadline=None)
@given(m=measures())
def test_canonical_text_round_trips(m: Measure) -> None:
    text = str(m)
    assert parse(text) == m
    assert str(parse(text)) == text
    assert parse_many(text) == (m,)
    assert hash(parse(text)) == hash(m)
    # Case and surrounding blanks do not matter for names; the text is still canonical.
    assert parse(f"  {text.lower()} ") == m
    assert parse(m) is m


def test_every_family_is_reachable_by_its_aliases() -> None:
    for fam in families():
        for name in (fam.name, *fam.aliases):
            assert family(name) is fam
            assert family(name.upper()) is fam


@pytest.mark.parametrize(("spelling", "canonical"), [
    # ir_measures
    ("nDCG@10", "nDCG@10"),
    ("P(rel=2)@5", "P(rel=2)@5"),
    ("RR@10", "RR@10"),
    ("R@1000", "R@1000"),
    ("AP", "AP"),
    ("nDCG(dcg=exp-log2)@10", "nDCG(gain=exp)@10"),
    ("nDCG(dcg=log2)@10", "nDCG@10"),
    ("AP(rel=2)@100", "AP(rel=2)@100"),
    ("R(rel=2)@1000", "R(rel=2)@1000"),
    ("RR(rel=2)", "RR(rel=2)"),
    ("Success@10", "Success@10"),
    ("Judged@10", "Judged@10"),
    ("NumRet", "NumRet"),
    ("NumRel", "NumRel"),
    ("NumRelRet", "NumRelRet"),
    ("Bpref", "Bpref"),
    ("Rprec", "Rprec"),
    # trec_eval, as requested (-m) and as printed
    ("ndcg_cut.10", "nDCG@10"),
    ("recip_rank", "RR"),
    ("map", "AP"),
    ("P.5", "P@5"),
    ("recall.100", "R@100"),
    ("Rprec", "Rprec"),
    ("bpref", "Bpref"),
    ("success.10", "Success@10"),
    ("map_cut.100", "AP@100"),
    ("P_5", "P@5"),
    ("ndcg_cut_10", "nDCG@10"),
    ("recall_1000", "R@1000"),
    ("map_cut_5", "AP@5"),
    ("success_1", "Success@1"),
    ("ndcg", "nDCG"),
    ("num_ret", "NumRet"),
    ("num_rel", "NumRel"),
    ("num_rel_ret", "NumRelRet"),
    ("P.23.4", "P@23"),  # trec_eval truncates cutoffs like atol
    # float and list parameters (ir_measures' spellings, trec_eval's forms)
    ("IPrec@0.1", "IPrec@0.1"),
    ("IPrec@0.10", "IPrec@0.1"),
    ("iprec_at_recall_0.10", "IPrec@0.1"),
    ("iprec_at_recall.0.1", "IPrec@0.1"),
    ("iprec_at_recall..1", "IPrec@0.1"),
    ("iprec_at_recall@0.1", "IPrec@0.1"),
    ("IPrec@1.0", "IPrec@1"),
    ("Rprec_mult.0.2", "Rprec(mult=0.2)"),
    ("Rprec_mult_0.20", "Rprec(mult=0.2)"),
    ("Rprec(mult=2.0)", "Rprec(mult=2)"),
    ("utility.2,-1,0,0", "Utility(a=2,b=-1,c=0,d=0)"),
    ("utility_2,-1,0,0", "Utility(a=2,b=-1,c=0,d=0)"),
    ("utility", "Utility"),
    ("Utility(b=-2.5)", "Utility(b=-2.5)"),
    ("11pt_avg", "IPrecAvg"),
    ("11pt_avg..25,.5,.75", "IPrecAvg(levels=[0.25,0.5,0.75])"),
    ("IPrecAvg(levels=[0.2, 0.5,0.8])", "IPrecAvg(levels=[0.2,0.5,0.8])"),
    ("nDCG(gains={0:0,1:1,2:3})@10", "nDCG(gains={0:0,1:1,2:3})@10"),
    ("nDCG(gains={2:3, 0:0,1:1})@10", "nDCG(gains={0:0,1:1,2:3})@10"),
    ("ndcg.1=3,2=9,4=4.5", "nDCG(gains={1:3,2:9,4:4.5})"),
    ("ndcg_1=3,2=9,4=4.5", "nDCG(gains={1:3,2:9,4:4.5})"),
    ("set_F", "SetF"),
    ("set_F.0.5", "SetF(beta=0.5)"),
    ("SetF(beta=0.5)", "SetF(beta=0.5)"),
    ("set_P", "SetP"),
    ("set_recall", "SetR"),
    ("set_relative_P", "SetRelP"),
    ("set_map", "SetAP"),
    ("gm_map", "GMAP"),
    ("gm_bpref", "GMBpref"),
    ("num_nonrel_judged_ret", "NumNonRelJudgedRet"),
    ("relative_P.5", "RelP@5"),
    ("relative_P_5", "RelP@5"),
    ("rbp.p=0.8", "RBP(p=0.8)"),
    ("rbp_p=0.8", "RBP(p=0.8)"),
    ("RBP(p=0.95)", "RBP(p=0.95)"),
    ("rbp_resid", "RBPResid"),
    ("unj.10", "Unjudged@10"),
    ("unj_20", "Unjudged@20"),
    ("infAP", "InfAP"),
    ("binG", "BinG"),
    ("G", "G"),
    ("ndcg_rel", "NDCGRel"),
    ("Rndcg", "RnDCG"),
    # lower-case aliases
    ("ndcg@10", "nDCG@10"),
    ("mrr@10", "RR@10"),
    ("mrr", "RR"),
    ("recall@100", "R@100"),
    ("hit@10", "Success@10"),
    ("hits@3", "Success@3"),
    ("precision@5", "P@5"),
    ("MAP@100", "AP@100"),
    ("  nDCG@10 ", "nDCG@10"),
    ("nDCG( gain = exp )@ 10", "nDCG(gain=exp)@10"),
])
def test_accepted_spellings(spelling: str, canonical: str) -> None:
    m = parse(spelling)
    assert str(m) == canonical
    assert parse_many(spelling) == (m,)
    assert parse(canonical) == m


@pytest.mark.parametrize(("spelling", "expected"), [
    ("P.5,10", ("P@5", "P@10")),
    ("P_5,10", ("P@5", "P@10")),
    ("ndcg_cut.5,10,5", ("nDCG@5", "nDCG@10")),  # repeats collapse, order kept
    ("success.1,5,10", ("Success@1", "Success@5", "Success@10")),
    ("P", tuple(f"P@{k}" for k in _TREC_CUTOFFS)),
    ("recall", tuple(f"R@{k}" for k in _TREC_CUTOFFS)),
    ("ndcg_cut", tuple(f"nDCG@{k}" for k in _TREC_CUTOFFS)),
    ("map_cut", tuple(f"AP@{k}" for k in _TREC_CUTOFFS)),
    ("success", ("Success@1", "Success@5", "Success@10")),
    ("iprec_at_recall..10,.20,.25,.75,.50",
     ("IPrec@0.1", "IPrec@0.2", "IPrec@0.25", "IPrec@0.75", "IPrec@0.5")),
    ("iprec_at_recall", tuple(f"IPrec@{x}" for x in
                              ("0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8",
                               "0.9", "1"))),
    ("Rprec_mult.5.0,0.2,0.35", ("Rprec(mult=5)", "Rprec(mult=0.2)", "Rprec(mult=0.35)")),
    ("Rprec_mult", tuple(f"Rprec(mult={x})" for x in
                         ("0.2", "0.4", "0.6", "0.8", "1", "1.2", "1.4", "1.6", "1.8", "2"))),
    ("relative_P", tuple(f"RelP@{k}" for k in _TREC_CUTOFFS)),
    ("utility.2,-1,0,0", ("Utility(a=2,b=-1,c=0,d=0)",)),
    ("map", ("AP",)),
    ("ndcg", ("nDCG",)),
])
def test_parse_many_expands_trec_eval_lists_and_defaults(
    spelling: str, expected: tuple[str, ...],
) -> None:
    assert tuple(str(m) for m in parse_many(spelling)) == expected


@pytest.mark.parametrize(("spelling", "message"), [
    ("", "empty measure name"),
    ("   ", "empty measure name"),
    ("foo@10", "unknown measure 'foo'"),
    ("P", "P needs a cutoff, e.g. P@10"),
    ("Success", "Success needs a cutoff"),
    ("Judged", "Judged needs a cutoff"),
    ("P@0", "cutoff must be at least 1, got 0"),
    ("P.0", "'P.0': P: cutoff must be at least 1, got 0"),
    ("P@-1", "cutoff '-1' is not a positive integer"),
    ("R@10.5", "cutoff '10.5' is not a positive integer"),
    ("NumRet@5", "NumRet takes no cutoff (got @5)"),
    ("Rprec@5", "Rprec takes no cutoff"),
    ("P(rel=x)@5", "rel must be an integer, got 'x'"),
    ("P(rel)@5", "parameter 'rel' is not key=value"),
    ("P(rel=)@5", "parameter 'rel=' is not key=value"),
    ("P(foo=1)@5", "unknown parameter 'foo' (allowed: rel)"),
    ("Judged(foo=1)@5", "unknown parameter 'foo' (allowed: none)"),
    ("Judged(rel=2)@10", "Judged takes no rel= parameter"),
    ("P(gain=exp)@5", "P takes no gain= parameter"),
    ("nDCG(rel=2)@5", "nDCG takes no rel= parameter"),
    ("nDCG(gain=foo)@5", "gain must be one of ('exp',), got 'foo'"),
    ("P(rel=1,rel=2)@5", "parameter 'rel' given twice"),
    ("P(rel=2, rel=2)@5", "parameter 'rel' given twice"),
    ("nDCG(gain=exp,gain=exp)@10", "parameter 'gain' given twice"),
    ("nDCG(gain=exp,dcg=log2)@10", "parameter 'gain' given twice (as 'gain' and 'dcg')"),
    ("P(rel=2", "cannot parse measure 'P(rel=2'; expected e.g. nDCG@10"),
    ("P(rel=2)(x)@5", "cannot parse measure"),
    ("P@10@", "cannot parse measure"),
    ("AP@", "cannot parse measure"),
    ("P @10", "cannot parse measure"),
    ("P.", "cannot parse measure"),
    ("iprec_at_recall", "'iprec_at_recall' names 11 measures"),
    ("Rprec_mult", "'Rprec_mult' names 10 measures (trec_eval's default parameters)"),
    ("IPrec@1.5", "cutoff must be a recall level in [0, 1], got 1.5"),
    ("IPrec@x", "cutoff must be a number, got 'x'"),
    ("Rprec(mult=x)", "mult must be a number, got 'x'"),
    ("Rprec(mult=inf)", "mult must be finite"),
    ("IPrecAvg(levels=0.5)", "levels must be a list like [0.2,0.5]"),
    ("IPrecAvg(levels=[])", "levels needs at least one value"),
    ("nDCG(gains=[1])", "gain must be one of"),
    ("nDCG(gains={x:1})", "label 'x' is not an integer"),
    ("nDCG(gains={1})", "'1' is not label:gain"),
    ("nDCG(gain=exp,gains={1:2})", "give gain= or gains=, not both"),
    ("utility.1,2", "utility takes 4 values (a,b,c,d), got 2"),
    ("ndcg.1", "'1' is not label=gain"),
    ("Rprec_mult.0.2,0.4", "'Rprec_mult.0.2,0.4' names 2 measures; use parse_many"),
    ("Utility(e=1)", "unknown parameter 'e' (allowed: a, b, c, d, rel)"),
    ("rbp.q=1", "'rbp.q=1': 'q=1' is not one of p="),
    ("P.5,10", "'P.5,10' names 2 measures; use parse_many"),
    ("map_cut", "'map_cut' names 9 measures (trec_eval's default cutoffs); use parse_many"),
    ("ndcg_cut", "'ndcg_cut' names 9 measures"),
])
def test_invalid_spellings_say_what_is_wrong(spelling: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse(spelling)
    assert message in str(info.value)


@pytest.mark.parametrize("spelling", ["P.0", "ndcg_cut.5,0", "", "foo", "P(rel=1,rel=2)@5"])
def test_parse_many_rejects_invalid_spellings_too(spelling: str) -> None:
    with pytest.raises(ValueError):
        parse_many(spelling)


def test_parse_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="a measure is a string or a Measure, got int"):
        parse(10)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"family": "P"}, "P needs a cutoff"),
    ({"family": "P", "cutoff": 0}, "cutoff must be at least 1"),
    ({"family": "P", "cutoff": True}, "cutoff must be an integer"),
    ({"family": "AP", "rel": 1.5}, "rel must be an integer"),
    ({"family": "nDCG", "gain": "lin"}, "gain must be one of"),
    ({"family": "Bpref", "cutoff": 10}, "Bpref takes no cutoff"),
    ({"family": "nosuch"}, "unknown measure 'nosuch'"),
])
def test_measure_validates_its_fields(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Measure(**kwargs)  # type: ignore[arg-type]


def test_family_spelling_is_normalised_and_equality_is_by_text() -> None:
    assert Measure("ndcg", cutoff=10) == parse("nDCG@10")
    assert Measure("ndcg", cutoff=10).family == "nDCG"
    assert parse("mrr@10") == parse("RR@10") == parse("recip_rank@10")
    assert parse("P@5") != parse("P(rel=1)@5")  # rel=1 is explicit, not "the run's level"
    assert sorted([parse("P@5"), parse("AP"), parse("nDCG@10")]) == [
        parse("AP"), parse("P@5"), parse("nDCG@10")]


@pytest.mark.parametrize(("spelling", "trec_name"), [
    ("nDCG@10", "ndcg_cut_10"), ("AP", "map"), ("AP@100", "map_cut_100"), ("RR", "recip_rank"),
    ("P@5", "P_5"), ("R@100", "recall_100"), ("Success@10", "success_10"), ("Bpref", "bpref"),
    ("NumRelRet", "num_rel_ret"), ("RR@10", None), ("P(rel=2)@5", None),
    ("nDCG(gain=exp)@10", None), ("Judged@10", None),
])
def test_trec_names(spelling: str, trec_name: str | None) -> None:
    m = parse(spelling)
    assert m.trec_name == trec_name
    if trec_name is not None:
        assert parse(trec_name) == m
