"""Property: the fast (Arrow) and careful (line-by-line) TREC paths agree.

Whatever the file, reading it normally and reading it with the fast path
switched off give the same `Run`/`Qrels`, or the same `InputError`. The files
are built from fields that tempt the fast path: tabs and spaces mixed, '#'
at the start and inside ids, CR line ends, scores Arrow and Python parse
differently, and bytes that are not UTF-8.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rankproof import InputError
from rankproof.data import _trec, read_trec_qrels, read_trec_run

# Each field is either ordinary or, with the file's "mess" probability, odd.
NICE_IDS = st.sampled_from(["1", "2", "q3", "doc", "d#1", "é"])
ODD_ID_PIECES = st.sampled_from(["1", "#", "é", "x\t", "a b", "\xff", "\x00", "-"])
ODD_IDS = st.lists(ODD_ID_PIECES, min_size=1, max_size=3).map("".join)
NICE_SCORES = st.sampled_from(["1", "2.5", "-0", "1e-3", "0.123456789", "-7"])
ODD_SCORES = st.sampled_from(["+3", ".5", "7.", "nan", "inf", "x", "1e400", "1_0", "0x1"])
NICE_RANKS = st.sampled_from(["1", "2", "10"])
ODD_RANKS = st.sampled_from(["x", "+1", "1.0", "99999999999999999999"])
NICE_RELS = st.sampled_from(["0", "1", "2", "-1"])
ODD_RELS = st.sampled_from(["1.5", "x", "+1", "99999999999999999999"])
TAGS = st.sampled_from(["t", "tag", "é"])
ODD_SEPS = st.sampled_from(["  ", " \t", "\t\t", "\t "])
ENDS = st.sampled_from(["\n", "\r\n", "\r"])
ODD_PREFIX = st.sampled_from(["# comment\n", "\n", "  \n", " ", "\t"])


@st.composite
def trec_file(draw: st.DrawFn, columns: int) -> bytes:
    """Lines of ``columns`` fields; docids get a row number so duplicates are rare."""
    mess = draw(st.sampled_from([0, 0, 1, 3, 10]))  # in tenths

    def pick(nice: st.SearchStrategy[str], odd: st.SearchStrategy[str]) -> str:
        return draw(odd if draw(st.integers(0, 99)) < mess * 3 else nice)

    sep0 = draw(st.sampled_from([" ", "\t"]))
    end0 = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    lines: list[str] = []
    for i in range(draw(st.integers(min_value=1, max_value=6))):
        sep = pick(st.just(sep0), ODD_SEPS)
        end = pick(st.just(end0), ENDS)
        qid = pick(NICE_IDS, ODD_IDS)
        docid = pick(NICE_IDS, ODD_IDS) + str(i)
        if columns == 6:
            fields = [qid, "Q0", docid, pick(NICE_RANKS, ODD_RANKS), pick(NICE_SCORES, ODD_SCORES),
                      pick(TAGS, ODD_IDS)]
        else:
            fields = [qid, pick(st.just("0"), ODD_IDS), docid, pick(NICE_RELS, ODD_RELS)]
        if pick(st.just(False), st.just(True)):
            fields.append("junk")
        prefix = pick(st.just(""), ODD_PREFIX)
        lines.append(prefix + sep.join(fields) + end)
    return "".join(lines).encode("utf-8").replace("\xff".encode(), b"\xff")


def read_counting_careful(read: Any) -> tuple[tuple[Any, ...], bool]:
    """The outcome of ``read()``, and whether it went down the careful path."""
    calls: list[int] = []
    original = _trec._Lines.rows

    def rows(self: _trec._Lines) -> Any:
        calls.append(1)
        return original(self)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(_trec._Lines, "rows", rows)
        result = outcome(read)
    return result, bool(calls)


def outcome(read: Any) -> tuple[Any, ...]:
    try:
        value = read()
    except InputError as exc:
        return ("error", str(exc))
    extra = (value.tag, value.notes, value.name) if hasattr(value, "tag") else ()
    return ("ok", value.to_arrow(), *extra)


def same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    if a[0] != b[0] or len(a) != len(b):
        return False
    if a[0] == "error":
        return a == b
    return bool(a[1].equals(b[1])) and a[2:] == b[2:]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("agree")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=trec_file(6))
def test_run_paths_agree(data: bytes, scratch: Path) -> None:
    path = scratch / "x.run"
    path.write_bytes(data)
    normal, went_careful = read_counting_careful(lambda: read_trec_run(path))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_trec, "_fast_table", lambda *a, **k: None)
        careful = outcome(lambda: read_trec_run(path))
    assert same(normal, careful), (data, normal, careful)
    event(f"{normal[0]}, {'careful' if went_careful else 'fast'} path")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=trec_file(4))
def test_qrels_paths_agree(data: bytes, scratch: Path) -> None:
    path = scratch / "x.qrels"
    path.write_bytes(data)
    normal, went_careful = read_counting_careful(lambda: read_trec_qrels(path))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_trec, "_fast_table", lambda *a, **k: None)
        careful = outcome(lambda: read_trec_qrels(path))
    assert same(normal, careful), (data, normal, careful)
    event(f"{normal[0]}, {'careful' if went_careful else 'fast'} path")
