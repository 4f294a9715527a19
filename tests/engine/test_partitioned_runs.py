"""One run spread over workers as topic-aligned byte ranges gives the single-process output.

The library steps (`topic_ranges`, `read_run_range`, `evaluate_partition`,
`combine_partitions`) against `evaluate` on the whole run, and the CLI (`measure` and
`compare` with ``--partitions``) against ``local`` on local processes and on the
session's Ray cluster, including the topic-policy edge cases: qrels topics the run never
retrieved for, run topics the qrels do not judge, per-query output order.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import rankproof.jobs._ranges as partitioned_runs
from rankproof import InputError
from rankproof.cli import app
from rankproof.data import load_qrels, load_run, read_run_range, topic_ranges
from rankproof.engine import LocalExecutor
from rankproof.measures import combine_partitions, evaluate, evaluate_partition

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
QRELS = DATA / "trec_dl" / "qrels.dl19-passage.txt"
BM25 = DATA / "rankllm_runs" / "BM25" / "trec_results_dl19.txt"
SPLADE = DATA / "rankllm_runs" / "SPLADE_P_P_ENSEMBLE_DISTIL" / "trec_results_dl19.txt"
runner = CliRunner()
MEASURES = ("nDCG@10", "AP", "RR@10", "R@100", "P@5")


@pytest.fixture
def small_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let ``--partitions`` cut the 190 KB DL19 runs into ranges of 16 KiB."""
    monkeypatch.setattr(partitioned_runs, "RANGE_MIN_BYTES", 16 << 10)


@pytest.fixture
def edge_files(tmp_path: Path) -> tuple[Path, Path]:
    """A qrels with a topic no run retrieves for, and a run whose first topic is left out
    (a judged topic never retrieved) and with a last topic the qrels do not judge."""
    lines = BM25.read_bytes().splitlines(keepends=True)
    first = lines[0].split()[0]
    run = tmp_path / "edge.run"
    run.write_bytes(b"".join(li for li in lines if li.split()[0] != first)
                    + b"".join(b"zz-unjudged Q0 d%d %d %d.0 edge\n" % (i, i + 1, 100 - i)
                               for i in range(30)))
    qrels = tmp_path / "edge.qrels"
    qrels.write_bytes(QRELS.read_bytes() + b"zz-only-qrels 0 d1 1\n")
    return qrels, run


def _invoke(*args: object) -> Any:
    result = runner.invoke(app, [str(a) for a in args])
    return result


def _out(*args: object) -> str:
    result = _invoke(*args)
    assert result.exit_code == 0, result.output
    return str(result.stdout)


def _doc(text: str) -> dict[str, Any]:
    doc = json.loads(text)
    doc.pop("provenance")
    return dict(doc)


# -- the library ---------------------------------------------------------------

def test_ranges_start_at_topics_and_cover_the_file() -> None:
    cut = topic_ranges(BM25, 6, min_bytes=16 << 10)
    data = BM25.read_bytes()
    assert cut.split and cut.reason is None and len(cut.ranges) == 6
    assert cut.ranges[0][0] == 0 and cut.ranges[-1][1] == len(data) == cut.size
    for (_, end), (start, _) in zip(cut.ranges, cut.ranges[1:], strict=False):
        assert end == start and data[start - 1:start] == b"\n"
        before = data[:start].splitlines()[-1].split()[0]
        assert data[start:].split(None, 1)[0] != before  # a new topic starts here


@pytest.mark.parametrize("topics", ["complete", "intersection", "complete-allow-disjoint"])
def test_partitions_combine_to_the_whole_run(edge_files: tuple[Path, Path],
                                             topics: str) -> None:
    qrels_path, run_path = edge_files
    qrels = load_qrels(str(qrels_path))
    whole = evaluate(qrels, load_run(str(run_path)), MEASURES, topics=topics)  # type: ignore[arg-type]
    cut = topic_ranges(run_path, 5, min_bytes=16 << 10)
    assert len(cut.ranges) == 5
    parts = [evaluate_partition(qrels, read_run_range(run_path, s, e), MEASURES)
             for s, e in cut.ranges]
    combined = combine_partitions(qrels, parts, MEASURES, topics=topics)  # type: ignore[arg-type]
    assert combined.qids == whole.qids
    np.testing.assert_array_equal(combined.values, whole.values)  # bit for bit
    assert (combined.zero_filled, combined.dropped, combined.not_evaluated, combined.notes,
            combined.warnings, combined.run_name, combined.run_tag) == (
        whole.zero_filled, whole.dropped, whole.not_evaluated, whole.notes, whole.warnings,
        whole.run_name, whole.run_tag)
    assert "zz-unjudged" in combined.dropped
    if topics != "intersection":
        assert "zz-only-qrels" in combined.zero_filled


def test_a_topic_in_two_partitions_is_refused() -> None:
    qrels = load_qrels(str(QRELS))
    run = load_run(str(BM25))
    part = evaluate_partition(qrels, run, "AP")
    with pytest.raises(InputError, match="in two partitions"):
        combine_partitions(qrels, [part, part], "AP")


def test_a_run_is_not_cut_where_a_cut_could_change_it(tmp_path: Path) -> None:
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(BM25.read_bytes()))
    assert "gzip" in (topic_ranges(gz, 4).reason or "")
    assert "standard input" in (topic_ranges("-", 4).reason or "")
    assert "too small" in (topic_ranges(BM25, 4, min_bytes=1 << 20).reason or "")
    js = tmp_path / "run.jsonl"
    js.write_text('{"qid": "1", "docid": "d", "score": 1.0}\n' * 10)
    assert "not as a TREC run" in (topic_ranges(js, 2, min_bytes=1).reason or "")
    one = tmp_path / "one.run"
    one.write_bytes(b"".join(b"q1 Q0 d%d %d 1.0 t\n" % (i, i) for i in range(5000)))
    assert "no topic boundary" in (topic_ranges(one, 4, min_bytes=1).reason or "")


