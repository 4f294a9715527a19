"""MS MARCO's three-column runs, and runs/qrels handed over in memory (`as_run`/`as_qrels`)."""

from __future__ import annotations

import errno
import gzip

import numpy as np
import pyarrow as pa
import pytest

from rankproof import InputError
from rankproof._io import input_error
from rankproof.data import (
    Qrels,
    Run,
    as_qrels,
    as_run,
    load_qrels,
    load_run,
    ranked_order,
    read_msmarco_run,
    read_qrels_rows,
    read_trec_run,
    sniff_format,
    write_msmarco_run,
    write_trec_run,
)

MSMARCO = "1048585\t7187158\t1\n1048585\t7187157\t2\n1048585\t7187163\t3\n2\t10\t1\n"


# -- MS MARCO ---------------------------------------------------------------------------


def test_msmarco_run_keeps_rank_order(write) -> None:
    run = read_msmarco_run(write("dev.tsv", MSMARCO))
    assert run.to_dict() == {"1048585": {"7187158": -1.0, "7187157": -2.0, "7187163": -3.0},
                             "2": {"10": -1.0}}
    assert run.ranks is not None and run.ranks.tolist() == [1, 2, 3, 1]
    order = ranked_order(run)
    assert run.docids.take(pa.array(order.row_ids(len(run)))).to_pylist() == [
        "7187158", "7187157", "7187163", "10"]  # per topic, rank 1 first
    assert ranked_order(run, "rank").positions.tolist() == order.positions.tolist()


@pytest.mark.parametrize(("name", "content"), [
    ("dev.tsv", MSMARCO), ("dev.txt", MSMARCO), ("dev.tsv", "# comment\n\n" + MSMARCO),
    ("dev.tsv.gz", gzip.compress(MSMARCO.encode(), mtime=0)),  # mtime=0: the test id is stable
], ids=["tsv", "txt", "comment", "gzip"])
def test_msmarco_is_sniffed(name, content, write) -> None:
    path = write(name, content)
    assert sniff_format(path) == "msmarco"
    run = load_run(path)
    assert run.to_dict()["2"] == {"10": -1.0}
    assert run.name == "dev"


def test_sniffing_leaves_other_three_column_shapes_alone(write) -> None:
    # a float is not a rank: no format has that shape, so it is refused (issue 22 item 8)
    with pytest.raises(InputError, match="cannot tell which run format") as err:
        load_run(write("run.tsv", "q1\td1\t0.75\n"))
    assert err.value.line == 1 and "MS MARCO run (qid docid rank)" in str(err.value)
    assert sniff_format(write("run.trec", MSMARCO)) == "msmarco"  # the content, not the name
    assert load_run(write("run", MSMARCO), format="msmarco").ranks is not None


def test_msmarco_careful_path_and_errors(write, located) -> None:
    spaced = write("a.txt", "q1  d1 1\nq1\td2   2\n")
    assert read_msmarco_run(spaced).to_dict() == {"q1": {"d1": -1.0, "d2": -2.0}}
    bad = write("b.tsv", "q1\td1\t1\nq1\td2\tsecond\n")
    with pytest.raises(InputError, match="rank must be an integer, found 'second'") as err:
        read_msmarco_run(bad)
    located(err.value, bad, 2, "rank")
    short = write("c.tsv", "q1\td1\t1\nq1\td2\n")
    with pytest.raises(InputError, match="expected 3 columns 'qid docid rank', found 2") as err:
        read_msmarco_run(short)
    located(err.value, short, 2, "columns")
    extra = write("d.tsv", "q1\td1\t1\tx\n")
    assert read_msmarco_run(extra, extra_columns="ignore").to_dict() == {"q1": {"d1": -1.0}}


def test_msmarco_is_not_a_qrels_format(write) -> None:
    path = write("q.txt", "q1\td1\t1\n")
    with pytest.raises(InputError, match="unknown format 'msmarco'"):
        load_qrels(path, format="msmarco")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="expected 4 columns 'qid iter docno rel', found 3"):
        load_qrels(path)  # sniffed as MS MARCO: read as (malformed) TREC qrels


