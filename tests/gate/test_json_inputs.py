"""The gate reads every rankproof JSON with per-query values, not only eval reports.

``rankproof measure -f json`` output and ``rankproof compare -o`` comparisons
over TREC runs serve as the run under test and as the baseline (by path, or
saved with ``rankproof baseline save``): threshold checks on their means,
vs_baseline checks on their per-query values. Files without per-query values
are refused with a message saying what to pass instead.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.hostile._fuzz import fuzz_settings, json_text, refused_or_read, snapshot
from typer.testing import CliRunner, Result

from rankproof import InputError, load_qrels, load_run
from rankproof.cli import app
from rankproof.comparison import compare
from rankproof.gate import load_baseline_input, load_result, parse_checks, run_gate
from rankproof.measures import evaluate

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "examples" / "toy"
DL = ROOT.parent / "shared" / "data"
DL19_QRELS = DL / "trec_dl" / "qrels.dl19-passage.txt"
DL19_RUNS = DL / "rankllm_runs"

CHECKS = """\
checks:
  - id: floor
    metric: ndcg@10
    op: ">="
    threshold: 0.1
  - id: no_regression
    metric: nDCG@10
    vs_baseline: no_significant_regression
"""

runner = CliRunner()


def cli(*args: str) -> Result:
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Outputs of the real commands on the toy runs (bm25 is the baseline, dense the change)."""
    root = tmp_path_factory.mktemp("json-inputs")
    qrels, bm25, dense = str(TOY / "qrels.txt"), str(TOY / "bm25.run"), str(TOY / "dense.run")
    out = {name: root / f"{name}.json" for name in ("bm25", "dense", "both", "cmp", "cmp3",
                                                     "rel2")}
    for args in (
        ["measure", qrels, bm25, "-m", "nDCG@10", "-m", "RR@10", "-f", "json", "-o",
         str(out["bm25"])],
        ["measure", qrels, dense, "-f", "json", "-o", str(out["dense"])],
        ["measure", qrels, bm25, dense, "-f", "json", "-o", str(out["both"])],
        ["measure", qrels, bm25, "--rel-level", "2", "-f", "json", "-o", str(out["rel2"])],
        ["compare", qrels, bm25, dense, "-o", str(out["cmp"])],
        ["compare", qrels, bm25, dense, bm25, "--name", "bm25", "--name", "dense", "--name",
         "again", "-o",
         str(out["cmp3"])],
    ):
        r = cli(*args)
        assert r.exit_code == 0, (args, r.output)
    (root / "checks.yaml").write_text(CHECKS)
    out["checks"] = root / "checks.yaml"
    return out


def test_measure_json_keeps_per_query_values_and_the_qrels_digest(
        files: dict[str, Path]) -> None:
    doc = json.loads(files["bm25"].read_text())
    run = doc["runs"][0]
    qrels = load_qrels(TOY / "qrels.txt")
    assert run["qrels_digest"] == qrels.digest
    pq = evaluate(qrels, load_run(TOY / "bm25.run"), ["nDCG@10", "RR@10"])
    assert run["per_query"] == {q: {"nDCG@10": a, "RR@10": b}
                                for q, (a, b) in zip(pq.qids, pq.values.tolist(), strict=True)}


def test_a_measure_run_becomes_a_run_result(files: dict[str, Path]) -> None:
    r = load_result(files["bm25"])
    pq = evaluate(load_qrels(TOY / "qrels.txt"), load_run(TOY / "bm25.run"), ["nDCG@10"])
    assert r.name == "bm25" and r.metrics == ("nDCG@10", "RR@10")
    assert r.scores("nDCG@10") == pq.scores("nDCG@10")
    assert r.mean("nDCG@10") == pytest.approx(pq.mean("nDCG@10"))
    p = r.provenance
    assert (p.kind, p.stage, p.granularity, p.measures) == (
        "report", "bm25", "trec runs, rel_level 1", ())
    assert p.judgments_digest == load_qrels(TOY / "qrels.txt").digest


