"""trec_eval's other judgment formats: preferences and judgment groups (``-R``).

trec_eval reads three relevance formats besides plain qrels; rankproof reads
them here, for `rankproof trec_eval -R ...`:

* ``prefs`` (`read_prefs`): ``qid jg jsg docid level`` — a judgment group
  (one user's information need) split into judgment subgroups; within a
  subgroup a document is preferred to every document with a lower ``level``
  (a number; 0 means "not relevant").
* ``qrels_prefs`` (`read_qrels_prefs`): an ordinary qrels file read as
  preferences — the second column is the judgment group, every line sits in
  subgroup ``"0"``, the label is the level.
* ``qrels_jg`` (`read_qrels_jg`): ``qid jg docid label`` — several qrels
  (one per judgment group, e.g. one per assessor) in one file; each group is
  a `Qrels`.

Lines are whitespace-separated; a line whose first non-blank character is
``#`` is a comment (a ``#`` inside a docid is part of it), and blank lines
are skipped. Every refusal names the file and the line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof.data._model import Qrels
from rankproof.data._text import Input

_INT = re.compile(r"^[+-]?[0-9]+$")


@dataclass(frozen=True)
class PrefJudgment:
    """One line of a preferences file."""

    jg: str
    """Judgment group."""
    jsg: str
    """Judgment subgroup within the group."""
    docid: str
    level: float
    """Preference level: higher is preferred within the subgroup; 0 is not relevant."""


@dataclass(frozen=True)
class Prefs:
    """Preference judgments: topic -> its lines (in file order)."""

    topics: Mapping[str, tuple[PrefJudgment, ...]]
    source: str | None = None

    @property
    def qids(self) -> list[str]:
        """The topics, in byte order (trec_eval's print order)."""
        return sorted(self.topics, key=str.encode)


@dataclass(frozen=True)
class QrelsJG:
    """Qrels of several judgment groups: group -> `Qrels` (only the topics it judges)."""

    groups: Mapping[str, Qrels]
    source: str | None = None

    @property
    def qids(self) -> list[str]:
        """Every topic some group judges, in byte order."""
        return sorted({q for g in self.groups.values() for q in g.topics}, key=str.encode)


def _rows(source: PathLike | Input, width: int, what: str,
          columns: str) -> tuple[str, list[tuple[int, list[str]]]]:
    src = Input.open(source, what=what)
    rows: list[tuple[int, list[str]]] = []
    for number, line in enumerate(src.lines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = stripped.split()
        if len(fields) != width:
            raise InputError(f"expected {width} fields ({columns}), found {len(fields)}",
                             path=src.label, line=number)
        rows.append((number, fields))
    if not rows:
        raise InputError(f"the {what} file has no judgments", path=src.label)
    return src.label, rows


def _level(text: str, label: str, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InputError(f"preference level must be a finite number, found {text[:40]!r}",
                         path=label, line=line, field="level")
    return value


def _prefs(label: str, rows: list[tuple[int, str, str, str, str, str]]) -> Prefs:
    topics: dict[str, list[PrefJudgment]] = {}
    for number, qid, jg, jsg, docid, level in rows:
        topics.setdefault(qid, []).append(
            PrefJudgment(jg, jsg, docid, _level(level, label, number)))
    return Prefs(MappingProxyType({q: tuple(v) for q, v in topics.items()}), source=label)


def read_prefs(source: PathLike | Input) -> Prefs:
    """trec_eval's ``prefs`` file: ``qid jg jsg docid level`` lines."""
    label, rows = _rows(source, 5, "prefs", "qid jg jsg docid level")
    return _prefs(label, [(n, f[0], f[1], f[2], f[3], f[4]) for n, f in rows])


def read_qrels_prefs(source: PathLike | Input) -> Prefs:
    """A qrels file read as preferences (``-R qrels_prefs``): ``qid jg docid label``,
    every line in subgroup ``"0"``."""
    label, rows = _rows(source, 4, "qrels", "qid jg docid label")
    return _prefs(label, [(n, f[0], f[1], "0", f[2], f[3]) for n, f in rows])


def read_qrels_jg(source: PathLike | Input) -> QrelsJG:
    """trec_eval's ``qrels_jg`` file: ``qid jg docid label`` lines, one qrels per group.

    A label must be an integer; a (qid, jg, docid) judged twice is refused.
    """
    label, rows = _rows(source, 4, "qrels_jg", "qid jg docid label")
    seen: dict[tuple[str, str, str], int] = {}
    columns: dict[str, tuple[list[str], list[str], list[int]]] = {}
    for number, (qid, jg, docid, rel) in rows:
        if not _INT.match(rel) or len(rel) > 19:
            raise InputError(f"relevance must be an integer, found {rel[:40]!r}",
                             path=label, line=number, field="rel")
        key = (qid, jg, docid)
        if key in seen:
            raise InputError(f"document {docid[:80]!r} judged twice for topic {qid[:40]!r} in "
                             f"judgment group {jg[:40]!r} (first on line {seen[key]})",
                             path=label, line=number, field="docid")
        seen[key] = number
        qs, ds, rs = columns.setdefault(jg, ([], [], []))
        qs.append(qid)
        ds.append(docid)
        rs.append(int(rel))
    groups = {jg: Qrels.from_columns(qs, ds, rs, source=label)
              for jg, (qs, ds, rs) in sorted(columns.items(), key=lambda kv: kv[0].encode())}
    return QrelsJG(MappingProxyType(groups), source=label)
