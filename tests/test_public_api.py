"""The public API is pinned: adding or removing a name is a deliberate act."""

from __future__ import annotations

import importlib

import pytest

import rankproof
import rankproof.measures

SUBPACKAGES = ("data", "corpus", "measures", "stats", "engine", "providers", "comparison",
               "retrieval",
               "targets", "harness", "discovery", "rag", "gate", "report", "compat", "history",
               "web", "jobs")


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then everything else."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def test_top_level_names_are_pinned() -> None:
    assert rankproof.__all__ == sorted(rankproof.__all__, key=_isort_key)
    assert set(rankproof.__all__) == {
        "Comparison", "ConfigError", "InputError", "Measure", "MissingExtraError",
        "NotComputedError", "PairedResult", "PairingError",
        "PerQuery", "Qrels", "RankproofError", "Run", "StatSettings", "TargetError",
        "UserCodeError",
        "__version__", "compare",
        "correct", "evaluate", "load_qrels", "load_run", "paired_test", "parse",
        "read_trec_qrels", "read_trec_run",
    }
    for name in rankproof.__all__:
        assert hasattr(rankproof, name), name


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_subpackage_exports_exist_and_are_sorted(name: str) -> None:
    module = importlib.import_module(f"rankproof.{name}")
    assert list(module.__all__) == sorted(module.__all__, key=_isort_key), name
    assert len(set(module.__all__)) == len(module.__all__)
    for attr in module.__all__:
        assert hasattr(module, attr), f"rankproof.{name}.{attr}"


def test_importing_rankproof_does_not_load_heavy_dependencies() -> None:
    import subprocess
    import sys

    code = ("import sys, rankproof, rankproof.retrieval, rankproof.harness; "
            "print(sorted(m for m in ('torch', 'pandas', 'sentence_transformers') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_errors_also_subclass_builtins() -> None:
    assert issubclass(rankproof.NotComputedError, KeyError)
    assert issubclass(rankproof.MissingExtraError, ImportError)
    assert issubclass(rankproof.InputError, ValueError)
    assert issubclass(rankproof.PairingError, ValueError)
    assert issubclass(rankproof.ConfigError, ValueError)
    assert issubclass(rankproof.TargetError, RuntimeError)
    for exc in (rankproof.InputError, rankproof.PairingError, rankproof.ConfigError,
                rankproof.TargetError, rankproof.NotComputedError, rankproof.MissingExtraError):
        assert issubclass(exc, rankproof.RankproofError)


def test_import_has_no_side_effects_on_logging() -> None:
    import logging

    assert not logging.getLogger("rankproof").handlers


def test_import_rankproof_is_cheap() -> None:
    """pytest imports rankproof in every session (the plugin): keep numpy and pyarrow out."""
    import subprocess
    import sys

    code = "import sys, rankproof; print('numpy' in sys.modules, 'pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False False"


def test_the_metric_namespace_is_pinned() -> None:
    """One namespace, one registry: `register_metric` and `lookup` live in measures only."""
    assert rankproof.measures.__all__ == [
        "DEFAULT_MEASURES", "DIVERSITY_FAMILIES", "JG_MEASURES", "PREFS_MEASURES",
        "TREC_EVAL_MEASURES",
        "TREC_EVAL_NICKNAMES", "TREC_HEADER_LINES", "TREC_PRINT_ORDER", "TREC_SETS",
        "CrossCheck", "EvalOptions", "Family", "Measure", "MetricDef", "PartitionResult",
        "PerQuery",
        "RunCrossCheck", "TopicPolicy", "TopicSlices", "TrecColumn", "TrecEvalMeasure",
        "TrecMeasureError", "TrecSelection",
        "closest_names", "combine_partitions", "cross_check", "evaluate",
        "evaluate_partition", "evaluate_partitions", "expand_set",
        "families", "family", "is_set", "jg_values", "lookup", "parse", "parse_many",
        "polarity", "prefs_values", "register_aggregate", "register_metric", "registered",
        "rel_format_of", "relstring_length", "relstring_request", "relstrings",
        "resolve", "resolve_measures", "select_trec_eval", "split_measure_list",
        "split_measure_text", "trec_eval_collection_size", "trec_eval_iprec_nan",
        "trec_eval_leftovers", "trec_eval_run", "trec_eval_stand_in", "trec_missing",
    ]
    for name in SUBPACKAGES:
        if name != "measures":
            module = importlib.import_module(f"rankproof.{name}")
            assert not {"register_metric", "lookup"} & set(module.__all__), name


def test_exactly_one_module_defines_the_metric_registry() -> None:
    import ast
    from pathlib import Path

    src = Path(rankproof.__file__).parent
    defining: dict[str, set[str]] = {"register_metric": set(), "lookup": set()}
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) \
                    and node.name in defining:
                defining[node.name].add(path.relative_to(src).as_posix())
    assert defining == {"register_metric": {"measures/_registry.py"},  # (with its overloads)
                        "lookup": {"measures/_registry.py"}}


