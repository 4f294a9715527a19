"""The statistics options, derived once for every command that runs a paired test.

``--test``, ``--alpha``, ``--correction``, ``--resamples``, ``--seed``, ``--confidence``
and ``--pairs`` are the fields of `rankproof.stats.StatSettings`: each option takes its
flag, metavar, help and default from that field (its default and its ``metadata``), and
its choices from `rankproof.stats` (``TESTS``, ``CORRECTIONS``, ``PAIRS``), so `compare`,
`eval`, `gate` and `history` spell, default and check each one alike and nothing here
repeats them; `stat_settings` turns the parsed values into the one `StatSettings` the
library takes (validated there, once). A command whose value comes from elsewhere when
the option is absent (`gate` reads its checks file) passes ``default=None``; one that
means something narrower passes its own ``help``.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING, Any

from rankproof.cli._derived import UNSET, field_option
from rankproof.cli._runs import choices
from rankproof.stats import CORRECTIONS, PAIRS, TESTS, StatSettings

if TYPE_CHECKING:
    TestChoice = str
    CorrectionChoice = str
    PairsChoice = str
else:
    TestChoice = choices("TestChoice", TESTS)
    CorrectionChoice = choices("CorrectionChoice", CORRECTIONS)
    PairsChoice = choices("PairsChoice", PAIRS)

_FIELDS = {f.name: f for f in dataclasses.fields(StatSettings)}
#: The command-line name of each setting whose option spells it otherwise.
PARAMETERS = {"confidence_level": "confidence"}


def settings_option(name: str, default: Any = UNSET, help: str | None = None,
                    flag: str | None = None) -> Any:
    """The Typer option of `StatSettings` field ``name`` (`field_option`): its default,
    flag, metavar and help unless given."""
    return field_option(StatSettings, name, default, help, None if flag is None else (flag,))


def test_option(default: Any = UNSET, help: str | None = None) -> Any:
    """``--test``: the paired test behind every p-value."""
    return settings_option("test", default, help)


def alpha_option(default: Any = UNSET, help: str | None = None) -> Any:
    """``--alpha``: the level a corrected p is compared with."""
    return settings_option("alpha", default, help)


def correction_option(default: Any = UNSET, help: str | None = None) -> Any:
    """``--correction``: how the rows of one command are corrected together."""
    return settings_option("correction", default, help)


def resamples_option(default: Any = UNSET, help: str | None = None) -> Any:
    """``--resamples``: random draws of each resampling test and interval."""
    return settings_option("resamples", default, help)


def seed_option(default: Any = UNSET, help: str | None = None) -> Any:
    """``--seed``: the seed of every draw."""
    return settings_option("seed", default, help)


def confidence_option(default: Any = UNSET, help: str | None = None,
                      flag: str | None = None) -> Any:
    """``--confidence``: the level of the uncorrected interval kept beside each row's (``eval``
    spells its abstention interval's level ``--abstention-confidence``: another interval)."""
    return settings_option("confidence_level", default, help, flag)


def stat_settings(**values: Any) -> StatSettings:
    """The options' values (by their command-line names: ``confidence`` for
    ``confidence_level``) as one `StatSettings`; Typer's choice members become their
    strings, an option not given keeps the field's default, and an invalid value is an
    `InputError` naming the setting (exit 2)."""
    names = {PARAMETERS.get(n, n): n for n in _FIELDS}
    unknown = set(values) - set(names)
    if unknown:
        raise TypeError(f"stat_settings() got unexpected settings {sorted(unknown)}")
    given = {names[k]: (v.value if isinstance(v, enum.Enum) else v) for k, v in values.items()}
    return StatSettings(**given)
