"""``rankproof run`` over run files: the cache, ``--only``, ``--dry-run``, gates, failures."""

from __future__ import annotations

import json
from pathlib import Path

from tests.pipeline._helpers import invoke, runs_experiment, stage_json, statuses, write

from rankproof.pipeline import load_experiment, plan

STAGES = ["bm25", "rm3", "tasb", "hybrid", "scores", "compare", "gate", "report"]


def test_first_run_writes_every_stage_and_documents_the_commands_write(tmp_path: Path) -> None:
    exp = runs_experiment(tmp_path)
    r = invoke("run", exp)
    assert r.exit_code == 0, r.output
    out = tmp_path / "out"
    assert statuses(out) == {s: "run" for s in STAGES}
    for stage in ("hybrid", "scores", "compare", "gate", "report"):
        record = stage_json(out, stage)
        assert record["status"] == "ok" and record["key"].startswith("sha256:")
        assert record["provenance"]["scope"]["pool"] == "sampled"
        for name, digest in record["outputs"].items():
            assert (out / stage / name).is_file() and digest.startswith("sha256:")
    # the same JSON `rankproof measure -f json` and `rankproof compare -o` write
    measure = json.loads((out / "scores" / "measure.json").read_text())
    assert [run["run"] for run in measure["runs"]] == ["bm25", "rm3", "tasb", "hybrid"]
    assert measure["provenance"]["inputs"]["qrels"][0]["sha256"].startswith("sha256:")
    comparison = json.loads((out / "compare" / "comparison.json").read_text())
    assert comparison["kind"] == "rankproof.comparison" and comparison["baseline"] == "bm25"
    assert comparison["evidence"]["queries"]  # query text from the topics file
    assert json.loads((out / "gate" / "verdict.json").read_text())["passed"] is True
    assert "bm25" in (out / "report" / "report.md").read_text()
    run = json.loads((out / "run.json").read_text())
    assert run["kind"] == "rankproof.experiment" and run["schema_version"] == 1
    assert run["provenance"]["inputs"]["experiment"]["sha256"].startswith("sha256:")
    # the bm25 run file is the external run, digested, not copied
    assert stage_json(out, "bm25")["external"]["sha256"].startswith("sha256:")
    # the numbers are trec_eval's: the README's TREC DL 2019 BM25 nDCG@10 at rel 2 is 0.5058
    bm25 = next(x for x in measure["runs"] if x["run"] == "bm25")
    assert round(bm25["means"]["nDCG@10"], 4) == 0.5058


def test_rerun_is_cached_with_equal_keys_and_zero_seconds(tmp_path: Path) -> None:
    exp = runs_experiment(tmp_path)
    assert invoke("run", exp).exit_code == 0
    out = tmp_path / "out"
    keys = {s: stage_json(out, s)["key"] for s in STAGES}
    again = invoke("run", exp)
    assert again.exit_code == 0, again.output
    assert statuses(out) == {s: "cached" for s in STAGES}
    assert {s: stage_json(out, s)["key"] for s in STAGES} == keys
    assert "bm25: cached (key " in again.stderr
    doc = json.loads((out / "run.json").read_text())
    assert all(s["seconds"] == 0 for s in doc["stages"])


def test_a_changed_parameter_reruns_that_stage_and_what_reads_it(tmp_path: Path) -> None:
    assert invoke("run", runs_experiment(tmp_path)).exit_code == 0
    out = tmp_path / "out"
    before = stage_json(out, "hybrid")["key"]
    exp = runs_experiment(tmp_path, k1="\n    k: 30")
    assert invoke("run", exp).exit_code == 0
    got = statuses(out)
    assert got["hybrid"] == "run" and stage_json(out, "hybrid")["key"] != before
    assert {got[s] for s in ("bm25", "rm3", "tasb")} == {"cached"}
    # the fused run changed, so what reads it reran; the comparison reads it too
    assert got["scores"] == "run" and got["compare"] == "run" and got["gate"] == "run"


def test_a_changed_input_file_reruns_the_stages_that_read_it(tmp_path: Path) -> None:
    exp = runs_experiment(tmp_path)
    assert invoke("run", exp).exit_code == 0
    out = tmp_path / "out"
    rm3 = tmp_path / "runs" / "BM25_RM3.txt"
    lines = rm3.read_text().splitlines(keepends=True)
    rm3.write_text("".join(lines[:-50]))  # drop some of the last topic's documents
    assert invoke("run", exp).exit_code == 0
    got = statuses(out)
    assert got["rm3"] == "run" and got["scores"] == "run" and got["compare"] == "run"
    assert got["bm25"] == got["tasb"] == got["hybrid"] == "cached"
    assert got["gate"] == "run"  # it reads the measure document, which changed


