"""``--memory-cap SIZE``: the option and its sizes (the cap itself: `rankproof.jobs._capped`).

``rankproof measure QRELS RUN --memory-cap 64MiB`` (or ``RANKPROOF_MEMORY_CAP``) puts
the size in the request's `rankproof.data.ReadOptions`; how a run is then read, streamed
or refused is decided by the library, below the command line.
"""

from __future__ import annotations

import re
from typing import Any

import typer

MEMORY_CAP_ENV = "RANKPROOF_MEMORY_CAP"
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 10**3, "m": 1 << 20,
          "mib": 1 << 20, "mb": 10**6, "g": 1 << 30, "gib": 1 << 30, "gb": 10**9,
          "t": 1 << 40, "tib": 1 << 40, "tb": 10**12}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*")


def parse_size(text: str) -> int:
    """Bytes in ``512MiB``, ``2GiB``, ``64M`` (binary), ``500MB`` (decimal) or ``1048576``."""
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise typer.BadParameter(f"expected a size such as 512MiB, 2GiB or 64M, found {text!r}",
                                 param_hint="'--memory-cap'")
    size = int(float(match.group(1)) * _UNITS[unit])
    if size < 1 << 20:
        raise typer.BadParameter(f"{text!r} is under 1 MiB: too small to evaluate anything in",
                                 param_hint="'--memory-cap'")
    return size


def memory_cap_option() -> Any:
    return typer.Option(
        None, "--memory-cap", metavar="SIZE", envvar=MEMORY_CAP_ENV,
        help="Evaluate a run larger than this (512MiB, 2GiB) by streaming it in partitions "
             "of whole topics, in bounded memory, with identical output; the run must be "
             f"grouped by topic (sort -s -k1,1). Default: ${MEMORY_CAP_ENV}, else no cap.")


def partitions_option() -> Any:
    return typer.Option(
        None, "--partitions", metavar="N", min=1,
        help="Cut each TREC run into N byte ranges of whole topics, each evaluated as its "
             "own task of the engine (identical output). Default: a run of 64 MiB or more "
             "is cut when there are more workers than runs.")
