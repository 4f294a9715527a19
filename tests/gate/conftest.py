"""Gate tests: pytester for the plugin tests, and golden-corpus reports shared by several tests.

``pytest_plugins = ["pytester"]`` is not allowed in a conftest below the
root one (pytest refuses it when the whole suite is collected), so the
plugin is registered from ``pytest_configure`` instead, which works both for
``pytest tests/gate`` and for ``pytest``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test never appends to the real $GITHUB_STEP_SUMMARY of the CI job running it."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture(scope="session")
def junit_schema() -> object:
    import xmlschema

    return xmlschema.XMLSchema(HERE / "junit.xsd")


@pytest.fixture(scope="session")
def golden_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``rankproof eval --stages bm25`` reports on the bundled golden corpus, made by the CLI.

    * ``base`` and ``rerun``: the default configuration, run twice;
    * ``small_chunks``: chunks a tenth the size (80 characters, overlap 10) —
      a configuration worse by a real margin (nDCG@10 0.90 → 0.54);
    * ``document``: the default configuration at document granularity (not
      comparable with chunk-level baselines).
    """
    import contextlib

    from typer.testing import CliRunner

    from rankproof.cli import app

    root = tmp_path_factory.mktemp("golden-reports")
    runner = CliRunner()
    variants = {
        "base": [],
        "rerun": [],
        "small_chunks": ["--chunk-size", "80", "--overlap", "10"],
        "document": ["--granularity", "document"],
    }
    out = {}
    with contextlib.chdir(root):  # eval also writes evals/results/latest.json in the cwd
        for name, extra in variants.items():
            path = root / f"{name}.json"
            result = runner.invoke(app, ["eval", "--stages", "bm25", "--quiet", "-o", str(path),
                                         *extra])
            assert result.exit_code == 0, result.output
            out[name] = path
    return out
