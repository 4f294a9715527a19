"""trec_eval's named sets are names the parser layer expands, the same way everywhere."""

from __future__ import annotations

import pytest

from rankproof import InputError
from rankproof.data import Qrels, Run
from rankproof.measures import (
    TREC_HEADER_LINES,
    TREC_SETS,
    evaluate,
    expand_set,
    is_set,
    lookup,
    parse,
    parse_many,
    register_metric,
    resolve,
    resolve_measures,
)

# What trec_eval 9.0.8 prints for `trec_eval qrels run` (official) and `-m all_trec`,
# restricted to the measures rankproof implements, in trec_eval's print order.
CUTS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
_LEVELS = ("0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1")
OFFICIAL = ("NumRet", "NumRel", "NumRelRet", "AP", "GMAP", "Rprec", "Bpref", "RR",
            *(f"IPrec@{x}" for x in _LEVELS), *(f"P@{k}" for k in CUTS))
_MULTS = ("0.2", "0.4", "0.6", "0.8", "1", "1.2", "1.4", "1.6", "1.8", "2")
# trec_eval 10's all_trec order (out.test.a), less the measures not implemented yet.
ALL_TREC = ("NumRet", "NumRel", "NumRelRet", "AP", "GMAP", "Rprec", "Bpref", "RR",
            *(f"IPrec@{x}" for x in _LEVELS), *(f"P@{k}" for k in CUTS),
            *(f"R@{k}" for k in CUTS), "InfAP", "GMBpref", *(f"Rprec(mult={x})" for x in _MULTS),
            "Utility", "IPrecAvg", "BinG", "G", "nDCG", "NDCGRel", "RnDCG",
            *(f"nDCG@{k}" for k in CUTS),
            *(f"AP@{k}" for k in CUTS), *(f"RelP@{k}" for k in CUTS),
            "Success@1", "Success@5", "Success@10", "SetP", "SetRelP", "SetR", "SetAP", "SetF",
            "NumNonRelJudgedRet", "RBP", "RBPResid", "Unjudged@5", "Unjudged@10",
            "Unjudged@20")


@pytest.mark.parametrize(("name", "expected"), [("official", OFFICIAL), ("all_trec", ALL_TREC)])
def test_a_set_expands_to_its_members_in_trec_eval_order(
    name: str, expected: tuple[str, ...]
) -> None:
    assert tuple(map(str, expand_set(name))) == expected
    assert tuple(map(str, parse_many(name))) == expected
    assert tuple(map(str, resolve_measures(name))) == expected
    assert tuple(map(str, resolve_measures([name]))) == expected
    assert tuple(d.name for d in resolve([name])) == expected
    assert tuple(d.name for d in resolve(name)) == expected


def test_bookkeeping_lines_are_not_members() -> None:
    assert TREC_HEADER_LINES == ("runid", "num_q")
    for name in TREC_SETS:
        members = {str(m) for m in expand_set(name)} | {m.trec_name for m in expand_set(name)}
        assert not members & set(TREC_HEADER_LINES)


def test_sets_and_measures_mix_without_repeats_first_position_kept() -> None:
    got = resolve_measures(["nDCG@10", "official", "P@5", "ndcg_cut.10", "all_trec"])
    names = [str(m) for m in got]
    assert names[:2] == ["nDCG@10", "NumRet"]
    assert len(names) == len(set(names))
    assert set(names) == set(ALL_TREC)
    defs = resolve(["P@5", "official", "official"])
    assert [d.name for d in defs] == ["P@5", *(m for m in OFFICIAL if m != "P@5")]
    assert all(d.kind == "retrieval" and d.measure is not None for d in defs)


def test_one_measure_apis_refuse_a_set_with_a_pointer_to_the_expanding_ones() -> None:
    with pytest.raises(InputError, match=r"'official' is trec_eval's measure set of 28 "
                                         r"measures, not one measure; use parse_many"):
        parse("official")
    with pytest.raises(InputError, match=r"'all_trec' is trec_eval's set of 97 measures, not "
                                         r"one metric; resolve\(\) expands it"):
        lookup("all_trec")
    with pytest.raises(InputError, match="unknown measure set 'offical'; known: official, "
                                         "all_trec"):
        expand_set("offical")


def test_set_names_are_exact_and_reserved() -> None:
    assert is_set("official") and is_set(" all_trec ")
    assert not is_set("Official") and not is_set("nDCG@10") and not is_set(3)
    with pytest.raises(InputError, match="unknown measure 'Official'"):
        parse_many("Official")
    for name in ("official", "ALL_TREC", "num_q", "runid"):
        with pytest.raises(InputError, match=f"metric {name!r} is reserved"):
            register_metric(name, lambda response, case: 1.0, higher_is_better=True)


def test_evaluating_a_set_equals_evaluating_its_members() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}})
    run = Run.from_dict({"q1": {"a": 0.9, "b": 0.8, "d": 0.7, "c": 0.1},
                         "q2": {"y": 1.0, "x": 0.5}})
    by_set = evaluate(qrels, run, "official")
    by_name = evaluate(qrels, run, list(OFFICIAL))
    assert by_set.measures == tuple(parse(m) for m in OFFICIAL)
    assert by_set.measures == by_name.measures
    assert (by_set.values == by_name.values).all()


@pytest.mark.parametrize("spelling", ["bogus@x", "bogus", "nDCG@x", "P", "P(rel=x)@5",
                                      "nDCG(rel=2)@10", "RR@0", "", "map_cut"])
def test_every_parser_refusal_is_an_input_error(spelling: str) -> None:
    with pytest.raises(InputError):
        parse(spelling)


def test_registry_refusals_are_input_errors() -> None:
    with pytest.raises(InputError, match="unknown metric 'bogus@x'"):
        lookup("bogus@x")
    with pytest.raises(InputError, match="is a retrieval measure"):
        register_metric("recip_rank", lambda response, case: 1.0, higher_is_better=True)
    with pytest.raises(InputError, match="is not valid"):
        register_metric("has space", lambda response, case: 1.0, higher_is_better=True)
    with pytest.raises(InputError, match="topics must be 'complete' or 'intersection'"):
        evaluate(Qrels.from_dict({"q": {"d": 1}}), Run.from_dict({"q": {"d": 1.0}}),
                 topics="all")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no measures given"):
        resolve_measures([])
