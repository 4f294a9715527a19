"""Every stage kind of an experiment file accepts the options its command has (issue 22).

For each stage kind with a command, every option of the command (read from the Typer app
itself, so a new option is seen here without an edit) must be one of: a field of the
stage's model under the same name, a field under a declared other name, an option about
where a result is written or how it is shown (the experiment's report stages and `rankproof
run` decide that), an option about how the work is spread over processes (which changes no
number), or one of the stage's inputs, which an experiment gives in its ``inputs:``
section or as references to other stages.

Anything else is a gap. ``GAPS`` records the gaps that remain, kind by kind, so that this
test fails both when a command gains an option no stage accepts and when a gap is closed
without its entry being removed. ``measure`` and ``compare`` have none.
"""

from __future__ import annotations

import click
import pytest
import typer

from rankproof.cli import app
from rankproof.pipeline import KIND_MODELS

COMMANDS = {
    "measure": ("measure",), "compare": ("compare",), "fuse": ("fuse",), "gate": ("gate",),
    "report": ("report",), "discover": ("discover",), "rag": ("rag", "score"),
    "rag_compare": ("rag", "compare"), "eval": ("eval",),
}
"""Each stage kind with a command, and that command's path."""
PRESENTATION = frozenset({
    "output", "fmt", "force", "quiet", "history", "json_out", "junit", "markdown", "html_out",
    "md_out", "latex_out", "latex_style", "detail", "no_summary", "per_query", "dry_run",
})
"""Where a result goes and how it looks: a stage writes its JSON, report stages render."""
EXECUTION = frozenset({"engine", "address", "workers", "partitions", "threads",
                       "max_concurrency", "shard_size"})
"""How the work is spread over processes or threads: the same numbers either way."""
INPUTS = {
    "measure": {"qrels", "qrels_format", "run_format", "names"},
    "compare": {"qrels", "qrels_format", "run_format", "names", "queries"},
    "fuse": {"qrels", "run_format"},
    "report": {"document"},
    "gate": {"report", "stage", "goldens"},
    "eval": {"corpus", "judgments", "beir", "collection", "corpus_dir", "data_root", "irds",
             "split"},
    "rag_compare": {"arms"},
}
"""Options naming a stage's inputs: an experiment's ``inputs:`` section gives the qrels,
the queries, the corpus and its judgments (with their formats); other stages' ids give the
runs (named by their ids), documents and answer arms."""
RENAMED = {
    "measure": {"allow_extra_columns": "extra_columns", "cross_check_with": "cross_check",
                "complete": "topics"},
    "compare": {"allow_extra_columns": "extra_columns"},
}
"""Command option → the stage field that holds it (the field is the settings type's name:
``--allow-extra-columns`` is `rankproof.data.ReadOptions.extra_columns`; ``-c`` is
``topics: complete``)."""
GAPS = {
    "measure": set(),
    "compare": set(),
    "fuse": {"allow_extra_columns", "alpha", "dedupe", "folds", "grid", "k_given", "ks",
             "measure", "norms", "order", "phi", "seed", "sigma", "tag", "weights"},
    "gate": {"alpha", "baseline_dir", "baseline_stage", "correction", "deadline", "headers",
             "plugins",
             "resamples", "resume", "seed", "target", "target_name", "test", "timeout"},
    "report": set(),
    "discover": {"calibration_file", "embed_model", "rerank_model", "retriever",
                 "retriever_version", "save_calibration", "seed"},
    "rag": {"judge", "keep_citations", "labels", "provider_file", "repeat"},
    "rag_compare": {"fail_on_regression", "seed"},
    "eval": {"echo_check", "judge", "synthesis", "synthesis_k", "synthesis_prompt",
             "synthesis_references", "warmup"},
}
"""What a stage kind does not accept yet, kind by kind (issue 22 item 3 stays open)."""


def _options(path: tuple[str, ...]) -> set[str]:
    command: click.Command = typer.main.get_command(app)
    ctx = click.Context(command)
    for word in path:
        found = command.get_command(ctx, word)  # type: ignore[attr-defined]
        assert found is not None, f"no command {' '.join(path)}"
        command = found
    return {p.name for p in command.params if p.name is not None}


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_a_stage_accepts_every_option_of_its_command(kind: str) -> None:
    fields = set(KIND_MODELS[kind].model_fields)
    renamed = RENAMED.get(kind, {})
    for option, field in renamed.items():
        assert field in fields, f"{kind}: {option} is said to be the field {field}, absent"
    missing = {o for o in _options(COMMANDS[kind])
               if o not in fields and o not in renamed and o not in PRESENTATION
               and o not in EXECUTION and o not in INPUTS.get(kind, set())}
    assert missing == GAPS[kind], (
        f"{kind}: options its command has and the stage lacks: {sorted(missing - GAPS[kind])}"
        f"; recorded as gaps but now accepted (remove them from GAPS): "
        f"{sorted(GAPS[kind] - missing)}")


def test_every_kind_with_a_command_is_checked() -> None:
    assert set(COMMANDS) <= set(KIND_MODELS)
    without = set(KIND_MODELS) - set(COMMANDS)
    assert without == {"retrieve", "run_file", "query_transform"}  # no command of their own
