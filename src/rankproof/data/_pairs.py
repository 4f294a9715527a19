"""Exact joins of (group, string) pairs through 64-bit fingerprints.

Why: joining a run to its qrels asks, for every run row, whether the qrels judge
that (topic, docid) pair. Arrow's hash kernels (``is_in``, ``index_in``,
``dictionary_encode``) answer it by hashing every docid's bytes into a hash table
built per call, which costs seconds at ten million rows. Here each string gets a
64-bit fingerprint read straight from the Arrow buffers (one unaligned 8-byte
gather per word of the string), the fingerprint is mixed with the group code into
one key, the right side's keys are sorted once, and the left side is looked up with
one `np.searchsorted` over the rows that pass a byte-map prefilter.

Exactness is the rule, not the odds:

* the right side's (group, string) pairs must be distinct (qrels are, after their
  duplicate check), and their keys must be distinct too; when two keys collide the
  join answers None and the caller takes its exact Arrow path;
* a key match is confirmed by comparing the groups, and, where either string is
  longer than 8 bytes (the only case in which the fingerprint is not injective), by
  comparing the strings themselves (`pyarrow.compute.equal`).

So a fingerprint collision can only cost time, never change which rows match.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rankproof.data._strings import (
    _buffers,
    _masked_word,
    arrow_indices,
    as_string_array,
    n_words,
    order_words,
    to_numpy,
)

_MIX = np.uint64(0x9E3779B97F4A7C15)
_LONG = np.uint64(0xFF51AFD7ED558CCD)
_GROUP = np.uint64(0xC2B2AE3D27D4EB4F)
_FMIX_1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX_2 = np.uint64(0xC4CEB9FE1A85EC53)
_SHIFT = np.uint64(33)
#: The prefilter's byte map holds a power of two at least 8x the right side's strings
#: (about one left row in eight that is not a match passes it), up to 2**26 bytes.
_MAP_MAX_BITS = 26


def string_hashes(values: pa.Array) -> npt.NDArray[np.uint64]:
    """A 64-bit fingerprint per string, a function of that string's bytes alone.

    For a string of at most 8 bytes it is the string's little-endian word, zero
    padded: injective among such strings (ids hold no NUL byte: `Run`, `Qrels`).
    A longer string folds in every word of its own and its length, so the value
    never depends on the other strings of the array (unlike
    `rankproof.data._strings.fingerprints`, whose width is the array's longest),
    which is what lets two arrays be joined on it.
    """
    arr = as_string_array(values)
    if len(arr) == 0:
        return np.zeros(0, dtype=np.uint64)
    starts, lengths, data = _buffers(arr)
    h = _masked_word(data, starts, lengths, 0)
    longest = int(lengths.max())
    if longest > 8:
        rows = np.flatnonzero(lengths > 8)
        hl, sl, ll = h[rows], starts[rows], lengths[rows]
        with np.errstate(over="ignore"):
            for w in range(1, (longest + 7) // 8):
                more = ll > 8 * w
                hl = np.where(more, (hl * _MIX) ^ _masked_word(data, sl, ll, w), hl)
            hl ^= ll.astype(np.uint64) * _LONG
        h[rows] = hl
    return h


def _keys(group: npt.NDArray[np.integer], hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """One well-mixed 64-bit key per (group, fingerprint): murmur3's finaliser (a
    bijection) of their combination, so that its top bits index the byte map."""
    with np.errstate(over="ignore"):
        k = hashes ^ (group.astype(np.int64).view(np.uint64) * _GROUP)
        k ^= k >> _SHIFT
        k *= _FMIX_1
        k ^= k >> _SHIFT
        k *= _FMIX_2
        k ^= k >> _SHIFT
    return k


#: Up to this many strings per group, `match_pairs` bisects within each group's block
#: (one step per bit of the largest block); beyond, one search over mixed keys.
_BISECT_MAX = 64


def _bisect(
    counts: npt.NDArray[np.int64], rgroup: npt.NDArray[np.int64],
    rhash: npt.NDArray[np.uint64], lgroup: npt.NDArray[np.integer],
    lhash: npt.NDArray[np.uint64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """(positions among the left rows given, right rows) of the fingerprint matches,
    found by a vectorised bisection inside each group's block of the right side sorted
    by (group, fingerprint); None when two right pairs share group and fingerprint.

    With one judged string per group (a query log's qrels) that is one gather per left
    row, and no search through the whole right side."""
    order = np.lexsort((rhash, rgroup))
    sg, sh = rgroup[order], rhash[order]
    if bool(((sg[1:] == sg[:-1]) & (sh[1:] == sh[:-1])).any()):
        return None
    first = np.concatenate(([0], np.cumsum(counts)))
    g = lgroup.astype(np.int64)
    ok = np.flatnonzero((g >= 0) & (g < len(counts)))
    g, key = g[ok], lhash[ok]
    lo, end = first[g], first[g + 1]
    hi = end.copy()
    last = len(sh) - 1
    for _ in range(int(counts.max()).bit_length()):
        mid = (lo + hi) >> 1
        right = (lo < hi) & (sh[np.minimum(mid, last)] < key)
        lo = np.where(right, mid + 1, lo)
        hi = np.where(right, hi, np.minimum(mid, hi))
    hit = (lo < end) & (sh[np.minimum(lo, last)] == key)
    return ok[hit], order[lo[hit]].astype(np.int64)


def _search(
    rgroup: npt.NDArray[np.int64], rhash: npt.NDArray[np.uint64],
    lgroup: npt.NDArray[np.integer], lhash: npt.NDArray[np.uint64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """`_bisect`'s answer for large groups: one `np.searchsorted` of the left rows' mixed
    keys, sorted first (a sorted search walks the right side once instead of missing
    the cache at every step); None when two right keys collide."""
    rkeys = _keys(rgroup, rhash)
    order = np.argsort(rkeys)
    sorted_keys = rkeys[order]
    if bool((sorted_keys[1:] == sorted_keys[:-1]).any()):
        return None
    lkeys = _keys(lgroup, lhash)
    by_key = np.argsort(lkeys)
    at = np.minimum(np.searchsorted(sorted_keys, lkeys[by_key]), len(sorted_keys) - 1)
    hit = sorted_keys[at] == lkeys[by_key]
    pos = by_key[hit]
    back = np.argsort(pos)
    return pos[back].astype(np.int64), order[at[hit][back]].astype(np.int64)


def match_pairs(
    left_group: npt.NDArray[np.integer], left: pa.Array,
    right_group: npt.NDArray[np.integer], right: pa.Array,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """The left rows whose (group, string) pair is a right row's, with that right row.

    ``right``'s pairs must be distinct (each left row then matches at most one right
    row). Returns ``(left_rows, right_rows)``, left rows ascending; or None when two
    right keys collide, so that the caller's exact path decides instead (see the
    module's docstring: a collision never changes the answer, only the path).
    A left group no right row has (such as -1, "no topic") matches nothing.
    """
    empty = np.zeros(0, dtype=np.int64)
    left, right = as_string_array(left), as_string_array(right)
    if len(left) == 0 or len(right) == 0:
        return empty, empty
    rhash = string_hashes(right)
    lhash = string_hashes(left)
    # The prefilter looks at the string alone (Fibonacci hashing of its fingerprint into
    # a byte map of the right side's strings): two operations per left row, where the
    # group and the search are paid only by the rows that pass.
    bits = min(_MAP_MAX_BITS, max(10, int(len(right) * 8 - 1).bit_length()))
    shift = np.uint64(64 - bits)
    present = np.zeros(1 << bits, dtype=bool)
    with np.errstate(over="ignore"):
        present[(rhash * _MIX) >> shift] = True
        cand = np.flatnonzero(present[(lhash * _MIX) >> shift])
    rgroup = right_group.astype(np.int64)
    counts = np.bincount(rgroup) if int(rgroup.min()) >= 0 else None
    if counts is not None and int(counts.max()) <= _BISECT_MAX:
        found = _bisect(counts, rgroup, rhash, left_group[cand], lhash[cand])
    else:
        found = _search(rgroup, rhash, left_group[cand], lhash[cand])
    if found is None:
        return None
    at, rrows = found
    lrows = cand[at]
    same = left_group[lrows].astype(np.int64) == right_group[rrows].astype(np.int64)
    lrows, rrows = lrows[same], rrows[same]
    # Fingerprints are injective only up to 8 bytes: a longer string on either side is
    # compared byte for byte.
    check = np.flatnonzero((_lengths_at(left, lrows) > 8) | (_lengths_at(right, rrows) > 8))
    if len(check):
        equal = to_numpy(pc.equal(left.take(arrow_indices(lrows[check])),
                                  right.take(arrow_indices(rrows[check]))))
        keep = np.ones(len(lrows), dtype=bool)
        keep[check] = equal
        lrows, rrows = lrows[keep], rrows[keep]
    return lrows.astype(np.int64), rrows


def _lengths_at(arr: pa.Array, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The byte lengths of ``arr``'s strings at ``rows``, from its offsets alone."""
    kind = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets: npt.NDArray[np.int64] = np.frombuffer(
        arr.buffers()[1], dtype=kind, count=len(arr) + 1,
        offset=arr.offset * np.dtype(kind).itemsize).astype(np.int64, copy=False)
    return offsets[rows + 1] - offsets[rows]


