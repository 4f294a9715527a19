"""`EvalOptions` and `ReadOptions`: the evaluation's and the reader's knobs, one frozen,
validated value each (issue 22 item 1), carried by every engine task instead of loose
fields."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rankproof import InputError
from rankproof.data import ReadOptions, read_trec_qrels, read_trec_run
from rankproof.jobs import RunFileTask
from rankproof.jobs._ranges import RunRangeTask
from rankproof.measures import EvalOptions, evaluate

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec_eval_tests"


def test_defaults_are_trec_evals() -> None:
    o = EvalOptions()
    assert (o.rel_level, o.topics, o.order, o.max_retrieved, o.judged_only) == (
        1, "complete", "score", None, False)
    assert not o.limits_run and EvalOptions(judged_only=True).limits_run
    assert o.keywords() == {"rel_level": 1, "topics": "complete", "order": "score"}
    r = ReadOptions()
    assert (r.format, r.dedupe, r.extra_columns, r.memory_cap) == (None, None, "error", None)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"rel_level": "2"}, "rel_level"), ({"rel_level": True}, "rel_level"),
    ({"topics": "all"}, "topics"), ({"order": "docid"}, "order"),
    ({"max_retrieved": -1}, "max_retrieved"), ({"max_retrieved": 2.5}, "max_retrieved"),
    ({"judged_only": 1}, "judged_only"),
])
def test_eval_options_refuse_by_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as info:
        EvalOptions(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field and field in str(info.value)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"format": "csv"}, "format"), ({"dedupe": "last"}, "dedupe"),
    ({"extra_columns": "keep"}, "extra_columns"), ({"memory_cap": 0}, "memory_cap"),
    ({"memory_cap": "1GiB"}, "memory_cap"),
])
def test_read_options_refuse_by_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as info:
        ReadOptions(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field and field in str(info.value)


def test_frozen_and_replace_validates_again() -> None:
    o = EvalOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.rel_level = 2  # type: ignore[misc]
    assert o.replace(rel_level=2).rel_level == 2
    with pytest.raises(InputError):
        o.replace(order="nope")
    with pytest.raises(InputError):
        ReadOptions().replace(dedupe="nope")


def test_limited_is_trec_evals_minus_m_and_j() -> None:
    qrels = read_trec_qrels(DATA / "qrels.test")
    run = read_trec_run(DATA / "results.test")
    whole = evaluate(qrels, run, ["num_ret"])
    assert EvalOptions().limited(run, qrels) is run
    kept = EvalOptions(max_retrieved=5).limited(run, qrels)
    assert kept is not None
    assert max(evaluate(qrels, kept, ["num_ret"]).column("num_ret")) == 5
    assert max(whole.column("num_ret")) > 5
    assert EvalOptions(max_retrieved=0).limited(run, qrels) is None


def test_the_engine_tasks_carry_the_two_objects_not_loose_fields() -> None:
    """One set of read and evaluation fields, declared once (D7 of the review)."""
    for task in (RunFileTask, RunRangeTask):
        names = {f.name for f in dataclasses.fields(task)}
        assert {"read", "options"} <= names
        loose = {f.name for f in dataclasses.fields(EvalOptions)} | {
            f.name for f in dataclasses.fields(ReadOptions)}
        assert not names & loose, names & loose


def test_the_command_line_options_are_derived_from_the_fields() -> None:
    """``-l``, ``--topics``, ``--order``, ``-M``, ``-J`` and ``--dedupe`` take flags, default
    and help from the fields' metadata (`rankproof.cli._derived`, issue 22 item 3)."""
    from typer.testing import CliRunner

    from rankproof.cli import app
    from rankproof.cli._derived import field_option

    runner = CliRunner()
    helped = runner.invoke(app, ["measure", "--help"], env={"COLUMNS": "200"})
    assert helped.exit_code == 0
    text = " ".join(helped.output.split())
    derived = [(cls, f) for cls in (EvalOptions, ReadOptions)
               for f in dataclasses.fields(cls) if "flags" in f.metadata]
    assert {f.name for _, f in derived} == {"rel_level", "topics", "order", "max_retrieved",
                                            "judged_only", "dedupe"}
    for cls, f in derived:
        option = field_option(cls, f.name)
        assert option.default == f.default
        assert option.param_decls == f.metadata["flags"]
        assert all(flag in text for flag in f.metadata["flags"])
        assert " ".join(f.metadata["help"].split())[:40] in text
    bad = runner.invoke(app, ["measure", str(DATA / "qrels.test"), str(DATA / "results.test"),
                              "-M", "-1"])
    assert bad.exit_code == 2  # -M keeps its lower bound of 0
