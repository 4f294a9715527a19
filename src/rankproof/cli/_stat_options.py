"""The statistics options, declared once for every command that runs a paired test.

``--test``, ``--alpha``, ``--correction``, ``--resamples``, ``--seed``, ``--confidence``
and ``--pairs`` take their defaults and choices from `rankproof.stats` (``DEFAULT_*``,
``TESTS``, ``CORRECTIONS``, ``PAIRS``), so `compare`, `eval`, `gate` and `history`
spell, default and check each one alike; `stat_settings` turns the parsed values into
the one `rankproof.stats.StatSettings` the library takes (validated there, once). A
command whose value comes from elsewhere when the option is absent (`gate` reads its
checks file) passes ``default=None``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from rankproof.cli._runs import choices
from rankproof.stats import (
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
    StatSettings,
)

if TYPE_CHECKING:
    TestChoice = str
    CorrectionChoice = str
    PairsChoice = str
else:
    TestChoice = choices("TestChoice", TESTS)
    CorrectionChoice = choices("CorrectionChoice", CORRECTIONS)
    PairsChoice = choices("PairsChoice", PAIRS)

_Unset = object()


def _default(default: Any, value: Any) -> Any:
    return value if default is _Unset else default


def test_option(default: Any = _Unset, help: str = "Paired test (randomization is the "
                "default and recommended).") -> Any:
    """``--test``: the paired test behind every p-value."""
    return typer.Option(_default(default, DEFAULT_TEST), "--test", help=help)


def alpha_option(default: Any = _Unset, help: str = "Family-wise significance level.") -> Any:
    """``--alpha``: the level a corrected p is compared with."""
    return typer.Option(_default(default, DEFAULT_ALPHA), "--alpha", metavar="LEVEL",
                        help=help)


def correction_option(default: Any = _Unset,
                      help: str = "Multiple-comparison correction.") -> Any:
    """``--correction``: how the rows of one command are corrected together."""
    return typer.Option(_default(default, DEFAULT_CORRECTION), "--correction", help=help)


def resamples_option(default: Any = _Unset,
                     help: str = "Resamples for randomization and bootstrap.") -> Any:
    """``--resamples``: random draws of each resampling test and interval."""
    return typer.Option(_default(default, DEFAULT_RESAMPLES), "--resamples", metavar="N",
                        help=help)


def seed_option(default: Any = _Unset,
                help: str = "Seed of every random procedure (recorded).") -> Any:
    """``--seed``: the seed of every draw."""
    return typer.Option(_default(default, DEFAULT_SEED), "--seed", metavar="N", help=help)


def confidence_option(default: Any = _Unset, help: str = "Confidence level of each row's "
                      "uncorrected interval.", flag: str = "--confidence") -> Any:
    """``--confidence``: the level of the uncorrected interval kept beside each row's (``eval``
    spells its abstention interval's level ``--abstention-confidence``: another interval)."""
    return typer.Option(_default(default, DEFAULT_CONFIDENCE_LEVEL), flag,
                        metavar="LEVEL", help=help)


def pairs_option(default: Any = _Unset, help: str = "baseline: candidates vs baseline; all: "
                 "every pair (randomized Tukey HSD).") -> Any:
    """``--pairs``: which systems are compared with which."""
    return typer.Option(_default(default, DEFAULT_PAIRS), "--pairs", help=help)


def stat_settings(test: Any = DEFAULT_TEST, alpha: float = DEFAULT_ALPHA,
                  correction: Any = DEFAULT_CORRECTION, resamples: int = DEFAULT_RESAMPLES,
                  seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE_LEVEL,
                  pairs: Any = DEFAULT_PAIRS) -> StatSettings:
    """The options' values as one `StatSettings` (Typer's choice members become their
    strings); an invalid value is an `InputError` naming the setting (exit 2)."""
    return StatSettings(test=str(test), alpha=alpha,  # type: ignore[arg-type]
                        correction=str(correction),  # type: ignore[arg-type]
                        resamples=resamples, seed=seed, confidence_level=confidence,
                        pairs=str(pairs))  # type: ignore[arg-type]
