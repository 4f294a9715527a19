"""``rankproof trec_eval`` against trec_eval 10's own test suite, byte for byte.

One test per row of the expected-output table in
../shared/data/trec_eval_tests/PROVENANCE.md (the rows of trec_eval's Makefile
``quicktest``): the same arguments, run in the data folder as the Makefile
does, and standard output compared byte for byte with the expected file.

A row that needs what rankproof does not implement yet is a strict xfail whose
reason is *computed* from the measures registry (`select_trec_eval` reports
the missing measures): when the measures land, the row passes, the strict
xfail fails, and the mark has to go.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from tests.conftest import SHARED_DATA
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.cli.trec_eval import REL_FORMATS, parse_argv
from rankproof.measures import TrecMeasureError, select_trec_eval

SUITE = SHARED_DATA / "trec_eval_tests"
_ROW = re.compile(r"^\|\s*`(?P<args>[^`]+)`\s*\|\s*(?P<out>[\w.]+)\s*\|$")


def _rows() -> list[tuple[str, str]]:
    """(arguments, expected file) for every row of PROVENANCE.md's expected-output table."""
    text = (SUITE / "PROVENANCE.md").read_text(encoding="utf-8")
    return [(m.group("args"), m.group("out")) for line in text.splitlines()
            if (m := _ROW.match(line.strip()))]


def _needs(args: str) -> list[str]:
    """What rankproof lacks to run ``args`` (empty: the row must pass)."""
    parsed = parse_argv(shlex.split(args))
    needs: list[str] = []
    if parsed.rel_format not in REL_FORMATS:  # the -R formats the command reads
        needs.append(f"-R {parsed.rel_format}")
    try:
        needs.extend(select_trec_eval(parsed.measures).missing_families)
    except TrecMeasureError as exc:
        needs.append(str(exc))
    return needs


def _cases() -> list[pytest.param]:
    out = []
    for args, expected in _rows():
        needs = _needs(args)
        marks = [pytest.mark.xfail(strict=True, reason="needs " + ", ".join(needs))] \
            if needs else []
        out.append(pytest.param(args, expected, marks=marks, id=f"{expected}:{args}"))
    return out


def test_the_table_has_every_row() -> None:
    rows = _rows()
    assert len(rows) == 15
    assert ("qrels.test results.test", "out.test") in rows
    assert ("-q -m all_trec -Z zscores_file qrels.test results.test", "out.test.aqZ") in rows


