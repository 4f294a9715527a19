"""``relstring`` in ``rankproof measure``: trec_eval's one string measure.

It is a per-topic string of labels, not a number, so it is not a `Measure`:
``--format trec -q`` prints it where trec_eval does (after ``P``, per topic,
never in the ``all`` lines), byte for byte against trec_eval's expected
outputs; every other output leaves it out with a one-line note; the parser
says what it is instead of "not implemented".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.measures import parse, relstring_length, relstring_request, trec_missing

SUITE = Path(__file__).resolve().parents[3] / "shared" / "data" / "trec_eval_tests"


def _measure(monkeypatch: pytest.MonkeyPatch, *args: str):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(SUITE)
    return CliRunner().invoke(app, ["measure", *args])


@pytest.mark.parametrize(("args", "expected"), [
    (["-m", "all_trec", "-q", "qrels.test", "results.test"], "out.test.aq"),
    (["-m", "all_trec", "-mrelstring.20", "-q", "-c", "-l2", "qrels.rel_level",
      "results.test"], "out.test.aql"),
])
def test_format_trec_prints_relstring_as_trec_eval(monkeypatch: pytest.MonkeyPatch,
                                                  args: list[str], expected: str) -> None:
    got = _measure(monkeypatch, "--format", "trec", *args)
    assert got.exit_code == 0, got.stderr
    assert got.stdout == (SUITE / expected).read_text()
    assert "relstring" not in got.stderr


def test_relstring_alone_prints_one_line_per_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _measure(monkeypatch, "-f", "trec", "-q", "-m", "relstring", "qrels.test",
                   "results.test")
    assert got.exit_code == 0, got.stderr
    expected = [line for line in (SUITE / "out.test.aq").read_text().splitlines()
                if line.startswith("relstring ")]
    assert got.stdout.splitlines() == expected


def test_max_retrieved_shortens_the_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _measure(monkeypatch, "-f", "trec", "-q", "-M3", "-m", "P.5,relstring.20",
                   "qrels.test", "results.test")
    assert got.exit_code == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[:2] == ["P_5                   \t301\t0.0000",
                         "relstring_20          \t301\t'000'"]
    assert "relstring_20          \t302\t'110'" in lines


@pytest.mark.parametrize(("fmt", "where"), [
    ("csv", "left out of this csv output (--format trec -q prints it, as trec_eval does)"),
    ("json", "left out of this json output"),
    ("trec", "left out of the 'all' lines (trec_eval prints it per topic only: add -q)"),
])
def test_other_outputs_leave_it_out_saying_why(monkeypatch: pytest.MonkeyPatch, fmt: str,
                                               where: str) -> None:
    got = _measure(monkeypatch, "-f", fmt, "-m", "all_trec", "qrels.test", "results.test")
    assert got.exit_code == 0, got.stderr
    notes = [line for line in got.stderr.splitlines() if "relstring" in line]
    assert len(notes) == 1 and "a per-topic string of labels, not a number" in notes[0]
    assert where in notes[0]
    assert "implement" not in got.stderr


def test_relstring_alone_where_it_cannot_show_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    got = _measure(monkeypatch, "-m", "relstring.5", "qrels.test", "results.test")
    assert got.exit_code == 2
    assert "relstring_5 is a per-topic string of labels, not a number" in " ".join(
        got.stderr.split())


def test_the_parser_says_what_relstring_is() -> None:
    for spelling in ("relstring", "relstring.20", "relstring_20"):
        with pytest.raises(ValueError, match="per-topic string of labels, not a number"):
            parse(spelling)
    assert "relstring" not in trec_missing(["all_trec"])


def test_lengths_and_requests() -> None:
    assert relstring_length("relstring") == 10
    assert relstring_length("relstring.20") == relstring_length("relstring_20") == 20
    assert relstring_length("P.5") is None and relstring_length("all_trec") is None
    with pytest.raises(ValueError, match="length must be a whole number"):
        relstring_length("relstring.-3")
    assert relstring_request(["all_trec"]) == ("relstring", 10)
    # trec_eval: the first -m with a parameter gives the length, as typed in the name
    assert relstring_request(["relstring", "all_trec", "relstring.20"]) == ("relstring_20", 20)
    assert relstring_request(["P.5", "official"]) is None
