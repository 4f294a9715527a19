"""The one measure grammar: canonical round trip, accepted spellings, and errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankproof.measures import Measure, families, family, parse, parse_many

_TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@st.composite
def measures(draw: st.DrawFn) -> Measure:
    fam = draw(st.sampled_from(families()))
    cutoff: int | None
    if fam.cutoff == "required":
        cutoff = draw(st.integers(1, 10_000))
    elif fam.cutoff == "optional":
        cutoff = draw(st.none() | st.integers(1, 10_000))
    else:
        cutoff = None
    rel = draw(st.none() | st.integers(-3, 10)) if "rel" in fam.params else None
    gain = draw(st.sampled_from((None, "exp"))) if "gain" in fam.params else None
    return Measure(fam.name, cutoff=cutoff, rel=rel, gain=gain)


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
    ("foo@10", "unknown measure 'foo'; known families: AP, Bpref"),
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
    ("iprec_at_recall.0.1", "cannot parse measure"),
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
