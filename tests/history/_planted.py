"""Twenty planted results, made by the real CLI at twenty real commits.

A temporary git repository gets one commit per result; in it, ``rankproof measure -f json
-o … --history URL`` evaluates that commit's run, so each stored result carries the
commit, branch and clean state the manifest records. The runs are built so that:

* results 1–11 rank every query the same way (every step: no detectable difference);
* from result 12 on, every query but ``q-7`` ranks its relevant documents five places
  lower — a drop in nDCG@10 the paired test must call significant;
* from result 15 on, ``q-7`` retrieves no relevant document in its top 10 (lost), while
  its step (one query of fifty) is not significant;
* result 5 swaps two documents of ``q-3`` (a small, not significant change).
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

QUERIES = [f"q-{i}" for i in range(50)]
DROP_AT, LOST_AT, LOST_QID, N_RESULTS = 12, 15, "q-7", 20
RUN_NAME = "sys"


@dataclass(frozen=True)
class Planted:
    commits: tuple[str, ...]
    files: tuple[Path, ...]
    repo: Path


def _ranking(qid: str, result: int) -> list[str]:
    rng = random.Random(qid)
    docs = [f"d{i}" for i in range(20)]
    rng.shuffle(docs)
    if qid == LOST_QID:  # q-7 starts well: d0 first
        docs.remove("d0")
        docs.insert(0, "d0")
    relevant = {f"d{i}" for i in range(5)}
    if result >= DROP_AT and qid != LOST_QID:
        for doc in [d for d in docs if d in relevant][::-1]:
            at = docs.index(doc)
            docs.insert(min(at + 5, len(docs) - 1), docs.pop(at))
    if qid == LOST_QID and result >= LOST_AT:
        docs = [d for d in docs if d not in relevant] + [d for d in docs if d in relevant]
    if qid == "q-3" and result == 5:
        docs[0], docs[1] = docs[1], docs[0]
    return docs


def write_inputs(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d{i} {1 if i < 5 else 0}\n" for q in QUERIES
                             for i in range(20)))
    return qrels


def write_run(folder: Path, result: int, name: str = RUN_NAME) -> Path:
    run = folder / f"run{result}.txt"
    run.write_text("".join(f"{q} Q0 {d} {r + 1} {20 - r} {name}\n" for q in QUERIES
                           for r, d in enumerate(_ranking(q, result))))
    return run


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org",
                           "-c", "commit.gpgsign=false", *args], cwd=repo, check=True,
                          capture_output=True, text=True, timeout=60).stdout.strip()


def make_planted(tmp: Path, url: str, monkeypatch: pytest.MonkeyPatch) -> Planted:
    """Record the twenty results in the store at ``url`` through ``measure --history``."""
    from typer.testing import CliRunner

    from rankproof.cli import app

    for var in ("RANKPROOF_BRANCH", "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_BRANCH",
                "CI_COMMIT_REF_NAME", "RANKPROOF_HISTORY"):
        monkeypatch.delenv(var, raising=False)
    data, repo = tmp / "data", tmp / "repo"
    qrels = write_inputs(data)
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    monkeypatch.chdir(repo)
    runner = CliRunner()
    commits, files = [], []
    for i in range(1, N_RESULTS + 1):
        (repo / "version.txt").write_text(f"{i}\n")
        _git(repo, "add", "version.txt")
        _git(repo, "commit", "-q", "-m", f"change {i}")
        commits.append(_git(repo, "rev-parse", "HEAD"))
        out = data / f"result{i}.json"
        got = runner.invoke(app, ["measure", str(qrels), str(write_run(data, i)), "-m",
                                  "nDCG@10,AP", "-f", "json", "-o", str(out), "--history",
                                  url])
        assert got.exit_code == 0, got.output
        files.append(out)
    return Planted(commits=tuple(commits), files=tuple(files), repo=repo)
