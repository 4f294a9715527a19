"""The history store's tables (SQLAlchemy Core), the schema version this rankproof writes.

The tables are created and changed only by the Alembic migrations under
``migrations/versions``; this module describes them for the queries. One row of
``results`` per stored document (content-addressed by the digest of its canonical JSON),
one row of ``per_query`` per result × system × measure holding the values as one
compressed float64 array in the order of a qid list kept once in ``qid_lists`` (keyed by
its digest), and ``meta`` holding the schema version checked when a store is opened.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

SCHEMA_VERSION = 1
"""The schema version of the newest migration; a database with a larger one is refused."""

metadata = MetaData()

meta = Table(
    "rankproof_meta", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

qid_lists = Table(
    "qid_lists", metadata,
    Column("digest", String(80), primary_key=True),
    Column("n", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
)

results = Table(
    "results", metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("id", String(80), nullable=False, unique=True),
    Column("kind", String(64), nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("added_at", String(40), nullable=False),
    Column("git_commit", String(80)),
    Column("git_branch", Text),
    Column("git_dirty", Boolean),
    Column("tool_version", String(64)),
    Column("corpus_digest", String(80)),
    Column("judgments_digest", String(80)),
    Column("config_digest", String(80)),
    Column("qrels_digest", String(80)),
    Column("seed", BigInteger),
    Column("runs", Text, nullable=False),
    Column("measures", Text, nullable=False),
    Column("document", LargeBinary, nullable=False),
    Index("ix_results_branch_created", "git_branch", "created_at"),
    Index("ix_results_commit", "git_commit"),
)

per_query = Table(
    "per_query", metadata,
    Column("result_seq", Integer, ForeignKey("results.seq"), primary_key=True),
    Column("system", Text, primary_key=True),
    Column("measure", String(200), primary_key=True),
    Column("n", Integer, nullable=False),
    Column("mean", Float, nullable=False),
    Column("qids_digest", String(80), ForeignKey("qid_lists.digest"), nullable=False),
    Column("data", LargeBinary, nullable=False),
    Index("ix_per_query_measure_system", "measure", "system", "result_seq"),
)
