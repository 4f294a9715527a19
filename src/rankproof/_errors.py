"""The exception hierarchy.

Every error rankproof raises on purpose derives from :class:`RankproofError`,
and each subclass also derives from the matching built-in, so a caller can
catch either ``rankproof.InputError`` or plain ``ValueError``::

    RankproofError
    ├── InputError(ValueError)     bad data, name or value: a file, a line, a field, a
    │                              measure name, a parameter; carries path/line/field
    │   ├── PairingError           two sides of a paired comparison cover different
    │   │                          queries or cases; carries only_left/only_right
    │   └── WriteError(OSError)    an output could not be written (disk full, a
    │                              file-size limit, a permission); names the path
    │                              the user gave, never a temporary name
    ├── ConfigError(ValueError)    a checks/config file is invalid (CLI exit code 2)
    ├── TargetError(RuntimeError)  a system under test failed after its retries;
    │                              carries case_id/target/status/attempts
    ├── NotComputedError(KeyError) a result was asked for a measure it does not hold
    └── MissingExtraError(ImportError)  an optional dependency is not installed

Messages say what was expected, what was found, and where; the attributes
say the same to a program, which should not have to parse the message.
Anything raised that is *not* a `RankproofError` is a bug in rankproof (the
CLI reports it as an internal error, exit code 3); ``TypeError`` for a
programming mistake (a non-callable where a function is needed) is the one
built-in raised on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence


class RankproofError(Exception):
    """Base class of every error rankproof raises deliberately."""


class InputError(RankproofError, ValueError):
    """Input data is malformed.

    ``path``, ``line`` (1-based) and ``field`` locate the problem when known;
    they are also part of the message so that a CLI user sees them.
    ``cli_message`` is the message as the command line words it, when the remedy
    is an option there and a keyword in Python (``--dedupe first|max`` against
    ``dedupe='first'``); `on_command_line` gives it, located the same way.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
        cli_message: str | None = None,
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
        self._cli_text = (None if cli_message is None
                          else f"{prefix}: {cli_message}" if prefix else cli_message)
        super().__init__(f"{prefix}: {message}" if prefix else message)

    def on_command_line(self) -> str:
        """The message as the command line says it (its options, not Python keywords)."""
        return self._cli_text if self._cli_text is not None else str(self)


class PairingError(InputError):
    """The two sides of a paired comparison do not cover the same queries (or cases).

    An `InputError` too: the comparison's inputs do not pair, which is the
    user's to fix, and code that catches bad input catches this as well.
    """

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


class WriteError(InputError, OSError):
    """An output could not be written; ``path`` is the path the user named.

    Also an `OSError` (with its ``errno``), so code that guards a write with
    ``except OSError`` keeps working, while the CLI reports it as the user's
    to fix (exit 2) in one line, not as a crash.
    """

    def __init__(self, message: str, *, path: str | None = None,
                 errno: int | None = None) -> None:
        super().__init__(message, path=path)
        self.errno = errno


class ConfigError(RankproofError, ValueError):
    """A configuration or checks file is invalid."""


class TargetError(RankproofError, RuntimeError):
    """A system under test failed (after its retries) for a named case.

    ``case_id`` is the golden case being asked (None for a failure that is
    not about one case), ``target`` the target's name, ``status`` the HTTP
    status of the last response when there was one, and ``attempts`` how
    many requests were made. They are attributes as well as part of the
    message so that a harness can list failed cases without parsing text.
    """

    def __init__(
        self,
        message: str,
        *,
        case_id: str | None = None,
        target: str | None = None,
        status: int | None = None,
        attempts: int | None = None,
    ) -> None:
        self.case_id = case_id
        self.target = target
        self.status = status
        self.attempts = attempts
        super().__init__(message)


class NotComputedError(RankproofError, KeyError):
    """A result was asked for a measure (or row) it was not computed with.

    A ``KeyError`` because that is what a lookup by name raises; printed as
    its plain message rather than ``KeyError``'s quoted repr, so that the CLI
    shows one readable line.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class MissingExtraError(RankproofError, ImportError):
    """An optional dependency is not installed; the message names the extra to install.

    Raised instead of falling back to something else: a stage that cannot run
    as asked is never replaced silently.
    """
