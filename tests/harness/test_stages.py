"""Two stages of a saved eval report, compared after the fact (library and ``compare stages``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.harness._golden import golden_report
from typer.testing import CliRunner

from rankproof import InputError, PairingError
from rankproof.cli import app
from rankproof.comparison import Comparison, compare_scores
from rankproof.harness import (
    EvalReport,
    compare_report_stages,
    read_report,
)
from rankproof.stats import StatSettings

runner = CliRunner()
TOY = Path(__file__).resolve().parents[2] / "examples" / "toy"


def _report() -> EvalReport:
    return golden_report(300, seed=5)


def _saved(tmp_path: Path, doc: dict[str, object] | None = None) -> Path:
    path = tmp_path / "latest.json"
    path.write_text(json.dumps(doc) if doc is not None else _report().model_dump_json())
    return path


def test_rows_come_from_the_stored_values_with_the_reports_settings() -> None:
    report = _report()
    c = compare_report_stages(report, baseline="dense", candidate="fusion")
    assert isinstance(c, Comparison)
    assert (c.baseline, c.systems, c.measures) == ("dense", ("dense", "fusion"),
                                                   tuple(report.measures))
    assert (c.test, c.correction, c.alpha, c.resamples, c.seed) == (
        "randomization", "holm", 0.05, 300, 5)
    dense, fusion = report.stage("dense"), report.stage("fusion")
    for row in c.rows:
        assert (row.baseline, row.candidate) == ("dense", "fusion")
        assert row.qids == tuple(sorted(dense.per_query))
        assert row.baseline_values == tuple(dense.per_query[q][row.measure] for q in row.qids)
        assert row.candidate_values == tuple(fusion.per_query[q][row.measure] for q in row.qids)
    # Exactly what the one comparison engine makes of the same values.
    scores = {s.name: {m: {q: v[m] for q, v in s.per_query.items()} for m in report.measures}
              for s in (dense, fusion)}
    direct = compare_scores(scores, baseline="dense", stats=StatSettings(resamples=300, seed=5))
    assert c.rows == direct.rows
    assert any("retrieval was not rerun" in cav for cav in c.caveats)


def test_bm25_vs_a_stage_reproduces_the_reports_own_rows_on_one_measure() -> None:
    """One candidate alone is a smaller family than the report's (both candidates), so the
    corrected figures may differ; the paired test of each row is the same test."""
    report = _report()
    c = compare_report_stages(report, baseline="bm25", candidate="fusion")
    for row in c.rows:
        stored = next(r for r in report.comparisons
                      if r.candidate == "fusion" and r.measure == row.measure)
        for field in ("n", "mean_a", "mean_b", "difference", "p_value", "wins", "losses"):
            assert getattr(row.result, field) == getattr(stored.result, field), field
        assert row.candidate_values == stored.candidate_values


def test_measures_are_canonicalised_and_options_override_the_report() -> None:
    c = compare_report_stages(_report(), baseline="dense", candidate="fusion",
                              measures=["hit@1", "ndcg@10", "Success@1"], test="t",
                              correction="none", alpha=0.1, seed=9, resamples=200)
    assert c.measures == ("Success@1", "nDCG@10")
    assert (c.test, c.correction, c.alpha, c.seed, c.resamples) == ("t", "none", 0.1, 9, 200)
    one = compare_report_stages(_report(), baseline="bm25", candidate="dense", measures="RR@10")
    assert one.measures == ("RR@10",) and len(one.rows) == 1


def test_a_path_and_the_object_give_the_same_comparison(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    assert read_report(path) == _report()
    a = compare_report_stages(path, baseline="dense", candidate="fusion", measures=["RR@10"])
    b = compare_report_stages(_report(), baseline="dense", candidate="fusion",
                              measures=["RR@10"])
    assert a.rows == b.rows
    assert compare_report_stages(str(path), baseline="dense", candidate="fusion",
                                 measures=["RR@10"]).rows == b.rows


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"baseline": "dense", "candidate": "splade"},
     "the report has no stage 'splade' (its stages: bm25, dense, fusion)"),
    ({"baseline": "colbert", "candidate": "dense"},
     "the report has no stage 'colbert' (its stages: bm25, dense, fusion)"),
    ({"baseline": "dense", "candidate": "dense"},
     "baseline and candidate are the same stage 'dense'; name two different stages of: "
     "bm25, dense, fusion"),
    ({"baseline": "dense", "candidate": "fusion", "measures": ["AP"]},
     "measure 'AP' is not stored in the report (stored: R@1, Success@1, R@5, Success@5, R@10, "
     "Success@10, RR@10, nDCG@10)"),
    ({"baseline": "dense", "candidate": "fusion", "measures": []},
     "measures is empty"),
    ({"baseline": "dense", "candidate": "fusion", "measures": ["bogus@x"]},
     "unknown measure 'bogus'"),
])
def test_refusals_are_input_errors_with_clear_messages(kwargs: dict[str, object],
                                                       message: str) -> None:
    with pytest.raises(InputError) as info:
        compare_report_stages(_report(), **kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_duplicate_stage_names_are_refused_in_a_file_and_an_object(tmp_path: Path) -> None:
    data = _report().model_dump(mode="json")
    data["stages"][2]["name"] = "dense"
    path = _saved(tmp_path, data)
    message = "more than one stage named ['dense']: a comparison could not say which"
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        compare_report_stages(path, baseline="bm25", candidate="dense")
    # An object built without validation cannot slip through either.
    built = EvalReport.model_construct(**{**_report().__dict__,
                                          "stages": [*_report().stages, _report().stages[1]]})
    with pytest.raises(InputError, match="more than one stage named"):
        compare_report_stages(built, baseline="bm25", candidate="fusion")


def test_unpaired_stages_are_a_pairing_error() -> None:
    data = _report().model_dump(mode="json")
    first = next(iter(data["stages"][2]["per_query"]))
    del data["stages"][2]["per_query"][first]
    with pytest.raises(PairingError):
        compare_report_stages(EvalReport.model_validate(data), baseline="dense",
                              candidate="fusion")


def test_a_missing_stored_value_is_an_input_error() -> None:
    data = _report().model_dump(mode="json")
    first = next(iter(data["stages"][2]["per_query"]))
    del data["stages"][2]["per_query"][first]["RR@10"]
    with pytest.raises(InputError, match="stage 'fusion' stores no RR@10 value for query"):
        compare_report_stages(EvalReport.model_validate(data), baseline="dense",
                              candidate="fusion", measures=["RR@10"])


def test_a_version_1_report_compares_too(tmp_path: Path) -> None:
    from tests.harness._v1 import as_version_1

    path = _saved(tmp_path, as_version_1(_report().model_dump(mode="json")))
    c = compare_report_stages(path, baseline="dense", candidate="fusion", measures=["nDCG@10"])
    assert c.rows == compare_report_stages(_report(), baseline="dense", candidate="fusion",
                                           measures=["nDCG@10"]).rows


# --- rankproof compare stages ----------------------------------------------------------------

def test_cli_compare_stages_table_and_json(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    out = tmp_path / "cmp.json"
    result = runner.invoke(app, ["compare", "stages", str(path), "--baseline", "dense",
                                 "--candidate", "fusion", "-m", "nDCG@10", "-m", "hit@1",
                                 "--json", str(out)], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "nDCG@10: baseline dense, 78 topics, randomization test" in result.stdout
    assert "Success@1: baseline dense" in result.stdout and "hit@" not in result.stdout
    doc = json.loads(out.read_text())
    assert doc["kind"] == "rankproof.comparison" and doc["baseline"] == "dense"
    expected = compare_report_stages(_report(), baseline="dense", candidate="fusion",
                                     measures=["nDCG@10", "hit@1"])
    # The rows are the library's; the two stages' evidence travels with them.
    assert set(doc.pop("evidence")["top"]) == {"dense", "fusion"}
    # ... and the provenance names the saved report it was read from.
    assert doc.pop("provenance")["inputs"]["report"]["path"] == str(path)
    assert doc == json.loads(expected.to_json())
    as_json = runner.invoke(app, ["compare", "stages", str(path), "--baseline", "bm25",
                                  "--candidate", "dense", "-f", "json", "--seed", "2"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout)["seed"] == 2
    md = runner.invoke(app, ["compare", "stages", str(path), "--baseline", "bm25",
                             "--candidate", "dense", "-m", "RR@10", "-f", "md"])
    assert md.exit_code == 0 and md.stdout.startswith("# comparison: 2 systems against bm25")
    assert "| RR@10 | dense |" in md.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--baseline", "dense", "--candidate", "splade"], "no stage 'splade'"),
    (["--baseline", "dense", "--candidate", "dense"], "the same stage 'dense'"),
    (["--baseline", "dense", "--candidate", "fusion", "-m", "AP"], "not stored in the report"),
])
def test_cli_compare_stages_refusals_exit_2(tmp_path: Path, args: list[str],
                                            message: str) -> None:
    result = runner.invoke(app, ["compare", "stages", str(_saved(tmp_path)), *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output


def test_cli_compare_stages_needs_both_stages_and_a_report(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["compare", "stages", str(_saved(tmp_path)), "--baseline",
                                  "dense"])
    assert missing.exit_code == 2 and "--candidate" in missing.output
    absent = runner.invoke(app, ["compare", "stages", str(tmp_path / "nope.json"),
                                 "--baseline", "dense", "--candidate", "fusion"])
    assert absent.exit_code == 2 and "report not found" in absent.stderr
    helped = runner.invoke(app, ["compare", "stages", "--help"], env={"COLUMNS": "160"})
    assert helped.exit_code == 0
    assert "Usage: rankproof compare stages [OPTIONS] REPORT" in helped.stdout


def test_plain_compare_is_unchanged_and_a_file_named_stages_works_as_dot_slash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = [str(TOY / "bm25.run"), str(TOY / "dense.run"), "-m", "AP", "-f", "json"]
    plain = runner.invoke(app, ["compare", str(TOY / "qrels.txt"), *args])
    assert plain.exit_code == 0, plain.output
    shutil.copy(TOY / "qrels.txt", tmp_path / "stages")
    monkeypatch.chdir(tmp_path)
    named = runner.invoke(app, ["compare", "./stages", *args])
    assert named.exit_code == 0, named.output
    assert json.loads(named.stdout)["rows"] == json.loads(plain.stdout)["rows"]
    helped = runner.invoke(app, ["compare", "--help"], env={"COLUMNS": "160"})
    assert "rankproof compare stages REPORT.json" in helped.stdout
    assert "./stages" in helped.stdout
