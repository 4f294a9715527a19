"""``rankproof measure --cross-check``: recorded in the JSON, printed, exit 1 on a difference."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.data import Qrels, load_qrels, write_trec_qrels

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
QRELS = DATA / "trec_dl" / "qrels.dl19-passage.txt"
REP_LLAMA = DATA / "rankllm_runs" / "REP_LLAMA" / "trec_results_dl19.txt"
BM25 = DATA / "rankllm_runs" / "BM25" / "trec_results_dl19.txt"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["measure", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_the_json_holds_the_cross_check(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    code, _, err = invoke(QRELS, REP_LLAMA, BM25, "-l", "2", "-m", "nDCG@10", "-m", "RR@10",
                          "-m", "AP", "-m", "Judged@10", "--cross-check", "ir-measures",
                          "--tolerance", "1e-9", "-f", "json", "-o", out)
    assert code == 0, err
    doc = json.loads(out.read_text())
    cc = doc["cross_check"]
    assert cc["backend"] == "ir-measures" and cc["status"] == "passed"
    assert cc["tolerance"] == 1e-9 and cc["max_delta"] <= 1e-9
    assert cc["relevance"]["rel_level"] == 2
    assert cc["qrels"]["path"] == str(QRELS)
    assert [r["run"] for r in cc["runs"]] == [r["run"] for r in doc["runs"]]
    rep = cc["runs"][0]
    assert rep["checked"] == ["nDCG@10", "RR@10", "AP", "Judged@10"]
    assert rep["means"]["rankproof"]["nDCG@10"] == doc["runs"][0]["means"]["nDCG@10"]
    assert rep["tied_pairs"] > 10_000
    assert "cross-check (ir-measures" in err and "passed" in err


def test_the_terminal_table_and_unchecked_measures(tmp_path: Path) -> None:
    code, out, err = invoke(QRELS, BM25, "-m", "nDCG@10", "-m", "Judged@10",
                            "--cross-check", "pytrec-eval")
    assert code == 0, err
    assert "nDCG@10" in out  # the measure table itself is unchanged
    assert "cross-check against pytrec-eval" in err
    assert "Judged@10 not cross-checkable with pytrec-eval" in err


def test_a_planted_disagreement_exits_1_after_writing(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The backend's side alone reads a qrels copy with one judgment changed."""
    import rankproof.cli.measure as measure_cli

    table = load_qrels(QRELS).to_dict()
    doc = next(d for d, rel in table["1037798"].items() if rel >= 2)
    table["1037798"][doc] = 0
    planted = tmp_path / "planted.qrels"
    write_trec_qrels(Qrels.from_dict(table), planted)
    monkeypatch.setattr(measure_cli, "cross_check",
                        functools.partial(measure_cli.cross_check, backend_qrels=planted))
    out = tmp_path / "m.json"
    code, _, err = invoke(QRELS, BM25, "-m", "AP", "--cross-check", "ir-measures", "-f", "json",
                          "-o", out)
    assert code == 1, err
    cc = json.loads(out.read_text())["cross_check"]  # written before the exit
    assert cc["status"] == "failed" and cc["runs"][0]["failed"] == ["AP"]
    assert cc["backend_qrels"]["path"] == str(planted)
    assert "FAIL: AP" in err


def test_auto_without_a_backend_records_unavailable_and_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankproof.measures import _crossbackends

    def unimportable(module: str) -> object:
        raise ImportError(f"No module named {module!r}")

    monkeypatch.setattr(_crossbackends, "_import", unimportable)
    out = tmp_path / "m.json"
    code, _, err = invoke(QRELS, BM25, "-m", "AP", "--cross-check", "auto", "-f", "json",
                          "-o", out)
    assert code == 0, err
    cc = json.loads(out.read_text())["cross_check"]
    assert cc["backend"] == "unavailable" and cc["passed"] is None and cc["runs"] == []
    assert "nothing was cross-checked" in err
    code, _, err = invoke(QRELS, BM25, "-m", "AP", "--cross-check", "pytrec-eval")
    assert code == 2 and "'pytrec-eval' is not installed" in err
