"""`Run` and `Qrels`: immutable, columnar, validated on construction.

Both hold their query ids dictionary-encoded (``int32`` codes into a string
vocabulary) so that the evaluator works on integer arrays. Docids stay an
Arrow string column: a large run has millions of distinct docids, and the
evaluator only ever needs them for the few rows that are judged or tied (see
``_strings``). Everything that builds a `Run` or `Qrels` — file readers, dict,
pandas and Arrow adapters — goes through ``from_columns``, so validation lives
in exactly one place per type.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

import rankproof._limits as _limits
from rankproof._errors import InputError
from rankproof.data._bounds import cut
from rankproof.data._pairs import byte_order
from rankproof.data._strings import (
    arrow_indices,
    as_string_array,
    duplicate_pairs,
    find_bytes,
    first_empty,
    to_numpy,
)

Dedupe = Literal["first", "max"]
RowLocator = Any  # callable(row_index) -> (line number or None)


def _locate(locator: RowLocator | None, row: int) -> int | None:
    return None if locator is None else int(locator(row))


def _encode_ids(values: pa.Array) -> tuple[npt.NDArray[np.int32], pa.Array]:
    """Dictionary-encode ids; the vocabulary is kept in first-seen order."""
    encoded = values if pa.types.is_dictionary(values.type) else pc.dictionary_encode(values)
    codes = to_numpy(encoded.indices).astype(np.int32, copy=False)
    vocab = as_string_array(encoded.dictionary)
    return codes, vocab


def _kept_rows_locator(locator: RowLocator, kept: npt.NDArray[np.int64]) -> RowLocator:
    """The locator of a run whose rows are ``kept`` rows of the file (after dedupe)."""
    return lambda row: locator(int(kept[row]))


def _check_ids(values: pa.Array, what: str, source: str | None, locator: RowLocator | None) -> None:
    if values.null_count:
        row = int(np.flatnonzero(to_numpy(pc.is_null(values)))[0])
        raise InputError(f"missing {what}", path=source, line=_locate(locator, row), field=what)
    if pa.types.is_dictionary(values.type):
        if _first_bad_id(values.dictionary) is None:
            return
        values = values.dictionary_decode()
    bad = _first_bad_id(values)
    if bad is not None:
        row, problem = bad
        raise InputError(problem.format(what=what), path=source, line=_locate(locator, row),
                         field=what)


def _first_bad_id(values: pa.Array) -> tuple[int, str] | None:
    """The first empty id or id holding a NUL byte, with a message template.

    NUL is rejected because the tie-breaking key (``order_words``) pads ids
    with zero bytes: an id with a NUL would compare as equal to its prefix.
    """
    row = first_empty(values)
    if row is not None:
        return row, "empty {what}"
    row = find_bytes(values, b"\x00")
    if row is not None:
        return row, "{what} contains a NUL byte"
    return None


def _chunk(values: Any) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if isinstance(values, pa.Array):
        return values
    return pa.array(values)


def _numeric(values: Any) -> np.ndarray:
    """A numeric column (Arrow, list or numpy) as numpy."""
    if isinstance(values, np.ndarray):
        return values
    arr = _chunk(values)
    if arr.null_count:
        row = int(np.flatnonzero(to_numpy(pc.is_null(arr)))[0])
        raise InputError(f"missing value at row {row}", line=None)
    if pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type):
        return to_numpy(arr)
    return np.asarray(arr.to_pylist())


def _as_ids(values: Any) -> pa.Array:
    arr = _chunk(values)
    if pa.types.is_dictionary(arr.type):
        if not pa.types.is_string(arr.dictionary.type):
            arr = arr.dictionary_decode().cast(pa.string())
        return arr
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        return arr
    return arr.cast(pa.string())


@dataclass(frozen=True, eq=False, repr=False)
class Run:
    """A ranked list of scored documents per query (one system's output).

    Columns: ``qid``, ``docid``, ``score`` (float64) and an optional ``rank``.
    ``name`` labels the run in tables (a file's stem by default); ``tag`` is
    the TREC run tag (sixth column of the first line), which trec_eval prints
    as ``runid``. ``dedupe`` records an explicit opt-in to dropping duplicate
    (qid, docid) rows, and ``n_dropped_duplicates`` how many were dropped.
    """

    name: str
    qid_codes: npt.NDArray[np.int32]
    qid_vocab: pa.Array
    docids: pa.Array
    scores: npt.NDArray[np.float64]
    ranks: npt.NDArray[np.int64] | None = None
    tag: str | None = None
    source: str | None = None
    dedupe: Dedupe | None = None
    n_dropped_duplicates: int = 0
    notes: tuple[str, ...] = field(default=())
    locator: RowLocator | None = field(default=None, repr=False)
    """Row index -> line in ``source`` (set by file readers), for errors found after
    reading, such as `ranked_order`'s rank-column check."""

    # -- construction -----------------------------------------------------
    @classmethod
    def from_columns(
        cls,
        qid: Any,
        docid: Any,
        score: Any,
        rank: Any | None = None,
        *,
        name: str = "run",
        tag: str | None = None,
        source: str | None = None,
        dedupe: Dedupe | None = None,
        locator: RowLocator | None = None,
        notes: tuple[str, ...] = (),
    ) -> Run:
        """Validate and build a run from parallel columns.

        ``locator`` maps a row index to its line in ``source`` so that errors
        name the line; readers pass it, in-memory adapters do not.
        """
        qids = _as_ids(qid)
        docids = as_string_array(_as_ids(docid))
        scores = np.ascontiguousarray(np.asarray(_numeric(score)),
                                      dtype=np.float64) if not isinstance(score, np.ndarray) \
            else np.ascontiguousarray(score, dtype=np.float64)
        n = len(scores)
        if len(qids) != n or len(docids) != n:
            raise InputError(
                f"columns differ in length: qid {len(qids)}, docid {len(docids)}, score {n}",
                path=source,
            )
        if n == 0:
            raise InputError("the run has no rows", path=source)
        _check_ids(qids, "qid", source, locator)
        _check_ids(docids, "docid", source, locator)
        finite = np.isfinite(scores)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            raise InputError(
                f"score must be a finite number, found {float(scores[row])!r}",
                path=source, line=_locate(locator, row), field="score",
            )
        ranks = None
        if rank is not None:
            ranks = np.ascontiguousarray(
                rank if isinstance(rank, np.ndarray) else _numeric(rank),
                dtype=np.int64,
            )
            if len(ranks) != n:
                raise InputError("rank column differs in length from the others", path=source)
        qid_codes, qid_vocab = _encode_ids(qids)
        dups = duplicate_pairs(qid_codes, docids)
        dropped = 0
        if len(dups):
            if dedupe is None:
                row = int(dups[0])
                raise duplicate_error(qid_vocab[int(qid_codes[row])].as_py(),
                                      docids[row].as_py(), source, _locate(locator, row))
            keep = _dedupe_mask(qid_codes, docids, scores, dedupe)
            dropped = int(n - keep.sum())
            idx = arrow_indices(np.flatnonzero(keep))
            qid_codes = qid_codes[keep]
            docids = docids.take(idx)
            scores = scores[keep]
            ranks = ranks[keep] if ranks is not None else None
            if locator is not None:
                locator = _kept_rows_locator(locator, np.flatnonzero(keep))
        qid_codes, qid_vocab = _compact_vocab(qid_codes, qid_vocab)
        return cls(
            name=name, qid_codes=qid_codes, qid_vocab=qid_vocab, docids=docids,
            scores=scores, ranks=ranks, tag=tag, source=source, dedupe=dedupe,
            n_dropped_duplicates=dropped, notes=notes, locator=locator,
        )

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the locator (a closure over the reader's line table)."""
        return {**self.__dict__, "locator": None}

    def line_of(self, row: int) -> int | None:
        """The line of ``source`` that row ``row`` was read from, when a reader recorded it."""
        return _locate(self.locator, row)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Mapping[str, float]], *, name: str = "run",
        dedupe: Dedupe | None = None,
    ) -> Run:
        """Build from ``{qid: {docid: score}}`` (the pytrec_eval / ranx shape)."""
        qids: list[str] = []
        docids: list[str] = []
        scores: list[float] = []
        for q, docs in data.items():
            if not isinstance(docs, Mapping):
                raise InputError(
                    f"expected a mapping of docid to score, found {type(docs).__name__}",
                    field=cut(q),
                )
            for d, s in docs.items():
                qids.append(str(q))
                docids.append(str(d))
                scores.append(_as_float(s, f"{q}/{d}"))
        return cls.from_columns(qids, docids, np.array(scores, dtype=np.float64), name=name,
                                dedupe=dedupe)

    # -- views ------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.scores)

    def __repr__(self) -> str:
        t, n = len(self.qid_vocab), len(self)
        return f"Run({self.name!r}, {t:,} topic{'s' * (t != 1)}, {n:,} row{'s' * (n != 1)})"

    @property
    def topics(self) -> list[str]:
        """Query ids present in the run, in first-seen order."""
        return list(self.qid_vocab.to_pylist())

    def qids(self) -> pa.Array:
        """The qid of every row, decoded."""
        return self.qid_vocab.take(pa.array(self.qid_codes))

    def to_arrow(self) -> pa.Table:
        """An Arrow table with columns qid, docid, score (and rank)."""
        cols: dict[str, Any] = {"qid": self.qids(), "docid": self.docids,
                                "score": pa.array(self.scores)}
        if self.ranks is not None:
            cols["rank"] = pa.array(self.ranks)
        return pa.table(cols)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}``."""
        out: dict[str, dict[str, float]] = {}
        for q, d, s in zip(self.qids().to_pylist(), self.docids.to_pylist(),
                           self.scores.tolist(), strict=True):
            out.setdefault(q, {})[d] = s
        return out

    def to_pandas(self) -> Any:
        """A pandas DataFrame with columns qid, docid, score (and rank)."""
        return self.to_arrow().to_pandas()

    def iter_rows(self) -> Iterator[tuple[str, str, float]]:
        """(qid, docid, score) per row, in stored order."""
        yield from zip(self.qids().to_pylist(), self.docids.to_pylist(), self.scores.tolist(),
                       strict=True)


def _as_float(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InputError(f"score must be a number, found {_limits.shown(value)}", field=where)
    out = float(value)
    if not math.isfinite(out):
        raise InputError(f"score must be a finite number, found {_limits.shown(value)}",
                         field=where)
    return out


def _compact_vocab(
    codes: npt.NDArray[np.int32], vocab: pa.Array
) -> tuple[npt.NDArray[np.int32], pa.Array]:
    """Drop vocabulary entries no row uses (after dedupe or slicing)."""
    used = np.zeros(len(vocab), dtype=bool)
    used[codes] = True
    if used.all():
        return codes, vocab
    remap = np.cumsum(used, dtype=np.int64) - 1
    return remap[codes].astype(np.int32), vocab.take(arrow_indices(np.flatnonzero(used)))


def duplicate_error(qid: str, docid: str, source: str | None, line: int | None
                    ) -> InputError:
    """The error for a repeated (qid, docid) pair, naming the remedy in both spellings:
    ``dedupe='first'`` in Python, ``--dedupe first|max`` on the command line."""
    found = f"duplicate (qid, docid) pair ({cut(qid)}, {cut(docid)})"
    return InputError(f"{found}; pass dedupe='first' or 'max' to keep one",
                      cli_message=f"{found}; pass --dedupe first|max to keep one",
                      path=source, line=line, field="docid")


def _dedupe_mask(
    qid_codes: npt.NDArray[np.int32], docids: pa.Array, scores: npt.NDArray[np.float64],
    how: Dedupe,
) -> npt.NDArray[np.bool_]:
    """Keep one row per (qid, docid): the first seen, or the highest score."""
    table = pa.table({"q": pa.array(qid_codes), "d": docids,
                      "row": pa.array(np.arange(len(scores), dtype=np.int64)),
                      "s": pa.array(scores)})
    if how == "first":
        agg = table.group_by(["q", "d"], use_threads=False).aggregate([("row", "min")])
        rows = to_numpy(agg.column("row_min"))
    elif how == "max":
        # Highest score wins; among equal scores, the first row.
        order = np.lexsort((np.arange(len(scores)), -scores))
        table = table.take(pa.array(order))
        agg = table.group_by(["q", "d"], use_threads=False).aggregate([("row", "first")])
        rows = to_numpy(agg.column("row_first"))
    else:
        raise InputError(f"dedupe must be 'first' or 'max', got {how!r}", field="dedupe")
    keep = np.zeros(len(scores), dtype=bool)
    keep[rows] = True
    return keep


@dataclass(frozen=True, eq=False, repr=False)
class Qrels:
    """Relevance judgments: ``qid``, ``docid``, ``rel`` (int).

    A negative ``rel`` marks a document that was pooled but could not be judged
    (trec_eval's convention): it is neither relevant nor non-relevant. The
    qrels define the topic set of an evaluation.
    """

    qid_codes: npt.NDArray[np.int32]
    qid_vocab: pa.Array
    docids: pa.Array
    rels: npt.NDArray[np.int64]
    source: str | None = None
    dedupe: Dedupe | None = None
    n_dropped_duplicates: int = 0

    @classmethod
    def from_columns(
        cls,
        qid: Any,
        docid: Any,
        rel: Any,
        *,
        source: str | None = None,
        dedupe: Dedupe | None = None,
        locator: RowLocator | None = None,
    ) -> Qrels:
        """Validate and build qrels from parallel columns."""
        qids = _as_ids(qid)
        docids = as_string_array(_as_ids(docid))
        raw = rel if isinstance(rel, np.ndarray) else _numeric(rel)
        rels_arr = np.asarray(raw)
        if rels_arr.dtype.kind == "f":
            bad = ~np.isfinite(rels_arr) | (rels_arr != np.round(rels_arr))
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise InputError(
                    f"relevance must be an integer, found {rels_arr[row]!r}",
                    path=source, line=_locate(locator, row), field="rel",
                )
        elif rels_arr.dtype.kind not in "iub":
            raise InputError(f"relevance must be an integer, found dtype {rels_arr.dtype}",
                             path=source, field="rel")
        rels = rels_arr.astype(np.int64)
        n = len(rels)
        if len(qids) != n or len(docids) != n:
            raise InputError(
                f"columns differ in length: qid {len(qids)}, docid {len(docids)}, rel {n}",
                path=source,
            )
        if n == 0:
            raise InputError("the qrels have no rows", path=source)
        _check_ids(qids, "qid", source, locator)
        _check_ids(docids, "docid", source, locator)
        qid_codes, qid_vocab = _encode_ids(qids)
        dups = duplicate_pairs(qid_codes, docids)
        dropped = 0
        if len(dups):
            if dedupe is None:
                row = int(dups[0])
                raise duplicate_error(qid_vocab[int(qid_codes[row])].as_py(),
                                      docids[row].as_py(), source, _locate(locator, row))
            keep = _dedupe_mask(qid_codes, docids, rels.astype(np.float64), dedupe)
            dropped = int(n - keep.sum())
            qid_codes = qid_codes[keep]
            docids = docids.take(arrow_indices(np.flatnonzero(keep)))
            rels = rels[keep]
        # Topics in byte order: the order trec_eval prints them in.
        qid_codes, qid_vocab = _compact_vocab(qid_codes, qid_vocab)
        order = byte_order(qid_vocab)
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        return cls(
            qid_codes=rank[qid_codes], qid_vocab=qid_vocab.take(arrow_indices(order)),
            docids=docids, rels=rels, source=source, dedupe=dedupe,
            n_dropped_duplicates=dropped,
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, int]]) -> Qrels:
        """Build from ``{qid: {docid: rel}}``."""
        qids: list[str] = []
        docids: list[str] = []
        rels: list[int] = []
        for q, docs in data.items():
            if not isinstance(docs, Mapping):
                raise InputError(
                    f"expected a mapping of docid to relevance, found {type(docs).__name__}",
                    field=cut(q),
                )
            for d, value in docs.items():
                r: object = value
                if isinstance(r, float) and r.is_integer():
                    r = int(r)
                if isinstance(r, bool) or not isinstance(r, int | np.integer):
                    raise InputError(f"relevance must be an integer, found {_limits.shown(value)}",
                                     field=cut(f"{q}/{d}"))
                qids.append(str(q))
                docids.append(str(d))
                rels.append(int(r))
        return cls.from_columns(qids, docids, np.array(rels, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.rels)

    def __repr__(self) -> str:
        t, n = len(self.qid_vocab), len(self)
        return f"Qrels({t:,} topic{'s' * (t != 1)}, {n:,} judgment{'s' * (n != 1)})"

    @property
    def topics(self) -> list[str]:
        """Topic ids, in byte order."""
        return list(self.qid_vocab.to_pylist())

    def qids(self) -> pa.Array:
        """The qid of every row, decoded."""
        return self.qid_vocab.take(pa.array(self.qid_codes))

    def to_arrow(self) -> pa.Table:
        """An Arrow table with columns qid, docid, rel."""
        return pa.table({"qid": self.qids(), "docid": self.docids, "rel": pa.array(self.rels)})

    def to_pandas(self) -> Any:
        """A pandas DataFrame with columns qid, docid, rel."""
        return self.to_arrow().to_pandas()

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{qid: {docid: rel}}``."""
        out: dict[str, dict[str, int]] = {}
        for q, d, r in zip(self.qids().to_pylist(), self.docids.to_pylist(), self.rels.tolist(),
                           strict=True):
            out.setdefault(q, {})[d] = r
        return out

    @property
    def digest(self) -> str:
        """sha256 of the judgments in canonical order (independent of file layout)."""
        return _qrels_digest(self)


def _qrels_digest(qrels: Qrels) -> str:
    table = qrels.to_arrow()
    order = pc.sort_indices(table, sort_keys=[("qid", "ascending"), ("docid", "ascending")])
    table = table.take(order)
    h = hashlib.sha256()
    for q, d, r in zip(table.column("qid").to_pylist(), table.column("docid").to_pylist(),
                       table.column("rel").to_pylist(), strict=True):
        h.update(f"{q}\t{d}\t{r}\n".encode())
    return "sha256:" + h.hexdigest()
