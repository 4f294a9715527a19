"""``rankproof compare --memory-cap``: runs over the cap are streamed in topic partitions,
with the comparison (rows, verdicts, evidence) identical to the one read in memory; a cap
that cannot hold one topic is refused before any run is read, with the estimate.

The data are real: the DL19 passage qrels and two of its published runs (BM25 and
TAS-B, 43 topics x 100 documents), each topic repeated under 12 ids (``264014-0`` …
``264014-11``) so that the runs (2.3 MB each) are larger than the smallest cap the option
takes (1 MiB) can read whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.data import load_qrels
from rankproof.jobs._capped import held_bytes

runner = CliRunner()
COPIES = 12


def cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env={"RANKPROOF_MEMORY_CAP": ""})
    return result.exit_code, result.stdout, result.stderr


def _copied(src: Path, dst: Path) -> Path:
    """``src`` with each topic id ``q`` written as ``q-0`` … ``q-11``, topic by topic."""
    lines = src.read_text().splitlines()
    with dst.open("w") as out:
        for c in range(COPIES):
            for line in lines:
                qid, rest = line.split(" ", 1)
                out.write(f"{qid}-{c} {rest}\n")
    return dst


@pytest.fixture(scope="module")
def dl19(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("dl19x12")
    runs = shared_data / "rankllm_runs"
    return (_copied(shared_data / "trec_dl" / "qrels.dl19-passage.txt", folder / "qrels.txt"),
            _copied(runs / "BM25" / "trec_results_dl19.txt", folder / "bm25.trec"),
            _copied(runs / "D_BERT_KD_TASB" / "trec_results_dl19.txt", folder / "tasb.trec"))


def _doc(path: Path) -> dict[str, object]:
    doc = json.loads(path.read_text())
    doc.pop("provenance")
    return doc


def test_a_streamed_comparison_equals_the_one_in_memory(dl19: tuple[Path, Path, Path],
                                                        tmp_path: Path) -> None:
    qrels, bm25, tasb = dl19
    args = ["compare", str(qrels), str(bm25), str(tasb), "-m", "nDCG@10", "-m", "RR@10",
            "--resamples", "2000", "-f", "json"]
    code, _, err = cli(*args, "-o", str(tmp_path / "whole.json"))
    assert code == 0, err
    assert "streamed" not in err
    code, _, err = cli(*args, "-o", str(tmp_path / "capped.json"), "--memory-cap", "5MiB")
    assert code == 0, err
    # Both runs were streamed, in many partitions of whole topics.
    assert err.count("streamed under --memory-cap 5 MiB") == 2, err
    parts = [int(w) for w in err.split() if w.isdigit()]
    assert parts and max(parts) > 1
    whole, capped = _doc(tmp_path / "whole.json"), _doc(tmp_path / "capped.json")
    assert capped == whole
    evidence = capped["evidence"]
    assert isinstance(evidence, dict)
    assert len(evidence["top"]["tasb.trec" if "tasb.trec" in evidence["top"] else
                              next(iter(evidence["top"]))]) == 43 * COPIES


def _deep(path: Path, topics: int, depth: int, tail: str = "") -> Path:
    """A run of ``topics`` x ``depth`` (about 45 bytes a line), grouped by topic."""
    rng = np.random.default_rng(1)
    with path.open("w") as out:
        for t in range(topics):
            out.writelines(f"q{t} Q0 d{t}-{r}-{rng.integers(10**6)} {r} {1000 - r / 10:.3f} x\n"
                           for r in range(1, depth + 1))
        out.write(tail)
    return path


def test_a_cap_below_one_topic_is_refused_before_any_run_is_read(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{t} 0 d{t}-1 1\n" for t in range(100)))
    base = _deep(tmp_path / "base.trec", 100, 2000)  # about 90 KiB of text per topic
    # The candidate ends with a malformed line: had it been read, that would be the error.
    cand = _deep(tmp_path / "cand.trec", 100, 2000, tail="q99 Q0 broken\n")
    code, _out, err = cli("compare", str(qrels), str(base), str(cand), "-m", "nDCG@10",
                         "--memory-cap", "1MiB", "-o", str(tmp_path / "c.json"))
    assert code == 2, err
    assert "cannot hold one topic of this run" in err
    assert "a topic takes about" in err and "give --memory-cap" in err
    assert "broken" not in err and "line" not in err.split("cannot hold")[0]
    assert not (tmp_path / "c.json").exists()
    # The cap it names is enough: under it, two clean runs are compared, streamed.
    need = err.split("give --memory-cap ")[1].split(" or more")[0].replace(" ", "")
    other = _deep(tmp_path / "other.trec", 100, 2000)
    code, _, err = cli("compare", str(qrels), str(base), str(other), "-m", "nDCG@10",
                       "--memory-cap", need, "-f", "json")
    assert code == 0, err
    assert err.count("streamed under --memory-cap") == 2, err


def test_what_compare_holds_is_taken_off_the_cap(dl19: tuple[Path, Path, Path]) -> None:
    q = load_qrels(str(dl19[0]))
    one = held_bytes(q, 2, 516)
    two = held_bytes(q, 2, 516, tables=2)
    assert two > one  # the second run's table and the comparison's rows
    assert held_bytes(q, 2, 516, tables=2, evidence_depth=10) > two
