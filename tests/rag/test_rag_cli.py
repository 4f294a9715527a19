"""``rankproof rag`` end to end on the bundled QA set, a judge behind a real local server,
and a judge-backed gate check that blocks only when calibrated."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests._jsonserver import serve
from typer.testing import CliRunner

from rankproof.cli import app

EX = Path(__file__).resolve().parents[2] / "src" / "rankproof" / "rag" / "example"
REFS, FAITHFUL, HALLUCINATED = (EX / "references.jsonl", EX / "answers_faithful.jsonl",
                                EX / "answers_hallucinated.jsonl")
runner = CliRunner()


def _run(*args: str) -> object:
    return runner.invoke(app, list(args))


def test_score_the_faithful_file(tmp_path: Path) -> None:
    out = tmp_path / "rag.json"
    r = _run("rag", "score", str(FAITHFUL), "--references", str(REFS), "-o", str(out))
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    doc = json.loads(out.read_text())
    assert doc["kind"] == "rankproof.rag" and doc["n"] == 44
    assert doc["means"]["citations_dangling"] == 0 and doc["means"]["quotes_unsupported"] == 0
    assert doc["provenance"]["inputs"]["answers"]["sha256"].startswith("sha256:")
    assert "grounding_cited" in r.stdout  # type: ignore[attr-defined]


def test_compare_calls_the_faithful_arm_better_on_grounding(tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    r = _run("rag", "compare", str(HALLUCINATED), str(FAITHFUL), "--references", str(REFS),
             "-m", "grounding", "-m", "grounding_cited", "-m", "quotes_unsupported",
             "--resamples", "4000", "-o", str(out))
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    rows = {row["measure"]: row for row in json.loads(out.read_text())["rows"]}
    assert rows["grounding"]["verdict"] == "better"
    assert rows["grounding_cited"]["verdict"] == "better"
    assert rows["quotes_unsupported"]["verdict"] == "better"  # lower is better: fewer
    for row in rows.values():  # one verdict per row: the interval agrees
        assert (row["ci_low"] > 0 or row["ci_high"] < 0) == (row["verdict"] != "no detectable "
                                                                               "difference")


def _edit(src: Path, dst: Path, fn: object) -> Path:
    lines = src.read_text().splitlines()
    dst.write_text("\n".join(fn(lines)) + "\n")  # type: ignore[operator]
    return dst


def test_mismatched_query_ids_are_refused_and_nothing_written(tmp_path: Path) -> None:
    short = _edit(FAITHFUL, tmp_path / "short.jsonl", lambda ls: ls[:-1])
    out = tmp_path / "cmp.json"
    r = _run("rag", "compare", str(HALLUCINATED), str(short), "--references", str(REFS), "-o",
             str(out))
    assert r.exit_code == 2 and "answer different queries" in r.output  # type: ignore[attr-defined]
    assert not out.exists()


def test_a_declared_citation_to_a_missing_passage_is_refused(tmp_path: Path) -> None:
    def corrupt(lines: list[str]) -> list[str]:
        row = json.loads(lines[1])
        row["citations"] = [len(row["contexts"]) + 1]
        return [lines[0], json.dumps(row), *lines[2:]]

    bad = _edit(FAITHFUL, tmp_path / "bad.jsonl", corrupt)
    out = tmp_path / "rag.json"
    r = _run("rag", "score", str(bad), "--references", str(REFS), "-o", str(out))
    assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
    assert "line 2, field 'citations'" in r.output  # type: ignore[attr-defined]
    assert not out.exists()


def test_a_references_file_missing_a_query_is_refused(tmp_path: Path) -> None:
    refs = _edit(REFS, tmp_path / "refs.jsonl", lambda ls: ls[1:])
    out = tmp_path / "rag.json"
    r = _run("rag", "score", str(FAITHFUL), "--references", str(refs), "-o", str(out))
    assert r.exit_code == 2 and "no reference" in r.output  # type: ignore[attr-defined]
    assert not out.exists()


def test_arms_with_different_manifests_need_the_flag(tmp_path: Path) -> None:
    def other_checkpoint(lines: list[str]) -> list[str]:
        head = json.loads(lines[0])
        head["__manifest__"]["generator_checkpoint"] = "example-writer-2"
        return [json.dumps(head), *lines[1:]]

    other = _edit(HALLUCINATED, tmp_path / "other.jsonl", other_checkpoint)
    refused = _run("rag", "compare", str(FAITHFUL), str(other), "-m", "grounding")
    assert refused.exit_code == 2 and "generator_checkpoint" in refused.output  # type: ignore[attr-defined]
    allowed = _run("rag", "compare", str(FAITHFUL), str(other), "-m", "grounding",
                   "--allow-arm-mismatch", "--resamples", "500", "-f", "json")
    assert allowed.exit_code == 0, allowed.output  # type: ignore[attr-defined]
    caveats = json.loads(allowed.stdout)["caveats"]  # type: ignore[attr-defined]
    assert any("differ in generator_checkpoint" in c for c in caveats)


# --- a judge behind a real OpenAI-compatible server ------------------------------------------


@pytest.fixture
def judge_url() -> Iterator[tuple[str, list[int]]]:
    calls: list[int] = []

    def reply(body: dict[str, list[dict[str, str]]]) -> dict[str, object]:
        prompt = body["messages"][-1]["content"]
        answer = prompt.split("Answer to grade:\n", 1)[1]
        calls.append(1)
        if "How long is the total flocculation time" in prompt:
            content = "I think it is fine."  # not JSON: an error row
        else:  # a crude judge: cited answers score 5, others 2
            content = json.dumps({"score": 5 if re.search(r"\[\d\]", answer) else 2,
                                  "reason": "checked"})
        return {"choices": [{"message": {"content": content}}]}

    with serve(reply, "/v1") as url:  # type: ignore[arg-type]
        yield url, calls


def _judge_config(tmp_path: Path, url: str) -> Path:
    config = tmp_path / "judge.yaml"
    config.write_text(f"name: faithfulness\nmodel: tiny-judge\nrubric: Are the claims cited?\n"
                      f"scale: [1, 2, 3, 4, 5]\nendpoint: {{base_url: '{url}'}}\n"
                      f"cache_dir: cache\n")
    return config


def test_judge_scores_cache_ppi_and_a_gate_that_is_advisory_until_calibrated(
        tmp_path: Path, judge_url: tuple[str, list[int]]) -> None:
    url, calls = judge_url
    config = _judge_config(tmp_path, url)
    ids = [json.loads(line)["query_id"] for line in REFS.read_text().splitlines()]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"query_id": q, "label": 5}) + "\n" for q in ids[:12]))
    out = tmp_path / "rag.json"
    r = _run("rag", "score", str(FAITHFUL), "--references", str(REFS), "--judge", str(config),
             "--labels", str(labels), "-o", str(out))
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    first = len(calls)
    assert first == 44
    doc = json.loads(out.read_text())
    judge = doc["judge"]
    assert judge["n_errors"] == 1 and judge["calls"] == 44  # the non-JSON verdict: an error row
    assert doc["unscored"]["judge_score"] == ["flocculation-time"]
    assert judge["ppi"]["n"] >= 11 and judge["ppi"]["ci_low"] <= judge["ppi"]["estimate"]
    again = _run("rag", "score", str(FAITHFUL), "--references", str(REFS), "--judge",
                 str(config), "-f", "json")
    assert again.exit_code == 0 and len(calls) == first  # the cache: no new call
    # A judge-backed gate check (it fails: 5.0 < 5.1) is advisory — a warning, exit 0 — until
    # a calibration for this judge meets the floor; then it blocks (exit 1).
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: judged_faithful\n    metric: judge_score\n"
                      "    op: '>='\n    threshold: 5.1\n    judge_calibration: cal.json\n"
                      "    kappa_floor: 0.6\n")
    (tmp_path / "cal.json").write_text("{}")  # not a calibration: refused by name
    bad = _run("gate", str(checks), "--report", str(out))
    assert bad.exit_code == 2 and "cal.json" in bad.output  # type: ignore[attr-defined]
    # Answers to calibrate on: half keep their [N] markers (the judge says 5), half lose them (2).
    mixed = _edit(FAITHFUL, tmp_path / "mixed.jsonl", lambda ls: [ls[0], *(
        json.dumps({**json.loads(line), "answer": re.sub(r"\s*\[\d\]", "",
                                                         json.loads(line)["answer"])})
        if i % 2 else line for i, line in enumerate(ls[1:21]))])
    rows = [json.loads(line) for line in mixed.read_text().splitlines()[1:]]
    disagree = tmp_path / "disagree.jsonl"
    disagree.write_text("".join(
        json.dumps({"query_id": r["query_id"], "label": 2 if i % 3 == 0 else 5}) + "\n"
        for i, r in enumerate(rows)))
    cal = _run("rag", "calibrate-judge", "--judge", str(config), "--answers", str(mixed),
               "--labels", str(disagree), "-o", str(tmp_path / "cal.json"), "--force")
    assert cal.exit_code == 0, cal.output  # type: ignore[attr-defined]
    advisory = _run("gate", str(checks), "--report", str(out))
    assert advisory.exit_code == 0, advisory.output  # type: ignore[attr-defined]
    assert "advisory" in advisory.output and "below the floor" in advisory.output  # type: ignore[attr-defined]
    agree = tmp_path / "agree.jsonl"
    agree.write_text("".join(json.dumps({"query_id": r["query_id"],
                                         "label": 5 if re.search(r"\[\d\]", r["answer"]) else 2})
                             + "\n" for r in rows))
    cal = _run("rag", "calibrate-judge", "--judge", str(config), "--answers", str(mixed),
               "--labels", str(agree), "-o", str(tmp_path / "cal.json"), "--force")
    assert cal.exit_code == 0 and "κ = 1.000" in cal.stdout, cal.output  # type: ignore[attr-defined]
    # The judge's calls on four threads (--workers 4): the same calibration.
    pooled = _run("rag", "calibrate-judge", "--judge", str(config), "--answers", str(mixed),
                  "--labels", str(agree), "-o", str(tmp_path / "cal4.json"), "--workers", "4")
    assert pooled.exit_code == 0 and pooled.stdout.replace("cal4.json", "cal.json") == cal.stdout  # type: ignore[attr-defined]
    same = [json.loads((tmp_path / f).read_text()) for f in ("cal.json", "cal4.json")]
    for doc in same:
        doc.pop("created_at", None)
    assert same[0] == same[1]
    blocking = _run("gate", str(checks), "--report", str(out))
    assert blocking.exit_code == 1, blocking.output  # type: ignore[attr-defined]
    assert "calibrated: κ = 1.000" in blocking.output  # type: ignore[attr-defined]


def test_a_rag_report_serves_as_a_baseline_and_the_comparison_keeps_provenance(
        tmp_path: Path) -> None:
    report = tmp_path / "faithful.json"
    assert _run("rag", "score", str(FAITHFUL), "--references", str(REFS), "-o",
                str(report)).exit_code == 0  # type: ignore[attr-defined]
    saved = _run("baseline", "save", str(report), "--name", "rag-main", "--baseline-dir",
                 str(tmp_path / "b"))
    assert saved.exit_code == 0, saved.output  # type: ignore[attr-defined]
    bad = tmp_path / "hallucinated.json"
    assert _run("rag", "score", str(HALLUCINATED), "--references", str(REFS), "-o",
                str(bad)).exit_code == 0  # type: ignore[attr-defined]
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: grounded\n    metric: grounding_cited\n"
                      "    vs_baseline: no_significant_regression\nresamples: 2000\n")
    gated = _run("gate", str(checks), "--report", str(bad), "--baseline", "rag-main",
                 "--baseline-dir", str(tmp_path / "b"))
    assert gated.exit_code == 1, gated.output  # type: ignore[attr-defined]
    assert "significantly worse" in gated.output  # type: ignore[attr-defined]
    out = tmp_path / "cmp.json"
    r = _run("rag", "compare", str(HALLUCINATED), str(FAITHFUL), "-m", "grounding",
             "--resamples", "500", "-o", str(out))
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    doc = json.loads(out.read_text())
    assert doc["provenance"]["inputs"]["arm0"]["sha256"].startswith("sha256:")
    assert doc["manifests"]["answers_faithful"]["generator_checkpoint"] == "example-writer-1"


def test_context_relevance_from_qrels(tmp_path: Path) -> None:
    """With --qrels, context relevance is judged: 1 when a shown passage is relevant."""
    rows = [json.loads(line) for line in FAITHFUL.read_text().splitlines()[1:]]
    qrels = tmp_path / "qrels.txt"
    # The first 10 questions: the first shown passage judged relevant; the rest: a passage
    # that is never shown.
    qrels.write_text("".join(f"{r['query_id']} 0 {r['contexts'][0]['id'] if i < 10 else 'x'} 1\n"
                             for i, r in enumerate(rows)))
    r = _run("rag", "score", str(FAITHFUL), "--qrels", str(qrels), "-m", "context_relevance",
             "-f", "json")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    doc = json.loads(r.stdout)  # type: ignore[attr-defined]
    assert doc["means"]["context_relevance"] == pytest.approx(10 / 44)
    assert not any("proxy" in c for c in doc["caveats"])
