"""Create the breaker's and the governor's tables.

The breaker: one row per target's breaker, and the targets' work. The governor: accepted
re-deliveries, counted results and failures, and the single pause row.

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
    op.create_table(
        "governor_deliveries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  autoincrement=True, nullable=False),
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("accepted_at", utc_timestamp(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_governor_deliveries"),
    )
    op.create_index("ix_governor_deliveries_accepted_at", "governor_deliveries",
                    ["accepted_at"])
    op.create_index("ix_governor_deliveries_target_accepted_at", "governor_deliveries",
                    ["target", "accepted_at"])
    op.create_table(
        "governor_results",
        sa.Column("result_id", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("result_id", name="pk_governor_results"),
    )
    op.create_table(
        "governor_failures",
        sa.Column("failure_class", sa.String(32), nullable=False),
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("counted_at", utc_timestamp(), nullable=False),
        sa.PrimaryKeyConstraint("failure_class", "target", name="pk_governor_failures"),
    )
    pause = op.create_table(
        "governor_pause",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("paused_until", utc_timestamp(), nullable=True),
        sa.CheckConstraint("id = 1", name=op.f("ck_governor_pause_single_row")),
        sa.PrimaryKeyConstraint("id", name="pk_governor_pause"),
    )
    op.bulk_insert(pause, [{"id": 1, "paused_until": None}])


def downgrade() -> None:
    op.drop_table("governor_pause")
    op.drop_table("governor_failures")
    op.drop_table("governor_results")
    op.drop_index("ix_governor_deliveries_target_accepted_at", table_name="governor_deliveries")
    op.drop_index("ix_governor_deliveries_accepted_at", table_name="governor_deliveries")
    op.drop_table("governor_deliveries")
    op.drop_index("ix_breaker_work_target_status_id", table_name="breaker_work")
    op.drop_table("breaker_work")
    op.drop_table("breaker_states")
