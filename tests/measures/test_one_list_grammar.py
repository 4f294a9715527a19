"""One measure-list grammar everywhere (issue 22, item 5).

The same ``-m`` strings are accepted, or refused with the same message, by
``measure``, ``compare``, ``eval --dry-run`` and an experiment file's
``measures`` — each goes through `rankproof.measures.resolve_measures`, whose
list grammar is `split_measure_text`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.measures import parse, resolve_measures, split_measure_text
from rankproof.measures._evaluate import _parses

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
runner = CliRunner()

ACCEPTED = {
    "nDCG@10,RR@10": ["nDCG@10", "RR@10"],
    "nDCG@10, RR@10 AP": ["nDCG@10", "RR@10", "AP"],
    "P.5,10": ["P@5", "P@10"],
    "ndcg_cut.10 recip_rank": ["nDCG@10", "RR"],
    "nDCG(gains={0: 0, 1: 1, 2: 3})@10": [str(parse("nDCG(gains={0:0,1:1,2:3})@10"))],
}
REFUSED = ["nDCG@10,XX@10", "nope", "nDCG@10 P(rel=x)@5"]


def test_the_grammar_splits_lists_and_keeps_trec_lists_whole() -> None:
    assert split_measure_text("nDCG@10,RR@10", _parses) == ["nDCG@10", "RR@10"]
    assert split_measure_text("P.5,10 utility.2,-1,0,0", _parses) == ["P.5,10",
                                                                        "utility.2,-1,0,0"]
    assert split_measure_text("nDCG@10,XX@10", _parses) == ["nDCG@10", "XX@10"]
    for text, want in ACCEPTED.items():
        assert [str(m) for m in resolve_measures(text)] == want, text


def _message(args: list[str]) -> tuple[int, str]:
    result = runner.invoke(app, args)
    return result.exit_code, result.stderr.strip().splitlines()[-1] if result.stderr else ""


def _surfaces(spec: str, tmp_path: Path) -> dict[str, tuple[int, str]]:
    qrels, bm25, dense = str(TOY / "qrels.txt"), str(TOY / "bm25.run"), str(TOY / "dense.run")
    experiment = tmp_path / "exp.yaml"
    experiment.write_text(
        "name: grammar\noutput: out\ninputs:\n"
        f"  qrels: {qrels}\nstages:\n  - {{id: bm25, kind: run_file, path: {bm25}}}\n"
        f"  - id: m\n    kind: measure\n    runs: [bm25]\n    measures: ['{spec}']\n")
    return {
        "measure": _message(["measure", qrels, bm25, "-m", spec, "-f", "csv"]),
        "compare": _message(["compare", qrels, bm25, dense, "-m", spec, "--resamples", "200",
                             "-f", "json"]),
        "eval": _message(["eval", "--dry-run", "-m", spec]),
        "experiment": _message(["run", str(experiment)]),
    }


@pytest.mark.parametrize("spec", list(ACCEPTED))
def test_every_surface_accepts_the_same_lists(spec: str, tmp_path: Path) -> None:
    for surface, (code, message) in _surfaces(spec, tmp_path).items():
        assert code == 0, (surface, message)


@pytest.mark.parametrize("spec", REFUSED)
def test_every_surface_refuses_with_the_same_message(spec: str, tmp_path: Path) -> None:
    got = _surfaces(spec, tmp_path)
    codes = {code for code, _ in got.values()}
    assert codes == {2}, got
    messages = {surface: message.split("error: ", 1)[-1] for surface, (_, message) in got.items()}
    want = messages["measure"]
    assert want, got
    for surface, message in messages.items():
        assert want in message, (surface, message, want)