def string_index(values: pa.Array, vocab: pa.Array) -> npt.NDArray[np.int64]:
    """Each value's position in ``vocab`` (distinct strings), -1 where absent: what
    ``pc.index_in(values, value_set=vocab)`` answers, by `match_pairs` (and by
    ``index_in`` itself when two of ``vocab``'s fingerprints collide)."""
    out = np.full(len(values), -1, dtype=np.int64)
    found = match_pairs(np.zeros(len(values), dtype=np.int64), values,
                        np.zeros(len(vocab), dtype=np.int64), vocab)
    if found is None:
        codes = pc.index_in(as_string_array(values), value_set=as_string_array(vocab))
        filled = pc.fill_null(codes, -1)
        return np.asarray(to_numpy(filled), dtype=np.int64)
    out[found[0]] = found[1]
    return out


#: Up to this many 8-byte words per string, `byte_order` sorts the words itself.
_ORDER_MAX_WORDS = 4


def byte_order(values: pa.Array) -> npt.NDArray[np.int64]:
    """The indices that sort distinct strings byte-wise, as ``pc.sort_indices`` does.

    Why: sorting a million qids through Arrow's string comparison takes most of a
    second; their big-endian words (`order_words`: zero padded, and ids hold no NUL,
    so a prefix sorts first, as in byte order) sort as integers in a tenth of that.
    Ids longer than 32 bytes go to Arrow.
    """
    arr = as_string_array(values)
    if len(arr) < 2 or n_words(arr) > _ORDER_MAX_WORDS:
        return np.asarray(to_numpy(pc.sort_indices(arr)), dtype=np.int64)
    words = order_words(arr)
    if words.shape[1] == 1:
        return np.argsort(words[:, 0], kind="stable").astype(np.int64)
    return np.lexsort(tuple(words[:, w] for w in reversed(range(words.shape[1])))).astype(
        np.int64)
