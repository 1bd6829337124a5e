"""Create the breaker's tables: one row per target's breaker, and the targets' work.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

The breaker area's own branch (the database is upgraded to "heads"). Written out in full,
as every migration here, so that it keeps creating the schema of this revision.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0002"
down_revision = "0001"
branch_labels = ("breaker",)
depends_on = None


def utc_timestamp() -> sa.DateTime:
    """timestamptz on PostgreSQL; microsecond DATETIME on MariaDB (the store writes UTC)."""
    return sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "breaker_states",
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("cooldown_seconds", sa.Double(), nullable=False),
        sa.Column("open_until", utc_timestamp(), nullable=True),
        sa.Column("probe", sa.String(255), nullable=True),
        sa.Column("probe_until", utc_timestamp(), nullable=True),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("target", name="pk_breaker_states"),
    )
    op.create_table(
        "breaker_work",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  autoincrement=True, nullable=False),
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("work", sa.String(255), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.CheckConstraint("status IN ('queued', 'failed')", name=op.f("ck_breaker_work_status")),
        sa.PrimaryKeyConstraint("id", name="pk_breaker_work"),
    )
    op.create_index("ix_breaker_work_target_status_id", "breaker_work",
                    ["target", "status", "id"])


def downgrade() -> None:
    op.drop_index("ix_breaker_work_target_status_id", table_name="breaker_work")
    op.drop_table("breaker_work")
    op.drop_table("breaker_states")
