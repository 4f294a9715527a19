"""Plain whitespace-separated files, streamed by Arrow into preallocated arrays.

The TREC fast path (``_trec._fast_table``) uses this for *plain* files — ASCII,
no NUL, no whitespace byte but the delimiter and line ends — which is what
retrieval tools write. For them Arrow's split on the one delimiter is exactly
the careful path's split on any whitespace, and every column is valid UTF-8,
so only the needed columns are parsed.

Arrow's ``read_csv`` returns one chunk per block; joining the chunks into the
contiguous arrays a `Run` holds copies the whole table, and the table and
its copy are alive together. Streaming instead copies each small block into
arrays allocated once, so the peak holds the output plus a few blocks, and
nothing is copied twice. The streaming reader parses on one thread: on an
idle two-core machine the parse of a 7-million-line run takes about 1.0 s
against 0.7 s for the multi-threaded ``read_csv``, but the whole read uses
less CPU time and memory, and on a busy machine it is the faster of the two.
(Parsing two halves of the file on two threads was tried: more CPU time, and
no faster on a loaded two-core machine.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from rankproof.data._strings import arrow_indices, to_numpy

# Every byte ``bytes.split()`` splits on: the careful path's field separators.
WHITESPACE = b" \t\n\r\x0b\x0c"

_NUMBERS: dict[pa.DataType, type[np.generic]] = {pa.int64(): np.int64, pa.float64(): np.float64}
_DICTIONARY = pa.dictionary(pa.int32(), pa.string())


def plain_scan(source: str | bytes, delimiter: str, block: int = 1 << 20) -> int | None:
    """The size of the file (a path) or bytes if plain (see the module docstring), else None.

    One pass in 1 MiB blocks; ``bytes.isascii`` and ``in`` run at memory
    speed: well under a tenth of a second for a 7-million-line run.
    """
    allowed = b"\r\n" + delimiter.encode()
    foreign = [bytes((b,)) for b in WHITESPACE + b"\x00" if b not in allowed]

    def plain(chunk: bytes) -> bool:
        return chunk.isascii() and not any(f in chunk for f in foreign)

    if isinstance(source, bytes):
        return len(source) if plain(source) else None
    size = 0
    with open(source, "rb") as fh:
        while chunk := fh.read(block):
            if not plain(chunk):
                return None
            size += len(chunk)
    return size


class _Column:
    """The output arrays of one column, allocated once for ``rows`` rows.

    Only the pages that rows are written to become resident, so a generous
    bound costs address space, not memory.
    """

    def __init__(self, type_: pa.DataType, rows: int, nbytes: int) -> None:
        self.type = type_
        self.dictionary = type_ == _DICTIONARY
        self.string = type_ == pa.string()
        if self.dictionary:
            self.values: np.ndarray = np.empty(rows, dtype=np.int32)
        elif self.string:
            self.values = np.empty(rows + 1, dtype=np.int32)  # offsets
            self.values[0] = 0
            self.data = np.empty(nbytes, dtype=np.uint8)
        else:
            self.values = np.empty(rows, dtype=_NUMBERS[type_])


class _Writer:
    """Copies Arrow blocks into a `_Column`."""

    def __init__(self, column: _Column) -> None:
        self.column = column
        self.pos = 0  # string bytes written
        self.index: dict[str, int] = {}
        self.vocab: list[pa.Array] = []

    def put(self, at: int, arr: pa.Array) -> None:
        """Write ``arr`` as rows ``at`` onwards."""
        col, m = self.column, len(arr)
        if col.dictionary:
            # Each block has its own dictionary: map it onto one vocabulary
            # kept in first-seen order.
            col.values[at:at + m] = self._codes(arr.dictionary)[to_numpy(arr.indices)]
        elif col.string:
            offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=m + 1,
                                    offset=arr.offset * 4)
            lo, hi = int(offsets[0]), int(offsets[-1])
            if hi > lo:
                col.data[self.pos:self.pos + hi - lo] = np.frombuffer(
                    arr.buffers()[2], dtype=np.uint8, count=hi - lo, offset=lo)
            col.values[at + 1:at + m + 1] = offsets[1:] - (lo - self.pos)
            self.pos += hi - lo
        else:
            col.values[at:at + m] = to_numpy(arr)

    def _codes(self, words: pa.Array) -> np.ndarray:
        """Vocabulary codes of ``words`` (distinct strings), adding the new ones."""
        before = len(self.index)
        remap = np.fromiter((self.index.setdefault(w, len(self.index))
                             for w in words.to_pylist()), dtype=np.int32, count=len(words))
        fresh = np.flatnonzero(remap >= before)
        if len(fresh):
            self.vocab.append(words.take(arrow_indices(fresh)))
        return remap

    def finish(self, n: int) -> pa.Array:
        col = self.column
        if col.dictionary:
            vocab = pa.concat_arrays(self.vocab)
            codes = pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(col.values[:n])])
            return pa.DictionaryArray.from_arrays(codes, vocab)
        if col.string:
            return pa.Array.from_buffers(
                pa.string(), n,
                [None, pa.py_buffer(col.values[:n + 1]), pa.py_buffer(col.data[:self.pos])])
        return pa.Array.from_buffers(col.type, n, [None, pa.py_buffer(col.values[:n])])


def read_table(
    source: Any, size: int, n_columns: int, read_options: pa_csv.ReadOptions,
    parse_options: pa_csv.ParseOptions, convert_options: pa_csv.ConvertOptions,
) -> pa.Table | None:
    """The file as a table with one chunk per column, or None to use ``read_csv``.

    A line of ``n_columns`` non-empty fields takes at least ``2 * n_columns``
    bytes, so ``size // (2 * n_columns) + 1`` rows is the bound allocated for
    (a file with empty fields may overflow it: then None). Arrow errors
    (a malformed line) propagate: the caller sends the file down the careful
    path. None when a column type is not handled here or the file is too
    large for int32 string offsets.
    """
    if size >= 2**31:
        return None
    cap = size // (2 * n_columns) + 1
    reader = pa_csv.open_csv(source, read_options=read_options, parse_options=parse_options,
                             convert_options=convert_options)
    supported = (*_NUMBERS, pa.string(), _DICTIONARY)
    if any(f.type not in supported for f in reader.schema):
        return None
    writers = [_Writer(_Column(f.type, cap, size)) for f in reader.schema]
    n = 0
    for batch in reader:
        m = batch.num_rows
        if n + m > cap:
            return None
        for writer, column in zip(writers, batch.columns, strict=True):
            writer.put(n, column)
        n += m
    if n == 0:
        return None
    return pa.Table.from_arrays([w.finish(n) for w in writers], names=reader.schema.names)
