"""The duplicate (qid, docid) search is exact, whether it runs in blocks or in one piece.

`duplicate_pairs` sorts fingerprints block by block when every group's rows
are contiguous, and over all rows otherwise; both must report exactly the
rows a plain set-based scan reports: no duplicate missed, none invented.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankproof.data import _strings

# Short ids (exact fingerprints), long ones (hashed, several words), and ids
# sharing long prefixes, so that fingerprints of different ids may collide.
IDS = st.sampled_from(["a", "b", "ab", "é", "x" * 9, "x" * 9 + "y", "x" * 17, "\x01", "0" * 8])


def brute_force(group: list[int], ids: list[str]) -> list[int]:
    seen: set[tuple[int, str]] = set()
    out = []
    for row, item in enumerate(zip(group, ids, strict=True)):
        if item in seen:
            out.append(row)
        seen.add(item)
    return out


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 5), IDS), max_size=60),
    contiguous=st.booleans(),
    block=st.integers(1, 16),
    pad=st.integers(0, 2),
)
def test_matches_a_set_scan(rows: list[tuple[int, str]], contiguous: bool, block: int,
                            pad: int) -> None:
    if contiguous:
        rows = sorted(rows, key=lambda r: r[0])
    group = [g for g, _ in rows]
    ids = [d for _, d in rows]
    # A sliced array: offsets that do not start at zero.
    arr = pa.array(["pad"] * pad + ids, type=pa.string()).slice(pad)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_strings, "_BLOCK_ROWS", block)
        got = _strings.duplicate_pairs(np.array(group, dtype=np.int32), arr)
    assert got.tolist() == brute_force(group, ids)


def test_blocks_hold_whole_groups() -> None:
    group = np.repeat(np.array([3, 1, 2, 0], dtype=np.int32), [5, 1, 7, 2])
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_strings, "_BLOCK_ROWS", 4)
        blocks = _strings._group_blocks(group)
    edges = [0, 5, 6, 13, 15]
    assert blocks[0][0] == 0 and blocks[-1][1] == len(group)
    assert all(a in edges and b in edges for a, b in blocks)
    # Interleaved groups: one block over everything.
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_strings, "_BLOCK_ROWS", 4)
        assert _strings._group_blocks(np.array([0, 1, 0, 1, 0, 1], dtype=np.int32)) == [(0, 6)]


def test_duplicate_in_a_later_block_is_found() -> None:
    n_topics, depth = 50, 40
    group = np.repeat(np.arange(n_topics, dtype=np.int32), depth)
    ids = [f"d{i}" for i in range(n_topics * depth)]
    ids[47 * depth + 39] = ids[47 * depth + 3]  # topic 47 repeats a docid
    ids[10 * depth] = ids[11 * depth]  # same docid in two topics: not a duplicate
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_strings, "_BLOCK_ROWS", 64)
        got = _strings.duplicate_pairs(group, pa.array(ids))
    assert got.tolist() == [47 * depth + 39]


def test_find_bytes_across_blocks() -> None:
    arr = pa.array(["ab", "c d", "x" * 3000, "e\tf"]).slice(1)
    assert _strings.find_bytes(arr, b" ") == 0
    assert _strings.find_bytes(arr, b"\t", block=7) == 2
    assert _strings.find_bytes(arr, b"\x00") is None
    assert _strings.find_bytes(pa.array([""]), b" ") is None


def test_first_empty_across_blocks() -> None:
    assert _strings.first_empty(pa.array(["a", "", "b"])) == 1
    assert _strings.first_empty(pa.array(["", "a", "b"]).slice(1)) is None
    assert _strings.first_empty(pa.array(["x", "a", "b", ""]).slice(1), block=1) == 2
    assert _strings.first_empty(pa.array([], type=pa.string())) is None
    assert _strings.first_empty(pa.array(["a", "b", ""], type=pa.large_string())) == 2


def test_two_threads_find_what_one_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``_PARALLEL_ROWS`` the blocks are searched on two threads: the same rows come
    back, duplicates planted in different blocks (and at a block's edges) included."""
    from rankproof.data import _strings

    groups, per = 1200, 1000  # 1.2 million rows, contiguous groups: many blocks
    group = np.repeat(np.arange(groups, dtype=np.int32), per)
    docs = np.tile(np.arange(per), groups).astype(str).astype(object)
    for row, source in [(5, 3), (700_999, 700_000), (1_199_999, 1_199_000), (65_536, 65_537)]:
        docs[row] = docs[source]
    arr = pa.array(docs.tolist(), type=pa.string())
    threaded = _strings.duplicate_pairs(group, arr)
    monkeypatch.setattr(_strings, "_PARALLEL_ROWS", 1 << 40)
    single = _strings.duplicate_pairs(group, arr)
    assert threaded.tolist() == single.tolist() == [5, 65_537, 700_999, 1_199_999]
