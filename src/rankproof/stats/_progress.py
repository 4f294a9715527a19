"""How far a resampling procedure has got: a callback, so that statistics never print.

A comparison of a million topics draws its resamples for minutes. The command line shows
a bar of "resamples done / planned"; the statistics cannot draw it themselves (they
import no terminal library and write nothing), so each resampling loop reports through a
`ProgressCallback` it is handed: ``callback(done, planned)`` after each batch, with
``done`` growing to ``planned``. The callback only observes: it receives two integers
and its return value is ignored, so a result is the same bit for bit with or without
one (a test pins this). The default is no callback at all.

Units are *row-resamples*: one resample of one row (a sign vector applied to one
difference vector, one bootstrap resample of one row, one permutation of one measure's
systems). A caller that runs several procedures in turn (`rankproof.comparison`) plans
their weights up front in a `Tally` and hands each procedure `Tally.part`, which maps
that procedure's own ``(done, planned)`` into the whole plan's, so the bar counts one
total from the start and its ETA means something.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["ProgressCallback", "Tally", "report"]

ProgressCallback = Callable[[int, int], None]
"""``callback(done, planned)``: resamples done so far of those planned (see the module)."""


def report(callback: ProgressCallback | None, done: int, planned: int) -> None:
    """Tell ``callback`` (when there is one) that ``done`` of ``planned`` are done."""
    if callback is not None:
        callback(min(done, planned), planned)


class Tally:
    """A plan of resampling parts reported to one callback as one count.

    ``Tally(callback, planned)`` holds the row-resamples of every part; each part gets a
    callback from `part`, of its own weight, which scales the part's own ``(done,
    planned)`` into the plan's. `skip` counts a part that turned out to draw nothing (a
    row the normal limit decided), so ``done`` still reaches ``planned``. Mutable, and
    local to one call: it is never stored in a result.
    """

    def __init__(self, callback: ProgressCallback | None, planned: int) -> None:
        self._callback = callback
        self.planned = max(0, int(planned))
        self.done = 0

    def part(self, weight: int) -> ProgressCallback | None:
        """The callback of a part worth ``weight`` row-resamples of the plan (None when
        nothing listens, so the part's loop does not even call it)."""
        if self._callback is None:
            return None
        start = self.done
        weight = max(0, int(weight))

        def forward(done: int, planned: int) -> None:
            got = weight if planned <= 0 else weight * min(done, planned) // planned
            self.done = max(self.done, start + got)
            report(self._callback, self.done, self.planned)

        return forward

    def skip(self, weight: int) -> None:
        """Count ``weight`` row-resamples as done without drawing them."""
        if self._callback is None:
            return
        self.done += max(0, int(weight))
        report(self._callback, self.done, self.planned)
