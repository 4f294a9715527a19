"""Every bound on what a hostile or mistaken input may cost, in one place.

rankproof reads files and calls services it does not control, usually in CI
where a hang or an out-of-memory kill reads as "the gate failed". Each bound
below turns such an input into a typed error (`rankproof.InputError`,
`rankproof.ConfigError` or `rankproof.TargetError`) that names the file,
line and field, instead of a crash, a hang or a silent truncation.

A bound a user may legitimately need to raise can be, without editing code:
each constant reads an environment variable of the same name prefixed with
``RANKPROOF_`` (``RANKPROOF_MAX_NESTING_DEPTH=128``); where a function takes
the bound as a parameter (``HttpTarget(max_body_bytes=...)``) the parameter
wins. Values that are not positive integers are ignored, so a typo cannot
switch a bound off.
"""

from __future__ import annotations

import os


def _setting(name: str, default: int) -> int:
    raw = os.environ.get(f"RANKPROOF_{name}", "")
    try:
        value = int(raw)
    except ValueError:
        return default
    return value if value > 0 else default


MAX_NESTING_DEPTH = _setting("MAX_NESTING_DEPTH", 64)
"""Deepest nesting of JSON arrays/objects or YAML collections any reader accepts.

Our own files nest four or five levels; 64 leaves room for users' metadata
while keeping far from Python's recursion limit."""

MAX_YAML_NODES = _setting("MAX_YAML_NODES", 10_000)
"""Most YAML nodes an alias may expand to (counted after expansion), so a
"billion laughs" document is refused before it is built."""

MAX_HTTP_BODY_BYTES = _setting("MAX_HTTP_BODY_BYTES", 8 * 1024 * 1024)
"""Largest HTTP response body a target reads; the rest is never downloaded."""

MAX_INT_DIGITS = _setting("MAX_INT_DIGITS", 40)
"""Most digits an integer field (a relevance label, a rank) may have; a label of
thousands of digits is an input error, not a slow conversion or an overflow."""

MAX_SHOWN_CHARS = _setting("MAX_SHOWN_CHARS", 200)
"""Longest piece of input quoted back in a message; longer values are cut with "…"."""

MAX_MEMORY_FRACTION = 0.5
"""A resampling or simulation request whose estimated memory exceeds this share of
the machine's RAM is refused with the estimate, before any allocation."""

MAX_ESTIMATED_SECONDS = _setting("MAX_ESTIMATED_SECONDS", 3600)
"""A resampling or simulation request estimated to take longer than this is refused."""


def shown(value: object, limit: int | None = None) -> str:
    """``repr(value)`` cut to `MAX_SHOWN_CHARS` (or ``limit``), for quoting input in messages."""
    text = repr(value)
    cap = MAX_SHOWN_CHARS if limit is None else limit
    return text if len(text) <= cap else text[: cap - 1] + "…"


def machine_memory_bytes() -> int | None:
    """Physical memory of this machine, or None when the platform does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None
