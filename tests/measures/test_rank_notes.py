"""Ranks the protocol refuses (issue 26, item 4): refused under ``order="rank"`` before any
metric, naming the query and the line; ignored under the default score order (trec_eval's
rule) and counted in a note."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof import InputError, evaluate, load_qrels, load_run
from rankproof.cli import app
from rankproof.data import Run, rank_column_problems
from rankproof.measures import evaluate_partitions

QRELS = "1 0 a 1\n1 0 b 1\n2 0 c 1\n"
# topic 1: ranks 1, 1, 7 (a repeat and a gap); topic 2: a clean 1, 2
RUN = "1 Q0 a 1 3 t\n1 Q0 x 1 2 t\n1 Q0 b 7 1 t\n2 Q0 c 1 5 t\n2 Q0 y 2 4 t\n"
NOTE = ("the rank column is not a ranking in 1 query (2 row(s) with a repeated or missing "
        "rank): ignored, documents ranked by score as trec_eval does (--order rank refuses "
        "such a run)")


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    return tmp_path / "q", tmp_path / "r"


def test_score_order_ignores_the_ranks_and_notes_them(files: tuple[Path, Path]) -> None:
    qrels, run = load_qrels(files[0]), load_run(files[1])
    assert rank_column_problems(run) == (1, 2)
    pq = evaluate(qrels, run, ["RR", "P@2"])
    assert pq.values[pq.qids.index("1")].tolist() == [1.0, 0.5]  # by score: a, x, b
    assert NOTE in pq.notes


def test_rank_order_refuses_before_any_metric(files: tuple[Path, Path]) -> None:
    with pytest.raises(InputError, match=r"query '1', document 'x': rank 1 is repeated "
                                         r"\(also on line 1\)") as caught:
        evaluate(load_qrels(files[0]), load_run(files[1]), ["RR"], order="rank")
    assert caught.value.line == 2 and caught.value.field == "rank"
    gapped = Run.from_columns(["1", "1"], ["a", "b"], [2.0, 1.0], [1, 3])
    with pytest.raises(InputError, match="rank 2 is missing"):
        evaluate(load_qrels(files[0]), gapped, ["RR"], order="rank")


def test_a_clean_rank_column_gives_no_note(files: tuple[Path, Path]) -> None:
    clean = Run.from_columns(["1", "1", "2"], ["a", "b", "c"], [2.0, 1.0, 1.0], [1, 2, 1])
    assert rank_column_problems(clean) == (0, 0)
    assert not [n for n in evaluate(load_qrels(files[0]), clean, ["RR"]).notes
                if "rank column" in n]
    no_ranks = Run.from_columns(["1"], ["a"], [1.0])
    assert rank_column_problems(no_ranks) == (0, 0)


def test_partitions_sum_the_counts(files: tuple[Path, Path]) -> None:
    run = load_run(files[1])
    parts = [Run.from_columns(["1", "1", "1"], ["a", "x", "b"], [3.0, 2.0, 1.0], [1, 1, 7]),
             Run.from_columns(["2", "2"], ["c", "y"], [5.0, 4.0], [1, 3])]
    pq = evaluate_partitions(load_qrels(files[0]), parts, ["RR"])
    assert rank_column_problems(run) == (1, 2)
    assert ("the rank column is not a ranking in 2 queries (3 row(s) with a repeated or "
            "missing rank): ignored, documents ranked by score as trec_eval does (--order "
            "rank refuses such a run)") in pq.notes


def test_the_cli_prints_the_note_and_refuses_under_order_rank(files: tuple[Path, Path]) -> None:
    ok = CliRunner().invoke(app, ["measure", str(files[0]), str(files[1]), "-m", "RR"])
    assert ok.exit_code == 0 and "the rank column is not a ranking in 1 query" in ok.stderr
    refused = CliRunner().invoke(app, ["measure", str(files[0]), str(files[1]), "-m", "RR",
                                       "--order", "rank"])
    assert refused.exit_code == 2
    assert "line 2, field 'rank'" in refused.stderr and "query '1'" in refused.stderr
    assert refused.stdout == ""
