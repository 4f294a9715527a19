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

import os
from concurrent.futures import ThreadPoolExecutor

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


def _buffers(arr: pa.Array) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], np.ndarray]:
    """Start offsets, lengths and the raw bytes of a string array (no copy of the bytes)."""
    offset_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    bufs = arr.buffers()
    n = len(arr)
    offsets = np.frombuffer(
        bufs[1], dtype=offset_type, count=n + 1, offset=arr.offset * np.dtype(offset_type).itemsize
    ).astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return offsets[:-1], np.diff(offsets), data


def _words_at(data: np.ndarray, starts: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
    """The little-endian 8-byte word at each byte offset, zero past the end of ``data``.

    Reads through an unaligned strided uint64 view of the buffer; only offsets
    within 8 bytes of the end go through a small padded copy of the tail.
    """
    nd = len(data)
    out = np.zeros(len(starts), dtype=np.uint64)
    if nd >= 8:
        view = np.ndarray(shape=(nd - 7,), dtype="<u8", buffer=data, strides=(1,))
        safe = starts <= nd - 8
        if safe.all():
            return view[starts]
        out[safe] = view[starts[safe]]
    else:
        safe = np.zeros(len(starts), dtype=bool)
    rest = np.flatnonzero(~safe & (starts < nd))
    if len(rest):
        base = max(0, nd - 16)
        tail = np.zeros(32, dtype=np.uint8)
        tail[: nd - base] = data[base:]
        tview = np.ndarray(shape=(25,), dtype="<u8", buffer=tail, strides=(1,))
        out[rest] = tview[starts[rest] - base]
    return out


def n_words(arr: pa.Array) -> int:
    """How many 8-byte words the longest string of ``arr`` spans (at least 1)."""
    if len(arr) == 0:
        return 1
    lengths = pa.compute.binary_length(arr)
    longest = pa.compute.max(lengths).as_py() or 0
    return max(1, (int(longest) + 7) // 8)


def _masked_word(data: np.ndarray, starts: npt.NDArray[np.int64],
                 lengths: npt.NDArray[np.int64], w: int) -> npt.NDArray[np.uint64]:
    remaining = np.clip(lengths - 8 * w, 0, 8).astype(np.intp)
    word = _words_at(data, starts + 8 * w)
    word &= _MASKS[remaining]
    return word


def order_words(arr: pa.Array) -> npt.NDArray[np.uint64]:
    """An ``(n, W)`` uint64 matrix whose row-wise lexicographic order is byte order.

    Each row holds the string's bytes big-endian, zero padded. Ids never hold a
    NUL byte (``Run`` and ``Qrels`` reject it), so zero padding sorts a prefix
    before any longer string, as ``strcmp`` does.
    """
    arr = as_string_array(arr)
    starts, lengths, data = _buffers(arr)
    width = n_words(arr)
    out = np.empty((len(arr), width), dtype=np.uint64)
    for w in range(width):
        out[:, w] = _masked_word(data, starts, lengths, w).byteswap()
    return out


def fingerprints(arr: pa.Array) -> npt.NDArray[np.uint64]:
    """A 64-bit fingerprint per string; exact (injective) for strings of <= 8 bytes."""
    arr = as_string_array(arr)
    if len(arr) == 0:
        return np.zeros(0, dtype=np.uint64)
    starts, lengths, data = _buffers(arr)
    width = max(1, (int(lengths.max()) + 7) // 8)
    h = _masked_word(data, starts, lengths, 0)
    for w in range(1, width):
        with np.errstate(over="ignore"):
            h = (h * _MIX) ^ _masked_word(data, starts, lengths, w)
    if width > 1:
        with np.errstate(over="ignore"):
            h ^= lengths.astype(np.uint64) * np.uint64(0xFF51AFD7ED558CCD)
    return h


#: Rows per block of the duplicate search: the block's temporaries stay in cache.
_BLOCK_ROWS = 1 << 16
_GROUP_MIX = np.uint64(0xC2B2AE3D27D4EB4F)
#: Rows from which the duplicate search uses two threads (below, starting them costs more).
_PARALLEL_ROWS = 1 << 20


def groups_contiguous(group: npt.NDArray[np.integer], starts: npt.NDArray[np.integer]) -> bool:
    """Whether each group's rows form one block, given the blocks' first rows ``starts``.

    Each code must begin exactly one block: one `np.bincount` over the block starts'
    codes (the codes are small non-negative integers, a vocabulary's), where sorting
    or hashing them (``np.unique``) cost seconds on a million-topic run.
    """
    if len(starts) < 2:
        return True
    codes = group[starts]
    if int(codes.min()) < 0 or int(codes.max()) > 4 * len(group):
        return len(np.unique(codes)) == len(codes)  # not a vocabulary's codes
    return int(np.bincount(codes).max()) == 1


def _group_blocks(group: npt.NDArray[np.integer]) -> list[tuple[int, int]]:
    """Row ranges ``[a, b)`` of about ``_BLOCK_ROWS`` rows that each hold whole groups.

    When every group's rows are contiguous (a run file lists a topic's
    documents together), a duplicate can only sit inside one block. Otherwise
    one range covers every row.
    """
    n = len(group)
    if n <= _BLOCK_ROWS:
        return [(0, n)]
    starts = np.flatnonzero(group[1:] != group[:-1]) + 1
    starts = np.concatenate(([0], starts))
    if not groups_contiguous(group, starts):
        return [(0, n)]
    at = np.searchsorted(starts, np.arange(_BLOCK_ROWS, n, _BLOCK_ROWS))
    edges = np.unique(np.concatenate(([0], starts[at[at < len(starts)]], [n])))
    return list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))


def duplicate_pairs(
    group: npt.NDArray[np.integer], arr: pa.Array
) -> npt.NDArray[np.int64]:
    """Row indices that repeat an earlier (group, string) pair, in row order.

    Fingerprints find candidates by sorting, block by block when groups are
    contiguous (see `_group_blocks`: small sorts, no array the size of the
    input); candidates are confirmed by comparing the strings themselves, so
    a fingerprint collision never reports a false duplicate, and every true
    duplicate shares its fingerprint, so none is missed.
    """
    n = len(arr)
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    arr = as_string_array(arr)

    def candidates(block: tuple[int, int]) -> npt.NDArray[np.int64] | None:
        a, b = block
        fp = fingerprints(arr if (a, b) == (0, n) else arr.slice(a, b - a))
        with np.errstate(over="ignore"):
            key = fp ^ (group[a:b].astype(np.uint64) * _GROUP_MIX)
        sk = np.sort(key)
        if not (sk[1:] == sk[:-1]).any():
            return None
        order = np.argsort(key, kind="stable")
        sk = key[order]
        same = sk[1:] == sk[:-1]
        # Both rows of every key collision are candidates.
        return a + np.concatenate([order[1:][same], order[:-1][same]])

    blocks = _group_blocks(group)
    # numpy releases the GIL in its sorts and element-wise loops, so on a run of millions
    # of rows two threads check disjoint blocks at once; the candidates are the same
    # whichever thread found them (they are sorted below).
    threads = min(2, os.cpu_count() or 1, len(blocks))
    if threads > 1 and n >= _PARALLEL_ROWS:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            found = list(pool.map(candidates, blocks))
    else:
        found = [candidates(block) for block in blocks]
    parts = [c for c in found if c is not None]
    if not parts:
        return np.zeros(0, dtype=np.int64)
    cand = np.unique(np.concatenate(parts))
    strings = arr.take(arrow_indices(cand)).to_pylist()
    seen: set[tuple[int, str]] = set()
    dups: list[int] = []
    for row, text in zip(cand.tolist(), strings, strict=True):
        item = (int(group[row]), text)
        if item in seen:
            dups.append(row)
        else:
            seen.add(item)
    return np.array(dups, dtype=np.int64)


def arrow_indices(rows: npt.NDArray[np.integer]) -> pa.Array:
    """An int64 Arrow array over numpy row indices, zero-copy.

    ``pa.array(ndarray)`` imports pandas on first use (a third of a second);
    wrapping the buffer does not.
    """
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(rows), [None, pa.py_buffer(rows)])


