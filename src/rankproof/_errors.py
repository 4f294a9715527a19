"""The exception hierarchy.

Every error rankproof raises on purpose derives from :class:`RankproofError`,
and each subclass also derives from the matching built-in, so a caller can
catch either ``rankproof.InputError`` or plain ``ValueError``::

    RankproofError
    ├── InputError(ValueError)     bad file, line or field; carries path/line/field
    ├── PairingError(ValueError)   two sides of a paired comparison cover different queries
    ├── ConfigError(ValueError)    a checks/config file is invalid (CLI exit code 2)
    ├── TargetError(RuntimeError)  a system under test failed after its retries
    └── MissingExtraError(ImportError)  an optional dependency is not installed

Messages say what was expected, what was found, and where.
"""

from __future__ import annotations

from collections.abc import Sequence


class RankproofError(Exception):
    """Base class of every error rankproof raises deliberately."""


class InputError(RankproofError, ValueError):
    """Input data is malformed.

    ``path``, ``line`` (1-based) and ``field`` locate the problem when known;
    they are also part of the message so that a CLI user sees them.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.reason = message
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class PairingError(RankproofError, ValueError):
    """The two sides of a paired comparison do not cover the same queries."""

    def __init__(
        self,
        message: str,
        *,
        only_left: Sequence[str] = (),
        only_right: Sequence[str] = (),
    ) -> None:
        self.only_left = tuple(only_left)
        self.only_right = tuple(only_right)
        super().__init__(message)


class ConfigError(RankproofError, ValueError):
    """A configuration or checks file is invalid."""


class TargetError(RankproofError, RuntimeError):
    """A system under test failed (after its retries) for a named case."""


class MissingExtraError(RankproofError, ImportError):
    """An optional dependency is not installed; the message names the extra to install.

    Raised instead of falling back to something else: a stage that cannot run
    as asked is never replaced silently.
    """
