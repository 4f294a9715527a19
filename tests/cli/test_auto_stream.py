"""Without ``--memory-cap``, a run that would not fit in the memory available is streamed
by itself, with a note (issue 23 item 4); one that fits is read whole, silently."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import rankproof.jobs._capped as capped
from rankproof.cli import app

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
QRELS = DATA / "trec_dl" / "qrels.dl19-passage.txt"
RUN = DATA / "rankllm_runs" / "REP_LLAMA" / "trec_results_dl19.txt"  # 1.4 MB, grouped
pytestmark = pytest.mark.skipif(not RUN.exists(), reason="../shared/data is not present")
runner = CliRunner()


def _measure(*extra: str) -> tuple[int, str, str]:
    r = runner.invoke(app, ["measure", str(QRELS), str(RUN), "-m", "AP", "-m", "nDCG@10",
                            "-q", "-f", "trec", *extra])
    return r.exit_code, r.stdout, r.stderr


def test_a_run_over_the_available_memory_is_streamed_with_a_note(
        monkeypatch: pytest.MonkeyPatch) -> None:
    code, whole, err = _measure()
    assert code == 0 and "streamed" not in err
    monkeypatch.setattr(capped, "available_memory", lambda: 2 << 20)  # 2 MiB "available"
    code, streamed, err = _measure()
    assert code == 0, err
    said = " ".join(err.split())
    assert "would take about" in said and "more than the 2 MiB of memory available" in said
    assert "give --memory-cap to choose" in said
    assert "streamed under --memory-cap 2 MiB" in said
    assert streamed == whole


def test_a_run_that_fits_or_an_unknown_amount_is_read_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capped, "available_memory", lambda: None)
    code, _, err = _measure()
    assert code == 0 and "streamed" not in err
    monkeypatch.setattr(capped, "available_memory", lambda: 64 << 30)
    code, _, err = _measure()
    assert code == 0 and "streamed" not in err and "available" not in err


def test_too_little_available_even_to_stream_reads_whole_as_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Streaming is a help, not a refusal: when even a partition would not fit, the run is
    read whole as it was before (the kernel, not rankproof, then decides)."""
    monkeypatch.setattr(capped, "available_memory", lambda: 300 << 10)
    code, _, err = _measure()
    assert code == 0 and "streamed" not in err


def test_available_memory_reads_the_kernels_estimate() -> None:
    found = capped.available_memory()
    assert found is None or found > 1 << 20
