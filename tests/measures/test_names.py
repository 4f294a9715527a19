"""Names: trec_eval 10's table, suggestions, not-implemented messages, comma lists,
and trec_eval's ``-m`` selection, ``-M``/``-J`` and relstring over real data.

What rankproof implements is read from the registry, so these tests hold while
measures land: they check the rule, not today's list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rankproof import InputError
from rankproof.data import Qrels, Run, load_qrels, load_run
from rankproof.measures import (
    TREC_EVAL_MEASURES,
    TREC_EVAL_NICKNAMES,
    Measure,
    TrecMeasureError,
    closest_names,
    evaluate,
    parse,
    parse_many,
    relstrings,
    select_trec_eval,
    split_measure_list,
    trec_eval_run,
    trec_missing,
)
from rankproof.measures._names import (
    cannot_parse_message,
    not_implemented,
    trec_eval_base,
    trec_implemented,
    unknown_measure_message,
)


def _parses(text: str) -> bool:
    try:
        parse_many(text)
    except ValueError:
        return False
    return True


def test_the_table_holds_every_name_trec_eval_10_prints(trec_eval_tests: Path) -> None:
    """Every name in the suite's expected outputs is a table row (or a row plus a parameter)."""
    printed = set()
    for out in trec_eval_tests.glob("out.*"):
        for line in out.read_text().splitlines():
            name = line.split("\t")[0].strip()
            printed.add(name[1:] if out.name.endswith("Z") and name.startswith("Z") else name)
    unknown = {n for n in printed if trec_eval_base(n) is None}
    assert unknown == set()
    names = [m.name for m in TREC_EVAL_MEASURES]
    assert len(names) == len(set(names))
    for members in TREC_EVAL_NICKNAMES.values():
        assert set(members) <= set(names)


@pytest.mark.parametrize(("spelling", "base"), [
    ("gm_bpref", "gm_bpref"), ("relstring.20", "relstring"),
    ("iprec_at_recall_0.10", "iprec_at_recall"), ("Rprec_mult_avgjg_0.20", "Rprec_mult_avgjg"),
    ("P_avgjg_5", "P_avgjg"), ("unj_5", "unj"), ("11pt_avg_.25,.5,.75", "11pt_avg"),
    ("nDCG@10", None), ("map_cutx", None), ("P", "P"),
])
def test_trec_eval_base(spelling: str, base: str | None) -> None:
    assert trec_eval_base(spelling) == base


def test_not_implemented_follows_the_registry() -> None:
    """A trec_eval name the registry lacks says so; one it has parses (never 'unknown')."""
    for row in TREC_EVAL_MEASURES:
        if row.style == "header":
            continue
        if trec_implemented(row.name):
            assert not_implemented(row.name) is None
        elif row.rel_format != "qrels":  # computed by `rankproof trec_eval -R ...` only
            with pytest.raises(InputError, match=f"reads trec_eval's -R {row.rel_format}"):
                parse(row.name)
        else:
            message = unknown_measure_message(row.name)
            assert message.startswith(f"trec_eval's {row.name!r} is not implemented in "
                                      "rankproof yet"), message
            with pytest.raises(InputError, match="not implemented in rankproof yet"):
                parse(row.name)


def test_prefs_measures_say_which_judgments_they_read() -> None:
    assert unknown_measure_message("prefs_simp") == (
        "trec_eval's 'prefs_simp' reads trec_eval's -R prefs (or -R qrels_prefs) judgments, "
        "not qrels: compute it with `rankproof trec_eval -R prefs -m prefs_simp JUDGMENTS RUN`")
    assert unknown_measure_message("all_prefs").endswith(
        "`rankproof trec_eval -R prefs -m all_prefs JUDGMENTS RUN`")
    assert unknown_measure_message("qrels_jg").endswith(
        "`rankproof trec_eval -R qrels_jg -m qrels_jg JUDGMENTS RUN`")


def test_misspellings_get_the_closest_registered_names() -> None:
    assert closest_names("nDGC@10")[0] == "nDCG@10"
    assert "recip_rank" in closest_names("recip_rnk")
    assert closest_names("zzzzzz") == []
    with pytest.raises(InputError, match=r"unknown measure 'nDGC'; known families: .*"
                                         r"; did you mean 'nDCG'"):
        parse("nDGC@10")
    assert cannot_parse_message("ndcg_cutt.10").endswith("did you mean 'ndcg_cut' or 'nDCG'?")
    # an unknown name with nothing close stays "unknown", listing the families
    with pytest.raises(InputError, match=r"^unknown measure 'zzqq'; known families: AP"):
        parse("zzqq")


def test_sets_report_their_missing_members_from_the_registry() -> None:
    missing = trec_missing(["all_trec"])
    assert set(missing) == {n for n in TREC_EVAL_NICKNAMES["all_trec"]
                            if not trec_implemented(n)}
    assert "relstring" in missing or trec_implemented("relstring")
    assert trec_missing(["official"]) == tuple(
        n for n in TREC_EVAL_NICKNAMES["official"] if not trec_implemented(n))


