"""trec_eval's ``-J`` (and ``-M``) leaving a run empty is refused the same way on every path
``rankproof measure`` reads a run by: in memory, streamed under ``--memory-cap``, and read
in the command's own process for ``--cross-check``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app

runner = CliRunner()


@pytest.fixture
def unjudged(tmp_path: Path) -> tuple[Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{t} 0 judged 1\n" for t in range(40)))
    run = tmp_path / "nothing_judged.run"
    # More than 1 MiB of text in topics of ~40 KB, so that a 1 MiB cap streams it.
    run.write_text("".join(f"q{t} Q0 unjudged-{i:06d} {i + 1} {100000 - i} tag\n"
                           for t in range(40) for i in range(1000)))
    return qrels, run


@pytest.mark.parametrize("extra", [[], ["--memory-cap", "1MiB"], ["--cross-check", "auto"]],
                         ids=["in-memory", "streamed", "cross-check"])
def test_a_run_left_empty_by_J_is_refused_naming_it(unjudged: tuple[Path, Path],
                                                     extra: list[str]) -> None:
    qrels, run = unjudged
    result = runner.invoke(app, ["measure", str(qrels), str(run), "-J", "-m", "AP", *extra])
    assert result.exit_code == 2, result.output
    # In memory the run is named by its tag; a streamed one by its loader's name (its file).
    name = "nothing_judged" if "--memory-cap" in extra else "tag"
    assert (f"{run}: no document of run {name!r} is left to evaluate after -J"
            in result.output.replace("\n", " ")), result.output