def test_only_runs_the_named_stages_and_reuses_their_upstream(tmp_path: Path) -> None:
    exp = runs_experiment(tmp_path)
    assert invoke("run", exp).exit_code == 0
    out = tmp_path / "out"
    r = invoke("run", exp, "--only", "compare", "report")
    assert r.exit_code == 0, r.output
    got = statuses(out)
    assert got["compare"] == "run" and got["report"] == "run"
    assert got["bm25"] == got["rm3"] == got["tasb"] == got["hybrid"] == "cached"
    assert got["scores"] == got["gate"] == "skipped"


def test_only_refuses_when_an_upstream_stage_has_no_cached_output(tmp_path: Path) -> None:
    exp = runs_experiment(tmp_path)
    r = invoke("run", exp, "--only", "compare")
    assert r.exit_code == 2
    assert "run it first or drop --only" in r.stderr and "'hybrid'" in r.stderr
    assert not (tmp_path / "out").exists()
    unknown = invoke("run", exp, "--only", "nope")
    assert unknown.exit_code == 2 and "names no stage 'nope'" in unknown.stderr


def test_dry_run_plans_and_writes_nothing(tmp_path: Path) -> None:
    exp = runs_experiment(tmp_path)
    r = invoke("run", exp, "--dry-run")
    assert r.exit_code == 0, r.output
    assert "no output yet" in r.stdout and not (tmp_path / "out").exists()
    assert invoke("run", exp).exit_code == 0
    planned = {p.id: p.action for p in plan(load_experiment(exp), ["report"])}
    assert planned == {"bm25": "cached", "rm3": "cached", "tasb": "cached", "hybrid": "cached",
                       "scores": "skipped", "compare": "cached", "gate": "skipped",
                       "report": "run"}
    mtime = (tmp_path / "out" / "run.json").stat().st_mtime_ns
    assert invoke("run", exp, "--dry-run", "--only", "report").exit_code == 0
    assert (tmp_path / "out" / "run.json").stat().st_mtime_ns == mtime


def test_a_failed_gate_exits_1_and_keeps_its_verdict(tmp_path: Path) -> None:
    exp = runs_experiment(tmp_path)
    write(tmp_path / "checks.yaml", "checks:\n  - id: floor\n    metric: nDCG@10\n"
                                    "    op: '>='\n    threshold: 0.99\n")
    r = invoke("run", exp)
    assert r.exit_code == 1, r.output
    assert "gate failed: gate" in r.stderr
    assert json.loads((tmp_path / "out" / "gate" / "verdict.json").read_text())["passed"] is False
    assert invoke("run", exp).exit_code == 1  # cached, still failed


def test_a_failing_stage_leaves_earlier_outputs_and_no_half_written_folder(
        tmp_path: Path) -> None:
    exp = runs_experiment(tmp_path)
    assert invoke("run", exp).exit_code == 0
    out = tmp_path / "out"
    old_gate = (out / "gate" / "verdict.json").read_bytes()
    write(tmp_path / "checks.yaml", "checks:\n  - id: floor\n    metric: nDCG@10\n    op: '>='\n")
    r = invoke("run", exp)
    assert r.exit_code == 2 and "invalid checks file" in r.stderr
    assert (out / "gate" / "verdict.json").read_bytes() == old_gate
    assert not [p for p in out.iterdir() if p.name.startswith(".")]
    assert statuses(out)["gate"] == "failed" and statuses(out)["report"] == "not run"


def test_only_refuses_a_stale_upstream_and_a_folder_it_did_not_write(tmp_path: Path) -> None:
    exp = runs_experiment(tmp_path)
    assert invoke("run", exp).exit_code == 0
    runs_experiment(tmp_path, k1="\n    k: 10")  # hybrid's parameters change
    r = invoke("run", exp, "--only", "compare")
    assert r.exit_code == 2 and "'hybrid'" in r.stderr and "drop --only" in r.stderr
    other = runs_experiment(tmp_path / "other")
    write(tmp_path / "other" / "out" / "hybrid" / "notes.txt", "mine\n")
    refused = invoke("run", other)
    assert refused.exit_code == 2 and "not written by rankproof run" in refused.stderr
    assert (tmp_path / "other" / "out" / "hybrid" / "notes.txt").read_text() == "mine\n"
    assert not (tmp_path / "other" / "out" / "bm25").exists()