def test_msmarco_round_trip_keeps_the_trec_order(tmp_path) -> None:
    run = Run.from_dict({"q1": {"a": 0.5, "b": 0.5, "c": 2.0}, "q2": {"z": 1.0}})
    path = tmp_path / "r.tsv"
    write_msmarco_run(run, path)
    assert path.read_text() == "q1\tc\t1\nq1\tb\t2\nq1\ta\t3\nq2\tz\t1\n"
    back = load_run(path)
    trec = tmp_path / "r.trec"
    write_trec_run(back, trec, tag="t")
    assert [line.split()[2] for line in trec.read_text().splitlines()] == ["c", "b", "a", "z"]
    assert read_trec_run(trec).to_dict() == back.to_dict()


# -- in memory --------------------------------------------------------------------------

SCORES = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 0.5}}
LABELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}


def test_as_run_and_as_qrels_accept_dicts() -> None:
    run = as_run(SCORES, name="mine")
    assert (run.name, run.to_dict()) == ("mine", SCORES)
    assert as_run(run) is run
    assert as_run(run, name="other").name == "other"
    qrels = as_qrels(LABELS)
    assert qrels.to_dict() == LABELS and as_qrels(qrels) is qrels
    assert load_run(SCORES).to_dict() == SCORES
    assert load_qrels(LABELS).digest == qrels.digest


def test_as_run_and_as_qrels_accept_frames() -> None:
    pd = pytest.importorskip("pandas")
    ranx_like = pd.DataFrame({"q_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"],
                              "score": [2.0, 1.0, 0.5]})
    assert as_run(ranx_like).to_dict() == SCORES
    frame = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docid": ["d1", "d2", "d1"],
                          "rel": [1, 0, 2]})
    assert as_qrels(frame).to_dict() == LABELS
    table = pa.table({"qid": ["q1", "q1", "q2"], "docid": ["d1", "d2", "d1"],
                      "score": [2.0, 1.0, 0.5], "rank": [1, 2, 1]})
    run = as_run(table)
    assert run.to_dict() == SCORES and run.ranks is not None
    assert as_qrels(pa.table({"query_id": ["q"], "doc_id": ["d"], "relevance": [3]})).to_dict() \
        == {"q": {"d": 3}}


@pytest.mark.parametrize("bad", [[("q1", "d1", 1.0)], b"run.txt", 3, None,
                                 np.zeros(3), object()])
def test_anything_else_is_a_typed_error(bad) -> None:
    with pytest.raises(InputError, match=r"expected a Run, a \{qid: \{docid: score\}\} dict, "
                                         "a pandas DataFrame or a pyarrow Table, found"):
        as_run(bad)
    with pytest.raises(InputError, match=r"expected a Qrels, a \{qid: \{docid: rel\}\} dict"):
        as_qrels(bad)


def test_bad_dict_values_are_input_errors() -> None:
    with pytest.raises(InputError):
        as_run({"q1": ["d1"]})
    with pytest.raises(InputError, match="relevance must be an integer"):
        as_qrels({"q1": {"d1": "high"}})
    assert isinstance(as_qrels({"q": {"d": 1}}), Qrels)


# -- the shared qrels row parser and OSError reasons ------------------------------------


def test_qrels_rows_carry_their_lines(write) -> None:
    trec = read_qrels_rows(write("q.txt", "# c\nq1 0 d1 1\n\nq2 0 d2 0\n"))
    assert (trec.qids, trec.docids, trec.rels, trec.lines) == (["q1", "q2"], ["d1", "d2"],
                                                               [1, 0], [2, 4])
    assert trec.to_qrels().to_dict() == {"q1": {"d1": 1}, "q2": {"d2": 0}}
    beir = read_qrels_rows(write("q.tsv", "query-id\tcorpus-id\tscore\n"), format="beir",
                           allow_empty=True)
    assert beir.qids == [] and beir.lines == []
    with pytest.raises(InputError, match="no data lines"):
        read_qrels_rows(write("h.tsv", "query-id\tcorpus-id\tscore\n"), format="beir")


@pytest.mark.parametrize(("code", "reason"), [
    (errno.ENOENT, "no such file"), (errno.EISDIR, "is a directory, expected a file"),
    (errno.EACCES, "permission denied"), (errno.EIO, "cannot read: Input/output error"),
])
def test_os_error_reasons(code, reason) -> None:
    exc = input_error("runs/x.txt", OSError(code, __import__("os").strerror(code)))
    assert str(exc) == f"runs/x.txt: {reason}" and exc.path == "runs/x.txt"
    named = input_error("j.jsonl", OSError(code, "x"), "the judgments file")
    assert str(named) == f"j.jsonl: cannot read the judgments file: {reason}".replace(
        "Input/output error", "x")
