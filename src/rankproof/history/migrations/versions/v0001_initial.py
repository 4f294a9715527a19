"""Schema version 1: results, per-query arrays, qid lists and the schema version.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    meta = op.create_table(
        "rankproof_meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "qid_lists",
        sa.Column("digest", sa.String(80), primary_key=True),
        sa.Column("n", sa.Integer, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "results",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(80), nullable=False, unique=True),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("added_at", sa.String(40), nullable=False),
        sa.Column("git_commit", sa.String(80)),
        sa.Column("git_branch", sa.Text),
        sa.Column("git_dirty", sa.Boolean),
        sa.Column("tool_version", sa.String(64)),
        sa.Column("corpus_digest", sa.String(80)),
        sa.Column("judgments_digest", sa.String(80)),
        sa.Column("config_digest", sa.String(80)),
        sa.Column("qrels_digest", sa.String(80)),
        sa.Column("seed", sa.BigInteger),
        sa.Column("runs", sa.Text, nullable=False),
        sa.Column("measures", sa.Text, nullable=False),
        sa.Column("document", sa.LargeBinary, nullable=False),
    )
    op.create_index("ix_results_branch_created", "results", ["git_branch", "created_at"])
    op.create_index("ix_results_commit", "results", ["git_commit"])
    op.create_table(
        "per_query",
        sa.Column("result_seq", sa.Integer, sa.ForeignKey("results.seq"), primary_key=True),
        sa.Column("system", sa.Text, primary_key=True),
        sa.Column("measure", sa.String(200), primary_key=True),
        sa.Column("n", sa.Integer, nullable=False),
        sa.Column("mean", sa.Float, nullable=False),
        sa.Column("qids_digest", sa.String(80), sa.ForeignKey("qid_lists.digest"),
                  nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_index("ix_per_query_measure_system", "per_query",
                    ["measure", "system", "result_seq"])
    op.bulk_insert(meta, [{"key": "schema_version", "value": "1"}])


def downgrade() -> None:
    op.drop_table("per_query")
    op.drop_table("results")
    op.drop_table("qid_lists")
    op.drop_table("rankproof_meta")
