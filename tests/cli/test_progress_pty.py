"""Progress bars of ``measure`` and ``compare``: on a terminal (a real pseudo-terminal as
standard error), never in a pipe, never with ``--quiet``, and never in the result.

Each test spawns ``python -m rankproof`` as a user's shell would, its standard error on the
slave side of a pty (``pty.openpty``) and its standard output on a pipe, reads every byte the
child writes to the terminal, and checks both: the progress text is on the terminal, and the
JSON on standard output is the one a run without any terminal prints.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

TOPICS, DEPTH = 60_000, 10


def _write_run(path: Path, rng: np.random.Generator, tag: str, topics: int = TOPICS) -> None:
    qid = np.repeat(np.arange(topics), DEPTH)
    doc = rng.integers(0, 10**9, size=topics * DEPTH)
    doc = doc + np.tile(np.arange(DEPTH), topics) * 10**9  # distinct within a topic
    rank = np.tile(np.arange(1, DEPTH + 1), topics)
    score = 100.0 - rank + rng.random(topics * DEPTH) * 0.5
    with path.open("w") as fh:
        fh.writelines(f"q{q} Q0 d{d} {r} {s:.4f} {tag}\n"
                      for q, d, r, s in zip(qid, doc, rank, score, strict=True))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A qrels and two runs of 60,000 topics x 10 documents (about 20 MB each)."""
    folder = tmp_path_factory.mktemp("progress")
    rng = np.random.default_rng(7)
    a, b, qrels = folder / "a.trec", folder / "b.trec", folder / "qrels.txt"
    _write_run(a, rng, "a")
    _write_run(b, rng, "b")
    with a.open() as fh, qrels.open("w") as out:
        for i, line in enumerate(fh):  # one relevant document per topic, at a random rank
            if i % DEPTH == (i // DEPTH) % 7:
                q, _, d, *_ = line.split()
                out.write(f"{q} 0 {d} 1\n")
    return qrels, a, b


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM", "COLUMNS")}
    # A delay of 0: every stage is shown however fast this machine runs it (the default
    # second is for people; the test must not depend on the machine's speed).
    env.update(TERM="xterm-256color", COLUMNS="120", RANKPROOF_PROGRESS_DELAY="0")
    return env


def _in_pty(args: list[str], cwd: Path | None = None) -> tuple[int, bytes, bytes]:
    """Run the CLI with standard error on a pty: (exit status, stdout, the terminal's bytes).

    Standard output goes to a file, not a pipe: a pipe left unread while the terminal is
    read would block a child that prints more than the pipe holds."""
    master, slave = pty.openpty()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-m", "rankproof", *args],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=slave, env=_env(),
                                cwd=cwd)
        os.close(slave)
        seen = bytearray()
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its side of the terminal
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        code = proc.wait()
        out.seek(0)
        return code, out.read(), bytes(seen)


def _in_pipe(args: list[str], cwd: Path | None = None) -> tuple[int, bytes, bytes]:
    done = subprocess.run([sys.executable, "-m", "rankproof", *args], capture_output=True,
                          env=_env(), check=False, stdin=subprocess.DEVNULL, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def _rows(stdout: bytes) -> object:
    doc = json.loads(stdout)
    doc.pop("provenance", None)
    return doc


def test_compare_shows_progress_on_a_terminal_only(inputs: tuple[Path, Path, Path]) -> None:
    qrels, a, b = inputs
    args = ["compare", str(qrels), str(a), str(b), "-m", "nDCG@10", "-m", "RR@10",
            "--format", "json", "--evidence-depth", "0"]
    code, out, terminal = _in_pty(args)
    assert code == 0, terminal.decode("utf-8", "replace")
    assert b"reading and evaluating 2 runs" in terminal
    assert b"resampling (randomization)" in terminal
    assert b"MB" in terminal  # the bytes read of the files' size
    assert b"\x1b[" in terminal  # drawn and erased with terminal control sequences

    code, piped_out, piped_err = _in_pipe(args)
    assert code == 0
    assert b"reading" not in piped_err and b"resampling" not in piped_err
    assert b"\x1b" not in piped_err
    # The result is intact: the same rows, terminal or not.
    assert _rows(out) == _rows(piped_out)
    assert b"\x1b" not in out


def test_quiet_turns_it_off_on_a_terminal(inputs: tuple[Path, Path, Path]) -> None:
    qrels, a, _ = inputs
    for flag in ("--quiet", "--no-progress"):
        code, out, terminal = _in_pty(["measure", str(qrels), str(a), "-m", "nDCG@10",
                                       "--format", "csv", flag])
        assert code == 0
        assert b"reading" not in terminal and b"\x1b[" not in terminal
        assert out.decode().splitlines()[0].startswith("run")


def test_measure_shows_progress_and_prints_the_same_means(
        inputs: tuple[Path, Path, Path]) -> None:
    qrels, a, _ = inputs
    args = ["measure", str(qrels), str(a), "-m", "nDCG@10", "-m", "RR@10", "--format", "csv"]
    code, out, terminal = _in_pty(args)
    assert code == 0
    assert b"1 run(s)" in terminal
    code, piped, err = _in_pipe(args)
    assert code == 0 and out == piped and b"\x1b" not in err


def test_compare_counts_its_resamples_on_a_terminal(tmp_path: Path) -> None:
    """The resampling stage shows "done/planned resamples" with an ETA: the statistics
    report through their callback (`rankproof.stats.ProgressCallback`), not Rich."""
    import re

    rng = np.random.default_rng(3)
    topics = 3_000  # under the normal limit's floor: every row is resampled
    qrels = tmp_path / "qrels.txt"
    runs = [tmp_path / f"{t}.trec" for t in "abc"]
    for run, tag in zip(runs, "abc", strict=True):
        _write_run(run, rng, tag, topics)
    with runs[0].open() as fh, qrels.open("w") as out:
        for i, line in enumerate(fh):
            if i % DEPTH == (i // DEPTH) % 7:
                q, _, d, *_ = line.split()
                out.write(f"{q} 0 {d} 1\n")
    args = ["compare", str(qrels), *map(str, runs), "-m", "nDCG@10", "-m", "RR@10",
            "--resamples", "100000", "--format", "json", "--evidence-depth", "0"]
    code, out, terminal = _in_pty(args)
    assert code == 0, terminal.decode("utf-8", "replace")
    # 2 candidates x 2 measures = 4 rows, each 100,000 sign flips and 100,000 bootstraps.
    counts = re.findall(rb"([0-9,]+)/800,000 resamples", terminal)
    assert counts, terminal.decode("utf-8", "replace")
    done = [int(c.replace(b",", b"")) for c in counts]
    assert all(0 <= d <= 800_000 for d in done)
    assert b"ETA" in terminal
    code, piped_out, piped_err = _in_pipe(args)
    assert code == 0
    assert b"resamples" not in piped_err and b"\x1b" not in piped_err
    assert _rows(out) == _rows(piped_out)
