"""Runs read in partitions of whole topics (`stream_run`) and evaluated partition by
partition (`evaluate_partitions`) give exactly what `evaluate` gives on the whole run:
per-query values bit for bit, means, measure and query order, notes, warnings and the
topic policy's lists. Errors name the file, the line (counted in the whole file) and
the topic, as `load_run` does."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rankproof._errors import InputError
from rankproof.data import (
    Run,
    RunPartitions,
    load_qrels,
    load_run,
    read_parquet_run,
    stream_run,
    write_parquet_run,
)
from rankproof.measures import PerQuery, evaluate, evaluate_partitions

BIG = 1 << 30  # max_topic_bytes: tiny partitions hold one whole topic each


def one_each(path: Path) -> RunPartitions:
    """The run at ``path`` in partitions of one topic each."""
    return stream_run(path, partition_bytes=1, max_topic_bytes=BIG)


def assert_same(a: PerQuery, b: PerQuery) -> None:
    assert a.qids == b.qids
    assert a.measures == b.measures
    assert np.array_equal(a.values, b.values)  # bit for bit, not approximately
    assert a.to_dict() == b.to_dict()  # means, notes, warnings, zero-filled, dropped


def streamed(qrels_path: Path, run_path: Path, size: int, measures: str | list[str] = "all_trec",
             **kw: object) -> tuple[PerQuery, PerQuery, int]:
    extra = kw.pop("extra_columns", "error")
    dedupe = kw.pop("dedupe", None)
    qrels = load_qrels(qrels_path)
    whole = evaluate(qrels, load_run(run_path, extra_columns=extra, dedupe=dedupe),  # type: ignore[arg-type]
                     measures, **kw)  # type: ignore[arg-type]
    parts = stream_run(run_path, partition_bytes=size, extra_columns=extra,  # type: ignore[arg-type]
                       dedupe=dedupe, max_topic_bytes=BIG)  # type: ignore[arg-type]
    return whole, evaluate_partitions(qrels, parts, measures, **kw), parts.stats.partitions  # type: ignore[arg-type]


@pytest.mark.parametrize("topics", ["complete", "intersection"])
@pytest.mark.parametrize("size", [1, 2_000, 10**9])
def test_trec_eval_suite_all_trec_identical(trec_eval_tests: Path, topics: str,
                                            size: int) -> None:
    whole, parts, n = streamed(trec_eval_tests / "qrels.test", trec_eval_tests / "results.test",
                               size, topics=topics)
    assert n == (1 if size == 10**9 else 3)  # 1 byte: one topic per partition
    assert any("tied scores" in note for note in whole.notes)  # summed over partitions
    assert_same(whole, parts)


def test_rel_level_identical(trec_eval_tests: Path) -> None:
    whole, parts, _ = streamed(trec_eval_tests / "qrels.rel_level",
                               trec_eval_tests / "results.test", 1, rel_level=2)
    assert_same(whole, parts)


@pytest.mark.parametrize("size", [1, 12_000])
def test_trec_dl_run_identical(shared_data: Path, size: int) -> None:
    """43 topics of a real TREC DL 2019 BM25 run, one or 2-3 topics per partition."""
    whole, parts, n = streamed(shared_data / "trec_dl" / "qrels.dl19-passage.txt",
                               shared_data / "rankllm_runs" / "BM25" / "trec_results_dl19.txt",
                               size, rel_level=2)
    assert n == 43 if size == 1 else 10 <= n <= 25
    assert_same(whole, parts)


def _dl19_lines(shared_data: Path) -> list[bytes]:
    path = shared_data / "rankllm_runs" / "BM25" / "trec_results_dl19.txt"
    return path.read_bytes().splitlines(keepends=True)


def test_missing_and_unjudged_topics_follow_the_policy(shared_data: Path,
                                                       tmp_path: Path) -> None:
    """Qrels topics the run lacks are zero-filled (computed with nothing retrieved: NumRel
    is still counted), run topics the qrels lack are dropped, in first-seen order."""
    lines = _dl19_lines(shared_data)
    topics = list(dict.fromkeys(line.split()[0] for line in lines))
    kept = [line for line in lines if line.split()[0] not in topics[5:12]]
    extra = [line.replace(line.split()[0], b"zz" + line.split()[0], 1)
             for line in lines if line.split()[0] in topics[:2]]
    run = tmp_path / "run.trec"
    run.write_bytes(b"".join(kept[:300] + extra + kept[300:]))
    qrels = shared_data / "trec_dl" / "qrels.dl19-passage.txt"
    for policy in ("complete", "intersection"):
        whole, parts, _ = streamed(qrels, run, 9_000, topics=policy)
        assert_same(whole, parts)
    assert len(whole.dropped) == 2 and whole.dropped[0].startswith("zz")
    whole, parts, _ = streamed(qrels, run, 1)
    assert len(whole.zero_filled) == 7 and whole.column("NumRel").min() > 0
    assert_same(whole, parts)


def test_a_run_sharing_no_topic_is_refused_alike(shared_data: Path, tmp_path: Path) -> None:
    run = tmp_path / "other.trec"
    run.write_bytes(b"".join(b"x" + line for line in _dl19_lines(shared_data)[:250]))
    qrels = load_qrels(shared_data / "trec_dl" / "qrels.dl19-passage.txt")
    with pytest.raises(InputError) as whole:
        evaluate(qrels, load_run(run))
    with pytest.raises(InputError) as parts:
        evaluate_partitions(qrels, one_each(run))
    assert str(parts.value) == str(whole.value)
    allowed = evaluate(qrels, load_run(run), topics="complete-allow-disjoint")
    assert_same(allowed, evaluate_partitions(qrels, one_each(run),
                                             topics="complete-allow-disjoint"))


def test_unsorted_run_is_refused_with_file_line_and_topic(trec_eval_tests: Path) -> None:
    """trec_eval's results.trunc interleaves topics 301 and 303: line 3 is 301 again."""
    run = trec_eval_tests / "results.trunc"
    with pytest.raises(InputError) as err:
        list(stream_run(run, partition_bytes=1 << 20, extra_columns="ignore"))
    assert err.value.path == str(run) and err.value.line == 3 and err.value.field == "qid"
    assert "topic '301' appears again" in str(err.value)
    assert "sort -s -k1,1" in str(err.value)


