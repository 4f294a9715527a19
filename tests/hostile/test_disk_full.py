"""Class 11: a full disk (or any OSError on write) is exit 2 with one line naming the path
the user gave — never a temporary name, never a traceback — and nothing partial is left.

The disk is "full" through ``RLIMIT_FSIZE`` set in the child before it starts, with
SIGXFSZ ignored, so that a write past the limit fails with EFBIG exactly where a full
disk fails with ENOSPC. (A small tmpfs would be closer still, but mounting one needs
privileges a test run should not assume; the limit exercises the same code paths.)"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
from pathlib import Path

import pytest
from tests.hostile._writes import BM25, command, env, leftovers, report, tree

LIMIT = 64 * 1024


def _limited(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def full_disk(*args: object, cwd: Path, limit: int = LIMIT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*map(str, args)), cwd=cwd, env=env(), capture_output=True,
                          text=True, check=False, timeout=300,
                          preexec_fn=lambda: _limited(limit))


@pytest.fixture
def big_run(tmp_path: Path) -> Path:
    """A run whose fused or per-query output is several times `LIMIT`."""
    path = tmp_path / "inputs" / "big.run"
    path.parent.mkdir()
    with path.open("w") as fh:
        for q in range(50):
            for d in range(400):
                fh.write(f"q{q} Q0 doc{d} {d + 1} {1000 - d}.5 big\n")
    return path


def _one_line_naming(err: str, given: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert given in lines[0] and ".tmp" not in lines[0] and "Traceback" not in err
    assert "file too large" in lines[0] or "no space" in lines[0]


@pytest.mark.parametrize("existing", [False, True])
def test_fuse_on_a_full_disk(existing: bool, big_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "work" / "fused.run"
    out.parent.mkdir()
    if existing:
        out.write_text("q1 Q0 d1 1 1.0 old\n")
    before = tree(out.parent)
    proc = full_disk("fuse", big_run, BM25, "-o", out, cwd=out.parent)
    assert proc.returncode == 2, proc.stderr
    _one_line_naming(proc.stderr, str(out))
    assert tree(out.parent) == before and leftovers(out.parent) == []


def test_measure_on_a_full_disk(big_run: Path, tmp_path: Path) -> None:
    qrels = tmp_path / "inputs" / "big.qrels"
    qrels.write_text("".join(f"q{q} 0 doc{q} 1\n" for q in range(50)))
    work = tmp_path / "work"
    work.mkdir()
    proc = full_disk("measure", qrels, big_run, "-q", "-f", "jsonl", "-m", "P@5", "-m", "AP",
                     "-m", "RR", "-m", "nDCG@10", "-o", "per-query.jsonl", cwd=work,
                     limit=1024)
    assert proc.returncode == 2, proc.stderr
    _one_line_naming(proc.stderr, "per-query.jsonl")
    assert tree(work) == {} and leftovers(work) == []


def test_gate_on_a_full_disk_writes_none_of_its_outputs(tmp_path: Path) -> None:
    rep = tmp_path / "report.json"
    rep.write_bytes(report().read_bytes())
    chk = tmp_path / "checks.yaml"
    chk.write_text("checks:\n  - id: floor\n    metric: nDCG@10\n    op: '>='\n"
                   "    threshold: 0.0\n")
    args = ["gate", chk, "--report", rep, "--junit", "j.xml", "--markdown", "m.md",
            "--json", "v.json"]
    sizes = tmp_path / "size"  # as long as "work": the provenance block records the folder
    sizes.mkdir()
    assert full_disk(*args, cwd=sizes, limit=1 << 30).returncode == 0
    largest = max(p.stat().st_size for p in sizes.iterdir())  # the others fit, this one not
    work = tmp_path / "work"
    work.mkdir()
    proc = full_disk(*args, cwd=work, limit=largest - 1)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and ".tmp" not in proc.stderr
    assert tree(work) == {} and leftovers(work) == []


def test_baseline_save_on_a_full_disk(tmp_path: Path) -> None:
    proc = full_disk("baseline", "save", report(), "--name", "main", "--baseline-dir", "b",
                     cwd=tmp_path, limit=1024)
    assert proc.returncode == 2, proc.stderr
    _one_line_naming(proc.stderr, "main.json")
    assert not (tmp_path / "b" / "main.json").exists() and leftovers(tmp_path) == []


def test_adapt_beir_on_a_full_disk(tmp_path: Path) -> None:
    src = tmp_path / "beir"
    (src / "qrels").mkdir(parents=True)
    (src / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": "word " * 40_000}) + "\n")
    (src / "queries.jsonl").write_text('{"_id": "q1", "text": "word"}\n')
    (src / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    proc = full_disk("adapt", "beir", src, "out", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    _one_line_naming(proc.stderr, "out")
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []
