"""Command-line options derived from the settings types of the floors below.

`rankproof.stats.StatSettings`, `rankproof.measures.EvalOptions` and
`rankproof.data.ReadOptions` declare each setting once: its name and default as a
dataclass field, and in the field's ``metadata`` how a command line offers it (``flags``,
``metavar``, ``help``, and ``min`` for a count). `field_option` turns such a field into
the one Typer option every command that has the setting uses, so a setting's spelling,
default and words are written in one place (issue 22 item 3). A command may pass its own
``default`` (``None``: "not given, decided elsewhere") or a narrower ``help``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import typer

__all__ = ["UNSET", "field_option"]

UNSET: Any = object()
"""`field_option`'s "use the field's own" marker."""


def field_option(cls: type, name: str, default: Any = UNSET, help: str | None = None,
                 flags: tuple[str, ...] | None = None) -> Any:
    """The Typer option of field ``name`` of the settings dataclass ``cls``."""
    spec = next(f for f in dataclasses.fields(cls) if f.name == name)
    meta = spec.metadata
    extra = {"min": meta["min"]} if "min" in meta else {}
    return typer.Option(spec.default if default is UNSET else default,
                        *(flags or meta["flags"]), metavar=meta.get("metavar"),
                        help=meta["help"] if help is None else help, **extra)