_NUMPY_TYPES: dict[pa.DataType, type[np.generic]] = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32,
    pa.uint64(): np.uint64, pa.float32(): np.float32, pa.float64(): np.float64,
}


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A null-free numeric or boolean Arrow array as numpy, zero-copy where possible.

    Arrow's own ``to_numpy`` imports pandas on first use (a third of a second);
    reading the buffers directly avoids that on every CLI start.
    """
    if isinstance(values, pa.ChunkedArray):
        parts = [to_numpy(c) for c in values.chunks]
        if not parts:
            return np.zeros(0, dtype=_NUMPY_TYPES.get(values.type, np.float64))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)
    if values.null_count:
        raise ValueError("to_numpy needs an array without nulls")
    if pa.types.is_boolean(values.type):
        bits = np.frombuffer(values.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little", count=values.offset + len(values))[
            values.offset:
        ].astype(bool)
    dtype: np.dtype[np.generic] = np.dtype(_NUMPY_TYPES[values.type])
    return np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values),
                         offset=values.offset * dtype.itemsize)


def to_numpy_filled(values: pa.Array, fill: int) -> np.ndarray:
    """Like :func:`to_numpy`, with null slots replaced by ``fill``."""
    if values.null_count == 0:
        return to_numpy(values)
    valid = to_numpy(values.is_valid())
    dtype = np.dtype(_NUMPY_TYPES[values.type])
    raw = np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values),
                        offset=values.offset * dtype.itemsize)
    return np.where(valid, raw, fill)


def first_empty(values: pa.Array | pa.ChunkedArray, block: int = 1 << 20) -> int | None:
    """Index of the first empty string, or None; reads the offsets in blocks
    (no array of lengths the size of the input)."""
    arr = as_string_array(values)
    offset_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(arr.buffers()[1], dtype=offset_type, count=len(arr) + 1,
                            offset=arr.offset * np.dtype(offset_type).itemsize)
    for at in range(0, len(arr), block):
        piece = offsets[at:at + block + 1]
        empty = np.flatnonzero(piece[1:] == piece[:-1])
        if len(empty):
            return at + int(empty[0])
    return None


def find_bytes(
    values: pa.Array | pa.ChunkedArray, needles: bytes, block: int = 1 << 20
) -> int | None:
    """Index of the first string that holds any byte of ``needles``, or None.

    Readers and writers use it to keep ids that a format cannot carry (a tab
    in a TSV field, whitespace in a TREC column, a NUL byte anywhere) out of
    the data. ``bytes.find`` per needle over the character buffer runs at
    memory speed, where an Arrow regex over millions of ids costs the better
    part of a second; the buffer is scanned in ``block``-byte pieces so no copy
    of it is made. Null slots must have been rejected beforehand.
    """
    arr = as_string_array(values)
    if len(arr) == 0:
        return None
    offset_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(arr.buffers()[1], dtype=offset_type, count=len(arr) + 1,
                            offset=arr.offset * np.dtype(offset_type).itemsize)
    lo, hi = int(offsets[0]), int(offsets[-1])
    if hi == lo:
        return None
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8)
    singles = [bytes((b,)) for b in needles]
    for at in range(lo, hi, block):
        piece = data[at:min(at + block, hi)].tobytes()
        hits = [pos for needle in singles if (pos := piece.find(needle)) >= 0]
        if hits:
            first = at + min(hits)
            return int(np.searchsorted(offsets, first, side="right")) - 1
    return None