def test_a_comparison_system_becomes_a_run_result(files: dict[str, Path]) -> None:
    qrels = load_qrels(TOY / "qrels.txt")
    dense = evaluate(qrels, load_run(TOY / "dense.run"), ["nDCG@10", "AP"])
    r = load_result(files["cmp"])  # the one candidate by default
    assert r.name == "dense" and r.metrics == ("nDCG@10", "RR@10", "AP", "R@100", "P@10")
    assert r.scores("nDCG@10") == pytest.approx(dense.scores("nDCG@10"))
    assert r.scores("AP") == pytest.approx(dense.scores("AP"))
    base = load_result(files["cmp"], role="baseline")  # the comparison's baseline
    assert base.name == "bm25" and base.provenance.granularity == "trec runs, rel_level 1"
    assert base.provenance.judgments_digest is None  # a comparison records no qrels digest


def test_gate_a_measure_json_against_a_measure_json(files: dict[str, Path]) -> None:
    r = cli("gate", str(files["checks"]), "--report", str(files["dense"]), "--baseline",
            str(files["bm25"]), "-f", "json")
    assert r.exit_code == 0, r.output
    verdict = json.loads(r.stdout)
    assert (verdict["run"], verdict["baseline"], verdict["passed"]) == ("dense", "bm25", True)
    floor, regression = verdict["checks"]
    qrels = load_qrels(TOY / "qrels.txt")
    assert floor["value"] == pytest.approx(
        evaluate(qrels, load_run(TOY / "dense.run"), ["nDCG@10"]).mean("nDCG@10"))
    assert regression["covered"] == 8 and regression["comparison"]["qids"] == sorted(
        regression["comparison"]["qids"])
    assert not verdict["notes"]  # both sides record the same qrels digest


def test_gate_a_comparison_as_both_run_and_baseline(files: dict[str, Path]) -> None:
    r = cli("gate", str(files["checks"]), "--report", str(files["cmp"]), "--baseline",
            str(files["cmp"]), "-f", "json")
    assert r.exit_code == 0, r.output
    verdict = json.loads(r.stdout)
    assert (verdict["run"], verdict["baseline"]) == ("dense", "bm25")
    cmp_row = next(row for row in json.loads(files["cmp"].read_text())["rows"]
                   if row["measure"] == "nDCG@10")
    gate_row = verdict["checks"][1]["comparison"]
    for key in ("qids", "candidate_values", "baseline_values"):
        assert gate_row[key] == cmp_row[key], key
    assert gate_row["result"]["difference"] == pytest.approx(cmp_row["result"]["difference"])
    assert any("judgments could not be compared" in n for n in verdict["notes"])


def test_a_comparison_run_against_a_measure_baseline(files: dict[str, Path]) -> None:
    r = cli("gate", str(files["checks"]), "--report", str(files["cmp"]), "--baseline",
            str(files["bm25"]))
    assert r.exit_code == 0, r.output
    assert "this run records no judgments digest" in " ".join(r.stdout.split())