def test_auto_ranges_follow_the_cpus_the_local_engine_uses() -> None:
    """``--workers`` above the CPU count is lowered for CPU work (`LocalExecutor.map`),
    and the automatic range count follows what the pool really runs."""
    from rankproof.engine import cpu_count

    wanted = partitioned_runs._parts_wanted(1, LocalExecutor(workers=10_000), None)
    assert wanted == cpu_count()
    assert partitioned_runs._parts_wanted(3, LocalExecutor(workers=2), None) == 1
    assert partitioned_runs._parts_wanted(3, LocalExecutor(workers=1), 7) == 7


# -- the command line ----------------------------------------------------------

@pytest.mark.parametrize("policy", ["complete", "intersection"])
def test_measure_in_ranges_on_local_processes(small_ranges: None,
                                              edge_files: tuple[Path, Path],
                                              policy: str) -> None:
    qrels, run = edge_files
    for fmt in ("csv", "trec", "json"):
        base = ["measure", qrels, run, BM25, "-q", "-m", "official", "-f", fmt,
                "--topics", policy]
        local = _invoke(*base)
        split = _invoke(*base, "--partitions", "4", "--workers", "2")
        assert split.exit_code == local.exit_code == 0, split.output
        if fmt == "json":
            assert _doc(split.stdout) == _doc(local.stdout)
        else:
            assert split.stdout == local.stdout
        assert split.stderr == local.stderr  # the same notes, and none about the ranges


def test_measure_in_ranges_with_trec_eval_limits(small_ranges: None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process (one worker), so the ranges can be counted: five tasks ran."""
    ran: list[tuple[int, int]] = []
    real = partitioned_runs.evaluate_run_range

    def spy(task: partitioned_runs.RunRangeTask) -> partitioned_runs.RunRangeResult:
        ran.append((task.start, task.end))
        return real(task)

    monkeypatch.setattr(partitioned_runs, "evaluate_run_range", spy)
    base = ["measure", QRELS, BM25, "-q", "-m", "official", "-f", "csv", "-M", "7", "-J"]
    assert _out(*base, "--partitions", "5") == _out(*base)
    assert len(ran) == 5 and ran[0][0] == 0 and ran[-1][1] == BM25.stat().st_size


def test_a_run_not_grouped_by_topic_is_read_whole(small_ranges: None,
                                                  tmp_path: Path) -> None:
    lines = BM25.read_bytes().splitlines(keepends=True)
    run = tmp_path / "ungrouped.run"
    run.write_bytes(b"".join(lines[1:]) + lines[0])  # its first topic's first line, last
    base = ["measure", QRELS, run, "-q", "-m", "official", "-f", "csv"]
    split = _invoke(*base, "--partitions", "4")
    assert split.exit_code == 0, split.output
    assert split.stdout == _out(*base)
    assert "read again whole" in split.stderr and "not grouped by topic" in split.stderr


def test_a_bad_line_in_a_range_gives_the_local_error(small_ranges: None,
                                                     tmp_path: Path) -> None:
    lines = BM25.read_bytes().splitlines(keepends=True)
    lines[3000] = b"oops\n"
    run = tmp_path / "bad.run"
    run.write_bytes(b"".join(lines))
    base = ["measure", QRELS, run, "-m", "AP"]
    local = _invoke(*base)
    split = _invoke(*base, "--partitions", "4", "--workers", "2")
    assert local.exit_code == split.exit_code == 2
    assert "line 3001" in local.stderr
    assert split.stderr.endswith(local.stderr)


def test_runs_that_cannot_be_cut_say_so_only_when_asked(small_ranges: None,
                                                        tmp_path: Path) -> None:
    gz = tmp_path / "bm25.gz"
    gz.write_bytes(gzip.compress(BM25.read_bytes()))
    base = ["measure", QRELS, gz, "-m", "AP", "-f", "csv"]
    asked = _invoke(*base, "--partitions", "3")
    assert asked.exit_code == 0 and asked.stdout == _out(*base)
    assert "read whole, not in 3 ranges: it is gzip-compressed" in asked.stderr
    auto = _invoke(*base, "--workers", "2")
    assert auto.exit_code == 0 and "note" not in auto.stderr


@pytest.mark.xdist_group("ray")
def test_measure_and_compare_in_ranges_on_ray(ray_cluster: Any, small_ranges: None,
                                              edge_files: tuple[Path, Path],
                                              tmp_path: Path) -> None:
    """On the session's Ray cluster (in this process: Ray is initialised), each range a
    task: per-query CSV and the comparison's JSON (evidence included) are local's."""
    qrels, run = edge_files
    base = ["measure", qrels, run, SPLADE, "-q", "-m", "official", "-f", "csv"]
    assert _out(*base, "--engine", "ray", "--partitions", "3") == _out(*base)
    other = tmp_path / "splade.run"
    shutil.copy(SPLADE, other)
    cmp = ["compare", QRELS, BM25, other, "-f", "json", "--resamples", "300", "--seed", "5",
           "-m", "nDCG@10", "-m", "AP"]
    local = _doc(_out(*cmp))
    on_ray = _doc(_out(*cmp, "--engine", "ray", "--partitions", "4"))
    assert on_ray == local and local["evidence"]["top"]
