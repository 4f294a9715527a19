"""Writing a JSON report that holds evidence: inline up to a cap, beyond it in a sidecar.

`rankproof eval` and `rankproof compare` store what a reader must see (each system's top
ids per query, the gold, the query text: `rankproof.comparison.Evidence`). Up to
`rankproof.comparison.MAX_INLINE_EVIDENCE_IDS` ids it sits in the report. Beyond it:

* a report written to a **file** ``NAME.json`` gets a sidecar ``NAME.evidence.json``
  beside it, written first and committed with the report (`rankproof._io.commit_all`: both
  or neither), and the report keeps the sidecar's name, digest, id count and depth;
* a report written to **standard output** (or a pipe or device, where nothing can sit
  beside it) keeps the evidence of as many whole queries as fit and says, in its caveats,
  how many were left out.

Both commands guard the sidecar paths with their outputs (`sidecar_outputs` into
`rankproof.cli._outputs.guard_outputs`) before they read anything.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import rankproof.comparison as comparison
from rankproof._io import commit_all, destination
from rankproof.cli._outputs import STDIN, guard_outputs
from rankproof.comparison import Evidence, EvidenceSidecar, sidecar_name, split_evidence

EVIDENCE_KIND = "rankproof.evidence"

Render = Callable[[Evidence | EvidenceSidecar | None, Sequence[str]], str]
"""The report's JSON text with the given ``evidence`` value and these caveats added."""


def _is_file(output: Path | str) -> bool:
    """A destination a sidecar can sit beside (not ``-``, a pipe or a device)."""
    return str(output) != STDIN and destination(output).replaced


def sidecar_path(output: Path | str) -> Path | None:
    """Where the sidecar of a report written to ``output`` goes (None: nowhere)."""
    if not _is_file(output):
        return None
    path = Path(output)
    return path.with_name(sidecar_name(path))


def sidecar_outputs(outputs: Sequence[Path | str | None]) -> list[tuple[Path | str | None, str]]:
    """The sidecar each file output may need, as `guard_outputs` destinations."""
    out: list[tuple[Path | str | None, str]] = []
    for given in outputs:
        if given is not None:
            path = sidecar_path(given)
            if path is not None:
                out.append((path, EVIDENCE_KIND))
    return out


def _limit() -> int:
    return comparison.MAX_INLINE_EVIDENCE_IDS  # read when writing, so a test may lower it


def stream_text(evidence: Evidence | None, render: Render) -> str:
    """The report for standard output: evidence beyond the cap left out, a caveat saying so."""
    limit = _limit()
    if evidence is None or evidence.ids <= limit:
        return render(evidence, ())
    kept, dropped = evidence.capped(limit)
    total = len(evidence.topics)
    note = (f"evidence: {dropped} of {total} queries left out of this output (the evidence "
            f"holds {evidence.ids:,} ids, more than the {limit:,} a report carries inline); "
            "a report written to a file keeps all of it in a sidecar beside it")
    return render(kept, (note,))


def write_reports(outputs: Sequence[Path | str], evidence: Evidence | None,
                  render: Render) -> tuple[str, list[Path]]:
    """Write the report to every output (a file with its sidecar when the evidence is over
    the cap; all files or none), ``-`` included; return the text for standard output and
    the sidecars written."""
    # The last line of defence: no output (sidecars included) is an input or given twice.
    guard_outputs([(o, None) for o in outputs] + [(p, None) for p, _ in
                                                  sidecar_outputs(outputs)], force=True)
    limit = _limit()
    items: list[tuple[Path | str, str | bytes]] = []
    sidecars: list[Path] = []
    inline: str | None = None
    for output in outputs:
        if not _is_file(output):
            continue
        side = sidecar_path(output)
        if evidence is not None and evidence.ids > limit and side is not None:
            ref, blob = split_evidence(evidence, side.name)
            items += [(side, blob), (output, render(ref, ()))]
            sidecars.append(side)
        else:
            inline = inline if inline is not None else render(evidence, ())
            items.append((output, inline))
    streamed = [o for o in outputs if not _is_file(o)]
    text = stream_text(evidence, render)
    if items or streamed:
        commit_all([*items, *((o, text) for o in streamed if str(o) != STDIN)])
    if any(str(o) == STDIN for o in outputs):
        sys.stdout.write(text)
        sys.stdout.flush()
    return text, sidecars