def test_choosing_a_system_in_a_file_with_several(files: dict[str, Path]) -> None:
    checks = str(files["checks"])
    r = cli("gate", checks, "--report", str(files["both"]), "--baseline", str(files["bm25"]))
    assert r.exit_code == 2
    assert "the measure JSON has 2 systems (bm25, dense); choose one (--stage NAME)" in r.stderr
    ok = cli("gate", checks, "--report", str(files["both"]), "--stage", "dense", "--baseline",
             str(files["both"]), "--baseline-stage", "bm25", "-f", "json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["baseline"] == "bm25"
    r = cli("gate", checks, "--report", str(files["cmp3"]), "--baseline", str(files["cmp3"]))
    assert r.exit_code == 2 and "has 3 systems (bm25, dense, again)" in r.stderr
    ok = cli("gate", checks, "--report", str(files["cmp3"]), "--system", "again", "--baseline",
             str(files["cmp3"]), "-f", "json")
    assert ok.exit_code == 0, ok.output
    same = json.loads(ok.stdout)["checks"][1]["comparison"]["result"]
    assert same["difference"] == 0.0  # the same run under another name
    r = cli("gate", checks, "--report", str(files["cmp"]), "--stage", "nope", "--baseline",
            str(files["cmp"]))
    assert r.exit_code == 2 and "has no system 'nope' (systems: bm25, dense)" in r.stderr
    r = cli("gate", checks, "--report", str(files["dense"]), "--baseline-stage", "bm25")
    assert r.exit_code == 2 and "--baseline-stage chooses within --baseline PATH" in r.stderr


def test_different_relevance_levels_are_not_compared(files: dict[str, Path]) -> None:
    r = cli("gate", str(files["checks"]), "--report", str(files["bm25"]), "--baseline",
            str(files["rel2"]))
    assert r.exit_code == 2
    assert ("granularity differs: baseline 'trec runs, rel_level 2', this run 'trec runs, "
            "rel_level 1'") in " ".join(r.stderr.split())


def test_a_measure_or_comparison_saved_as_a_named_baseline(files: dict[str, Path],
                                                           tmp_path: Path) -> None:
    d = str(tmp_path / "baselines")
    saved = cli("baseline", "save", str(files["cmp"]), "--name", "main", "--baseline-dir", d)
    assert saved.exit_code == 0, saved.output
    assert "stage 'bm25'" in saved.stdout and "nDCG@10, RR@10, AP" in saved.stdout
    r = cli("gate", str(files["checks"]), "--report", str(files["dense"]), "--baseline", "main",
            "--baseline-dir", d)
    assert r.exit_code == 0, r.output
    listed = cli("baseline", "list", "--baseline-dir", d)
    assert "main" in listed.stdout and "trec runs" in listed.stdout
    again = cli("baseline", "save", str(files["both"]), "--name", "two", "--baseline-dir", d)
    assert again.exit_code == 2 and "choose one (--stage NAME)" in again.stderr
    with pytest.raises(InputError, match="needs a file to choose from"):
        load_baseline_input("main", d, stage="bm25")
    b = load_baseline_input(files["both"], stage="dense")
    assert b.name == "dense" and b.source["stage"] == "dense"


def test_the_gate_finds_a_real_regression_in_a_measure_json(files: dict[str, Path],
                                                            tmp_path: Path) -> None:
    # dense vs bm25, with bm25 as the run: a regression on the toy data when it is significant
    checks = tmp_path / "c.yaml"
    checks.write_text("checks:\n  - {id: no_regression, metric: AP, "
                      "vs_baseline: no_significant_regression, alpha: 0.5}\n")
    r = cli("gate", str(checks), "--report", str(files["both"]), "--stage", "bm25",
            "--baseline", str(files["both"]), "--baseline-stage", "dense", "-f", "json")
    row = json.loads(r.stdout)["checks"][0]
    assert row["difference"] < 0
    assert r.exit_code == (1 if row["p_corrected"] <= 0.5 else 0)


@pytest.mark.parametrize("make, fragment", [
    (lambda f: f["cmp"].read_text().replace('"rankproof.comparison"', '"rankproof.gate"'),
     "this is a gate verdict: it keeps only its baseline checks' paired values"),
    (lambda f: json.dumps({"kind": "something"}), "not a rankproof eval report"),
    (lambda f: json.dumps([1, 2]), "not a rankproof eval report or other document with "
                                   "per-query values (found a JSON list)"),
    (lambda f: json.dumps({**json.loads(f["bm25"].read_text()), "runs": [
        {k: v for k, v in json.loads(f["bm25"].read_text())["runs"][0].items()
         if k != "per_query"}]}),
     "run 'bm25' keeps means only (no 'per_query'); the gate pairs queries, so write the "
     "document with rankproof measure QRELS RUN... -f json -o FILE.json"),
    (lambda f: json.dumps({**json.loads(f["bm25"].read_text()), "runs": []}),
     "'runs' must be a non-empty list"),
])
def test_documents_without_per_query_values_are_refused_saying_what_to_pass(
        files: dict[str, Path], tmp_path: Path, make: object, fragment: str) -> None:
    path = tmp_path / "input.json"
    path.write_text(make(files))  # type: ignore[operator]
    r = cli("gate", str(files["checks"]), "--report", str(path))
    assert r.exit_code == 2, r.output
    assert fragment in " ".join(r.stderr.split()), r.stderr
    assert str(path) in " ".join(r.stderr.split())
    r = cli("gate", str(files["checks"]), "--report", str(files["dense"]), "--baseline",
            str(path))
    assert r.exit_code == 2 and fragment in " ".join(r.stderr.split())


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_measure_records_are_refused_pointing_at_the_json_document(
        files: dict[str, Path], tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"records.{fmt}"
    made = cli("measure", str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "-q", "-f", fmt,
               "-o", str(path))
    assert made.exit_code == 0, made.output
    r = cli("gate", str(files["checks"]), "--report", str(path))
    assert r.exit_code == 2
    message = " ".join(r.stderr.split())
    assert "this is rankproof measure's JSONL/CSV records" in message
    assert "-f json -o FILE.json" in message


def test_a_run_result_and_a_baseline_file_are_inputs_too(files: dict[str, Path],
                                                         tmp_path: Path) -> None:
    result = load_result(files["bm25"])
    path = tmp_path / "run.json"
    path.write_text(result.to_json())
    again = load_result(path)
    assert again.to_dict() == result.to_dict()
    with pytest.raises(InputError, match="holds one run, 'bm25', not 'dense'"):
        load_result(path, "dense")


@pytest.mark.skipif(not DL19_QRELS.exists(), reason="needs ../shared/data")
def test_dl19_tasb_vs_bm25_gate_rows_equal_the_comparison_s(tmp_path: Path) -> None:
    """Real runs: a measure JSON and a comparison give the gate the same paired values."""
    bm25 = DL19_RUNS / "BM25" / "trec_results_dl19.txt"
    tasb = DL19_RUNS / "D_BERT_KD_TASB" / "trec_results_dl19.txt"
    measured = tmp_path / "m.json"
    compared = tmp_path / "c.json"
    names = ["--name", "bm25", "--name", "tasb", "-m", "RR@10", "-m", "nDCG@10"]
    for args in (["measure", str(DL19_QRELS), str(bm25), str(tasb), *names, "-f", "json",
                  "-o", str(measured)],
                 ["compare", str(DL19_QRELS), str(bm25), str(tasb), *names, "-o",
                  str(compared)]):
        r = cli(*args)
        assert r.exit_code == 0, r.output
    spec = parse_checks("checks:\n"
                        "  - {id: rr, metric: RR@10, vs_baseline: no_significant_regression}\n"
                        "  - {id: ndcg, metric: nDCG@10, op: '>=', threshold: 0.6}\n")
    from_measure = run_gate(spec, load_result(measured, "tasb"),
                            load_baseline_input(measured, stage="bm25"))
    from_compare = run_gate(spec, load_result(compared), load_baseline_input(compared))
    direct = compare(load_qrels(DL19_QRELS), [load_run(bm25, name="bm25"),
                                              load_run(tasb, name="tasb")], ["RR@10"])
    a, b = from_measure.checks[0].comparison, from_compare.checks[0].comparison
    assert a is not None and b is not None
    assert a.qids == b.qids == direct.rows[0].qids and len(a.qids) == 43
    assert a.candidate_values == b.candidate_values == direct.rows[0].candidate_values
    assert a.result.p_value == b.result.p_value
    assert a.result.difference == pytest.approx(direct.rows[0].result.difference)
    assert from_measure.checks[1].value == pytest.approx(from_compare.checks[1].value)
    assert from_measure.checks[1].passed  # TAS-B's DL19 nDCG@10 is 0.72


@given(data=st.data())
@fuzz_settings(200)
def test_mutated_documents_are_read_or_refused_with_typed_errors(
        files: dict[str, Path], data: st.DataObject) -> None:
    """Only a `RankproofError` (bounded, naming the file) escapes; nothing is written."""
    source = data.draw(st.sampled_from(["bm25", "both", "cmp", "cmp3", "run"]), label="source")
    doc = (load_result(files["bm25"]).to_dict() if source == "run"
           else json.loads(files[source].read_text()))
    content = data.draw(json_text(doc), label="document")
    stage = data.draw(st.sampled_from([None, "bm25", "dense", "nope"]), label="stage")
    role = data.draw(st.sampled_from(["run", "baseline"]), label="role")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.json"
        path.write_bytes(content)
        before = snapshot(Path(tmp))
        outcome = refused_or_read(load_result, path, stage, role=role)
        if isinstance(outcome, InputError) and outcome.path is None:
            pytest.fail(f"an error that does not name the file: {outcome}")
        refused_or_read(load_baseline_input, path, Path(tmp) / "baselines", stage=stage)
        assert snapshot(Path(tmp)) == before
