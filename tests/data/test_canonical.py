"""Canonical runs (ranks 1..n, score = 1/rank) and Parquet runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankproof import InputError
from rankproof.data import (
    Run,
    canonical_run,
    check_canonical,
    is_canonical,
    is_parquet,
    load_run,
    ranked_order,
    read_parquet_run,
    write_parquet_run,
)

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
REP_LLAMA = DATA / "rankllm_runs" / "REP_LLAMA" / "trec_results_dl19.txt"


def test_canonical_run_is_trec_eval_order_with_reciprocal_scores() -> None:
    run = load_run(REP_LLAMA)
    canon = canonical_run(run)
    ranked = ranked_order(run)
    assert ranked.n_ties > 10_000  # scores rounded to 3 decimals
    rows = ranked.row_ids(len(run))
    assert canon.docids.to_pylist() == run.docids.take(rows).to_pylist()
    assert canon.qids().to_pylist() == run.qids().take(rows).to_pylist()
    assert canon.ranks is not None
    assert np.array_equal(canon.ranks, ranked.positions + 1)
    assert np.array_equal(canon.scores, 1.0 / canon.ranks)
    assert canon.name == run.name and canon.tag == run.tag
    check_canonical(canon)
    assert is_canonical(canon) and not is_canonical(run)
    assert ranked_order(canon).n_ties == 0 and not ranked_order(canon).resorted


def test_canonical_run_by_the_rank_column() -> None:
    run = load_run(REP_LLAMA)
    by_rank = canonical_run(run, "rank")
    assert by_rank.ranks is not None and by_rank.docids.to_pylist()[:3] == [
        "3620986", "8760866", "8760871"]  # the file's own order, not trec_eval's
    assert canonical_run(run).docids.to_pylist()[:3] == ["3620986", "8760871", "8760870"]


def _canonical_rows(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "canon.trec"
    path.write_text("".join(line + "\n" for line in lines))
    return path


GOOD = ["q1 Q0 a 1 1.0 t", "q1 Q0 b 2 0.5 t", "q1 Q0 c 3 0.3333333333333333 t",
        "q2 Q0 d 1 1.0 t", "q2 Q0 e 2 0.5 t"]


@pytest.mark.parametrize(("lines", "message", "line", "field"), [
    ([*GOOD[:1], "q1 Q0 b 1 1.0 t", *GOOD[2:]],
     "query 'q1', document 'b': rank 1 is repeated (also on line 1)", 2, "rank"),
    ([*GOOD[:1], "q1 Q0 b 3 0.5 t", *GOOD[2:]],
     "query 'q1', document 'c': rank 3 is repeated (also on line 2)", 3, "rank"),
    ([*GOOD[:2], "q1 Q0 c 4 0.25 t", *GOOD[3:]],
     "query 'q1', document 'c': rank 3 is missing (ranks must be contiguous; the next one "
     "here is 4)", 3, "rank"),
    ([*GOOD[:3], "q2 Q0 d 2 0.5 t", "q2 Q0 e 3 0.3333333333333333 t"],
     "query 'q2', document 'd': ranks must start at 1, and the lowest is 2", 4, "rank"),
    ([*GOOD[:4], "q2 Q0 e 2 0.4 t"],
     "query 'q2', document 'e': score 0.4 is not 1/rank = 0.5 (rank 2)", 5, "score"),
])
def test_check_canonical_refusals_name_file_line_and_field(
        tmp_path: Path, lines: list[str], message: str, line: int, field: str) -> None:
    path = _canonical_rows(tmp_path, lines)
    run = load_run(path)
    with pytest.raises(InputError) as info:
        check_canonical(run)
    err = info.value
    assert (err.path, err.line, err.field) == (str(path), line, field)
    assert str(err) == f"{path}, line {line}, field '{field}': not a canonical run: {message}"


def test_check_canonical_needs_a_rank_column_and_names_rows_without_lines(
        tmp_path: Path) -> None:
    with pytest.raises(InputError, match="a canonical run needs a rank column"):
        check_canonical(Run.from_dict({"q": {"a": 1.0}}))
    run = Run.from_columns(["q", "q"], ["a", "b"], [1.0, 0.5], [1, 1])
    with pytest.raises(InputError, match=r"row 2, query 'q', document 'b': rank 1 is repeated "
                                         r"\(also on row 1\)"):
        check_canonical(run)
    check_canonical(load_run(_canonical_rows(tmp_path, GOOD)))  # the good one passes


def test_parquet_round_trip_keeps_rows_ranks_and_tag(tmp_path: Path) -> None:
    run = load_run(REP_LLAMA)
    path = tmp_path / "run.parquet"
    write_parquet_run(run, path, tag="mytag")
    assert is_parquet(path) and not is_parquet(REP_LLAMA) and not is_parquet(tmp_path)
    back = read_parquet_run(path)
    assert back.name == "run" and back.tag == "mytag" and back.source == str(path)
    assert back.qids().to_pylist() == run.qids().to_pylist()
    assert back.docids.to_pylist() == run.docids.to_pylist()
    assert np.array_equal(back.scores, run.scores)
    assert back.ranks is not None and run.ranks is not None
    assert np.array_equal(back.ranks, run.ranks)


def test_a_broken_parquet_file_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable Parquet file") as info:
        read_parquet_run(path)
    assert info.value.path == str(path)
