"""The results store: open (migrating, checking the schema version), add, read.

SQLite by default (``.rankproof/history.db``, WAL mode; an add begins ``IMMEDIATE`` so
that concurrent writers queue instead of failing to upgrade a read lock) and PostgreSQL by URL
(``postgresql://…``, driven by psycopg 3). Every add is one transaction: the qid lists, the
result row and its per-query arrays go in together or not at all, and the result's
content address (`result_id`) is unique, so two processes adding the same document create
one row (``ON CONFLICT DO NOTHING``). Results are never updated or deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine, create_engine, event, func, inspect, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

from rankproof._errors import InputError
from rankproof.data import parse_document
from rankproof.history._extract import (
    Extracted,
    decode_qids,
    decode_values,
    encode_qids,
    encode_values,
    extract,
)
from rankproof.history._schema import SCHEMA_VERSION, meta, per_query, qid_lists, results

__all__ = ["DEFAULT_PATH", "ENV", "HistoryStore", "ResultInfo", "open_store", "resolve_url"]

DEFAULT_PATH = Path(".rankproof") / "history.db"
ENV = "RANKPROOF_HISTORY"
_MIGRATIONS = Path(__file__).with_name("migrations")
_WRITE = "rankproof_write"
_COLUMNS = ("seq", "id", "kind", "schema_version", "created_at", "added_at", "git_commit",
            "git_branch", "git_dirty", "tool_version", "corpus_digest", "judgments_digest",
            "config_digest", "qrels_digest", "seed", "runs", "measures")


def resolve_url(url: str | os.PathLike[str] | None = None) -> str:
    """The SQLAlchemy URL: ``url``, else ``$RANKPROOF_HISTORY``, else the default SQLite file.

    A plain path is a SQLite file; ``postgresql://`` gets the psycopg 3 driver.
    """
    given = os.fspath(url) if url is not None else os.environ.get(ENV) or str(DEFAULT_PATH)
    if given.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + given.split("://", 1)[1]
    if "://" in given:
        return given
    return "sqlite:///" + str(Path(given).expanduser().resolve())


def shown_url(url: str) -> str:
    """The URL for messages: a SQLite file's path, a server URL without its password."""
    if url.startswith("sqlite:///"):
        return url[len("sqlite:///"):]
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


@dataclass(frozen=True)
class ResultInfo:
    """One stored result's columns (the document itself is read with `HistoryStore.document`)."""

    seq: int
    id: str
    kind: str
    schema_version: int
    created_at: str
    added_at: str
    git_commit: str | None
    git_branch: str | None
    git_dirty: bool | None
    tool_version: str | None
    corpus_digest: str | None
    judgments_digest: str | None
    config_digest: str | None
    qrels_digest: str | None
    seed: int | None
    runs: tuple[str, ...]
    measures: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v)
                for k, v in ((c, getattr(self, c)) for c in _COLUMNS)}


def _info(row: Any) -> ResultInfo:
    m = row._mapping
    values = {c: m[c] for c in _COLUMNS}
    values["runs"] = tuple(parse_document(values["runs"], "the results store", what="runs"))
    values["measures"] = tuple(parse_document(values["measures"], "the results store",
                                              what="measures"))
    values["git_dirty"] = None if values["git_dirty"] is None else bool(values["git_dirty"])
    return ResultInfo(**values)


