"""`StatSettings`: the knobs of a comparison, held and validated once.

Before this object, ``test``, ``alpha``, ``correction``, ``resamples``, ``seed``,
``confidence_level`` and ``pairs`` travelled as seven loose keywords through every
function between the command line and the paired tests, each redeclaring the
defaults and checking the choices again (scipy's ``PermutationMethod`` is the model:
one frozen object, passed as one argument). A `StatSettings` that exists is valid,
so the functions that receive one trust it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rankproof._errors import InputError
from rankproof.stats._defaults import (
    CORRECTIONS,
    DEFAULT_ALPHA,
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_CORRECTION,
    DEFAULT_PAIRS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TEST,
    PAIRS,
    TESTS,
    Correction,
    PairsName,
    TestName,
)
from rankproof.stats._validate import check_choice, check_int, check_probability, check_seed


def _checked(name: str, check: Callable[[], Any]) -> Any:
    """``check()``'s value; its `InputError` gets ``field`` set to ``name`` (the message
    already starts with the name, so it is not prefixed a second time)."""
    try:
        return check()
    except InputError as exc:
        exc.field = name
        raise


def _cli(flag: str, metavar: str | None, help: str) -> dict[str, Any]:
    """A field's command-line spelling (see `StatSettings`'s fields)."""
    return {"flags": (flag,), "metavar": metavar, "help": help}


@dataclass(frozen=True, slots=True)
class StatSettings:
    """How a comparison tests, corrects and decides: one frozen, validated value.

    * ``test``: the paired test behind each row's p-value (`TESTS`; the sign-flip
      randomization test by default).
    * ``alpha``: the family-wise level a row's corrected p is compared with.
    * ``correction``: how the rows of one call are corrected together
      (`CORRECTIONS`: Holm by default); ``pairs="all"`` uses Tukey HSD instead.
    * ``resamples``: random draws of each resampling test and interval.
    * ``seed``: the seed of every draw (recorded in the result).
    * ``confidence_level``: the level of each row's uncorrected interval.
    * ``pairs``: "baseline" (each candidate against the baseline) or "all".

    Every field is checked here, once; an invalid value raises `InputError` naming
    the field (``exc.field``), what was expected and what was given. `replace`
    returns a copy with some fields changed, checked again.

    >>> StatSettings(resamples=1000).replace(test="t").test
    't'
    """

    # Each field's ``metadata`` is what a command line needs to offer it (``flags``,
    # ``metavar``, ``help``): `rankproof.cli._stat_options` derives every command's
    # option from it, so a setting's name, default and words are written here only.
    test: TestName = field(default=DEFAULT_TEST, metadata=_cli(
        "--test", None, "Paired test (randomization is the default and recommended)."))
    alpha: float = field(default=DEFAULT_ALPHA, metadata=_cli(
        "--alpha", "LEVEL", "Family-wise significance level."))
    correction: Correction = field(default=DEFAULT_CORRECTION, metadata=_cli(
        "--correction", None, "Multiple-comparison correction."))
    resamples: int = field(default=DEFAULT_RESAMPLES, metadata=_cli(
        "--resamples", "N", "Resamples for randomization and bootstrap."))
    seed: int = field(default=DEFAULT_SEED, metadata=_cli(
        "--seed", "N", "Seed of every random procedure (recorded)."))
    confidence_level: float = field(default=DEFAULT_CONFIDENCE_LEVEL, metadata=_cli(
        "--confidence", "LEVEL", "Confidence level of each row's uncorrected interval."))
    pairs: PairsName = field(default=DEFAULT_PAIRS, metadata=_cli(
        "--pairs", None, "baseline: candidates vs baseline; all: every pair (randomized "
                         "Tukey HSD)."))

    def __post_init__(self) -> None:
        checked = {
            "test": _checked("test", lambda: check_choice(self.test, "test", TESTS)),
            "alpha": _checked("alpha", lambda: check_probability(self.alpha, "alpha")),
            "correction": _checked("correction", lambda: check_choice(
                self.correction, "correction", CORRECTIONS)),
            "resamples": _checked("resamples", lambda: check_int(
                self.resamples, "resamples", 1)),
            "seed": _checked("seed", lambda: check_seed(self.seed)),
            "confidence_level": _checked("confidence_level", lambda: check_probability(
                self.confidence_level, "confidence_level")),
            "pairs": _checked("pairs", lambda: check_choice(self.pairs, "pairs", PAIRS)),
        }
        for name, value in checked.items():  # normalised: plain str, float and int
            object.__setattr__(self, name, value)

    def replace(self, **changes: Any) -> StatSettings:
        """A copy with ``changes`` applied, validated like a new one."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The seven settings by name (what a result or a manifest records)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

