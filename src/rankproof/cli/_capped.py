"""``--memory-cap SIZE``: the option and its sizes (the cap itself: `rankproof.jobs._capped`).

``rankproof measure QRELS RUN --memory-cap 64MiB`` (or ``RANKPROOF_MEMORY_CAP``) puts
the size in the request's `rankproof.data.ReadOptions`; how a run is then read, streamed
or refused is decided by the library, below the command line.
"""

from __future__ import annotations

from typing import Any

import typer

MEMORY_CAP_ENV = "RANKPROOF_MEMORY_CAP"


def parse_size(text: str) -> int:
    """Bytes in ``512MiB``, ``2GiB``, ``64M`` (binary), ``500MB`` (decimal) or ``1048576``
    (`rankproof.data.parse_size`), refused as a usage error of ``--memory-cap``."""
    from rankproof._errors import InputError
    from rankproof.data import parse_size as size_of

    try:
        return size_of(text)
    except InputError as exc:
        raise typer.BadParameter(exc.reason,
                                 param_hint="'--memory-cap'") from None


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
