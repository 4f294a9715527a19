"""``eval --dry-run`` refuses every parameter a real run would refuse (issue 9, class 14).

A real run only reaches some checks after indexing and searching, which can take minutes;
a dry run is how CI validates a configuration, so it must not pass one the run rejects.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.harness import EvalConfig

runner = CliRunner()


@pytest.mark.parametrize(("args", "field"), [
    (["--alpha", "2"], "alpha"),
    (["--alpha", "0"], "alpha"),
    (["--resamples", "0"], "resamples"),
    (["--chunk-size", "-5"], "chunk_size"),
    (["--overlap", "900", "--chunk-size", "800"], "overlap"),
    (["--stages", "bm25,bogus"], "bogus"),
    (["-m", "bogus@x"], "bogus"),
])
def test_dry_run_refuses_what_a_run_would(args: list[str], field: str, tmp_path) -> None:
    result = runner.invoke(app, ["eval", "--dry-run", "--embedder", "hashing", *args,
                                 "-o", str(tmp_path / "r.json")])
    assert result.exit_code == 2, result.output
    assert field in result.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(("change", "field"), [
    ({"depth": 0}, "depth"), ({"rrf_k": -1}, "rrf_k"), ({"rerank_depth": 0}, "rerank_depth"),
    ({"fusion": "max"}, "fusion"), ({"fusion_norm": "l2"}, "fusion_norm"),
    ({"embedder": "bert"}, "embedder"), ({"test": "anova"}, "test"),
    ({"correction": "fdr"}, "correction"), ({"bm25_b": 1.5}, "bm25_b"),
    ({"bm25_k1": -0.1}, "bm25_k1"), ({"resamples": True}, "resamples"),
])
def test_the_config_checks_every_parameter(change: dict[str, object], field: str) -> None:
    from rankproof import ConfigError

    config = EvalConfig(stages=("bm25",), **change)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=f"field '{field}'"):
        config.check()


def test_the_defaults_pass() -> None:
    EvalConfig().check()