def test_topic_met_again_in_a_later_partition_names_its_line(tmp_path: Path) -> None:
    run = tmp_path / "r.trec"
    rows = [f"{q} Q0 d{i} {i} {10 - i} t\n" for q in ("a", "b") for i in range(3)]
    run.write_text("".join(rows) + "a Q0 d9 1 1.0 t\n")
    with pytest.raises(InputError) as err:
        list(one_each(run))
    assert (err.value.line, err.value.field) == (7, "qid")


def test_sorted_run_with_cut_and_extra_columns_is_identical(trec_eval_tests: Path,
                                                            tmp_path: Path) -> None:
    """The refused file, sorted by topic (stably, as `sort -s -k1,1`), streams; -M works
    topic by topic, so it applies per partition."""
    lines = (trec_eval_tests / "results.trunc").read_bytes().splitlines(keepends=True)
    run = tmp_path / "sorted.trec"
    run.write_bytes(b"".join(sorted(lines, key=lambda line: line.split()[0])))
    whole, parts, _ = streamed(trec_eval_tests / "qrels.test", run, 1,
                               extra_columns="ignore")
    assert_same(whole, parts)


def test_gzip_comments_blank_lines_and_crlf_are_read_as_load_run_reads_them(
        trec_eval_tests: Path, tmp_path: Path) -> None:
    lines = (trec_eval_tests / "results.test").read_bytes().splitlines()
    body = [b"# a comment", b"", *lines[:700], b"   # another", b"", *lines[700:]]
    run = tmp_path / "r.trec.gz"
    run.write_bytes(gzip.compress(b"\r\n".join(body) + b"\r\n"))
    whole, parts, n = streamed(trec_eval_tests / "qrels.test", run, 1)
    assert n == 3
    assert_same(whole, parts)


def test_errors_name_the_line_in_the_whole_file(trec_eval_tests: Path, tmp_path: Path) -> None:
    lines = (trec_eval_tests / "results.test").read_bytes().splitlines(keepends=True)
    for bad, index in ((b"303\tQ0\tX\t1\tnot-a-number\tSTANDARD\n", len(lines) - 3),
                       (lines[-2], len(lines) - 1)):  # a bad score; a duplicate (qid, docid)
        run = tmp_path / "bad.trec"
        run.write_bytes(b"".join([*lines[:index], bad, *lines[index:]]))
        with pytest.raises(InputError) as whole:
            load_run(run)
        with pytest.raises(InputError) as parts:
            list(one_each(run))
        assert whole.value.line == index + 1
        assert str(parts.value) == str(whole.value)


