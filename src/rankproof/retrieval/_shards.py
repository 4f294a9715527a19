"""Shard files of one model's chunk vectors: atomic writes, checked reads, corpus-order gathers.

See `rankproof.retrieval._embed_cache` for the layout and the rules (a shard
is trusted only after its dtype, shape, checksum and values are checked).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

logger = logging.getLogger("rankproof.retrieval._embed_cache")

KEY_DTYPE = np.dtype("S16")
_SUFFIX_KEYS = ".keys.npy"
_SUFFIX_VECS = ".vecs.npy"
_SHARD = re.compile(r"^shard-([0-9a-f]{32})\.keys\.npy$")
_VERIFIED: dict[tuple[str, int, int, int, int], str] = {}
"""Shards already checked by this process, by (path, sizes, modification times)."""


def _write_npy_atomic(path: Path, array: npt.NDArray[Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, array, allow_pickle=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _shard_digest(keys: npt.NDArray[np.bytes_], vectors: npt.NDArray[np.float32]) -> str:
    h = hashlib.sha256(b"rankproof-shard-v1\0")
    h.update(np.ascontiguousarray(keys).tobytes())
    view = np.ascontiguousarray(vectors)
    for i in range(0, len(view), 8192):  # bounded memory over a memory-mapped file
        h.update(np.ascontiguousarray(view[i:i + 8192]).tobytes())
    return h.hexdigest()[:32]


class ShardStore:
    """One model's folder of shards (see the module docstring).

    ``rows_of(keys)`` says, for each key, which shard and row hold its vector
    (``-1``: not cached); ``vectors(s)`` is shard ``s``'s verified,
    memory-mapped matrix; ``add(keys, vectors)`` writes a new shard atomically.
    """

    def __init__(self, folder: Path, dim: int) -> None:
        self.folder = folder
        self.dim = dim
        self.names: list[str] = []
        self._maps: dict[int, npt.NDArray[np.float32]] = {}
        self._table = np.zeros(0, dtype=KEY_DTYPE)
        self._where = np.zeros((0, 2), dtype=np.int64)
        self.rejected: list[str] = []
        self.rescan()

    def _paths(self, name: str) -> tuple[Path, Path]:
        return (self.folder / f"shard-{name}{_SUFFIX_KEYS}",
                self.folder / f"shard-{name}{_SUFFIX_VECS}")

    def rescan(self) -> None:
        """Read every shard's keys (small) and build the sorted key table."""
        keys_list: list[npt.NDArray[np.bytes_]] = []
        where: list[npt.NDArray[np.int64]] = []
        self.names = []
        self._maps = {}
        if self.folder.is_dir():
            for entry in sorted(self.folder.iterdir()):
                m = _SHARD.match(entry.name)
                if m is None:
                    continue
                try:
                    keys = np.load(entry, allow_pickle=False)
                except (OSError, ValueError) as exc:
                    self._reject(m.group(1), f"keys unreadable: {exc}")
                    continue
                if keys.dtype != KEY_DTYPE or keys.ndim != 1:
                    self._reject(m.group(1), f"keys hold {keys.dtype} {keys.shape}")
                    continue
                s = len(self.names)
                self.names.append(m.group(1))
                keys_list.append(keys)
                rows = np.arange(len(keys), dtype=np.int64)
                where.append(np.stack([np.full(len(keys), s, dtype=np.int64), rows], axis=1))
        if keys_list:
            table = np.concatenate(keys_list)
            order = np.argsort(table, kind="stable")
            self._table = table[order]
            self._where = np.concatenate(where)[order]
        else:
            self._table = np.zeros(0, dtype=KEY_DTYPE)
            self._where = np.zeros((0, 2), dtype=np.int64)

    def _reject(self, name: str, why: str) -> None:
        for p in self._paths(name):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
        line = f"shard-{name} ({why})"
        logger.warning("embedding cache %s: removed unusable %s", self.folder, line)
        self.rejected.append(line)

    def rows_of(self, keys: npt.NDArray[np.bytes_]) -> npt.NDArray[np.int64]:
        """``(len(keys), 2)`` array of (shard, row); ``(-1, -1)`` where a key is not cached."""
        out = np.full((len(keys), 2), -1, dtype=np.int64)
        if len(self._table) == 0 or len(keys) == 0:
            return out
        pos = np.searchsorted(self._table, keys)
        inside = pos < len(self._table)
        hit = np.zeros(len(keys), dtype=bool)
        hit[inside] = self._table[pos[inside]] == keys[inside]
        out[hit] = self._where[pos[hit]]
        return out

    def verify(self, shards: Sequence[int]) -> bool:
        """Check (and map) each of ``shards``; False when one was rejected (rescan first)."""
        ok = True
        for s in shards:
            if s in self._maps:
                continue
            why = self._check(s)
            if why is not None:
                self._reject(self.names[s], why)
                ok = False
        if not ok:
            self.rescan()
        return ok

    def _check(self, s: int) -> str | None:
        name = self.names[s]
        kpath, vpath = self._paths(name)
        try:
            keys = np.load(kpath, allow_pickle=False)
            vecs = np.load(vpath, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:  # missing, truncated or not a .npy file
            return f"vectors unreadable: {exc}"
        if vecs.dtype != np.float32 or vecs.shape != (len(keys), self.dim):
            return (f"vectors hold {vecs.dtype} {vecs.shape}, expected float32 "
                    f"{(len(keys), self.dim)}")
        stats = (kpath.stat(), vpath.stat())
        stamp = (str(vpath), stats[0].st_size, stats[0].st_mtime_ns, stats[1].st_size,
                 stats[1].st_mtime_ns)
        if _VERIFIED.get(stamp) != name:
            if _shard_digest(keys, vecs) != name:
                return "checksum mismatch"
            for i in range(0, len(vecs), 8192):
                if not np.isfinite(vecs[i:i + 8192]).all():
                    return "non-finite values"
            _VERIFIED[stamp] = name
        self._maps[s] = vecs
        return None

    def vectors(self, s: int) -> npt.NDArray[np.float32]:
        """Shard ``s``'s matrix, memory-mapped (call `verify` first)."""
        return self._maps[s]

    def add(self, keys: npt.NDArray[np.bytes_], vectors: npt.NDArray[np.float32]) -> str:
        """Write one shard (vectors, then keys: the keys file commits it); its name."""
        self.folder.mkdir(parents=True, exist_ok=True)
        name = _shard_digest(keys, vectors)
        kpath, vpath = self._paths(name)
        _write_npy_atomic(vpath, np.ascontiguousarray(vectors, dtype=np.float32))
        _write_npy_atomic(kpath, np.ascontiguousarray(keys, dtype=KEY_DTYPE))
        return name


@dataclass
class CorpusVectors:
    """A corpus's vectors, in corpus order: in memory, or gathered from shard files.

    ``blocks(size)`` yields ``(start, matrix)`` for rows ``start .. start+size``
    in order, reading only those rows (the whole corpus is never in memory
    at once unless ``matrix`` is set).
    """

    n: int
    dim: int
    matrix: npt.NDArray[np.float32] | None = None
    store: ShardStore | None = None
    where: npt.NDArray[np.int64] | None = None

    def rows(self, start: int, stop: int) -> npt.NDArray[np.float32]:
        """Rows ``start .. stop`` in corpus order."""
        if self.matrix is not None:
            return self.matrix[start:stop]
        assert self.where is not None
        return self._gather(self.where[start:stop])

    def take(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The rows at (sorted) corpus positions ``rows``."""
        if self.matrix is not None:
            return self.matrix[rows]
        assert self.where is not None
        return self._gather(self.where[rows])

    def _gather(self, w: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        assert self.store is not None
        out = np.empty((len(w), self.dim), dtype=np.float32)
        if len(w) == 0:
            return out
        cuts = np.flatnonzero(np.diff(w[:, 0])) + 1
        for a, b in zip(np.r_[0, cuts].tolist(), np.r_[cuts, len(w)].tolist(), strict=True):
            vecs = self.store.vectors(int(w[a, 0]))
            r = w[a:b, 1]
            if r[-1] - r[0] == b - a - 1 and bool(np.all(np.diff(r) == 1)):
                out[a:b] = vecs[r[0]:r[-1] + 1]  # consecutive rows: one slice
            else:
                out[a:b] = vecs[r]
        return out

    def blocks(self, size: int) -> Iterator[tuple[int, npt.NDArray[np.float32]]]:
        for start in range(0, self.n, size):
            yield start, self.rows(start, min(self.n, start + size))

    def load(self) -> npt.NDArray[np.float32]:
        """The whole matrix in memory."""
        return self.matrix if self.matrix is not None else self.rows(0, self.n)

    @property
    def nbytes(self) -> int:
        return self.n * self.dim * 4
