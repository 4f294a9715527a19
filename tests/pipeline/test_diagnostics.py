"""The discover and rag kinds write what ``rankproof discover`` and ``rankproof rag score``
write (provenance aside), and ``rankproof report`` renders them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.pipeline._helpers import invoke, write

RAG = Path(__file__).resolve().parents[2] / "src" / "rankproof" / "rag" / "example"


def _without_provenance(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in ("provenance", "created_at")}


def test_discover_and_rag_stages_match_their_commands(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    answers, refs = RAG / "answers_hallucinated.jsonl", RAG / "references.jsonl"
    exp = write(tmp_path / "exp.yaml", f"""\
output: out
seed: 3
stages:
  - {{id: disc, kind: discover, mode: bm25, calibrate: true}}
  - {{id: answers, kind: rag, answers: {answers}, references: {refs}}}
  - {{id: disc_md, kind: report, input: disc}}
  - {{id: rag_md, kind: report, input: answers}}
""")
    r = invoke("run", exp)
    assert r.exit_code == 0, r.output
    assert invoke("discover", "--mode", "bm25", "--calibrate", "--seed", "3", "-o",
                  "disc.json").exit_code == 0
    assert invoke("rag", "score", answers, "--references", refs, "-o", "rag.json").exit_code == 0
    out = tmp_path / "out"
    for mine, theirs in (("disc/discovery.json", "disc.json"), ("answers/rag.json", "rag.json")):
        a = json.loads((out / mine).read_text())
        b = json.loads((tmp_path / theirs).read_text())
        assert _without_provenance(a) == _without_provenance(b), mine
        assert a["provenance"]["output_dir"] == str((out / mine).parent)
    assert (out / "disc_md" / "report.md").read_text().strip()
    assert (out / "rag_md" / "report.md").read_text().strip()
