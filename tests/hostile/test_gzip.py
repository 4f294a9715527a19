"""Class 7: a truncated or damaged gzip input is an input error naming the file (exit 2).

Never exit 1 — with ``--fail-on-regression`` that reads "the candidate is worse" —
and never a traceback (exit 3). The damage is placed where each reading step
meets it: the header, the first block (read when the format is sniffed from the
first line), the middle of the stream (Arrow's fast path, then the full read),
the CRC and length trailer, and a stream cut short.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rankproof import InputError
from rankproof.corpus import read_corpus, read_judgments
from rankproof.data import load_qrels, load_run
from rankproof.targets import load_goldens

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
QRELS = TOY / "qrels.txt"


def _flip(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0xFF
    return bytes(out)


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "truncated": lambda gz: gz[: len(gz) // 2],
    "cut-before-trailer": lambda gz: gz[:-6],
    "bad-crc": lambda gz: _flip(gz, len(gz) - 6),
    "bad-length": lambda gz: _flip(gz, len(gz) - 2),
    "flipped-first-block": lambda gz: _flip(_flip(gz, 30), 31),
    "flipped-middle": lambda gz: _flip(gz, len(gz) // 2),
    "bad-header-method": lambda gz: _flip(gz, 2),
}


def damaged(path: Path, source: Path | bytes, how: str) -> Path:
    data = source if isinstance(source, bytes) else source.read_bytes()
    path.write_bytes(DAMAGE[how](gzip.compress(data, mtime=0)))
    return path


def rankproof(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rankproof", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def assert_named_input_error(proc: subprocess.CompletedProcess[str], path: Path) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith(f"error: {path}: "), proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_every_damage_is_an_input_error_naming_the_file(tmp_path: Path, how: str) -> None:
    """The library: runs and qrels in every format, whichever step meets the damage."""
    run = damaged(tmp_path / "run.txt.gz", TOY / "bm25.run", how)
    with pytest.raises(InputError) as err:
        load_run(run)
    assert err.value.path == str(run)
    jsonl = damaged(tmp_path / "run.jsonl.gz",
                    b"".join(b'{"qid": "q1", "docid": "d%d", "score": %d}\n' % (i, i)
                             for i in range(400)), how)
    with pytest.raises(InputError) as err:
        load_run(jsonl)
    assert err.value.path == str(jsonl)
    qrels = damaged(tmp_path / "qrels.gz", QRELS, how)
    with pytest.raises(InputError) as err:
        load_qrels(qrels)
    assert err.value.path == str(qrels)


@pytest.mark.parametrize("how", ["truncated", "bad-crc", "flipped-first-block",
                                 "flipped-middle"])
def test_measure_exits_2_naming_the_damaged_run(tmp_path: Path, how: str) -> None:
    run = damaged(tmp_path / "cand.run.gz", TOY / "dense.run", how)
    assert_named_input_error(rankproof("measure", QRELS, run), run)
    qrels = damaged(tmp_path / "qrels.gz", QRELS, how)
    assert_named_input_error(rankproof("measure", qrels, TOY / "bm25.run"), qrels)


@pytest.mark.parametrize("how", ["truncated", "bad-crc", "flipped-first-block"])
def test_a_damaged_candidate_is_not_a_regression(tmp_path: Path, how: str) -> None:
    cand = damaged(tmp_path / "cand.run.gz", TOY / "dense.run", how)
    proc = rankproof("compare", "--fail-on-regression", "--resamples", "200", QRELS,
                     TOY / "bm25.run", cand)
    assert_named_input_error(proc, cand)
    assert "regression" not in proc.stderr


@pytest.mark.parametrize("how", ["truncated", "bad-crc", "flipped-first-block"])
def test_damaged_corpus_judgments_and_goldens_are_input_errors(tmp_path: Path,
                                                               how: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pumps.txt").write_text("Check the pump seals monthly.\n")
    corpus = read_corpus(docs)
    bad_doc = damaged(docs / "valves.txt", b"Valves are tested yearly.\n" * 50, how)
    with pytest.raises(InputError) as err:
        read_corpus(docs)
    assert err.value.path == str(bad_doc)
    bad_doc.unlink()
    judgments = damaged(
        tmp_path / "judgments.jsonl",
        b'{"query_id": "q-1", "query": "seals?", "category": "normal", '
        b'"gold": [{"doc": "pumps.txt", "quote": "pump seals"}]}\n', how)
    with pytest.raises(InputError) as err:
        read_judgments(judgments, corpus)
    assert err.value.path == str(judgments)
    goldens = damaged(tmp_path / "goldens.jsonl",
                      b'{"id": "c1", "input": "hello", "expected": "hi"}\n' * 30, how)
    with pytest.raises(InputError) as err:
        load_goldens(goldens)
    assert str(goldens) in str(err.value)
