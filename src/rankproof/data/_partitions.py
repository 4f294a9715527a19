"""Runs larger than memory, read as a sequence of partitions of whole topics.

Why: every measure trec_eval defines is computed topic by topic, so a run
never has to be in memory whole to be evaluated: it is enough to hold a few
whole topics at a time (`rankproof.measures.evaluate_partitions` evaluates
them and puts the results together exactly as one call of ``evaluate`` on the
whole run would). `RunPartitions` reads a run that way, with its memory
bounded by the partition size, not the file size:

* a **TREC run** (``.gz`` too, by content; ``-`` for standard input) is read
  in blocks; the text is cut at line boundaries where the topic changes, and
  each partition's text goes through the one TREC reader (`read_trec_run`),
  so every check, every parse and every error message is the one
  `load_run` gives (lines are counted in the whole file);
* a **Parquet file** whose rows are grouped by topic, or a **directory of
  Parquet files** (a pyarrow dataset, Hive-partitioned by topic:
  ``qid=<topic>/part-0.parquet``) is read in record batches and cut where the
  topic changes; columns go through `run_from_arrow`.

The input must be **grouped by topic**: all lines of a topic together (sorted
by topic, or in any order of topics, each contiguous). A topic that appears
again after another topic started is an `InputError` naming the file, the
line (the row, for Parquet) and the topic; ``LC_ALL=C sort -s -k1,1 RUN``
groups a TREC run. A duplicate (qid, docid) is caught as `load_run` catches
it (duplicates can only sit inside one topic, so inside one partition).

A partition holds about ``partition_bytes`` of run text (or of Arrow data):
topics are added until it reaches that size, plus at most one read block. A
single topic larger than ``max_topic_bytes`` (by default ``partition_bytes``)
is refused (`InputError`): a partition holding it would break the bound.
(A smaller ``partition_bytes`` with a larger ``max_topic_bytes`` gives one
topic per partition, as the tests use.)
"""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rankproof._errors import InputError
from rankproof._io import GZIP_ERRORS, GZIP_MAGIC, PathLike, gzip_error, input_error
from rankproof._limits import shown
from rankproof.data._frames import run_from_arrow
from rankproof.data._model import Dedupe, Run
from rankproof.data._parquet import _TAG_KEY, PARQUET_MAGIC
from rankproof.data._strings import to_numpy
from rankproof.data._text import BOM, STDIN, STDIN_LABEL, ExtraColumns, Input, default_run_name
from rankproof.data._trec import read_trec_run

DEFAULT_PARTITION_BYTES = 16 << 20
"""The default size of one partition's run text (16 MiB: about 400,000 TREC lines)."""
_MAX_BLOCK = 1 << 20
_SORT_HINT = ("streaming needs the run grouped by topic (all lines of a topic together); "
              "sort it by topic first, e.g. `LC_ALL=C sort -s -k1,1 RUN > RUN.sorted`")
_LINE_NOTE = re.compile(r"at line (\d+)")


def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None elsewhere: freed heap memory goes back to the
    system between partitions (glibc keeps large freed blocks once its mmap
    threshold has risen, and the resident size would follow the largest
    partition ever held plus fragmentation, not what is held now)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


@dataclass
class PartitionStats:
    """What a pass over `RunPartitions` read (filled in as it goes)."""

    partitions: int = 0
    rows: int = 0
    topics: int = 0
    bytes: int = 0
    """Run text read (uncompressed), or Arrow bytes for Parquet."""
    largest: int = 0
    """Bytes of the largest partition."""


def _first_token(line: bytes) -> bytes | None:
    """The qid of a raw TREC line, or None for a blank or ``#`` comment line (as the
    careful path reads them: fields split on ASCII whitespace)."""
    stripped = line.strip()
    if not stripped or stripped.startswith(b"#"):
        return None
    return stripped.split(None, 1)[0]


def _last_topic_start(buf: bytearray, end: int, floor: int, floor_qid: bytes | None
                      ) -> tuple[int | None, bytes | None]:
    """Where the last topic of ``buf[:end]`` (complete lines) begins, and its qid.

    The start is None when the whole of ``buf[:end]`` is that one topic (no cut
    possible yet). ``buf[:floor]`` is already known to be one topic, ``floor_qid``,
    so the scan backwards stops there.
    """
    last: bytes | None = None
    first_start: int | None = None
    pos = end
    while pos > floor:
        start = buf.rfind(b"\n", 0, pos - 1) + 1
        qid = _first_token(bytes(buf[start:pos]))
        if qid is not None:
            if last is None:
                last = qid
            elif qid != last:
                return first_start, last
            first_start = start
        pos = start
    if floor > 0 and floor_qid is not None and last is not None and last != floor_qid:
        return first_start, last
    return None, last if last is not None else floor_qid


