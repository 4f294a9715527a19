"""A ``rag`` stage with ``llm_metrics`` and ``provider``: the same document as ``rankproof rag
score --llm-metrics … --provider …`` (provenance aside), against the scripted chat/embeddings
server of the LLM-metric tests (a labelled test double on 127.0.0.1); every call failing
refuses the stage naming the endpoint; the two fields go together."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.pipeline._helpers import invoke, stage_json, write
from tests.providers._servers import refused_url, scripted_server
from tests.rag.test_llm_metrics import ALL, FAITHFUL, REFS, _provider, _script


def _without_provenance(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in ("provenance", "created_at")}


def _experiment(tmp_path: Path, provider: Path, metrics: str = ALL) -> Path:
    listed = ", ".join(metrics.split(","))
    return write(tmp_path / "exp.yaml", f"""\
output: out
stages:
  - {{id: answers, kind: rag, answers: {FAITHFUL}, references: {REFS},
     llm_metrics: [{listed}], provider: {provider.name}}}
  - {{id: answers_md, kind: report, input: answers}}
""")


def test_the_stage_writes_what_rag_score_writes(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with scripted_server(_script()) as served:
        provider = _provider(tmp_path, served.base_url)
        r = invoke("run", _experiment(tmp_path, provider))
        assert r.exit_code == 0, r.output
        cli = invoke("rag", "score", FAITHFUL, "--references", REFS, "--llm-metrics", ALL,
                     "--provider", provider, "-o", tmp_path / "rag.json")
        assert cli.exit_code == 0, cli.output
    mine = json.loads((tmp_path / "out" / "answers" / "rag.json").read_text())
    theirs = json.loads((tmp_path / "rag.json").read_text())
    assert set(ALL.split(",")) <= set(mine["metrics"])
    assert mine["llm_metrics"]["metrics"]["faithfulness"]["mean"] == 0.5  # 1 of 2 statements
    # The command ran second and read the stage's cached replies: only usage differs.
    mine["llm_metrics"].pop("usage"), theirs["llm_metrics"].pop("usage")
    assert _without_provenance(mine) == _without_provenance(theirs)
    assert "faithfulness" in (tmp_path / "out" / "answers_md" / "report.md").read_text()
    assert str(provider) in json.dumps(stage_json(tmp_path / "out", "answers"))


def test_every_call_failing_refuses_the_stage_naming_the_endpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    url = refused_url()
    r = invoke("run", _experiment(tmp_path, _provider(tmp_path, url), "faithfulness"))
    assert r.exit_code == 2
    assert f"the LLM metrics' provider at {url} failed every call: connection refused" in \
        " ".join(r.output.split())


def test_llm_metrics_need_a_provider(tmp_path: Path) -> None:
    exp = write(tmp_path / "exp.yaml", f"""\
output: out
stages:
  - {{id: answers, kind: rag, answers: {FAITHFUL}, llm_metrics: [faithfulness]}}
""")
    r = invoke("run", exp)
    assert r.exit_code == 2 and "llm_metrics and provider go together" in r.output


def test_the_stages_llm_labels_give_what_rag_score_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [json.loads(line) for line in Path(FAITHFUL).read_text().splitlines()[1:]
            if line.strip()]
    labels = write(tmp_path / "labels.jsonl", "".join(
        json.dumps({"query_id": r["query_id"], "metric": "faithfulness", "label": i % 2})
        + "\n" for i, r in enumerate(rows[:5])))
    with scripted_server(_script()) as served:
        provider = _provider(tmp_path, served.base_url)
        exp = write(tmp_path / "exp.yaml", f"""\
output: out
stages:
  - {{id: answers, kind: rag, answers: {FAITHFUL}, references: {REFS},
     llm_metrics: [faithfulness], provider: {provider.name}, llm_labels: {labels.name}}}
""")
        r = invoke("run", exp)
        assert r.exit_code == 0, r.output
        cli = invoke("rag", "score", FAITHFUL, "--references", REFS, "--llm-metrics",
                     "faithfulness", "--provider", provider, "--llm-labels", labels,
                     "-o", tmp_path / "rag.json")
        assert cli.exit_code == 0, cli.output
    mine = json.loads((tmp_path / "out" / "answers" / "rag.json").read_text())
    theirs = json.loads((tmp_path / "rag.json").read_text())
    ppi = mine["llm_metrics"]["metrics"]["faithfulness"]["ppi"]
    assert ppi is not None and ppi["labelled"] == 5
    assert ppi == theirs["llm_metrics"]["metrics"]["faithfulness"]["ppi"]


def test_llm_labels_need_llm_metrics(tmp_path: Path) -> None:
    exp = write(tmp_path / "exp.yaml", f"""\
output: out
stages:
  - {{id: answers, kind: rag, answers: {FAITHFUL}, llm_labels: labels.jsonl}}
""")
    r = invoke("run", exp)
    assert r.exit_code == 2 and "llm_labels needs llm_metrics" in r.output
