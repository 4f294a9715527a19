"""``order="rank"`` needs a ranking: distinct, contiguous ranks per query (seed 003's rule).

Every evaluation in rank order — `evaluate`, `compare`, ``rankproof measure/compare
--order rank`` — goes through `ranked_order`, which runs `check_ranks`; a repeated rank,
a gap or a ranking that does not start at 1 (or 0) is refused naming the file and line.
"""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import rankproof as rp
from rankproof import InputError
from rankproof.cli import app
from rankproof.data import Qrels, Run, load_run, ranked_order
from rankproof.data._order import check_ranks
from rankproof.retrieval import fuse
from rankproof.stats import StatSettings

QRELS = "1 0 a 1\n1 0 c 1\n2 0 x 1\n"
GOOD = ("1 Q0 a 1 0.5 t\n1 Q0 b 2 0.9 t\n1 Q0 c 3 0.1 t\n"
        "2 Q0 x 1 1.0 t\n2 Q0 y 2 2.0 t\n")


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def ranked(qids: list[str], ranks: list[int], **kwargs: object) -> Run:
    docids = [f"d{i}" for i in range(len(qids))]
    return Run.from_columns(qids, docids, np.zeros(len(qids)), ranks, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("ranks", [[1, 2, 3, 1, 2], [3, 1, 2, 2, 1], [0, 1, 2, 0, 1],
                                   [2, 0, 1, 1, 2]])
def test_contiguous_ranks_from_one_or_zero_are_accepted(ranks: list[int]) -> None:
    run = ranked(["q", "q", "q", "r", "r"], ranks)
    check_ranks(run)
    order = ranked_order(run, "rank")
    got = [int(run.ranks[i]) for i in order.row_ids(len(run))]  # type: ignore[index]
    assert got == sorted(ranks[:3]) + sorted(ranks[3:])


def test_interleaved_queries_are_checked_per_query() -> None:
    check_ranks(ranked(["q", "r", "q", "r"], [1, 1, 2, 2]))
    with pytest.raises(InputError, match="query 'r', document 'd3': rank 1 is repeated"):
        check_ranks(ranked(["q", "r", "q", "r"], [1, 1, 2, 1]))


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("1 Q0 a 1 0.5 t\n1 Q0 b 1 0.9 t\n", 2,
     "query '1', document 'b': rank 1 is repeated (also on line 1)"),
    ("1 Q0 a 1 0.5 t\n1 Q0 b 3 0.9 t\n", 2,
     "query '1', document 'b': rank 2 is missing (the ranks of a query must be contiguous; "
     "the next one here is 3)"),
    ("1 Q0 a 2 0.5 t\n1 Q0 b 3 0.9 t\n", 1,
     "query '1', document 'a': ranks must start at 1 (or 0), and the lowest is 2"),
    ("1 Q0 a 1 0.5 t\n2 Q0 x 1 1 t\n2 Q0 y -1 2 t\n", 3,
     "query '2', document 'y': ranks must start at 1 (or 0), and the lowest is -1"),
    ("1 Q0 a 1 0.5 t\n2 Q0 x 1 1 t\n1 Q0 c 1 0.1 t\n", 3,
     "query '1', document 'c': rank 1 is repeated (also on line 1)"),
])
def test_refusals_name_the_file_and_line(tmp_path: Path, text: str, line: int,
                                         problem: str) -> None:
    """The fast reader (a plain file) and the careful one (a comment first) give the same
    line; so does a gzipped file."""
    plain = write(tmp_path / "plain.run", text)
    careful = write(tmp_path / "careful.run", "# a comment\n" + text)
    zipped = tmp_path / "zipped.run.gz"
    zipped.write_bytes(gzip.compress(text.encode()))
    for path, offset in ((plain, 0), (careful, 1), (zipped, 0)):
        with pytest.raises(InputError) as info:
            ranked_order(load_run(path), "rank")
        err = info.value
        assert (err.path, err.line, err.field) == (str(path), line + offset, "rank"), path
        shown = problem.replace("line 1)", f"line {1 + offset})")
        assert str(err).endswith(
            f"needs distinct, contiguous ranks per query: {shown}"), str(err)


def test_lines_survive_dedupe(tmp_path: Path) -> None:
    path = write(tmp_path / "dup.run", "1 Q0 a 1 0.5 t\n1 Q0 a 2 0.4 t\n1 Q0 b 2 0.3 t\n"
                                       "1 Q0 c 2 0.2 t\n")
    run = load_run(path, dedupe="first")
    with pytest.raises(InputError) as info:
        check_ranks(run)
    assert info.value.line == 4 and "document 'c': rank 2 is repeated (also on line 3)" in str(
        info.value)


