"""`ReadOptions`: how run files are read, held and validated once.

The read knobs of ``measure`` and ``compare`` — the format (else recognised by content),
what a duplicate (qid, docid) row does, whether columns past the sixth are allowed, and
the memory cap a large run is streamed under — used to travel as loose fields of every
engine task. One frozen value carries them (as `rankproof.stats.StatSettings` carries
the statistics' knobs), checked when it is made.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, get_args

from rankproof._errors import InputError
from rankproof.data._load import RUN_FORMATS, Format
from rankproof.data._model import Dedupe, Run
from rankproof.data._text import ExtraColumns

__all__ = ["DEDUPES", "EXTRA_COLUMNS", "MIN_MEMORY_CAP", "ReadOptions", "parse_size"]

DEDUPES: tuple[str, ...] = get_args(Dedupe)
EXTRA_COLUMNS: tuple[str, ...] = get_args(ExtraColumns)
MIN_MEMORY_CAP = 1 << 20
"""The smallest memory cap a size may give: under 1 MiB nothing can be evaluated."""
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 10**3, "m": 1 << 20,
          "mib": 1 << 20, "mb": 10**6, "g": 1 << 30, "gib": 1 << 30, "gb": 10**9,
          "t": 1 << 40, "tib": 1 << 40, "tb": 10**12}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*")


def parse_size(text: str, field: str = "memory_cap") -> int:
    """Bytes in ``512MiB``, ``2GiB``, ``64M`` (binary), ``500MB`` (decimal) or ``1048576``;
    a size under `MIN_MEMORY_CAP` is refused (`InputError` naming ``field``)."""
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise InputError(f"expected a size such as 512MiB, 2GiB or 64M, found {text!r}",
                         field=field)
    size = int(float(match.group(1)) * _UNITS[unit])
    if size < MIN_MEMORY_CAP:
        raise InputError(f"{text!r} is under 1 MiB: too small to evaluate anything in",
                         field=field)
    return size


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How a run file is read: one frozen, validated value.

    * ``format``: one of `RUN_FORMATS`, or None to recognise it by its content.
    * ``dedupe``: what a repeated (qid, docid) row does: None refuses the file,
      ``"first"`` keeps the first, ``"max"`` the highest score.
    * ``extra_columns``: ``"error"`` refuses columns past the sixth, ``"ignore"`` drops
      them (as trec_eval does).
    * ``memory_cap``: bytes a run may take in memory before it is streamed in
      partitions of whole topics (None: read whole).

    >>> ReadOptions(dedupe="first").dedupe
    'first'
    """

    format: Format | None = None
    dedupe: Dedupe | None = field(default=None, metadata={
        "flags": ("--dedupe",),
        "help": "Keep the first or the highest-scored of duplicate (qid, docid) rows instead "
                "of failing."})
    extra_columns: ExtraColumns = "error"
    memory_cap: int | None = None

    def __post_init__(self) -> None:
        for name, value, choices in (("format", self.format, RUN_FORMATS),
                                     ("dedupe", self.dedupe, DEDUPES)):
            if value is not None and value not in choices:
                raise InputError(f"{name} must be one of {', '.join(choices)} or None, "
                                 f"found {value!r}", field=name)
        if self.extra_columns not in EXTRA_COLUMNS:
            raise InputError(f"extra_columns must be one of {', '.join(EXTRA_COLUMNS)}, "
                             f"found {self.extra_columns!r}", field="extra_columns")
        cap = self.memory_cap
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise InputError(f"memory_cap must be a positive number of bytes or None, "
                             f"found {cap!r}", field="memory_cap")

    def replace(self, **changes: Any) -> ReadOptions:
        """A copy with ``changes`` applied, validated like a new one."""
        return dataclasses.replace(self, **changes)

    def load(self, path: str, *, name: str | None = None) -> Run:
        """The run at ``path`` read whole with these options (`rankproof.data.load_run`)."""
        from rankproof.data._load import load_run

        return load_run(path, format=self.format, name=name, dedupe=self.dedupe,
                        extra_columns=self.extra_columns)
