"""Class 13 (inputs): mistakes that used to pass silently.

* A run that shares no topic with its qrels — what a file with its qid and
  docid columns swapped looks like — used to score 0 on every topic and read as
  "a terrible system". It is now an `InputError` naming the run, unless the
  caller opts out with ``topics="complete-allow-disjoint"``.
* A score column that holds ranks (1, 2, 3 … rising down the list) is ranked
  upside down by trec_eval's rule (highest score first). It is evaluated as
  asked, with a warning stamped into the result and printed by the commands.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rankproof import InputError
from rankproof.comparison import compare
from rankproof.data import Run, load_qrels, load_run
from rankproof.measures import evaluate
from rankproof.stats import StatSettings

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
QRELS = TOY / "qrels.txt"
RUN = TOY / "bm25.run"


def rankproof(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rankproof", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def rewrite(path: Path, fields: str) -> Path:
    """The toy BM25 run with its columns rearranged (``fields`` indexes q0 d r s t)."""
    out = []
    for line in RUN.read_text().splitlines():
        cols = line.split()
        out.append(" ".join(cols[int(i)] if i.isdigit() else i for i in fields.split()))
    path.write_text("\n".join(out) + "\n")
    return path


# -- a run sharing no topic with the qrels -------------------------------------------


def test_swapped_columns_are_refused_naming_the_run(tmp_path: Path) -> None:
    swapped = rewrite(tmp_path / "swapped.run", "2 Q0 0 3 4 5")
    with pytest.raises(InputError, match=r"the run 'swapped' shares no topic with the qrels"
                       ) as err:
        evaluate(load_qrels(QRELS), load_run(swapped))
    assert err.value.path == str(swapped)
    assert "swapped" in str(err.value) and "complete-allow-disjoint" in str(err.value)
    # Explicitly asking for the default is not an opt-out.
    with pytest.raises(InputError, match="shares no topic"):
        evaluate(load_qrels(QRELS), load_run(swapped), topics="complete")


def test_the_opt_out_scores_every_topic_zero_and_records_it(tmp_path: Path) -> None:
    swapped = load_run(rewrite(tmp_path / "swapped.run", "2 Q0 0 3 4 5"))
    pq = evaluate(load_qrels(QRELS), swapped, ["AP", "P@10"],
                  topics="complete-allow-disjoint")
    assert pq.n == 8 and not pq.values.any()
    assert pq.topics == "complete-allow-disjoint" and len(pq.zero_filled) == 8
    assert pq.to_dict()["topics"] == "complete-allow-disjoint"
    # intersection evaluates nothing (n == 0), which no table shows as a score.
    assert evaluate(load_qrels(QRELS), swapped, "AP", topics="intersection").n == 0


def test_a_partly_overlapping_run_is_still_zero_filled() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    pq = evaluate(qrels, {"q1": {"a": 1.0}, "zz": {"b": 1.0}}, "AP")
    assert pq.zero_filled == ("q2",) and pq.dropped == ("zz",)


def test_measure_refuses_a_swapped_run_and_takes_the_opt_out(tmp_path: Path) -> None:
    swapped = rewrite(tmp_path / "swapped.run", "2 Q0 0 3 4 5")
    proc = rankproof("measure", QRELS, swapped)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {swapped}, field 'qid': the run 'bm25' shares no "
                                  "topic with the qrels")
    assert "--topics complete-allow-disjoint" in proc.stderr
    proc = rankproof("measure", QRELS, swapped, "--topics", "complete-allow-disjoint",
                     "-f", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["runs"][0]
    assert doc["topics"] == "complete-allow-disjoint" and set(doc["means"].values()) == {0.0}


def test_a_swapped_candidate_is_exit_2_not_a_regression(tmp_path: Path) -> None:
    swapped = rewrite(tmp_path / "cand.run", "2 Q0 0 3 4 cand")
    proc = rankproof("compare", "--fail-on-regression", "--resamples", "200", QRELS, RUN,
                     swapped)
    assert proc.returncode == 2, proc.stderr
    assert "shares no topic" in proc.stderr and "regression" not in proc.stderr


# -- a score column holding ranks ------------------------------------------------------


RANK_WARNING = "the score column looks like ranks"


def test_ranks_in_the_score_column_are_warned_about_and_stamped(tmp_path: Path) -> None:
    ranks = load_run(rewrite(tmp_path / "ranks.run", "0 Q0 2 3 3 5"))
    pq = evaluate(load_qrels(QRELS), ranks, "AP")
    assert len(pq.warnings) == 1 and RANK_WARNING in pq.warnings[0]
    assert "8 of 8 topics" in pq.warnings[0]
    assert pq.to_dict()["warnings"] == list(pq.warnings)
    # The rank column decides with order="rank": the scores are not used, nothing to warn.
    assert evaluate(load_qrels(QRELS), ranks, "AP", order="rank").warnings == ()


def test_rank_like_scores_without_a_rank_column_use_the_file_order() -> None:
    rising = Run.from_columns(["q"] * 3 + ["r"] * 3, list("abcabc"),
                              np.array([1.0, 2, 3, 1, 2, 3]))
    assert RANK_WARNING in evaluate({"q": {"a": 1}}, rising, "RR").warnings[0]


def test_rank_like_scores_follow_the_rank_column_when_rows_are_shuffled() -> None:
    ranks = [3, 1, 2, 2, 3, 1]
    shuffled = Run.from_columns(["q"] * 3 + ["r"] * 3, list("abcabc"),
                                np.array(ranks, dtype=float), ranks)
    assert RANK_WARNING in evaluate({"q": {"a": 1}}, shuffled, "RR").warnings[0]
    minus = Run.from_columns(["q"] * 3 + ["r"] * 3, list("abcabc"),
                             -np.array(ranks, dtype=float), ranks)
    assert evaluate({"q": {"a": 1}}, minus, "RR").warnings == ()


@pytest.mark.parametrize("scores", [
    [3.0, 2, 1, 3, 2, 1],          # integer scores falling: a normal run
    [-1.0, -2, -3, -1, -2, -3],    # score = -rank, the recommended conversion
    [0.5, 1.5, 2.5, 0.5, 1.5, 2.5],  # rising, but not integers
    [1.0, 1, 1, 1, 1, 1],          # constant
    [1.0, 2, 3, 3, 2, 1],          # one topic of two rises: not most
])
def test_no_warning_for_ordinary_runs(scores: list[float]) -> None:
    run = Run.from_columns(["q"] * 3 + ["r"] * 3, list("abcabc"), np.array(scores))
    assert evaluate({"q": {"a": 1}}, run, "RR").warnings == ()


def test_real_runs_are_not_flagged() -> None:
    qrels = load_qrels(QRELS)
    for name in ("bm25.run", "dense.run"):
        assert evaluate(qrels, load_run(TOY / name), "AP").warnings == ()


def test_measure_and_compare_print_the_warning(tmp_path: Path) -> None:
    ranks = rewrite(tmp_path / "ranks.run", "0 Q0 2 3 3 ranks")
    proc = rankproof("measure", QRELS, ranks)
    assert proc.returncode == 0, proc.stderr
    assert f"warning: {RANK_WARNING}" in proc.stderr
    proc = rankproof("measure", QRELS, ranks, "-f", "json")
    assert RANK_WARNING in json.loads(proc.stdout)["runs"][0]["warnings"][0]
    proc = rankproof("compare", "--resamples", "200", QRELS, RUN, ranks, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    caveats = json.loads(proc.stdout)["caveats"]
    assert any(c.startswith(f"ranks: warning: {RANK_WARNING}") for c in caveats)
    proc = rankproof("compare", "--resamples", "200", QRELS, RUN, ranks)
    assert f"ranks: warning: {RANK_WARNING}" in proc.stderr


def test_the_library_comparison_carries_the_warning(tmp_path: Path) -> None:
    ranks = load_run(rewrite(tmp_path / "ranks.run", "0 Q0 2 3 3 ranks"))
    c = compare(load_qrels(QRELS), {"bm25": load_run(RUN), "ranks": ranks}, "AP",
                stats=StatSettings(resamples=100))
    assert any(RANK_WARNING in cav for cav in c.caveats)
