"""`ReadOptions`: how run files are read, held and validated once.

The read knobs of ``measure`` and ``compare`` — the format (else recognised by content),
what a duplicate (qid, docid) row does, whether columns past the sixth are allowed, and
the memory cap a large run is streamed under — used to travel as loose fields of every
engine task. One frozen value carries them (as `rankproof.stats.StatSettings` carries
the statistics' knobs), checked when it is made.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, get_args

from rankproof._errors import InputError
from rankproof.data._load import RUN_FORMATS, Format
from rankproof.data._model import Dedupe, Run
from rankproof.data._text import ExtraColumns

__all__ = ["DEDUPES", "EXTRA_COLUMNS", "ReadOptions"]

DEDUPES: tuple[str, ...] = get_args(Dedupe)
EXTRA_COLUMNS: tuple[str, ...] = get_args(ExtraColumns)


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
