"""The command line: a thin layer that parses arguments, calls the library, renders.

Exit codes: 0 ok, 1 a gate or requested regression check failed, 2 bad input
or configuration, 3 an internal error.
"""

from __future__ import annotations

from rankproof.cli import adapt as _adapt  # noqa: F401  (registers the command)
from rankproof.cli import baseline as _baseline  # noqa: F401
from rankproof.cli import compare as _compare  # noqa: F401
from rankproof.cli import eval as _eval  # noqa: F401
from rankproof.cli import fuse as _fuse  # noqa: F401
from rankproof.cli import gate as _gate  # noqa: F401
from rankproof.cli import measure as _measure  # noqa: F401
from rankproof.cli import power as _power  # noqa: F401
from rankproof.cli._app import app, main

__all__ = ["app", "main"]