def test_msmarco_and_jsonl_runs_name_their_lines(tmp_path: Path) -> None:
    msmarco = write(tmp_path / "run.tsv", "1\ta\t1\n1\tb\t1\n")
    with pytest.raises(InputError) as info:
        ranked_order(load_run(msmarco, format="msmarco"), "rank")
    assert (info.value.path, info.value.line) == (str(msmarco), 2)
    jsonl = write(tmp_path / "run.jsonl",
                  '{"qid": "1", "docid": "a", "score": 1, "rank": 1}\n'
                  '{"qid": "1", "docid": "b", "score": 2, "rank": 3}\n')
    with pytest.raises(InputError) as info:
        ranked_order(load_run(jsonl), "rank")
    assert (info.value.path, info.value.line) == (str(jsonl), 2)


def test_an_in_memory_run_is_refused_without_a_line() -> None:
    with pytest.raises(InputError) as info:
        check_ranks(ranked(["q", "q"], [1, 1]))
    assert info.value.line is None
    assert "rank 1 is repeated (also on row 1)" in str(info.value)


def test_score_order_ignores_the_rank_column(tmp_path: Path) -> None:
    """trec_eval ignores ranks: a broken rank column is only refused when it is used."""
    run = load_run(write(tmp_path / "r.run", "1 Q0 a 7 0.5 t\n1 Q0 b 7 0.9 t\n"))
    assert ranked_order(run).n_slots == 2
    qrels = Qrels.from_dict({"1": {"a": 1}})
    assert rp.evaluate(qrels, run, "RR").mean("RR") == 0.5


def test_every_evaluation_in_rank_order_goes_through_the_check(tmp_path: Path) -> None:
    qrels = Qrels.from_dict({"1": {"a": 1}, "2": {"x": 1}})
    good = load_run(write(tmp_path / "good.run", GOOD))
    bad = load_run(write(tmp_path / "bad.run", GOOD.replace("2 Q0 y 2", "2 Q0 y 1")))
    assert rp.evaluate(qrels, good, "RR", order="rank").mean("RR") == 1.0
    with pytest.raises(InputError, match="rank 1 is repeated") as info:
        rp.evaluate(qrels, bad, "RR", order="rank")
    assert info.value.line == 5
    with pytest.raises(InputError, match="rank 1 is repeated"):
        rp.compare(qrels, {"good": good, "bad": bad}, "RR", order="rank",
                   stats=StatSettings(resamples=99))
    rp.compare(qrels, {"good": good, "bad": bad}, "RR",
               stats=StatSettings(resamples=99))  # by score: fine


def test_the_cli_refuses_with_file_and_line(tmp_path: Path) -> None:
    qrels = write(tmp_path / "q.qrels", QRELS)
    good = write(tmp_path / "good.run", GOOD)
    bad = write(tmp_path / "bad.run", GOOD.replace("1 Q0 c 3", "1 Q0 c 4"))
    runner = CliRunner()
    for command in (["measure", str(qrels), str(bad)],
                    ["compare", str(qrels), str(good), str(bad), "--resamples", "99"]):
        result = runner.invoke(app, [*command, "--order", "rank", "-m", "RR"])
        assert result.exit_code == 2, result.output
        flat = " ".join(result.output.split())
        assert f"{bad}, line 3, field 'rank'" in flat and "rank 3 is missing" in flat
        assert runner.invoke(app, [*command, "-m", "RR"]).exit_code == 0


def test_fusion_reads_ranks_as_written() -> None:
    """pyserini's fusion uses the rank column as written, gaps included (its fixtures
    depend on it), so `fuse(order="rank")` does not run the check."""
    gap = Run.from_columns(["q", "q"], ["a", "b"], np.array([2.0, 1.0]), [1, 3])
    fused = fuse([gap], "rrf", k=60, order="rank")
    assert fused.to_dict() == {"q": {"a": pytest.approx(1 / 61), "b": pytest.approx(1 / 63)}}


def test_a_run_read_from_a_file_still_pickles(tmp_path: Path) -> None:
    """The line table is left behind (it is a closure over the reader), the data is not."""
    run = load_run(write(tmp_path / "r.run", "# c\n1 Q0 a 1 0.5 t\n1 Q0 b 1 0.4 t\n"))
    assert run.line_of(1) == 3
    back = pickle.loads(pickle.dumps(run))
    assert back.to_dict() == run.to_dict() and back.line_of(1) is None
    with pytest.raises(InputError, match="also on row 1"):
        check_ranks(back)