@pytest.mark.parametrize(("args", "expected"), _cases())
def test_byte_identical(args: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SUITE)
    result = CliRunner().invoke(app, ["trec_eval", *shlex.split(args)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == (SUITE / expected).read_bytes()


def test_official_rows_pass_today() -> None:
    """The default (official) rows need nothing rankproof lacks: they are never xfail."""
    for args, expected in _rows():
        if expected in ("out.test", "out.comment.test", "out.test.meas_params"):
            assert _needs(args) == [], args


# -- trec_eval's command line --------------------------------------------------

def _run(args: list[str], cwd: Path = SUITE, monkeypatch: pytest.MonkeyPatch | None = None,
         input: str | None = None):
    assert monkeypatch is not None
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(app, ["trec_eval", *args], input=input)


def test_options_glued_clustered_long_and_after_the_files(
        monkeypatch: pytest.MonkeyPatch) -> None:
    want = _run(["-q", "-c", "-m", "P.5", "-l", "1", "qrels.test", "results.test"],
                monkeypatch=monkeypatch)
    assert want.exit_code == 0
    assert "P_5                   \t301\t0.0000\n" in want.stdout
    for spelling in (["-qc", "-mP.5", "-l1", "qrels.test", "results.test"],
                     ["qrels.test", "results.test", "-qc", "-mP.5"],
                     ["--query_eval_wanted", "--complete", "--measure=P.5",
                      "--level_for_rel", "1", "qrels.test", "results.test"]):
        got = _run(spelling, monkeypatch=monkeypatch)
        assert got.exit_code == 0, (spelling, got.stderr)
        assert got.stdout == want.stdout, spelling


def test_results_from_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (SUITE / "results.test").read_text()
    got = _run(["qrels.test", "-"], input=text, monkeypatch=monkeypatch)
    assert got.exit_code == 0, got.stderr
    assert got.stdout_bytes == (SUITE / "out.test").read_bytes()


def test_nosummary_prints_per_topic_lines_only(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _run(["-q", "-n", "-m", "map", "qrels.test", "results.test"], monkeypatch=monkeypatch)
    assert got.exit_code == 0
    assert got.stdout == ("map                   \t301\t0.0324\n"
                          "map                   \t302\t0.4175\n"
                          "map                   \t303\t0.0858\n")
    assert _run(["-n", "-m", "map", "qrels.test", "results.test"],
                monkeypatch=monkeypatch).stdout == ""


def test_counts_print_as_integers_and_runid_num_q_only_for_sets(
        monkeypatch: pytest.MonkeyPatch) -> None:
    got = _run(["-m", "num_ret", "-m", "recip_rank", "qrels.test", "results.test"],
               monkeypatch=monkeypatch)
    assert got.stdout == "num_ret               \tall\t1500\nrecip_rank            \tall\t0.4064\n"


def test_a_qrels_topic_without_results_stops_with_exit_4_unless_c(
        monkeypatch: pytest.MonkeyPatch) -> None:
    got = _run(["qrels.test", "results.trunc"], monkeypatch=monkeypatch)
    assert got.exit_code == 4
    assert got.stdout == ""
    assert "qrels topic '302' has no results" in got.stderr
    assert "pass -c" in got.stderr
    ok = _run(["-c", "-q", "-m", "num_rel", "qrels.test", "results.trunc"],
              monkeypatch=monkeypatch)
    assert ok.exit_code == 0
    assert "num_rel               \t302\t77\n" in ok.stdout
    assert ok.stdout.endswith("num_rel               \tall\t561\n")


def test_max_retrieved_keeps_the_first_n_in_trec_eval_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """-M100 gives the same P@5..P@100 and num_ret 100 per topic."""
    full = _run(["-q", "-m", "P.5,10,100", "qrels.test", "results.test"],
                monkeypatch=monkeypatch).stdout
    cut = _run(["-q", "-M100", "-m", "P.5,10,100", "-m", "num_ret", "qrels.test",
                "results.test"], monkeypatch=monkeypatch)
    assert cut.exit_code == 0
    assert "num_ret               \t301\t100\n" in cut.stdout
    assert "num_ret               \tall\t300\n" in cut.stdout
    p_lines = [line for line in cut.stdout.splitlines() if line.startswith("P_")]
    assert p_lines == full.splitlines()
    zero = _run(["-M0", "-m", "num_ret", "-m", "map", "qrels.test", "results.test"],
                monkeypatch=monkeypatch)
    assert zero.exit_code == 0
    assert zero.stdout == "num_ret               \tall\t0\nmap                   \tall\t0.0000\n"


def test_judged_docs_only_drops_unjudged_documents(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n")
    (tmp_path / "r").write_text("1 Q0 x 1 9 t\n1 Q0 a 2 8 t\n1 Q0 y 3 7 t\n1 Q0 c 4 6 t\n")
    plain = _run(["-m", "P.2", "-m", "num_ret", "q", "r"], cwd=tmp_path, monkeypatch=monkeypatch)
    assert plain.stdout == "num_ret               \tall\t4\nP_2                   \tall\t0.5000\n"
    judged = _run(["-J", "-m", "P.2", "-m", "num_ret", "q", "r"], cwd=tmp_path,
                  monkeypatch=monkeypatch)
    assert judged.stdout == "num_ret               \tall\t2\nP_2                   \tall\t1.0000\n"


def test_zscores_convert_every_value(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """-Z: (value - mean) / sd per topic, 'Z' before the name, %6.4f for counts too;
    a topic or measure the file lacks prints -1000000."""
    (tmp_path / "z").write_text("301 map 0.1 0.1\n301 num_ret 400 50\n302 num_ret 500 0\n")
    got = _run(["-q", "-m", "map", "-m", "num_ret", "-Z", str(tmp_path / "z"), "qrels.test",
                "results.test"], monkeypatch=monkeypatch)
    assert got.exit_code == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[0] == "Znum_ret               \t301\t2.0000"
    assert lines[1] == "Zmap                   \t301\t-0.6757"  # AP 0.03243
    assert lines[2] == "Znum_ret               \t302\t0.0000"  # sd 0, value == mean
    assert lines[3] == "Zmap                   \t302\t-1000000.0000"  # measure not in file
    assert lines[5] == "Zmap                   \t303\t-1000000.0000"  # topic not in file
    assert lines[6] == "Znum_ret               \tall\t-999998.0000"  # a sum of Z scores


def test_usage_errors_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    for args in (["qrels.test"], ["-x", "qrels.test", "results.test"], ["-m"],
                 ["qrels.test", "results.test", "extra"]):
        got = _run(args, monkeypatch=monkeypatch)
        assert got.exit_code == 1, args
        assert "Usage: trec_eval" in got.stderr
        assert got.stdout == ""


def test_illegal_measure_exits_1_and_points_rankproof_spellings_elsewhere(
        monkeypatch: pytest.MonkeyPatch) -> None:
    got = _run(["-m", "nope", "qrels.test", "results.test"], monkeypatch=monkeypatch)
    assert got.exit_code == 1
    assert "trec_eval: illegal measure 'nope'" in got.stderr
    got = _run(["-m", "nDCG@10", "qrels.test", "results.test"], monkeypatch=monkeypatch)
    assert got.exit_code == 1
    assert "use rankproof measure -m for it" in got.stderr


def test_bad_cutoffs_exit_2_as_trec_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _run(["-m", "P.5,5", "qrels.test", "results.test"], monkeypatch=monkeypatch)
    assert got.exit_code == 2
    assert "duplicate cutoffs" in got.stderr
    got = _run(["-m", "P.0", "qrels.test", "results.test"], monkeypatch=monkeypatch)
    assert got.exit_code == 2
    assert "Negative cutoff" in got.stderr


def test_what_is_not_implemented_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # A measure the -R judgments cannot feed is refused as trec_eval refuses it.
    got = _run(["-R", "prefs", "-m", "map", "prefs.test", "prefs.results.test"],
               monkeypatch=monkeypatch)
    assert got.exit_code == 4
    assert "Can't calculate measure 'map'" in got.stderr and "-R prefs" in got.stderr
    assert got.stdout == ""
    # Every trec_eval 10 measure is implemented (yaap last): it prints as trec_eval does.
    got = _run(["-m", "yaap", "qrels.test", "results.test"], monkeypatch=monkeypatch)
    assert got.exit_code == 0 and got.stdout == "yaap                  \tall\t-1.7857\n"


def test_input_errors_exit_2_naming_the_file(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    got = _run(["qrels.test", str(tmp_path / "absent")], monkeypatch=monkeypatch)
    assert got.exit_code == 2
    assert "trec_eval:" in got.stderr
    assert "Illegal rel_format 'nosuch'" in _run(
        ["-R", "nosuch", "qrels.test", "results.test"], monkeypatch=monkeypatch).stderr


def test_help_and_version(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _run(["-h"], monkeypatch=monkeypatch)
    assert got.exit_code == 0
    assert "drop-in for trec_eval 10" in got.stdout
    got = _run(["-v"], monkeypatch=monkeypatch)
    assert got.exit_code == 0
    assert got.stderr.startswith("trec_eval version 10.0")


# -- rankproof measure speaks trec_eval's dialect ----------------------------------

def _measure(args: list[str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(SUITE)
    return CliRunner().invoke(app, ["measure", "qrels.test", "results.test", *args])


def test_measure_takes_trec_eval_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    """-c -M100 -J -l2 -n glued and clustered as trec_eval writes them, with -f trec."""
    got = _measure(["-f", "trec", "-q", "-n", "-c", "-M100", "-l1", "-mP.5,100",
                    "-m", "num_ret"], monkeypatch)
    assert got.exit_code == 0, got.stderr
    assert got.stdout.splitlines()[:3] == ["num_ret               \t301\t100",
                                           "P_5                   \t301\t0.0000",
                                           "P_100                 \t301\t0.2300"]
    assert "\tall\t" not in got.stdout  # -n: no summary lines
    assert "only the first 100 documents of each topic" in got.stderr
    judged = _measure(["-f", "trec", "-J", "-m", "num_ret"], monkeypatch)
    assert judged.exit_code == 0
    # trec_eval's out.test.a: num_rel_ret 131 + num_nonrel_judged_ret 607 judged documents
    assert judged.stdout == "num_ret               \tall\t738\n"
    assert "unjudged documents were removed" in judged.stderr
    assert _measure(["-c", "--topics", "intersection"], monkeypatch).exit_code == 2
    assert _measure(["-n"], monkeypatch).exit_code == 2  # -n applies to --format trec


def test_measure_splits_comma_lists_of_whole_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _measure(["-f", "trec", "-m", "nDCG@10,RR@10", "-m", "P.5,10"], monkeypatch)
    assert got.exit_code == 0, got.stderr
    names = [line.split("\t")[0].strip() for line in got.stdout.splitlines()]
    assert names == ["recip_rank", "P_5", "P_10", "ndcg_cut_10"] or \
        sorted(names) == sorted(["RR@10", "P_5", "P_10", "ndcg_cut_10"])
    assert len(names) == 4


def test_measure_suggests_and_says_not_implemented(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _measure(["-m", "nDGC@10"], monkeypatch)
    assert got.exit_code == 2
    assert "did you mean 'nDCG'" in got.stderr
    lacking = select_trec_eval(["all_trec"]).missing_families
    if lacking:
        got = _measure(["-m", lacking[0]], monkeypatch)
        assert got.exit_code == 2
        assert f"trec_eval's {lacking[0]!r} is not implemented in rankproof yet" in got.stderr


def test_measure_names_what_a_set_leaves_out(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _measure(["-f", "trec", "-m", "all_trec"], monkeypatch)
    assert got.exit_code == 0
    assert select_trec_eval(["all_trec"]).missing_families == ()
    assert "not implement" not in got.stderr
    # relstring, a per-topic string, has no 'all' line in trec_eval either: said once
    assert got.stderr.count("relstring: a per-topic string of labels, not a number; left out "
                            "of the 'all' lines (trec_eval prints it per topic only: add -q)") == 1
    per_topic = _measure(["-f", "trec", "-q", "-m", "all_trec"], monkeypatch)
    assert per_topic.exit_code == 0 and "relstring" not in per_topic.stderr
    assert per_topic.stdout.count("relstring             \t") == 3
    csv = _measure(["-f", "csv", "-m", "all_trec"], monkeypatch)
    assert "left out of this csv output (--format trec -q prints it" in csv.stderr


def test_measure_shows_a_renamed_parameter_once(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _measure(["-f", "trec", "-m", "nDCG(dcg=exp-log2)@10"], monkeypatch)
    assert got.exit_code == 0, got.stderr
    assert got.stdout.startswith("nDCG(gain=exp)@10     \tall\t")
    assert got.stderr.count("'nDCG(dcg=exp-log2)@10' is written 'nDCG(gain=exp)@10'") == 1


# -- the drop-in's last bytes (issue 26): each built from trec_eval 10's C source --
# The expected lines were printed by trec_eval 10.0 built from usnistgov/trec_eval
# (commit f425365, `make`) on the same files: `trec_eval ARGS q r`.


def _files(tmp_path: Path, qrels: str, run: str) -> None:
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)


def test_c_summary_num_rel_counts_every_label_above_0(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    """m_num_rel.c's te_calc_avg_num_rel: under -c the summary is recounted from the
    whole qrels, every judgment with rel > 0, whatever -l says; per topic -l holds."""
    _files(tmp_path, "1 0 a 1\n1 0 b 2\n1 0 c 0\n2 0 d 2\n2 0 e 1\n2 0 f -1\n",
           "1 Q0 a 1 9 t\n1 Q0 x 2 8 t\n2 Q0 d 1 5 t\n")
    got = _run(["-c", "-l2", "-q", "-m", "num_rel", "q", "r"], cwd=tmp_path,
               monkeypatch=monkeypatch)
    assert got.exit_code == 0, got.stderr
    assert got.stdout == ("num_rel               \t1\t1\n"
                          "num_rel               \t2\t1\n"
                          "num_rel               \tall\t4\n")
    plain = _run(["-l2", "-m", "num_rel", "q", "r"], cwd=tmp_path, monkeypatch=monkeypatch)
    assert plain.stdout == "num_rel               \tall\t2\n"  # without -c: the sum


def test_c_l2_num_rel_on_dl19(monkeypatch: pytest.MonkeyPatch) -> None:
    """DL19 passage, BM25: trec_eval -c -l2 prints num_rel 4102 (every label > 0);
    the topics' own -l2 counts add up to 2501, which rankproof measure reports."""
    qrels = SHARED_DATA / "trec_dl" / "qrels.dl19-passage.txt"
    run = SHARED_DATA / "rankllm_runs" / "BM25" / "trec_results_dl19.txt"
    got = _run(["-c", "-l2", "-m", "num_rel", "-m", "num_rel_ret", str(qrels), str(run)],
               monkeypatch=monkeypatch)
    assert got.exit_code == 0, got.stderr
    assert got.stdout == "num_rel               \tall\t4102\nnum_rel_ret           \tall\t846\n"
    assert _run(["-l2", "-m", "num_rel", str(qrels), str(run)],
                monkeypatch=monkeypatch).stdout == "num_rel               \tall\t2501\n"


def test_J_topic_with_nothing_judged_prints_nan_where_trec_eval_divides_0_by_0(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """m_iprec_at_recall.c / m_11pt_avg.c start from num_rel_ret / num_ret (0.0 / 0.0
    when -J leaves nothing) and give it to each level whose rank lround(level x R) is
    0: iprec_at_recall_0.00 and 11pt_avg (a sum over levels) are -nan, and so is their
    mean; level 0.10 of 5 relevant rounds to rank 1 and stays 0."""
    _files(tmp_path, "1 0 a 1\n1 0 b 0\n" + "".join(f"2 0 {d} 1\n" for d in "cdfgh")
           + "2 0 e 0\n", "1 Q0 a 1 9 t\n1 Q0 x 2 8 t\n2 Q0 y 1 5 t\n2 Q0 z 2 4 t\n")
    got = _run(["-J", "-q", "-m", "iprec_at_recall.0,0.1", "-m", "11pt_avg", "-m", "map",
                "q", "r"], cwd=tmp_path, monkeypatch=monkeypatch)
    assert got.exit_code == 0, got.stderr
    assert got.stdout == (
        "map                   \t1\t1.0000\n"
        "iprec_at_recall_0.00  \t1\t1.0000\n"
        "iprec_at_recall_0.10  \t1\t1.0000\n"
        "11pt_avg              \t1\t1.0000\n"
        "map                   \t2\t0.0000\n"
        "iprec_at_recall_0.00  \t2\t  -nan\n"
        "iprec_at_recall_0.10  \t2\t0.0000\n"
        "11pt_avg              \t2\t  -nan\n"
        "map                   \tall\t0.5000\n"
        "iprec_at_recall_0.00  \tall\t  -nan\n"
        "iprec_at_recall_0.10  \tall\t0.5000\n"
        "11pt_avg              \tall\t  -nan\n")
    # levels that all round to rank 1 or more: no 0 / 0 reaches the value
    got = _run(["-J", "-q", "-m", "11pt_avg.0.5", "q", "r"], cwd=tmp_path,
               monkeypatch=monkeypatch)
    assert got.stdout.splitlines()[1] == "11pt_avg_0.5          \t2\t0.0000"
    # rankproof measure keeps the consistent value (nothing retrieved: 0)
    measured = CliRunner().invoke(app, ["measure", "q", "r", "-J", "-f", "trec", "-q",
                                        "-m", "IPrec@0"])
    assert measured.exit_code == 0, measured.stderr
    assert "iprec_at_recall_0.00  \t2\t0.0000\n" in measured.stdout


def test_c_missing_topic_keeps_parameterised_utility_and_rbp_resid(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """trec_eval.c scores a topic missing under -c on a stand-in ranking of one unjudged
    document ('ceci_nest_pas_un_docno'), then zeroes the values *named* num_ret,
    utility, rbp_resid, unj* (and clears relstring). utility_1,-1,1,0 is not one of
    those names: -1 x 1 retrieved + 1 x 77 relevant missed = 76; rbp_resid_p=0.5 of
    one unjudged document is 0.5 + 0.5 x 1 = 1."""
    got = _run(["-q", "-c", "-m", "utility.1,-1,1,0", "-m", "rbp_resid.p=0.5", "-m",
                "num_ret", "-m", "relstring", "qrels.test", "results.trunc"],
               monkeypatch=monkeypatch)
    assert got.exit_code == 0, got.stderr
    assert _lines_of(got.stdout, "302", "all") == [
        "num_ret               \t302\t0",
        "relstring             \t302\t''",
        "utility_1,-1,1,0      \t302\t76.0000",
        "rbp_resid_p=0.5       \t302\t1.0000",
        "num_ret               \tall\t584",
        "utility_1,-1,1,0      \tall\t17.6667",
        "rbp_resid_p=0.5       \tall\t0.3334",
    ]
    bare = _run(["-q", "-c", "-m", "utility", "-m", "rbp_resid", "qrels.test",
                 "results.trunc"], monkeypatch=monkeypatch)
    assert _lines_of(bare.stdout, "302") == ["utility               \t302\t0.0000",
                                             "rbp_resid             \t302\t0.0000"]



def test_measure_keeps_utility_by_its_definition_for_a_missing_topic(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """rankproof measure: topic 2 retrieves nothing, so utility = c x 3 relevant missed
    (trec_eval's 0 for the bare name is an artefact of its stand-in ranking)."""
    _files(tmp_path, "1 0 a 1\n1 0 b 1\n2 0 c 1\n2 0 d 1\n2 0 e 1\n", "1 Q0 a 1 9 t\n")
    monkeypatch.chdir(tmp_path)
    got = CliRunner().invoke(app, ["measure", "q", "r", "-q", "-f", "trec", "-m",
                                   "Utility(a=1,b=-1,c=1,d=0)"])
    assert got.exit_code == 0, got.stderr
    assert got.stdout == ("utility_1,-1,1,0      \t1\t2.0000\n"
                          "utility_1,-1,1,0      \t2\t3.0000\n"
                          "utility_1,-1,1,0      \tall\t2.5000\n")


def _lines_of(text: str, *qids: str) -> list[str]:
    return [line for line in text.splitlines() if line.split("\t")[1] in qids]


def test_without_c_prints_the_topics_before_the_first_missing_then_exits_4(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """trec_eval.c evaluates qrels topics in order and prints each (-q) as it goes;
    at 302, absent from the run, it stops with exit 4: 301's lines are out, no
    summary, and its message names the topic."""
    got = _run(["-q", "-m", "P.5", "-m", "num_ret", "qrels.test", "results.trunc"],
               monkeypatch=monkeypatch)
    assert got.exit_code == 4
    assert got.stdout == "num_ret               \t301\t500\nP_5                   \t301\t0.0000\n"
    assert got.stderr.startswith("trec_eval: result qid '302' not found in qrels\n")
    assert "qrels topic '302' has no results in 'results.trunc'" in got.stderr


def test_N_sets_the_collection_size_of_utility(monkeypatch: pytest.MonkeyPatch) -> None:
    """m_utility.c's d term: d x (N + relret - ret - rel); -N 1000 adds 1000 x d."""
    got = _run(["-q", "-N", "1000", "-m", "utility.0,0,0,1", "qrels.test", "results.test"],
               monkeypatch=monkeypatch)
    assert got.exit_code == 0, got.stderr
    assert got.stdout == ("utility_0,0,0,1       \t301\t97.0000\n"
                          "utility_0,0,0,1       \t302\t473.0000\n"
                          "utility_0,0,0,1       \t303\t500.0000\n"
                          "utility_0,0,0,1       \tall\t356.6667\n")
