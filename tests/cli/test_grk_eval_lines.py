"""groundkit's five documented ``grk eval`` command lines (seed 002), translated as
docs/compat.md's table says, each checked on the real command (``--dry-run``: the plan
is validated and printed, nothing is indexed or written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankproof.cli import app


def _eval(*args: str) -> tuple[int, str, str]:
    got = CliRunner().invoke(app, ["eval", *args, "--dry-run"])
    return got.exit_code, got.stdout, got.stderr


def _corpus(root: Path) -> tuple[Path, Path]:
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    (corpus / "water.txt").write_text("The plant makes 42 MLD of water every day.\n")
    (corpus / "rain.txt").write_text("Rain falls on the hills in the winter months.\n")
    judgments = root / "judgments.jsonl"
    judgments.write_text("".join(json.dumps(r) + "\n" for r in (
        {"query_id": "plant-output", "query": "how much water does the plant make",
         "category": "normal", "gold": [{"doc": "water.txt", "quote": "42 MLD"}]},
        {"query_id": "winter-rain", "query": "when does rain fall",
         "category": "normal", "gold": [{"doc": "rain.txt", "quote": "winter months"}]})))
    return corpus, judgments


def test_1_grk_eval(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``grk eval`` → ``rankproof eval``: the bundled golden corpus, BM25 first."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _eval()
    assert code == 0, err
    assert "golden" in out and "bm25, dense, fusion (baseline: bm25)" in out


def test_2_corpus_dir_and_judgments(tmp_path: Path) -> None:
    """``grk eval --corpus-dir D --judgments J``: the alias is accepted as it is."""
    corpus, judgments = _corpus(tmp_path)
    code, out, err = _eval("--corpus-dir", str(corpus), "--judgments", str(judgments))
    assert code == 0, err
    assert _eval(str(corpus), "--judgments", str(judgments))[1] == out  # the same plan
    assert "│ documents      │ 2 " in out and "│ queries        │ 2 (normal 2)" in out
    code, _, err = _eval(str(corpus), "--corpus-dir", str(tmp_path), "-j", str(judgments))
    assert code == 2 and "name two corpora" in err


def test_3_dense_with_an_embedding_model(tmp_path: Path) -> None:
    """``grk eval --dense --embed-model nomic-embed-text`` (an Ollama model) →
    ``--stages bm25,dense --embed-model openai:nomic-embed-text@http://HOST:11434/v1``."""
    corpus, judgments = _corpus(tmp_path)
    code, out, err = _eval(str(corpus), "-j", str(judgments), "--stages", "bm25,dense",
                           "--embed-model", "openai:nomic-embed-text@http://127.0.0.1:11434/v1")
    assert code == 0, err
    assert "bm25, dense (baseline: bm25)" in out


def test_4_rerank_with_a_cross_encoder(tmp_path: Path) -> None:
    """``grk eval --rerank --rerank-model M`` → ``--stages bm25,dense,fusion,rerank
    --rerank-model DIR`` (a local cross-encoder directory)."""
    from rankproof.retrieval import make_plumbing_cross_encoder

    model = make_plumbing_cross_encoder(tmp_path / "tiny-ce", seed=0)
    corpus, judgments = _corpus(tmp_path / "data")
    code, out, err = _eval(str(corpus), "-j", str(judgments), "--stages",
                           "bm25,dense,fusion,rerank", "--rerank-model", str(model))
    assert code == 0, err
    assert "bm25, dense, fusion, rerank (baseline: bm25)" in out


def test_5_synthesis_and_judge_are_eval_flags(tmp_path: Path) -> None:
    """``grk eval --synthesis --judge --chat-model M``: the chat model is a provider file's
    ``model`` (``eval --synthesis CHAT.yaml --judge JUDGE.yaml``); the files are read and
    checked before the plan (tests/rag/test_synthesis.py runs it against a server)."""
    got = CliRunner().invoke(app, ["eval", "--synthesis", "--judge", "--dry-run"])
    assert got.exit_code == 2  # --synthesis takes a provider file: '--judge' is not one
    chat = tmp_path / "chat.yaml"
    chat.write_text("base_url: http://127.0.0.1:9/v1\nmodel: M\n", encoding="utf-8")
    judge = tmp_path / "judge.yaml"
    judge.write_text("model: J\nrubric: Is it cited?\nscale: [1, 2, 3, 4, 5]\n"
                     "endpoint: {base_url: 'http://127.0.0.1:9/v1'}\n", encoding="utf-8")
    code, out, err = _eval("--synthesis", str(chat), "--judge", str(judge))
    assert code == 0 and "--dry-run" in out, err
    assert "M at http://127.0.0.1:9/v1: one answer per answerable query" in " ".join(out.split())
    assert "judged by J" in out