def _sqlite_engine(url: str) -> Engine:
    path = Path(url[len("sqlite:///"):])
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": 60})

    @event.listens_for(engine, "connect")
    def _connect(dbapi: Any, _record: Any) -> None:
        dbapi.isolation_level = None  # we emit BEGIN ourselves
        cur = dbapi.cursor()
        cur.execute("PRAGMA busy_timeout = 60000")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        # a writer takes the write lock at once (queueing on busy_timeout) instead of
        # failing to upgrade a read lock later; readers never block one another (WAL)
        write = conn.get_execution_options().get(_WRITE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


@contextlib.contextmanager
def _migration_lock(engine: Engine, url: str) -> Iterator[Any]:
    """One process migrates at a time: a file lock beside a SQLite file, an advisory lock on
    PostgreSQL. Yields a connection."""
    if engine.dialect.name == "sqlite":
        lock = url[len("sqlite:///"):] + ".lock"
        with open(lock, "a") as fh, engine.connect() as conn:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield conn
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
        return
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_advisory_lock(727274)"))
        conn.commit()
        try:
            yield conn
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(727274)"))
            conn.commit()


class HistoryStore:
    """An opened results store (`open_store` builds it). Close it, or use it as a context
    manager."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url
        self._qids: dict[str, tuple[str, ...]] = {}

    @property
    def where(self) -> str:
        """The store for messages (a file path or a URL without its password)."""
        return shown_url(self.url)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema ---------------------------------------------------------------------
    def _version(self, conn: Any) -> int | None:
        names = set(inspect(conn).get_table_names())
        if "rankproof_meta" not in names:
            if names - {"alembic_version"}:
                raise InputError("not a rankproof history database (it has tables, but no "
                                 "rankproof_meta)", path=self.where)
            return None
        value = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")
                             ).scalar()
        try:
            return int(value)
        except (TypeError, ValueError):
            raise InputError(f"the history database has an unreadable schema version "
                             f"({value!r:.40})", path=self.where) from None

    def _check_version(self, found: int | None) -> bool:
        """Whether a migration is needed; refuses a newer schema naming both versions."""
        if found is not None and found > SCHEMA_VERSION:
            raise InputError(f"the history database has schema version {found}, newer than "
                             f"this rankproof reads (up to {SCHEMA_VERSION}); upgrade rankproof",
                             path=self.where)
        return found is None or found < SCHEMA_VERSION

    def _open(self) -> None:
        try:
            with self.engine.connect() as conn:
                needed = self._check_version(self._version(conn))
            if not needed:
                return
            with _migration_lock(self.engine, self.url) as conn:
                if self._check_version(self._version(conn)):
                    from alembic import command
                    from alembic.config import Config

                    cfg = Config()
                    cfg.set_main_option("script_location", str(_MIGRATIONS))
                    cfg.attributes["connection"] = conn
                    command.upgrade(cfg, "head")
                    conn.commit()
        except SQLAlchemyError as exc:
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            raise InputError(f"not a usable history database ({reason})",
                             path=self.where) from None

    # -- writing ----------------------------------------------------------------------
    def add(self, document: Any, label: str, *, branch: str | None = None) -> tuple[str, bool]:
        """Store one document (one transaction); (its id, whether it was new)."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        item = extract(document, label, branch=branch, added_at=now)
        return item.id, self._insert(item, now)

    def _insert(self, item: Extracted, now: str) -> bool:
        dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        with self.engine.connect() as opened, \
                opened.execution_options(**{_WRITE: True}).begin():
            conn = opened
            lists = {}
            for s in item.series:
                digest, blob = encode_qids(s.qids)
                lists[digest] = {"digest": digest, "n": len(s.qids), "data": blob}
            row = {"id": item.id, "kind": item.kind, "schema_version": item.schema_version,
                   "added_at": now, "runs": json.dumps(list(item.runs), ensure_ascii=False),
                   "measures": json.dumps(list(item.measures), ensure_ascii=False),
                   "document": _compress(item.canonical), **item.columns}
            seq = conn.execute(dialect.insert(results).values(row).on_conflict_do_nothing(
                index_elements=["id"]).returning(results.c.seq)).scalar()
            if seq is None:
                return False
            for entry in lists.values():
                conn.execute(dialect.insert(qid_lists).values(entry).on_conflict_do_nothing(
                    index_elements=["digest"]))
            if item.series:
                conn.execute(per_query.insert(), [
                    {"result_seq": seq, "system": s.system, "measure": s.measure,
                     "n": len(s.qids), "mean": s.mean, "qids_digest": encode_qids(s.qids)[0],
                     "data": encode_values(s.values)} for s in item.series])
        return True

    # -- reading ----------------------------------------------------------------------
    def results(self, *, kind: str | None = None, branch: str | None = None,
                run: str | None = None, measure: str | None = None,
                since: str | None = None, limit: int | None = None) -> list[ResultInfo]:
        """Stored results in commit order (created, then added), filtered."""
        cols = [results.c[c] for c in _COLUMNS]
        q = select(*cols)
        if kind is not None:
            q = q.where(results.c.kind == (kind if "." in kind else f"rankproof.{kind}"))
        if branch is not None:
            q = q.where(results.c.git_branch == branch)
        if run is not None or measure is not None:
            sub = select(per_query.c.result_seq).where(per_query.c.result_seq == results.c.seq)
            if run is not None:
                sub = sub.where(per_query.c.system == run)
            if measure is not None:
                sub = sub.where(per_query.c.measure == measure)
            q = q.where(sub.exists())
        if since is not None:
            q = q.where(results.c.created_at >= self._since(since))
        q = q.order_by(results.c.created_at, results.c.seq)
        with self.engine.connect() as conn:
            rows = [_info(r) for r in conn.execute(q)]
        return rows[-limit:] if limit else rows

    def _since(self, since: str) -> str:
        """A date or a commit (prefix) → the creation time results must reach."""
        if re.fullmatch(r"[0-9a-f]{4,40}", since):
            with self.engine.connect() as conn:
                found = conn.execute(select(func.min(results.c.created_at)).where(
                    results.c.git_commit.like(since + "%"))).scalar()
            if found is not None:
                return str(found)
        try:
            when = datetime.fromisoformat(since)
        except ValueError:
            raise InputError(f"--since {since!r:.60}: expected a date (2026-05-01) or a "
                             f"stored commit") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return when.astimezone(UTC).isoformat(timespec="seconds")

    def get(self, ref: str) -> ResultInfo:
        """A result by id, unique id prefix (hex, 6+ digits), ``latest`` or ``latest@BRANCH``
        (the newest result, on BRANCH, that keeps per-query values: a usable baseline)."""
        cols = [results.c[c] for c in _COLUMNS]
        q = select(*cols)
        if ref == "latest" or ref.startswith("latest@"):
            branch = ref.partition("@")[2] or None
            if branch is not None:
                q = q.where(results.c.git_branch == branch)
            held = select(per_query.c.result_seq).where(per_query.c.result_seq == results.c.seq)
            q = q.where(held.exists())  # a result a baseline can be read from
            q = q.order_by(results.c.created_at.desc(), results.c.seq.desc()).limit(1)
        else:
            hexpart = ref.removeprefix("sha256:")
            if not re.fullmatch(r"[0-9a-f]{6,64}", hexpart):
                raise InputError(f"{ref!r:.80} is not a result id (sha256:…, a prefix of 6+ "
                                 f"hex digits, latest or latest@BRANCH)")
            q = q.where(results.c.id.like(f"sha256:{hexpart}%")).limit(2)
        with self.engine.connect() as conn:
            rows = list(conn.execute(q))
        if not rows:
            raise InputError(f"no stored result matches {ref!r:.80}", path=self.where)
        if len(rows) > 1:
            raise InputError(f"{ref!r:.80} matches more than one stored result; give more "
                             f"digits", path=self.where)
        return _info(rows[0])

    def document(self, info: ResultInfo) -> dict[str, Any]:
        """The stored document, exactly as it was added."""
        with self.engine.connect() as conn:
            blob = conn.execute(select(results.c.document).where(results.c.seq == info.seq)
                                ).scalar_one()
        return dict(parse_document(_decompress(bytes(blob)), "the results store",
                                   what="stored document"))

    def qids(self, digest: str) -> tuple[str, ...]:
        if digest not in self._qids:
            with self.engine.connect() as conn:
                blob = conn.execute(select(qid_lists.c.data).where(
                    qid_lists.c.digest == digest)).scalar_one()
            self._qids[digest] = decode_qids(bytes(blob))
        return self._qids[digest]

    def series(self, info: ResultInfo, system: str | None, measure: str
               ) -> tuple[str, dict[str, float]]:
        """(system, {qid: value}) of one stored result's measure (the only system when
        ``system`` is None and there is one)."""
        q = select(per_query.c.system, per_query.c.qids_digest, per_query.c.data).where(
            per_query.c.result_seq == info.seq, per_query.c.measure == measure)
        with self.engine.connect() as conn:
            rows = list(conn.execute(q))
        if system is not None:
            rows = [r for r in rows if r.system == system]
        if len(rows) != 1:
            have = sorted({r.system for r in rows}) or list(info.runs)
            what = f"run {system!r}" if system is not None else "one run"
            raise InputError(f"result {info.id[:19]} has no per-query {measure} values for "
                             f"{what} (it has {', '.join(map(repr, have)) or 'none'}); "
                             f"name one with --run", path=self.where)
        r = rows[0]
        values = decode_values(bytes(r.data))
        return r.system, dict(zip(self.qids(r.qids_digest), values.tolist(), strict=True))

    def arrays(self, measure: str, run: str | None, branch: str | None,
               last: int | None = None, *, with_values: bool = True
               ) -> list[tuple[ResultInfo, str, str, Any]]:
        """(result, system, qids digest, values or None) of every result holding ``measure``
        (for ``run``, on ``branch``) in commit order, the last ``last`` of them.

        The rows are ordered without their arrays, which are then read by key: a sort that
        carried every array would read (and, in SQLite, spill) all of them."""
        q = _holding(measure, run, branch, *(results.c[c] for c in _COLUMNS),
                     per_query.c.system, per_query.c.qids_digest)
        q = q.order_by(results.c.created_at.desc(), results.c.seq.desc())
        if last is not None:
            q = q.limit(last)
        with self.engine.connect() as conn:
            rows = list(conn.execute(q))[::-1]
            blobs = self._blobs(conn, measure, [r.seq for r in rows]) if with_values else {}
        return [(_info(r), str(r.system), str(r.qids_digest),
                 decode_values(blobs[(r.seq, r.system)]) if with_values else None)
                for r in rows]

    def _blobs(self, conn: Any, measure: str, seqs: list[int]) -> dict[tuple[int, str], bytes]:
        """The compressed arrays of ``measure`` for these results, keyed (seq, system)."""
        out: dict[tuple[int, str], bytes] = {}
        wanted = sorted(set(seqs))
        for start in range(0, len(wanted), 900):  # under SQLite's bound on parameters
            chunk = wanted[start:start + 900]
            q = select(per_query.c.result_seq, per_query.c.system, per_query.c.data).where(
                per_query.c.measure == measure, per_query.c.result_seq.in_(chunk))
            for r in conn.execute(q):
                out[(int(r.result_seq), str(r.system))] = bytes(r.data)
        return out

    def query_values(self, qid: str, measure: str, run: str | None, branch: str | None
                     ) -> tuple[list[str], list[tuple[str, str | None, str, float]]]:
        """(the systems seen, (id, commit, created, value) of ``qid`` in every result holding
        ``measure``) in commit order; each array is decompressed only up to the query."""
        import bisect
        import zlib

        q = _holding(measure, run, branch, results.c.seq, results.c.id,
                     results.c.git_commit, results.c.created_at, per_query.c.system,
                     per_query.c.qids_digest).order_by(results.c.created_at, results.c.seq)
        positions: dict[str, int | None] = {}
        out = []
        with self.engine.connect() as conn:
            rows = list(conn.execute(q))
            systems = sorted({str(r.system) for r in rows})
            for digest in {r.qids_digest for r in rows}:
                qids = self.qids(digest)
                i = bisect.bisect_left(qids, qid)
                positions[digest] = i if i < len(qids) and qids[i] == qid else None
            held = [r for r in rows if positions[r.qids_digest] is not None]
            blobs = self._blobs(conn, measure, [r.seq for r in held])
        for r in held:
            at = positions[r.qids_digest] or 0  # held: never None here
            raw = zlib.decompressobj().decompress(blobs[(r.seq, r.system)], (at + 1) * 8)
            value = float(np.frombuffer(raw[at * 8:(at + 1) * 8], dtype="<f8")[0])
            out.append((str(r.id), r.git_commit, str(r.created_at), value))
        return systems, out

    def count(self, measure: str, run: str | None, branch: str | None) -> int:
        """How many stored results hold ``measure`` (for ``run``, on ``branch``)."""
        q = _holding(measure, run, branch, func.count())
        with self.engine.connect() as conn:
            return int(conn.execute(q).scalar_one())

    def all_series(self, info: ResultInfo) -> list[tuple[str, str, tuple[str, ...],
                                                          np.ndarray[Any, Any]]]:
        """(system, measure, qids, values) of every array a result holds."""
        q = select(per_query.c.system, per_query.c.measure, per_query.c.qids_digest,
                   per_query.c.data).where(per_query.c.result_seq == info.seq).order_by(
            per_query.c.system, per_query.c.measure)
        with self.engine.connect() as conn:
            rows = list(conn.execute(q))
        return [(str(r.system), str(r.measure), self.qids(r.qids_digest),
                 decode_values(bytes(r.data))) for r in rows]


def _holding(measure: str, run: str | None, branch: str | None, *columns: Any) -> Any:
    """``SELECT columns`` over the per-query arrays of ``measure`` joined to their results,
    for ``run`` (a system name) and on ``branch`` when given: the one filtered join that
    trends, since-when and counts read."""
    q = select(*columns).select_from(per_query.join(
        results, per_query.c.result_seq == results.c.seq)).where(
        per_query.c.measure == measure)
    if run is not None:
        q = q.where(per_query.c.system == run)
    if branch is not None:
        q = q.where(results.c.git_branch == branch)
    return q


def _compress(raw: bytes) -> bytes:
    import zlib

    return zlib.compress(raw, 6)


def _decompress(blob: bytes) -> bytes:
    import zlib

    return zlib.decompress(blob)


def open_store(url: str | os.PathLike[str] | None = None) -> HistoryStore:
    """Open (creating or migrating) the store at ``url`` (see `resolve_url`); `InputError`
    naming it when it is corrupt, foreign or from a newer rankproof."""
    try:
        import sqlalchemy  # noqa: F401
    except ImportError:
        from rankproof._errors import MissingExtraError

        raise MissingExtraError("the results history needs the 'history' extra: pip install "
                                "'rankproof[history]'") from None
    resolved = resolve_url(url)
    if resolved.startswith("sqlite:///"):
        path = Path(resolved[len("sqlite:///"):])
        if path.is_dir():
            raise InputError("is a folder, not a history database file", path=str(path))
        engine = _sqlite_engine(resolved)
    else:
        try:
            engine = create_engine(resolved, pool_pre_ping=True)
        except (SQLAlchemyError, ImportError, ValueError) as exc:
            raise InputError(f"not a usable history URL ({exc})",
                             path=shown_url(resolved)) from None
    store = HistoryStore(engine, resolved)
    try:
        store._open()
    except BaseException:
        store.close()
        raise
    return store


def read_json_file(path: str | os.PathLike[str]) -> Any:
    """A JSON document from a file, through the project's bounded reader."""
    from rankproof.data import read_document

    return read_document(os.fspath(path), what="history input")
