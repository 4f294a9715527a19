"""Progress on ``eval``, ``gate --target``, ``discover``, ``rag score`` and ``report``: on a
terminal (a real pseudo-terminal as standard error), never in a pipe, and the output the
same either way.

Each test runs one command on small inputs under a pty with ``RANKPROOF_PROGRESS_DELAY=0``
(so each stage is drawn however fast it runs), finds its stage words on the terminal, then
runs it again with standard error on a pipe: no stage words, no escape code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli.test_progress_pty import _in_pipe, _in_pty
from tests.targets._service import service, write_goldens

SRC = Path(__file__).resolve().parents[2] / "src" / "rankproof"
RAG = SRC / "rag" / "example"
DISCOVERY = SRC / "discovery" / "example"


def _without_provenance(out: bytes) -> object:
    doc = json.loads(out) if out.strip().startswith(b"{") else out
    if isinstance(doc, dict):
        doc.pop("provenance", None)
    return doc


def _check(args: list[str], words: list[bytes], cwd: Path | None = None,
           same_output: bool = True) -> bytes:
    """Run ``args`` under a pty and in a pipe; the terminal shows ``words``, the pipe none
    of them and no escape code. Returns what the terminal showed."""
    code, out, terminal = _in_pty(args, cwd=cwd)
    shown = terminal.decode("utf-8", "replace")
    assert code == 0, shown
    for word in words:
        assert word in terminal, (word, shown)
    assert b"\x1b[" in terminal
    code, piped_out, piped_err = _in_pipe(args, cwd=cwd)
    assert code == 0, piped_err.decode("utf-8", "replace")
    assert b"\x1b" not in piped_err and b"\x1b" not in piped_out
    for word in words:
        assert word not in piped_err
    if same_output:  # the same document, but for its provenance (times, machine load)
        assert _without_provenance(out) == _without_provenance(piped_out)
    return terminal


def test_eval_shows_each_phase_and_counts_the_comparison(tmp_path: Path) -> None:
    args = ["eval", "--stages", "bm25,dense", "--embedder", "hashing", "--resamples", "20000",
            "-f", "json"]
    terminal = _check(args, [b"indexing bm25", b"searching dense", b"measuring and comparing",
                             b"comparing the stages"], cwd=tmp_path, same_output=False)
    assert b"resamples" in terminal


def test_gate_target_counts_the_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKPROOF_CACHE", str(tmp_path / "cache"))
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - id: ndcg_floor\n    metric: nDCG@10\n    op: \">=\"\n    threshold: 0\n")
    write_goldens(tmp_path / "goldens.jsonl", 60)
    with service(delay_s=0.02) as svc:
        args = ["gate", str(tmp_path / "checks.yaml"), "--target", svc.url, "--goldens",
                str(tmp_path / "goldens.jsonl"), "--shard-size", "10", "-f", "json"]
        code, _, terminal = _in_pty(args, cwd=tmp_path)
        assert code == 0, terminal.decode("utf-8", "replace")
        assert b"target calls" in terminal and b"/60 cases" in terminal
        # A pipe gets the plain log a CI keeps (a line at each tenth), never a bar.
        code, _, err = _in_pipe(args, cwd=tmp_path)
        assert code == 0
        assert b"\x1b" not in err and b"target calls" not in err
        assert b"60/60 cases answered" in err


def test_discover_shows_its_search_and_sweep(tmp_path: Path) -> None:
    args = ["discover", str(DISCOVERY / "cases.jsonl"), "--catalog",
            str(DISCOVERY / "catalog.jsonl"), "--sweep", "-f", "json"]
    _check(args, [b"searching and scoring", b"sweeping the selector"], cwd=tmp_path)


def test_rag_score_shows_the_scoring(tmp_path: Path) -> None:
    args = ["rag", "score", str(RAG / "answers_faithful.jsonl"), "--references",
            str(RAG / "references.jsonl"), "-f", "json"]
    terminal = _check(args, [b"scoring"], cwd=tmp_path)
    assert b"answer(s)" in terminal


def test_report_shows_reading_and_rendering(tmp_path: Path) -> None:
    rows = "".join(f"q{i} 0 d{i} 1\n" for i in range(30))
    (tmp_path / "qrels.txt").write_text(rows)
    for name, shift in (("a", 0), ("b", 1)):
        (tmp_path / f"{name}.trec").write_text("".join(
            f"q{i} Q0 d{(i + shift * (i % 3 == 0)) % 30} 1 1.0 {name}\n"
            f"q{i} Q0 x{i} 2 0.5 {name}\n" for i in range(30)))
    code, _, err = _in_pipe(["compare", str(tmp_path / "qrels.txt"), str(tmp_path / "a.trec"),
                             str(tmp_path / "b.trec"), "-m", "RR", "--resamples", "500",
                             "-o", str(tmp_path / "cmp.json"), "-f", "json"])
    assert code == 0, err
    assert json.loads((tmp_path / "cmp.json").read_text())["kind"] == "rankproof.comparison"
    args = ["report", str(tmp_path / "cmp.json"), "--md", "-"]
    _check(args, [b"reading cmp.json"], cwd=tmp_path)
    html = ["report", str(tmp_path / "cmp.json"), "--html", str(tmp_path / "r.html"),
            "--force"]
    _check(html, [b"rendering the HTML"], cwd=tmp_path, same_output=False)