def test_errors_carry_structured_attributes() -> None:
    e = rankproof.InputError("bad score", path="run.txt", line=3, field="score")
    assert (e.path, e.line, e.field, e.reason) == ("run.txt", 3, "score", "bad score")
    assert str(e) == "run.txt, line 3, field 'score': bad score"
    t = rankproof.TargetError("svc failed", case_id="q1", target="svc", status=503, attempts=2)
    assert (t.case_id, t.target, t.status, t.attempts) == ("q1", "svc", 503, 2)
    assert str(t) == "svc failed"
    p = rankproof.PairingError("differ", only_left=["a"], only_right=("b",))
    assert (p.only_left, p.only_right) == (("a",), ("b",))
    n = rankproof.NotComputedError("P@5 was not computed")
    assert str(n) == "P@5 was not computed"


def test_user_errors_from_the_measure_parser_are_input_errors() -> None:
    with pytest.raises(rankproof.InputError, match="unknown measure 'bogus'"):
        rankproof.parse("bogus@x")
    with pytest.raises(rankproof.NotComputedError, match="P@5 was not computed"):
        rankproof.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "RR").column("P@5")


def test_no_subpackage_shadows_a_top_level_name() -> None:
    """Importing a subpackage sets it as an attribute of `rankproof`; one named like a lazy
    top-level export (``rankproof.compare``, the function) would replace that export."""
    for name in SUBPACKAGES:
        importlib.import_module(f"rankproof.{name}")
        assert name not in rankproof.__all__, name
    assert callable(rankproof.compare)
    assert rankproof.compare.__module__.startswith("rankproof.comparison")



def test_the_comparison_namespace_exports_the_evidence() -> None:
    """What every report stores for a reader (top ids, gold, query text) is public, next to
    the one row type and its engine."""
    import rankproof.comparison

    assert {
        "MAX_EVIDENCE_DEPTH", "MAX_INLINE_EVIDENCE_IDS", "Evidence", "EvidenceSidecar",
        "collect_evidence", "evidence_value", "load_evidence", "read_queries", "sidecar_name",
        "split_evidence",
    } <= set(rankproof.comparison.__all__)


def test_the_comparison_namespace_exports_the_regression_sample() -> None:
    """`rankproof inspect` draws its sample in the comparison layer, where the library can too."""
    import rankproof.comparison

    assert {"REGRESSION_SAMPLE_SIZE", "Regressions", "sample_regressions"} <= set(
        rankproof.comparison.__all__)
    assert rankproof.comparison.REGRESSION_SAMPLE_SIZE == 30


def test_the_stats_namespace_exports_the_null_distribution() -> None:
    """Reports redraw a test's null distribution from stored differences and the seed."""
    import rankproof.stats

    assert {"NullDistribution", "null_distribution"} <= set(rankproof.stats.__all__)


def test_the_engine_namespace_is_pinned() -> None:
    import rankproof.engine

    assert rankproof.engine.__all__ == ["ENGINES", "Executor", "Kind", "LocalExecutor",
                                        "RayExecutor", "cpu_count", "executor_for", "shards"]


def test_the_jobs_namespace_is_pinned() -> None:
    import rankproof.jobs

    assert rankproof.jobs.__all__ == [
        "STDIN", "CompareFilesRequest", "CompareFilesResult", "Note", "Notify", "RunFileResult",
        "RunFileTask", "RunFilesRequest", "RunFilesResult", "check_names", "check_stdin",
        "compare_files", "evaluate_run_file", "measure_files",
        "nothing_left", "run_names", "should_stream", "trec_eval_limited", "unique_labels"]


def test_the_installed_version_is_the_one_written_in_the_package() -> None:
    from importlib.metadata import version

    from rankproof._version import __version__

    assert version("rankproof") == __version__


def test_the_providers_namespace_is_pinned() -> None:
    import rankproof.providers

    assert set(rankproof.providers.__all__) == {
        "REASONS", "CallCheck", "ChatReply", "Prices", "Provider", "ProviderCheck",
        "ProviderConfig", "ProviderError", "ProviderStats", "check_provider",
        "is_provider_spec", "load_provider_config", "provider_from_spec",
    }


def test_the_history_and_web_namespaces_are_pinned() -> None:
    import rankproof.history
    import rankproof.web

    assert set(rankproof.history.__all__) == {
        "DEFAULT_PATH", "ENV", "KINDS", "SCHEMA_VERSION", "HistoryStore", "ResultInfo",
        "Since", "Trend", "TrendPoint", "compare_results", "export_records", "export_table",
        "import_records", "kind_of", "open_store", "read_json_file", "read_records", "resolve_url",
        "result_id", "since", "store_records", "trend",
    }
    assert rankproof.web.__all__ == ["DEFAULT_HOST", "DEFAULT_PORT", "create_app", "serve"]


def test_the_stats_settings_and_their_defaults_are_public() -> None:
    """`StatSettings` and its named defaults are the one way settings travel (issue 22)."""
    import rankproof.stats

    assert {"StatSettings", "DEFAULT_TEST", "DEFAULT_ALPHA", "DEFAULT_CORRECTION",
            "DEFAULT_RESAMPLES", "DEFAULT_SEED", "DEFAULT_CONFIDENCE_LEVEL", "DEFAULT_PAIRS",
            "TESTS", "CORRECTIONS", "PAIRS"} <= set(rankproof.stats.__all__)
    assert rankproof.StatSettings is rankproof.stats.StatSettings
