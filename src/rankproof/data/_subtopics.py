"""Subtopic (diversity) qrels: ``qid subtopic docid rel`` — the TREC Web track's
diversity judgments, which ndeval reads.

A `SubtopicQrels` *is* a `Qrels`: one row per (qid, docid), labelled with the
document's highest label over its subtopics (ndeval's "a document relevant to
any subtopic is relevant to the topic"), so every ordinary measure evaluates
on it. It also keeps each subtopic judgment, which the diversity measures
(α-nDCG, ERR-IA, NRBP, P-IA, subtopic recall) read.

Subtopic ids are strings, coded in order of first appearance in the file (as
pyndeval codes them); the same id under two topics is two subtopics that
happen to share a code, which no measure can confuse because every measure
works within one topic.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof.data._model import Qrels
from rankproof.data._text import Input

_INT = re.compile(r"^[+-]?[0-9]+$")


def _empty() -> npt.NDArray[np.int64]:
    return np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, eq=False, repr=False)
class SubtopicQrels(Qrels):
    """Diversity judgments: a `Qrels` (each document's highest label over its
    subtopics) plus every (subtopic, label) judgment.

    ``sub_row[i]`` is the `Qrels` row (qid, docid) of subtopic judgment ``i``,
    ``sub_codes[i]`` its subtopic (an index into ``subtopic_vocab``) and
    ``sub_rels[i]`` its label.
    """

    sub_row: npt.NDArray[np.int64] = field(default_factory=_empty)
    sub_codes: npt.NDArray[np.int64] = field(default_factory=_empty)
    sub_rels: npt.NDArray[np.int64] = field(default_factory=_empty)
    subtopic_vocab: tuple[str, ...] = ()

    @classmethod
    def from_subtopic_columns(
        cls,
        qid: Sequence[Any],
        subtopic: Sequence[Any],
        docid: Sequence[Any],
        rel: Sequence[Any],
        *,
        source: str | None = None,
        lines: Sequence[int] | None = None,
    ) -> SubtopicQrels:
        """Validate parallel columns (one subtopic judgment each) into `SubtopicQrels`.

        A (qid, subtopic, docid) judged twice is refused; labels must be integers.
        """
        n = len(rel)
        if len(qid) != n or len(subtopic) != n or len(docid) != n:
            raise InputError(f"columns differ in length: qid {len(qid)}, subtopic "
                             f"{len(subtopic)}, docid {len(docid)}, rel {n}", path=source)
        if n == 0:
            raise InputError("the subtopic qrels have no rows", path=source)

        def line(i: int) -> int | None:
            return None if lines is None else int(lines[i])

        pair_row: dict[tuple[str, str], int] = {}
        seen: dict[tuple[str, str, str], int] = {}
        codes: dict[str, int] = {}
        qids: list[str] = []
        docs: list[str] = []
        best: list[int] = []
        sub_row = np.empty(n, dtype=np.int64)
        sub_codes = np.empty(n, dtype=np.int64)
        sub_rels = np.empty(n, dtype=np.int64)
        for i in range(n):
            q, s, d, r = str(qid[i]), str(subtopic[i]), str(docid[i]), rel[i]
            if isinstance(r, bool) or not isinstance(r, int | np.integer):
                raise InputError(f"relevance must be an integer, found {r!r}", path=source,
                                 line=line(i), field="rel")
            key = (q, s, d)
            if key in seen:
                raise InputError(
                    f"document {d[:80]!r} judged twice for subtopic {s[:40]!r} of topic "
                    f"{q[:40]!r}" + (f" (first on line {seen[key]})" if lines else ""),
                    path=source, line=line(i), field="docid")
            seen[key] = line(i) or i
            row = pair_row.get((q, d))
            if row is None:
                row = pair_row[(q, d)] = len(qids)
                qids.append(q)
                docs.append(d)
                best.append(int(r))
            else:
                best[row] = max(best[row], int(r))
            sub_row[i] = row
            sub_codes[i] = codes.setdefault(s, len(codes))
            sub_rels[i] = int(r)
        base = Qrels.from_columns(qids, docs, np.array(best, dtype=np.int64), source=source)
        return cls(
            qid_codes=base.qid_codes, qid_vocab=base.qid_vocab, docids=base.docids,
            rels=base.rels, source=source, sub_row=sub_row, sub_codes=sub_codes,
            sub_rels=sub_rels, subtopic_vocab=tuple(codes),
        )

    @property
    def n_subtopic_judgments(self) -> int:
        """The number of (qid, subtopic, docid) judgments."""
        return len(self.sub_rels)

    @property
    def digest(self) -> str:
        """sha256 of the subtopic judgments in canonical order (independent of file layout)."""
        qids = self.qid_vocab.to_pylist()
        docids = self.docids.to_pylist()
        rows = sorted(
            (qids[int(self.qid_codes[r])], self.subtopic_vocab[int(s)], docids[int(r)], int(v))
            for r, s, v in zip(self.sub_row, self.sub_codes, self.sub_rels, strict=True))
        h = hashlib.sha256(b"subtopic qrels\n")
        for q, s, d, v in rows:
            h.update(f"{q}\t{s}\t{d}\t{v}\n".encode())
        return "sha256:" + h.hexdigest()

    def __repr__(self) -> str:
        return (f"SubtopicQrels({len(self.qid_vocab)} topics, {len(self.rels)} documents, "
                f"{len(self.sub_rels)} subtopic judgments, source={self.source!r})")


def read_subtopic_qrels(source: PathLike | Input) -> SubtopicQrels:
    """Read diversity qrels: ``qid subtopic docid rel`` per line (ndeval's format).

    Lines are whitespace-separated; blank lines and lines starting with ``#``
    are skipped. Every refusal names the file and the line.
    """
    src = Input.open(source, what="subtopic qrels")
    qids: list[str] = []
    subs: list[str] = []
    docs: list[str] = []
    rels: list[int] = []
    lines: list[int] = []
    for number, text in enumerate(src.lines(), start=1):
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = stripped.split()
        if len(fields) != 4:
            raise InputError(f"expected 4 fields (qid subtopic docid rel), found {len(fields)}",
                             path=src.label, line=number)
        if not _INT.match(fields[3]) or len(fields[3]) > 19:
            raise InputError(f"relevance must be an integer, found {fields[3][:40]!r}",
                             path=src.label, line=number, field="rel")
        qids.append(fields[0])
        subs.append(fields[1])
        docs.append(fields[2])
        rels.append(int(fields[3]))
        lines.append(number)
    if not rels:
        raise InputError("the subtopic qrels file has no judgments", path=src.label)
    return SubtopicQrels.from_subtopic_columns(qids, subs, docs, rels, source=src.label,
                                               lines=lines)
