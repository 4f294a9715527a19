"""The terminal view of a cross-check (`rankproof.measures.CrossCheck`): one row per run
and a few lines saying what was compared, what was not, and whether it passed."""

from __future__ import annotations

from rich.table import Table

from rankproof.measures import CrossCheck
from rankproof.report.console import plain


def _delta(value: float | None) -> str:
    return "-" if value is None else f"{value:.2e}"


def cross_check_table(cc: CrossCheck) -> Table:
    """Run, measures checked, largest difference (and where), verdict."""
    table = Table(title=plain(f"cross-check against {cc.backend} {cc.backend_version or ''}"
                              .rstrip()))
    table.add_column("run", style="bold")
    table.add_column("checked", justify="right")
    table.add_column("unchecked", justify="right")
    table.add_column("max |delta|", justify="right")
    table.add_column("where")
    table.add_column("verdict")
    for r in cc.runs:
        worst = r.worst
        where = "" if worst is None or not worst["delta"] else \
            f"{worst['measure']} / {worst['topic']}"
        verdict = "pass" if r.passed else "FAIL: " + ", ".join(r.failed)
        table.add_row(plain(r.run), str(len(r.checked)), str(len(r.unchecked)),
                      _delta(r.max_delta), plain(where), plain(verdict))
    return table


def cross_check_notes(cc: CrossCheck) -> list[str]:
    """The lines a reader must not miss: unavailable backend, unchecked measures, fills."""
    if not cc.available:
        return [f"cross-check: {cc.note}"]
    notes = [f"cross-check ({cc.backend} {cc.backend_version or '?'}): {cc.status}, max "
             f"|delta| {_delta(cc.max_delta)}, tolerance {cc.tolerance:g}"]
    unchecked: dict[str, str] = {}
    for r in cc.runs:
        unchecked.update(r.unchecked)
        if r.zero_filled:
            notes.append(f"cross-check ({r.run}): {len(r.zero_filled)} topic(s) the backend "
                         "skipped were filled with an empty ranking's value on its side: "
                         + ", ".join(r.zero_filled[:10])
                         + (" …" if len(r.zero_filled) > 10 else ""))
    for m, reason in unchecked.items():
        notes.append(f"cross-check: {m} not cross-checkable with {cc.backend}: {reason}")
    if cc.backend_qrels is not None:
        notes.append("cross-check: the backend was given other judgments "
                     f"({cc.backend_qrels.get('path')}) than rankproof")
    return notes