class RunPartitions:
    """A run read as consecutive `Run` objects, each holding whole topics.

    Iterate it (once per pass; each pass reads the file again, except
    standard input, which can be read only once) to get the partitions in
    file order; ``stats`` says how many there were and how large. ``name``
    and ``source`` are the run's, as `load_run` would set them.
    """

    def __init__(self, path: PathLike, *, partition_bytes: int = DEFAULT_PARTITION_BYTES,
                 name: str | None = None, dedupe: Dedupe | None = None,
                 extra_columns: ExtraColumns = "error", max_topic_bytes: int | None = None,
                 ) -> None:
        for what, value in (("partition_bytes", partition_bytes),
                            ("max_topic_bytes", max_topic_bytes)):
            if (value is not None or what == "partition_bytes") and (
                    isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InputError(f"{what} must be a positive integer, got {value!r}",
                                 field=what)
        self.path = str(path)
        self.label = STDIN_LABEL if self.path == STDIN else self.path
        self.partition_bytes = partition_bytes
        self.max_topic_bytes = partition_bytes if max_topic_bytes is None else max_topic_bytes
        self.dedupe = dedupe
        self.extra_columns = extra_columns
        self.kind = _kind(self.path)
        stem = default_run_name(self.path)
        if self.kind != "trec" and stem.endswith(".parquet") and len(stem) > len(".parquet"):
            stem = stem[: -len(".parquet")]
        self.name = name if name is not None else stem
        self.stats = PartitionStats()
        self._seen = SeenTopics()
        self._used = False

    @property
    def source(self) -> str:
        return self.label

    def __repr__(self) -> str:
        return (f"RunPartitions({self.label!r}, {self.kind}, partition_bytes="
                f"{self.partition_bytes:,})")

    def __iter__(self) -> Iterator[Run]:
        if self.path == STDIN and self._used:
            raise InputError("standard input can be read only once", path=self.label)
        self._used = True
        self.stats = PartitionStats()
        self._seen = SeenTopics()
        _release()  # what reading the qrels left in Arrow's pool is not held while streaming
        if self.kind == "trec":
            yield from self._trec()
        else:
            yield from self._arrow()

    def estimate_topics(self, sample: int = 4 << 20) -> int | None:
        """About how many topics the run holds, from its first ``sample`` bytes of text
        (the topics per line there, times the lines the whole text would hold): what a
        memory budget sizes per-topic arrays by, before the run is read. None for
        standard input, Parquet, or an empty sample."""
        size = run_size(self.path)
        if self.path == STDIN or self.kind != "trec" or not size:
            return None
        head = bytearray()
        for block in self._blocks(min(sample, _MAX_BLOCK)):
            head += block
            if len(head) >= sample:
                break
        end = head.rfind(b"\n") + 1
        lines = head.count(b"\n", 0, end)
        if not lines:
            return None
        first = [_first_token(raw) for raw in bytes(head[:end]).split(b"\n")[:lines]]
        changes = 1 + sum(1 for a, b in itertools.pairwise(first) if a != b)
        return max(1, round(changes * size / end))

    # -- TREC text ---------------------------------------------------------
    def _trec(self) -> Iterator[Run]:
        for index, (box, offset) in enumerate(self._text_partitions()):
            part = box.pop()  # the generator holds no reference to it while suspended
            run = self._parse_text(part, offset, index)
            self._check_grouped_text(run, part, offset)
            self._count(run, len(part))
            del part
            yield run
            del run  # not held while the next partition is read
            _release()

    def _text_partitions(self) -> Iterator[tuple[list[bytes], int]]:
        """Each partition's bytes (whole lines, whole topics; in a one-item list the
        caller empties) and the number of lines before it."""
        target = self.partition_bytes
        buf = bytearray()
        lines_before = 0
        floor, floor_qid = 0, None  # buf[:floor] is one topic, floor_qid
        yielded = False
        started = False
        block_size = max(1, min(_MAX_BLOCK, target // 4))
        for block in self._blocks(block_size):
            buf += block
            if not started:
                if len(buf) < len(BOM) and BOM.startswith(bytes(buf)):
                    continue
                started = True
                if buf.startswith(BOM):
                    del buf[:len(BOM)]
            while len(buf) >= target:
                end = buf.rfind(b"\n") + 1
                cut, qid = _last_topic_start(buf, end, floor, floor_qid)
                if cut is None:
                    if len(buf) > self.max_topic_bytes + block_size:
                        raise self._topic_too_large(qid, lines_before)
                    floor, floor_qid = end, qid
                    break
                with memoryview(buf) as view:
                    part = bytes(view[:cut])  # one copy (a bytearray slice would be two)
                del buf[:cut]
                floor, floor_qid = 0, None
                newlines = part.count(b"\n")
                box = [part]
                del part
                yield box, lines_before
                yielded = True
                lines_before += newlines
        if buf or not yielded:
            box = [bytes(buf)]
            del buf
            yield box, lines_before

    def _blocks(self, size: int) -> Iterator[bytes]:
        """The file's bytes (gunzipped when gzip, by content) in blocks of ``size``."""
        fh: IO[bytes]
        if self.path == STDIN:
            fh = sys.stdin.buffer
            own = False
        else:
            try:
                fh = open(self.path, "rb")  # noqa: SIM115 (closed below)
            except OSError as exc:
                raise input_error(self.path, exc, "run") from None
            own = True
        try:
            head = fh.peek(2)[:2] if hasattr(fh, "peek") else b""
            stream = cast(IO[bytes], gzip.GzipFile(fileobj=fh)) if head == GZIP_MAGIC else fh
            try:
                while block := stream.read(size):
                    yield block
            except GZIP_ERRORS as exc:
                if isinstance(exc, OSError) and exc.errno is not None:
                    raise input_error(self.label, exc, "run") from None
                raise gzip_error(self.label, exc) from None
        finally:
            if own:
                fh.close()

    def _topic_too_large(self, qid: bytes | None, lines_before: int) -> InputError:
        topic = shown(qid.decode("utf-8", "replace")) if qid is not None else "?"
        return InputError(
            f"topic {topic} holds more than {_mib(self.max_topic_bytes)} of run text (from "
            f"line {lines_before + 1}), more than one partition may hold; give it more memory "
            "(a larger partition_bytes; on the command line, a larger --memory-cap)",
            path=self.label, line=lines_before + 1, field="qid")

    def _parse_text(self, part: bytes, offset: int, index: int) -> Run:
        """One partition through the TREC reader; errors and notes name whole-file lines."""
        if index and (part.startswith(BOM) or part.startswith(GZIP_MAGIC)):
            part, offset = b"\n" + part, offset - 1  # the reader would take them for a file's
        if b"\r" in part and part.count(b"\r") != part.count(b"\r\n"):
            lone = re.search(rb"\r(?!\n)", part)
            at = offset + part.count(b"\n", 0, lone.start() if lone else 0) + 1
            raise InputError("a carriage return alone ends a line; streaming reads lines "
                             "ending in \\n or \\r\\n (convert the file, e.g. tr '\\r' '\\n')",
                             path=self.label, line=at)
        try:
            run = read_trec_run(Input.from_bytes(part, self.label), name=self.name,
                                dedupe=self.dedupe, extra_columns=self.extra_columns)
        except InputError as exc:
            raise _shifted(exc, offset) from None
        if not (offset and run.notes):
            return run
        notes = tuple(_LINE_NOTE.sub(lambda m: f"at line {int(m.group(1)) + offset}", note)
                      for note in run.notes)
        return dataclasses.replace(run, notes=notes)

    def _check_grouped_text(self, run: Run, part: bytes, offset: int) -> None:
        """Refuse a topic met again after another one started (here or earlier)."""
        again = _regrouped(run, self._seen)
        if again is None:
            return
        seen = self._seen
        current = None
        within: set[bytes] = set()
        for lineno, raw in enumerate(part.split(b"\n"), offset + 1):
            qid = _first_token(raw)
            if qid is None or qid == current:
                continue
            text = qid.decode("utf-8", "replace")
            if qid in within or text in seen:
                raise self._reappears(text, lineno, None)
            within.add(qid)
            current = qid
        raise self._reappears(again, None, None)  # not found by bytes: name the topic

    # -- Parquet -----------------------------------------------------------
    def _arrow(self) -> Iterator[Run]:
        pending: list[pa.Table] = []
        size = 0
        rows_before = 0
        tag = None
        for batch, batch_tag in self._batches():
            tag = tag if tag is not None else batch_tag
            if not batch.num_rows:
                continue
            pending.append(pa.Table.from_batches([batch]))
            size += batch.nbytes
            if size < self.partition_bytes:
                continue
            table = pa.concat_tables(pending)
            qid = self._qid_column(table)
            change = np.flatnonzero(to_numpy(pc.not_equal(qid[1:], qid[:-1]))) + 1 \
                if len(qid) > 1 else np.zeros(0, dtype=np.int64)
            if not len(change):
                if size > self.max_topic_bytes + self.partition_bytes:
                    raise InputError(
                        f"topic {shown(qid[0].as_py())} holds more than "
                        f"{_mib(self.max_topic_bytes)} of run data (from row "
                        f"{rows_before + 1}), more than one partition may hold; give it more "
                        "memory (a larger partition_bytes; on the command line, a larger "
                        "--memory-cap)", path=self.label, field="qid")
                pending, size = [table], table.nbytes
                continue
            cut = int(change[-1])
            head, rest = table.slice(0, cut), table.slice(cut)
            yield self._arrow_run(head, rows_before, tag)
            _release()
            rows_before += cut
            pending, size = [rest], rest.nbytes
            del table, head
        if pending or not self.stats.partitions:
            table = pa.concat_tables(pending) if pending else None
            if table is None or not table.num_rows:
                raise InputError("the run has no rows", path=self.label)
            yield self._arrow_run(table, rows_before, tag)

    def _batches(self) -> Iterator[tuple[pa.RecordBatch, str | None]]:
        import pyarrow.parquet as pq

        rows = max(1024, self.partition_bytes // 256)
        try:
            if os.path.isdir(self.path):
                import pyarrow.dataset as pds

                dataset = pds.dataset(self.path, format="parquet", partitioning=pds.HivePartitioning
                                      .discover(infer_dictionary=True))
                tag = _tag_of(dataset.schema)
                for batch in dataset.to_batches(batch_size=rows, use_threads=False):
                    yield batch, tag
                return
            file = pq.ParquetFile(self.path)
            tag = _tag_of(file.schema_arrow)
            for batch in file.iter_batches(batch_size=rows, use_threads=False):
                yield batch, tag
        except OSError as exc:
            raise input_error(self.path, exc, "run") from None
        except (pa.ArrowException, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"not a readable Parquet file or dataset: {exc}",
                             path=self.label) from None

    def _qid_column(self, table: pa.Table) -> pa.Array:
        from rankproof.data._frames import _pick_run

        name = _pick_run(table.column_names, None)["qid"]
        assert name is not None
        col = table.column(name)
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode()
        return col if pa.types.is_string(col.type) else col.cast(pa.string())

    def _arrow_run(self, table: pa.Table, rows_before: int, tag: str | None) -> Run:
        table = table.unify_dictionaries()
        try:
            run = run_from_arrow(table, name=self.name, dedupe=self.dedupe, source=self.label)
        except InputError as exc:
            raise InputError(f"{exc.reason} (in the partition starting at row "
                             f"{rows_before + 1})", path=self.label, field=exc.field) from None
        if tag is not None:
            run = dataclasses.replace(run, tag=tag)
        again = _regrouped(run, self._seen)
        if again is not None:
            qids = self._qid_column(table).to_pylist()
            current = None
            within: set[str] = set()
            for row, q in enumerate(qids, rows_before + 1):
                if q == current:
                    continue
                if q in within or q in self._seen:
                    raise self._reappears(q, None, row)
                within.add(q)
                current = q
            raise self._reappears(again, None, None)
        self._count(run, table.nbytes)
        return run

    # -- shared ------------------------------------------------------------
    def _count(self, run: Run, nbytes: int) -> None:
        topics = run.qid_vocab.to_pylist()
        self._seen.add(run.qid_vocab, topics)
        s = self.stats
        s.partitions += 1
        s.rows += len(run)
        s.topics += len(topics)
        s.bytes += nbytes
        s.largest = max(s.largest, nbytes)

    def _reappears(self, topic: str, line: int | None, row: int | None) -> InputError:
        where = f" at row {row}" if row is not None else ""
        return InputError(f"topic {shown(topic)} appears again{where} after other topics "
                          f"started: {_SORT_HINT}", path=self.label, line=line, field="qid")


def _release() -> None:
    """Hand the memory Arrow freed back to the system between partitions, so the
    process's resident size follows what is held, not what was once held."""
    pa.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)


class SeenTopics:
    """The topics of the partitions read so far, in memory that stays small at a million
    topics: a sorted array of their 64-bit hashes (8 bytes a topic) beside the ids as
    Arrow strings (their bytes and a 4-byte offset), where a Python set of the ids took
    about 100 bytes a topic (100 MiB at a million topics, against a cap of a few hundred).
    A hash met again is checked against the ids themselves, so every answer is exact."""

    def __init__(self) -> None:
        self._hashes = np.empty(0, dtype=np.int64)
        self._ids: list[pa.Array] = []

    @staticmethod
    def _hash(topics: list[str]) -> npt.NDArray[np.int64]:
        return np.fromiter(map(hash, topics), dtype=np.int64, count=len(topics))

    def first_seen(self, topics: list[str]) -> str | None:
        """The first of ``topics`` met in an earlier partition, or None."""
        if not len(self._hashes) or not topics:
            return None
        h = self._hash(topics)
        at = np.minimum(np.searchsorted(self._hashes, h), len(self._hashes) - 1)
        hits = np.flatnonzero(self._hashes[at] == h)
        if not len(hits):
            return None
        known = pa.chunked_array(self._ids, type=pa.string())
        for i in hits.tolist():
            if pc.any(pc.equal(known, topics[i])).as_py():
                return topics[i]
        return None  # hashes alike, ids not

    def __contains__(self, topic: object) -> bool:
        return isinstance(topic, str) and self.first_seen([topic]) is not None

    def add(self, vocab: pa.Array, topics: list[str]) -> None:
        """Remember a partition's topics (``vocab`` as Arrow strings, ``topics`` the same
        ids as a list)."""
        if not topics:
            return
        self._hashes = np.sort(np.concatenate((self._hashes, self._hash(topics))))
        self._ids.append(vocab.cast(pa.string()))


def _regrouped(run: Run, seen: SeenTopics) -> str | None:
    """A topic of ``run`` met in an earlier partition or in two separate blocks of
    rows here, or None when the run's topics are contiguous and new."""
    codes = run.qid_codes
    starts = np.concatenate(([0], np.flatnonzero(codes[1:] != codes[:-1]) + 1))
    topics = run.qid_vocab.to_pylist()
    if len(starts) != len(topics):
        first = np.zeros(len(topics), dtype=bool)
        for code in codes[starts].tolist():
            if first[code]:
                return str(topics[code])
            first[code] = True
    return seen.first_seen([str(t) for t in topics])


def _shifted(exc: InputError, offset: int) -> InputError:
    """``exc`` with its line counted in the whole file, not the partition."""
    line = exc.line + offset if exc.line is not None else None
    return InputError(exc.reason, path=exc.path, line=line, field=exc.field)


def _kind(path: str) -> str:
    """``trec`` for text, ``parquet`` for a Parquet file or a directory of them."""
    if path == STDIN:
        return "trec"
    if os.path.isdir(path):
        return "parquet"
    try:
        with open(path, "rb") as fh:
            return "parquet" if fh.read(4) == PARQUET_MAGIC else "trec"
    except OSError as exc:
        raise input_error(path, exc, "run") from None


def _tag_of(schema: pa.Schema) -> str | None:
    raw = (schema.metadata or {}).get(_TAG_KEY)
    return None if raw is None else raw.decode("utf-8", "replace")


def _mib(n: int) -> str:
    if n >= 2**20:
        return f"{n / 2**20:,.1f} MiB"
    return f"{n / 2**10:,.0f} KiB" if n >= 2**10 else f"{n:,} bytes"


def run_size(path: PathLike) -> int | None:
    """The bytes of run text behind ``path``: a file's size (a gzip file's
    uncompressed size, from its trailer, when larger), a Parquet directory's
    total; None for standard input or a stream, whose size is unknown."""
    p = str(path)
    if p == STDIN:
        return None
    try:
        if os.path.isdir(p):
            return sum(f.stat().st_size for f in Path(p).rglob("*") if f.is_file())
        st = os.stat(p)
        if not os.path.isfile(p):
            return None
        with open(p, "rb") as fh:
            if fh.read(2) != GZIP_MAGIC or st.st_size < 18:
                return st.st_size
            fh.seek(-4, os.SEEK_END)
            isize = int.from_bytes(fh.read(4), "little")  # modulo 2**32
        return max(isize, st.st_size)
    except OSError:
        return None


def stream_run(path: PathLike, *, partition_bytes: int = DEFAULT_PARTITION_BYTES,
               name: str | None = None, dedupe: Dedupe | None = None,
               extra_columns: ExtraColumns = "error",
               max_topic_bytes: int | None = None) -> RunPartitions:
    """A run read in partitions of whole topics (see the module docstring).

    >>> parts = stream_run("run.trec", partition_bytes=64 << 20)  # doctest: +SKIP
    >>> evaluate_partitions(qrels, parts, "all_trec")  # doctest: +SKIP
    """
    return RunPartitions(path, partition_bytes=partition_bytes, name=name, dedupe=dedupe,
                         extra_columns=extra_columns, max_topic_bytes=max_topic_bytes)