@pytest.mark.parametrize(("text", "parts"), [
    ("nDCG@10,RR@10", ["nDCG@10", "RR@10"]),
    ("P.5,10", ["P.5,10"]),
    ("map,P.5,10", ["map", "P.5,10"]),
    ("P.5,P.10", ["P.5", "P.10"]),
    ("nDCG@10", ["nDCG@10"]),
    ("nDCG(gain=exp)@10,AP", ["nDCG(gain=exp)@10", "AP"]),
])
def test_comma_lists_split_only_between_whole_measures(text: str, parts: list[str]) -> None:
    assert split_measure_list(text, _parses) == parts


def test_a_comma_inside_brackets_never_splits() -> None:
    seen: list[str] = []

    def parses(piece: str) -> bool:
        seen.append(piece)
        return True

    assert split_measure_list("nDCG(gains={0:0,1:1})@10", parses) == ["nDCG(gains={0:0,1:1})@10"]


# -- trec_eval's -m selection ----------------------------------------------------

def test_selection_follows_trec_eval_mark_measure() -> None:
    sel = select_trec_eval(["P.5,7,3", "ndcg_cut.10,20,23.4"])
    names = [c.name for c in sel.columns]
    assert names == ["P_3", "P_5", "P_7", "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
    assert [c.measure for c in sel.columns] == [Measure("P", cutoff=k) for k in (3, 5, 7)] + [
        Measure("nDCG", cutoff=k) for k in (10, 20, 23)]
    official = select_trec_eval([])
    assert [c.name for c in official.columns][:5] == ["runid", "num_q", "num_ret", "num_rel",
                                                      "num_rel_ret"]
    # the first -m giving a measure parameters wins; a nickname adds the rest
    both = select_trec_eval(["official", "P.10", "P.5"])
    assert [c.name for c in both.columns if c.family == "P"] == ["P_10"]


def test_selection_refuses_what_trec_eval_refuses() -> None:
    with pytest.raises(TrecMeasureError, match="illegal measure 'nope'") as info:
        select_trec_eval(["nope"])
    assert info.value.kind == "illegal"
    with pytest.raises(TrecMeasureError, match="improper measure"):
        select_trec_eval(["P."])
    with pytest.raises(TrecMeasureError, match="duplicate cutoffs") as info:
        select_trec_eval(["P.5,5.2"])
    assert info.value.kind == "init"
    with pytest.raises(TrecMeasureError, match="Negative cutoff"):
        select_trec_eval(["recall.-1"])


def test_unimplemented_columns_are_listed_never_dropped() -> None:
    sel = select_trec_eval(["all_trec"])
    lacking = {c.name for c in sel.columns
               if c.measure is None and c.style not in ("header", "string")}
    assert set(sel.missing) == lacking
    assert set(sel.missing_families) == {n for n in TREC_EVAL_NICKNAMES["all_trec"]
                                         if n != "relstring" and not trec_implemented(n)}


# -- -M, -J, relstring on the suite's data ---------------------------------------

@pytest.fixture
def suite(trec_eval_tests: Path) -> tuple[Qrels, Run]:
    return (load_qrels(trec_eval_tests / "qrels.test"),
            load_run(trec_eval_tests / "results.test"))


def test_max_retrieved_is_a_prefix_of_the_ranking(suite: tuple[Qrels, Run]) -> None:
    qrels, run = suite
    cut = trec_eval_run(run, qrels, max_retrieved=20)
    assert cut is not None and len(cut) == 60
    full = evaluate(qrels, run, ["P@5", "P@20", "RR"])
    short = evaluate(qrels, cut, ["P@5", "P@20", "RR", "NumRet"])
    for m in ("P@5", "P@20", "RR"):
        assert short.scores(m) == full.scores(m)
    assert set(short.scores("NumRet").values()) == {20.0}
    assert trec_eval_run(run, qrels) is run
    assert trec_eval_run(run, qrels, max_retrieved=0) is None


def test_judged_only_keeps_documents_judged_zero_or_more(suite: tuple[Qrels, Run]) -> None:
    qrels, run = suite
    judged = trec_eval_run(run, qrels, judged_only=True)
    assert judged is not None
    labels = qrels.to_dict()
    kept = judged.to_dict()
    assert all(doc in labels[q] and labels[q][doc] >= 0 for q, docs in kept.items()
               for doc in docs)
    dropped = sum(1 for q, docs in run.to_dict().items() for d in docs
                  if d not in labels.get(q, {}))
    assert len(judged) == len(run) - dropped
    pq = evaluate(qrels, judged, ["NumRet", "NumNonRelJudgedRet", "NumRelRet"])
    for q in pq.qids:
        s = {m: pq.scores(m)[q] for m in ("NumRet", "NumNonRelJudgedRet", "NumRelRet")}
        assert s["NumRet"] == s["NumNonRelJudgedRet"] + s["NumRelRet"]


def test_relstrings_match_trec_eval(trec_eval_tests: Path) -> None:
    qrels = load_qrels(trec_eval_tests / "qrels.rel_level")
    run = load_run(trec_eval_tests / "results.test")
    assert relstrings(run, qrels, 20) == {"301": "0000011000000--10101",
                                          "302": "33033303303333333330",
                                          "303": "0000.....00..0.0.02."}
    assert relstrings(None, qrels, 10) == {"301": "", "302": "", "303": ""}
