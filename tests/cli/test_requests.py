"""A command's options as one typed request (`rankproof.cli._requests`): the settings types'
fields become options by themselves, and the parsed values become the settings object."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

import click
import pytest
import typer
from typer.testing import CliRunner

from rankproof import InputError
from rankproof.cli import app
from rankproof.cli._app import error_boundary
from rankproof.cli._requests import Request, settings, takes
from rankproof.measures import EvalOptions
from rankproof.stats import StatSettings

runner = CliRunner()


@dataclass(frozen=True)
class Knobs:
    """A settings type as a floor below declares one: defaults, metadata, validation."""

    depth: int = field(default=3, metadata={"flags": ("--depth",), "metavar": "N",
                                            "help": "How deep."})
    mode: Literal["fast", "exact"] = field(default="exact", metadata={
        "flags": ("--mode",), "help": "How."})
    hidden: int = 0  # no metadata: not offered

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise InputError(f"depth must be 1 or more, found {self.depth}", field="depth")


class ToyArgs(Request):
    name: str = typer.Argument(..., metavar="NAME")
    knobs: Knobs = settings(Knobs)
    loud: bool = typer.Option(False, "--loud")


seen: list[ToyArgs] = []
toy = typer.Typer()


@toy.command()
@error_boundary
@takes(ToyArgs)
def run(a: ToyArgs) -> None:
    seen.append(a)


def test_the_settings_fields_are_options_and_become_the_settings_object() -> None:
    seen.clear()
    r = runner.invoke(toy, ["x", "--depth", "5", "--mode", "fast", "--loud"])
    assert r.exit_code == 0, r.output
    (a,) = seen
    assert a.knobs == Knobs(depth=5, mode="fast") and type(a.knobs.mode) is str
    assert a.name == "x" and a.loud is True
    with pytest.raises(AttributeError, match="frozen"):
        a.loud = False  # type: ignore[misc]
    helped = runner.invoke(toy, ["--help"]).output
    assert "--depth" in helped and "fast" in helped and "--hidden" not in helped


def test_a_value_the_settings_type_refuses_is_exit_2_naming_it() -> None:
    r = runner.invoke(toy, ["x", "--depth", "0"])
    assert r.exit_code == 2 and "depth must be 1 or more" in r.output


def _options(name: str) -> set[str]:
    command = typer.main.get_command(app)
    found = command.get_command(click.Context(command), name)  # type: ignore[attr-defined]
    return {p.name for p in found.params}


def test_measure_and_compare_offer_every_setting_of_their_types() -> None:
    """A field a settings type gains is an option of every command that offers the type."""
    offered = {f.name for f in dataclasses.fields(EvalOptions) if "flags" in f.metadata}
    assert offered <= _options("measure")
    assert {"rel_level", "topics", "order"} <= _options("compare")
    stats = {f.name for f in dataclasses.fields(StatSettings) if "flags" in f.metadata}
    assert stats and stats <= _options("compare")
