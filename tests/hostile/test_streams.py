"""Class 8: FIFOs, process substitution and ``-`` are read once — no hang, no false "empty".

A pipe can be read only once and has no size: a reader that sniffs its first
line and reopens it, or asks ``os.stat`` whether it is empty, either waits
forever for a writer that has gone or reports "the file is empty". Every
case runs under a timeout, so a regression fails instead of hanging CI; the
command-line cases run in their own process, which the timeout kills.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rankproof import InputError
from rankproof.data import Input, load_qrels, load_run

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
QRELS = TOY / "qrels.txt"
RUN = TOY / "bm25.run"
TIMEOUT = 60

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


def rankproof(*args: str | Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "rankproof", *map(str, args)],
                          capture_output=True, input=stdin, timeout=TIMEOUT)
    return subprocess.CompletedProcess(proc.args, proc.returncode,
                                       proc.stdout.decode(), proc.stderr.decode())


def fifo_fed(path: Path, data: bytes) -> threading.Thread:
    """A FIFO at ``path`` and a writer thread that writes ``data`` to it once, then closes."""
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as fh:  # blocks until the reader opens it
            fh.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def expected_table() -> str:
    proc = rankproof("measure", QRELS, RUN)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_measure_reads_a_run_and_qrels_from_fifos(tmp_path: Path) -> None:
    want = expected_table()
    run_writer = fifo_fed(tmp_path / "bm25.run", RUN.read_bytes())
    qrels_writer = fifo_fed(tmp_path / "qrels.txt", QRELS.read_bytes())
    proc = rankproof("measure", tmp_path / "qrels.txt", tmp_path / "bm25.run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == want
    run_writer.join(TIMEOUT)
    qrels_writer.join(TIMEOUT)


def test_a_gzipped_jsonl_fifo_is_read_once(tmp_path: Path) -> None:
    """Gzip and the format are both sniffed from the content read on the one open."""
    run = load_run(RUN)
    lines = "".join(
        f'{{"qid": "{q}", "docid": "{d}", "score": {s}}}\n'
        for q, docs in run.to_dict().items() for d, s in docs.items())
    writer = fifo_fed(tmp_path / "pipe", gzip.compress(lines.encode()))
    got = load_run(tmp_path / "pipe")
    writer.join(TIMEOUT)
    assert got.to_dict() == run.to_dict()


def test_library_reads_a_fifo_once(tmp_path: Path) -> None:
    writer = fifo_fed(tmp_path / "run.trec", RUN.read_bytes())
    src = Input.open(tmp_path / "run.trec")
    writer.join(TIMEOUT)
    assert not writer.is_alive()
    assert src.path is None and src.label == str(tmp_path / "run.trec")
    assert load_run(src).to_dict() == load_run(RUN).to_dict()
    writer = fifo_fed(tmp_path / "q.txt", QRELS.read_bytes())
    assert load_qrels(tmp_path / "q.txt").to_dict() == load_qrels(QRELS).to_dict()
    writer.join(TIMEOUT)


def test_an_empty_fifo_is_empty_and_says_so(tmp_path: Path) -> None:
    writer = fifo_fed(tmp_path / "run.txt", b"")
    with pytest.raises(InputError, match="the file is empty") as err:
        load_run(tmp_path / "run.txt")
    assert err.value.path == str(tmp_path / "run.txt")
    writer.join(TIMEOUT)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for <(...)")
@pytest.mark.parametrize("producer", ["cat {run}", "gzip -c {run}", "cat {jsonl}"])
def test_process_substitution(tmp_path: Path, producer: str) -> None:
    want = expected_table()
    jsonl = tmp_path / "bm25.jsonl"
    jsonl.write_text("".join(
        f'{{"qid": "{q}", "docid": "{d}", "score": {s}}}\n'
        for q, docs in load_run(RUN).to_dict().items() for d, s in docs.items()))
    cmd = (f'"{sys.executable}" -m rankproof measure <(cat "{QRELS}") '
           f'<({producer.format(run=f"{RUN!s}", jsonl=f"{jsonl!s}")}) --name bm25')
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == want
    assert "empty" not in proc.stderr


def test_standard_input_is_read_once(tmp_path: Path) -> None:
    want = expected_table()
    proc = rankproof("measure", QRELS, "-", "--name", "bm25", stdin=RUN.read_bytes())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == want
    proc = rankproof("measure", QRELS, "-", "--name", "bm25",
                     stdin=gzip.compress(RUN.read_bytes()))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == want


def test_a_fifo_in_a_corpus_folder_is_refused_not_waited_on(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("A document.\n")
    os.mkfifo(docs / "pipe.txt")  # nobody ever writes to it
    os.mkfifo(docs / "other.fifo")  # not a document suffix: skipped as before
    code = ("import sys\nfrom rankproof import InputError\nfrom rankproof.corpus import "
            "read_corpus\ntry:\n    read_corpus(sys.argv[1])\nexcept InputError as exc:\n"
            "    print(exc.path)\n    print(exc)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(docs)], capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    path, message = proc.stdout.splitlines()
    assert path == str(docs / "pipe.txt")
    assert "named pipe (FIFO), not a regular file" in message
    # Behind a symlink too.
    (docs / "pipe.txt").unlink()
    os.symlink(docs / "other.fifo", docs / "link.md")
    proc = subprocess.run([sys.executable, "-c", code, str(docs)], capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.stdout.splitlines()[0] == str(docs / "link.md")
