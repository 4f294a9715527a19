"""Vectorised helpers over Arrow string columns.

Docids of a large run (millions of rows, millions of distinct values) are
kept as an Arrow string column instead of being dictionary-encoded: hashing
five million distinct strings costs seconds, while everything the evaluator
needs from docids can be had without it:

* a 64-bit fingerprint per row (:func:`fingerprints`) for duplicate checks;
* an exact, byte-order-preserving key (:func:`order_words`) for the rows that
  need it — trec_eval breaks score ties by docid, byte-wise descending.

Both read the Arrow buffers directly as unaligned 8-byte words, so the cost is
one gather per 8 bytes of the longest id.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [2**64 - 1], dtype=np.uint64)
_MIX = np.uint64(0x9E3779B97F4A7C15)


def as_string_array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous ``string`` (or ``large_string``) array, dictionaries decoded."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = values.cast(pa.string())
    return values


def _word_view(arr: pa.Array) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], np.ndarray]:
    """Start offsets, lengths and an unaligned uint64 view over ``arr``'s bytes."""
    offset_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    bufs = arr.buffers()
    n = len(arr)
    offsets = np.frombuffer(
        bufs[1], dtype=offset_type, count=n + 1, offset=arr.offset * np.dtype(offset_type).itemsize
    ).astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    padded = np.zeros(int(offsets[-1]) + 8 if n else 8, dtype=np.uint8)
    used = data[: int(offsets[-1])] if n else data[:0]
    padded[: len(used)] = used
    view = np.ndarray(shape=(len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    starts = offsets[:-1]
    lengths = np.diff(offsets)
    return starts, lengths, view


def n_words(arr: pa.Array) -> int:
    """How many 8-byte words the longest string of ``arr`` spans (at least 1)."""
    if len(arr) == 0:
        return 1
    lengths = pa.compute.binary_length(arr)
    longest = pa.compute.max(lengths).as_py() or 0
    return max(1, (int(longest) + 7) // 8)


def order_words(arr: pa.Array) -> npt.NDArray[np.uint64]:
    """An ``(n, W)`` uint64 matrix whose row-wise lexicographic order is byte order.

    Each row holds the string's bytes big-endian, zero padded. Ids never hold a
    NUL byte (the readers reject it), so zero padding sorts a prefix before any
    longer string, as ``strcmp`` does.
    """
    arr = as_string_array(arr)
    starts, lengths, view = _word_view(arr)
    width = n_words(arr)
    out = np.empty((len(arr), width), dtype=np.uint64)
    for w in range(width):
        remaining = np.clip(lengths - 8 * w, 0, 8)
        word = view[starts + 8 * w] if len(arr) else np.zeros(0, np.uint64)
        word &= _MASKS[remaining]
        out[:, w] = word.byteswap()
    return out


def fingerprints(arr: pa.Array) -> npt.NDArray[np.uint64]:
    """A 64-bit fingerprint per string; exact (injective) for strings of <= 8 bytes."""
    arr = as_string_array(arr)
    starts, lengths, view = _word_view(arr)
    width = n_words(arr)
    if len(arr) == 0:
        return np.zeros(0, dtype=np.uint64)
    h = view[starts] & _MASKS[np.minimum(lengths, 8)]
    for w in range(1, width):
        remaining = np.clip(lengths - 8 * w, 0, 8)
        word = view[starts + 8 * w] & _MASKS[remaining]
        with np.errstate(over="ignore"):
            h = (h * _MIX) ^ word ^ (lengths.astype(np.uint64) << np.uint64(56))
    return h


def duplicate_pairs(
    group: npt.NDArray[np.integer], arr: pa.Array
) -> npt.NDArray[np.int64]:
    """Row indices that repeat an earlier (group, string) pair, in row order.

    Fingerprints find candidates in one sort; candidates are confirmed by
    comparing the strings themselves, so a fingerprint collision never
    reports a false duplicate.
    """
    n = len(arr)
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    fp = fingerprints(arr)
    with np.errstate(over="ignore"):
        key = fp ^ (group.astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F))
    order = np.argsort(key, kind="stable")
    sk = key[order]
    same = sk[1:] == sk[:-1]
    if not same.any():
        return np.zeros(0, dtype=np.int64)
    # Every true duplicate shares its key with an earlier row, so both rows are
    # among the candidates; confirm exactly on the strings themselves.
    cand = np.unique(np.concatenate([order[1:][same], order[:-1][same]]))
    strings = arr.take(pa.array(cand)).to_pylist()
    seen: set[tuple[int, str]] = set()
    dups: list[int] = []
    for row, text in zip(cand.tolist(), strings, strict=True):
        item = (int(group[row]), text)
        if item in seen:
            dups.append(row)
        else:
            seen.add(item)
    return np.array(dups, dtype=np.int64)
