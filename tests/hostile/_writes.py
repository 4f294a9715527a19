"""Shared pieces of the write-path tests (outputs, all-or-nothing, signals, concurrency,
disk full): the real command in a subprocess, a real eval report made once, and a
finder for temporary files left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
QRELS, BM25, DENSE = TOY / "qrels.txt", TOY / "bm25.run", TOY / "dense.run"
PAUSE_ENV = "RANKPROOF_TEST_PAUSE_BEFORE_RENAME"
CHECKS = ("checks:\n  - id: floor\n    metric: nDCG@10\n    op: '>='\n    threshold: 0.0\n")

_REPORT: list[Path] = []


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "rankproof", *map(str, args)]


def env(**extra: str) -> dict[str, str]:
    out = {**os.environ, "COLUMNS": "120", **extra}
    out.pop("GITHUB_STEP_SUMMARY", None)
    return out


def rankproof(*args: Any, cwd: Path, extra_env: dict[str, str] | None = None,
              **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """The real command, run to its end."""
    return subprocess.run(command(*args), cwd=cwd, env=env(**(extra_env or {})),
                          capture_output=True, text=True, check=False, timeout=300, **kwargs)


def _default_sigint() -> None:
    """In the child, before exec: SIGINT back to its default. A suite started in the
    background of a non-interactive shell (``make test &``, a CI step's subshell) inherits
    SIGINT *ignored*, an exec keeps an ignored signal ignored, and Python then installs no
    KeyboardInterrupt handler: the signal tests would send SIGINT into nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: Any, cwd: Path, extra_env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(command(*args), cwd=cwd, env=env(**(extra_env or {})),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)


def wait_for(path: Path, proc: subprocess.Popen[str] | None = None, timeout: float = 120) -> None:
    """Wait until ``path`` exists (the process reached the pause), failing if it exits first."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc is not None and proc.poll() is not None:
            _, err = proc.communicate()
            raise AssertionError(f"exited {proc.returncode} before the pause: {err}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.01)


def leftovers(*folders: Path) -> list[str]:
    """Temporary files or folders a write left behind (hidden ``.x.*.tmp/.bak/.old``)."""
    found = []
    for folder in folders:
        for p in folder.rglob(".*"):
            if _temporary(p):
                found.append(str(p.relative_to(folder)))
    return sorted(found)


def _temporary(p: Path) -> bool:
    return p.name.startswith(".") and p.name.endswith((".tmp", ".bak", ".old"))


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for a folder): a before/after snapshot.

    Temporary names are left out (`leftovers` asserts on those), so a snapshot taken while
    a write is paused before its rename compares with one taken after."""
    return {str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if not p.is_symlink() and not any(_temporary(q) for q in (p, *p.parents))}


def report() -> Path:
    """A ``rankproof eval --stages bm25`` report of the golden corpus, made once per process."""
    if not _REPORT:
        root = Path(tempfile.mkdtemp(prefix="rankproof-hostile-report-"))
        proc = rankproof("eval", "--stages", "bm25", "--quiet", "--resamples", "200",
                         "-o", root / "report.json", cwd=root)
        assert proc.returncode == 0, proc.stderr
        _REPORT.append(root / "report.json")
    return _REPORT[0]


def checks(folder: Path) -> Path:
    path = folder / "checks.yaml"
    path.write_text(CHECKS)
    return path


def beir_folder(root: Path) -> Path:
    """A tiny valid BEIR folder."""
    src = root / "beir"
    (src / "qrels").mkdir(parents=True)
    (src / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "One", "text": "the first document"}\n'
        '{"_id": "d2", "title": "Two", "text": "the second document"}\n')
    (src / "queries.jsonl").write_text('{"_id": "q1", "text": "first"}\n')
    (src / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return src
