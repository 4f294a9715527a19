"""``rankproof measure --memory-cap``: a run over the cap is streamed in partitions of whole
topics, with the output the in-memory evaluation prints, byte for byte, and bounded memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.cli._capped import MEMORY_CAP_ENV, parse_size
from rankproof.jobs._capped import MEMORY_MARGIN

runner = CliRunner()


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["measure", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def rep_llama(shared_data: Path) -> tuple[Path, Path]:
    """A real 1.4 MB TREC DL 2019 run (43 topics): over a 1 MiB cap, so it streams."""
    return (shared_data / "trec_dl" / "qrels.dl19-passage.txt",
            shared_data / "rankllm_runs" / "REP_LLAMA" / "trec_results_dl19.txt")


@pytest.mark.parametrize("fmt", ["trec", "json"])
def test_streamed_output_is_identical(rep_llama: tuple[Path, Path], fmt: str) -> None:
    qrels, run = rep_llama
    args = (str(qrels), str(run), "-m", "all_trec", "-q", "-l", "2", "--format", fmt)
    code, whole, whole_err = invoke(*args)
    assert code == 0 and "streamed" not in whole_err
    code, parts, err = invoke(*args, "--memory-cap", "1MiB")
    assert code == 0
    assert "streamed under --memory-cap 1 MiB" in err and "partition(s)" in err
    if fmt == "json":  # only the provenance block (the time it was made) may differ
        import json

        a, b = json.loads(whole), json.loads(parts)
        a.pop("provenance"), b.pop("provenance")
        assert a == b
    else:
        assert parts == whole


def test_streamed_in_worker_processes_is_identical(rep_llama: tuple[Path, Path]) -> None:
    """Each run file is one task of the engine; a streamed run is streamed in its worker,
    and the note comes back with the numbers."""
    qrels, run = rep_llama
    args = (str(qrels), str(run), str(run), "--name", "a", "--name", "b", "-m", "AP",
            "-m", "nDCG@10", "-q", "--format", "trec")
    _, whole, _ = invoke(*args)
    # Two workers share the cap: 1 MiB would leave each a partition smaller than one topic
    # (refused before reading, naming the cap it needs); 2 MiB holds.
    code, _, err = invoke(*args, "--memory-cap", "1MiB", "--workers", "2")
    assert code == 2 and "give --memory-cap 2 MiB or more" in " ".join(err.split())
    code, parts, err = invoke(*args, "--memory-cap", "2MiB", "--workers", "2")
    assert code == 0 and parts == whole
    assert "note (a): streamed" in err and "note (b): streamed" in err


def test_trec_rag_run_with_comments_streams_identically(trec_eval_tests: Path) -> None:
    args = (str(trec_eval_tests / "qrels.comment.test"),
            str(trec_eval_tests / "results.comment.test"), "-m", "all_trec", "-q", "-c",
            "-M", "100", "--format", "trec")
    code, whole, _ = invoke(*args)
    assert code == 0
    code, parts, err = invoke(*args, "--memory-cap", "1MiB")
    assert code == 0 and "streamed" in err
    assert parts == whole


def test_the_cap_comes_from_the_environment(rep_llama: tuple[Path, Path]) -> None:
    qrels, run = rep_llama
    code, out, err = invoke(str(qrels), str(run), env={MEMORY_CAP_ENV: "1M"})
    assert code == 0 and "streamed under --memory-cap 1 MiB" in err
    code, out2, err2 = invoke(str(qrels), str(run), env={MEMORY_CAP_ENV: "1G"})
    assert code == 0 and "streamed" not in err2 and out2 == out  # under the cap: in memory


@pytest.mark.parametrize("text", ["lots", "12XB", "0.5MiB", "-1G"])
def test_a_bad_cap_is_exit_2(rep_llama: tuple[Path, Path], text: str) -> None:
    qrels, run = rep_llama
    code, _, err = invoke(str(qrels), str(run), "--memory-cap", text)
    assert code == 2 and "--memory-cap" in err


def test_sizes() -> None:
    assert parse_size("512MiB") == 512 << 20
    assert parse_size("2GiB") == parse_size("2G") == 2 << 30
    assert parse_size("500MB") == 500 * 10**6
    assert parse_size("1048576") == 1 << 20


def test_unsorted_run_is_exit_2_naming_line_and_topic(rep_llama: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    qrels, run = rep_llama
    lines = run.read_bytes().splitlines(keepends=True)
    mixed = tmp_path / "mixed.trec"
    mixed.write_bytes(b"".join(lines[:40_000] + lines[:10] + lines[40_000:]))
    code, _, err = invoke(str(qrels), str(mixed), "--memory-cap", "1MiB")
    topic = lines[0].split()[0].decode()
    assert code == 2
    assert f"line 40001, field 'qid': topic '{topic}' appears again" in " ".join(err.split())
    assert "sort -s -k1,1" in err


def test_a_topic_larger_than_a_partition_is_exit_2(tmp_path: Path) -> None:
    run = tmp_path / "one-topic.trec"
    run.write_text("".join(f"q1 Q0 doc-{i:07d} {i + 1} {-i} t\n" for i in range(60_000)))
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 doc-0000001 1\n")
    code, _, err = invoke(str(qrels), str(run), "--memory-cap", "1MiB")
    said = " ".join(err.split())
    assert code == 2 and "cannot hold one topic of this run" in said
    assert "a topic takes about 2 MiB of run text" in said and "give --memory-cap" in said
    code, _, _ = invoke(str(qrels), str(run), "--memory-cap", "64MiB")  # read whole
    assert code == 0


def test_cross_check_needs_the_run_in_memory(rep_llama: tuple[Path, Path]) -> None:
    qrels, run = rep_llama
    code, _, err = invoke(str(qrels), str(run), "--memory-cap", "1MiB", "--cross-check", "auto")
    assert code == 2 and "--cross-check needs every run in memory" in err


# -- bounded memory ----------------------------------------------------------------

TOPICS, DEPTH = 2000, 1000


def _write_big_run(path: Path, qrels: Path) -> None:
    """2,000 topics × 1,000 documents with 40-character docids (about 140 MB), grouped by
    topic, scores with ties; qrels with graded labels for 1,900 of the topics, 50 judged
    topics the run lacks, and 100 run topics nobody judged."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(7)
    n = TOPICS * DEPTH
    topic = np.repeat(np.arange(TOPICS), DEPTH)
    rank = np.tile(np.arange(1, DEPTH + 1), TOPICS)
    doc = rng.integers(0, 10**12, size=n)
    docids = pc.binary_join_element_wise(
        "msmarco_v2.1_doc_", pc.cast(pa.array(topic % 59), pa.string()), "_",
        pc.utf8_lpad(pc.cast(pa.array(doc), pa.string()), 12, "0"), "#",
        pc.cast(pa.array(rank), pa.string()), "")
    qids = pc.binary_join_element_wise("topic-", pc.cast(pa.array(topic), pa.string()), "")
    score = np.round(50.0 - np.cumsum(rng.random(n) * 0.02).reshape(TOPICS, DEPTH)
                     % 50.0, 2).ravel()  # two decimals: ties to break
    lines = pc.binary_join_element_wise(
        qids, "Q0", docids, pc.cast(pa.array(rank), pa.string()),
        pc.cast(pa.array(score), pa.string()), "big\n", " ")
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=n + 1)
    path.write_bytes(memoryview(lines.buffers()[2])[:int(offsets[n])])
    judged = rng.choice(n, size=20_000, replace=False)
    judged = judged[topic[judged] < TOPICS - 100]
    rel = rng.integers(0, 4, size=len(judged))
    rows = [f"topic-{topic[i]} 0 {docids[int(i)].as_py()} {r}\n"
            for i, r in zip(judged.tolist(), rel.tolist(), strict=True)]
    rows += [f"absent-{t} 0 d{t} 1\n" for t in range(50)]
    qrels.write_text("".join(rows))


_LAUNCH = """
import os, subprocess, sys
with open(sys.argv[1], "wb") as out, open(sys.argv[1] + ".err", "wb") as err:
    proc = subprocess.Popen(sys.argv[2:], stdout=out, stderr=err)
    _, status, usage = os.wait4(proc.pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def _peak_rss(argv: list[str], stdout: Path) -> int:
    """Peak resident bytes of one child process (its own rusage, through wait4).

    A small launcher process starts it: a child forked from this (large) test process
    would count the parent's pages in its peak until it executes the command."""
    launched = subprocess.run([sys.executable, "-c", _LAUNCH, str(stdout), *argv],
                              capture_output=True, text=True, check=True)
    maxrss, status = map(int, launched.stdout.split())
    err = (stdout.parent / (stdout.name + ".err")).read_text()
    assert status == 0, err
    return maxrss * 1024


@pytest.mark.slow
def test_a_run_over_the_cap_streams_in_bounded_memory(tmp_path: Path) -> None:
    """A 120 MiB run under ``--memory-cap 64MiB``: the peak resident size above the
    post-import size of a process that imported the command stays under the cap plus
    `MEMORY_MARGIN` (64 MiB: the code and tables Arrow and numpy page in at first use,
    roughly 40 to 70 MiB here, which any evaluation pays, in memory or streamed), and
    the output is the in-memory output. Measured here: 91 MiB above the baseline
    streamed, 438 MiB in memory (the in-memory evaluation holds the whole run)."""
    run, qrels = tmp_path / "big.trec", tmp_path / "qrels.txt"
    _write_big_run(run, qrels)
    size = run.stat().st_size
    cap = parse_size("64MiB")
    assert size > 1.5 * cap  # about 120 MiB
    python = sys.executable
    baseline = _peak_rss([python, "-c", "import rankproof.cli, rankproof.cli.measure, "
                                        "rankproof.jobs._run_files, rankproof.jobs._capped"],
                         tmp_path / "base.out")
    command = [python, "-m", "rankproof", "measure", str(qrels), str(run), "-m", "all_trec",
               "--format", "trec"]
    streamed = _peak_rss([*command, "--memory-cap", "64MiB"], tmp_path / "streamed.out")
    whole = _peak_rss(command, tmp_path / "whole.out")
    err = (tmp_path / "streamed.out.err").read_text()
    assert "streamed under --memory-cap 64 MiB" in err
    assert (tmp_path / "streamed.out").read_bytes() == (tmp_path / "whole.out").read_bytes()
    above = streamed - baseline
    print(f"run {size / 2**20:.0f} MiB; peak above baseline: streamed "
          f"{above / 2**20:.0f} MiB, in memory {(whole - baseline) / 2**20:.0f} MiB")
    assert above <= cap + MEMORY_MARGIN
    assert whole - baseline > above + size // 2  # the bound is not the in-memory figure