def test_dedupe_and_rank_order_are_identical(trec_eval_tests: Path, tmp_path: Path) -> None:
    lines = (trec_eval_tests / "results.test").read_bytes().splitlines(keepends=True)
    run = tmp_path / "dup.trec"
    run.write_bytes(b"".join(lines[:10] + lines[5:10] + lines[10:]))
    for dedupe in ("first", "max"):
        whole, parts, _ = streamed(trec_eval_tests / "qrels.test", run, 1, ["AP", "P.10", "ndcg"],
                                   dedupe=dedupe)
        assert any("deduplicated" in note for note in whole.notes)
        assert_same(whole, parts)


def test_rank_like_scores_warning_is_the_whole_runs(tmp_path: Path) -> None:
    """Integer scores rising down the list in most topics: the same warning, tallied
    over partitions (one topic falling, three rising: 3 of 4)."""
    rows = [f"q{t} Q0 d{i} {i + 1} {(-i if t == 0 else i)} t\n" for t in range(4)
            for i in range(5)]
    run = tmp_path / "ranks.trec"
    run.write_text("".join(rows))
    qrels = {f"q{t}": {"d0": 1, "d3": 1} for t in range(4)}
    whole = evaluate(qrels, load_run(run))
    assert len(whole.warnings) == 1
    assert_same(whole, evaluate_partitions(qrels, one_each(run)))
    by_rank = evaluate(qrels, load_run(run), order="rank")
    assert_same(by_rank, evaluate_partitions(qrels, one_each(run),
                                             order="rank"))


def test_a_topic_larger_than_a_partition_is_refused(trec_eval_tests: Path) -> None:
    with pytest.raises(InputError, match="holds more than") as err:
        list(stream_run(trec_eval_tests / "results.test", partition_bytes=1 << 10))
    assert err.value.field == "qid"


def test_partitions_must_not_share_a_topic() -> None:
    parts = [Run.from_dict({"q1": {"d1": 1.0}}), Run.from_dict({"q1": {"d2": 1.0}})]
    with pytest.raises(InputError, match="in two partitions"):
        evaluate_partitions({"q1": {"d1": 1}}, parts)


def test_parquet_file_and_topic_partitioned_dataset_are_identical(
        shared_data: Path, tmp_path: Path) -> None:
    run_path = shared_data / "rankllm_runs" / "BM25" / "trec_results_dl19.txt"
    qrels = load_qrels(shared_data / "trec_dl" / "qrels.dl19-passage.txt")
    run = load_run(run_path)
    single = tmp_path / "run.parquet"
    write_parquet_run(run, single)
    whole = evaluate(qrels, read_parquet_run(single), "all_trec", rel_level=2)
    parts = stream_run(single, partition_bytes=30_000)
    assert_same(whole, evaluate_partitions(qrels, parts, "all_trec", rel_level=2))
    assert parts.stats.partitions >= 5 and parts.name == "run"
    folder = tmp_path / "dataset"
    table = run.to_arrow()
    pq.write_to_dataset(table, folder, partition_cols=["qid"])
    parts = stream_run(folder, partition_bytes=30_000)
    got = evaluate_partitions(qrels, parts, "all_trec", rel_level=2)
    # a dataset lists its topic folders in byte order, not the file's order
    assert got.qids == whole.qids and np.array_equal(got.values, whole.values)
    assert pa.types.is_string(pa.array(got.qids).type)


def test_standard_input_streams_once(trec_eval_tests: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    data = (trec_eval_tests / "results.test").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    parts = stream_run("-", partition_bytes=1, max_topic_bytes=BIG)
    qrels = load_qrels(trec_eval_tests / "qrels.test")
    got = evaluate_partitions(qrels, parts, "all_trec")
    whole = evaluate(qrels, load_run(trec_eval_tests / "results.test"), "all_trec")
    assert got.qids == whole.qids and np.array_equal(got.values, whole.values)
    with pytest.raises(InputError, match="only once"):
        list(parts)
