"""``--history URL`` on ``rag score``, ``rag compare``, ``run`` and ``discover``: each
command's result is stored with its kind and, where it has them, its per-query values (on
SQLite; the store itself is tested on both databases in `test_store`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.history import open_store
from rankproof.history._store import shown_url

EX = Path(__file__).resolve().parents[2] / "src" / "rankproof" / "rag" / "example"
REFS, FAITHFUL, HALLUCINATED = (EX / "references.jsonl", EX / "answers_faithful.jsonl",
                                EX / "answers_hallucinated.jsonl")
runner = CliRunner()


@pytest.fixture(autouse=True)
def _branch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKPROOF_BRANCH", "main")
    monkeypatch.delenv("RANKPROOF_HISTORY", raising=False)


def _case_values(doc: dict[str, object], metric: str) -> dict[str, float]:
    rows = doc["run"]["rows"]  # type: ignore[index]
    return {r["case_id"]: float(r["values"][metric]) for r in rows  # type: ignore[index]
            if metric in r["values"]}  # type: ignore[index]


def test_rag_score_records_its_report_with_per_case_values(tmp_path: Path) -> None:
    db, out = tmp_path / "h.db", tmp_path / "rag.json"
    got = runner.invoke(app, ["rag", "score", str(FAITHFUL), "--references", str(REFS),
                              "-o", str(out), "--history", str(db)])
    assert got.exit_code == 0, got.output
    assert "recorded sha256:" in got.output
    doc = json.loads(out.read_text())
    with open_store(str(db)) as store:
        (info,) = store.results()
        assert (info.kind, info.git_branch, info.runs) == ("rankproof.rag", "main",
                                                           ("answers_faithful",))
        assert store.document(info) == doc
        assert "grounding" in info.measures and "token_f1" in info.measures
        for metric in ("grounding", "token_f1"):
            system, values = store.series(info, None, metric)
            assert system == "answers_faithful"
            assert values == _case_values(doc, metric) and len(values) == 44
    # the same report again is a no-op
    again = runner.invoke(app, ["history", "add", str(out), "--history", str(db)])
    assert again.exit_code == 0 and "already" in again.output, again.output


def test_rag_score_history_without_an_output_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    got = runner.invoke(app, ["rag", "score", str(FAITHFUL), "--references", str(REFS),
                              "--history", str(db)])
    assert got.exit_code == 2 and "give -o PATH" in got.output, got.output
    assert not db.exists()


def test_rag_compare_records_a_comparison_of_both_arms(tmp_path: Path) -> None:
    db, out = tmp_path / "h.db", tmp_path / "cmp.json"
    got = runner.invoke(app, ["rag", "compare", str(HALLUCINATED), str(FAITHFUL),
                              "--references", str(REFS), "-m", "grounding", "-m",
                              "quotes_unsupported", "--resamples", "2000", "-o", str(out),
                              "--history", str(db)])
    assert got.exit_code == 0, got.output
    doc = json.loads(out.read_text())
    rows = {r["measure"]: r for r in doc["rows"]}
    with open_store(str(db)) as store:
        (info,) = store.results(kind="comparison")
        assert info.kind == "rankproof.comparison"
        assert info.runs == ("answers_hallucinated", "answers_faithful")
        assert set(info.measures) == {"grounding", "quotes_unsupported"}
        for metric, row in rows.items():
            qids = row["qids"]
            for system, side in (("answers_faithful", "candidate_values"),
                                 ("answers_hallucinated", "baseline_values")):
                name, values = store.series(info, system, metric)
                assert name == system
                assert values == dict(zip(qids, map(float, row[side]), strict=True))
    no_output = runner.invoke(app, ["rag", "compare", str(HALLUCINATED), str(FAITHFUL),
                                    "--references", str(REFS), "--history", str(db)])
    assert no_output.exit_code == 2 and "give -o PATH" in no_output.output


def test_run_records_every_result_its_stages_wrote(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exp = tmp_path / "exp.yaml"
    exp.write_text(f"""\
output: out
seed: 3
stages:
  - {{id: answers, kind: rag, answers: {FAITHFUL}, references: {REFS}}}
  - {{id: disc, kind: discover, mode: bm25}}
  - {{id: arms, kind: rag_compare, baseline: {HALLUCINATED}, candidates: [{FAITHFUL}],
     references: {REFS}, metrics: [grounding], resamples: 2000}}
  - {{id: rag_md, kind: report, input: answers}}
""")
    db = tmp_path / "h.db"
    got = runner.invoke(app, ["run", str(exp), "--history", str(db)])
    assert got.exit_code == 0, got.output
    rag_doc = json.loads((tmp_path / "out" / "answers" / "rag.json").read_text())
    with open_store(str(db)) as store:
        found = store.results()
        assert sorted(r.kind for r in found) == ["rankproof.discovery", "rankproof.rag"]
        rag = next(r for r in found if r.kind == "rankproof.rag")
        assert store.series(rag, None, "grounding")[1] == _case_values(rag_doc, "grounding")
        assert all(r.git_branch == "main" for r in found)
    # the rag_compare stage's document is a kind the store does not keep: said, not hidden
    assert "not recorded" in got.output and "rag_compare.json" in got.output
    # a second run reuses the cached stages: their results are already recorded
    again = runner.invoke(app, ["run", str(exp), "--history", str(db)])
    assert again.exit_code == 0, again.output
    assert again.output.count("already recorded") == 2, again.output
    with open_store(str(db)) as store:
        assert len(store.results()) == 2


def test_discover_records_a_discovery_report(tmp_path: Path) -> None:
    db, out = tmp_path / "h.db", tmp_path / "discovery.json"
    got = runner.invoke(app, ["discover", "--mode", "bm25", "-o", str(out), "--history",
                              str(db)])
    assert got.exit_code == 0, got.output
    doc = json.loads(out.read_text())
    with open_store(str(db)) as store:
        (info,) = store.results(kind="discovery")
        assert info.kind == "rankproof.discovery" and info.git_branch == "main"
        assert store.document(info) == doc
        assert info.measures == ()  # a discovery report keeps no per-query values
    listed = runner.invoke(app, ["history", "list", "--kind", "discovery", "-f", "json",
                                 "--history", str(db)])
    assert listed.exit_code == 0, listed.output
    assert [r["id"] for r in json.loads(listed.stdout)] == [info.id]


def test_a_server_url_is_shown_without_its_password() -> None:
    url = "postgresql+psycopg://ci:s3cr3t@db.internal:5432/history"
    assert shown_url(url) == "postgresql+psycopg://ci:***@db.internal:5432/history"
