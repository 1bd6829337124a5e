"""Create the schedules, schedule_executions and scheduling_switch tables (seed 002 §10.1,
§10.2, §10.6.1).

Revision ID: 0021
Revises: 0001
Create Date: 2026-12-01

The scheduling area's own branch from the jobs table's revision (one branch per area; the
store upgrades to "heads"). Numbered after its issue, so that areas added on parallel
branches do not take the same number. Written out in full rather than importing the
models, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0021"
down_revision = "0001"
branch_labels = ("scheduling",)
depends_on = None


def utc_timestamp() -> sa.DateTime:
    """timestamptz on PostgreSQL; microsecond DATETIME on MariaDB (the store writes UTC)."""
    return sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("seq", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("schedule_id", sa.String(36), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("expression", sa.String(200), nullable=True),
        sa.Column("timezone", sa.String(64), nullable=True),
        sa.Column("pre_check", sa.Boolean(), nullable=False),
        sa.Column("created_at", utc_timestamp(), nullable=False),
        sa.Column("next_fire_at", utc_timestamp(), nullable=True),
        sa.CheckConstraint("kind IN ('once', 'cron')", name=op.f("ck_schedules_kind")),
        sa.PrimaryKeyConstraint("seq", name="pk_schedules"),
        sa.UniqueConstraint("schedule_id", name="uq_schedules_schedule_id"),
    )
    op.create_index("ix_schedules_next_fire_at", "schedules", ["next_fire_at"])
    op.create_table(
        "schedule_executions",
        sa.Column("seq", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("schedule_id", sa.String(36), nullable=False),
        sa.Column("scheduled_for", utc_timestamp(), nullable=False),
        sa.Column("started_at", utc_timestamp(), nullable=False),
        sa.Column("fired_by", sa.String(10), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("cost", sa.Double(), nullable=True),
        sa.Column("pre_check", sa.String(10), nullable=True),
        sa.ForeignKeyConstraint(["schedule_id"], ["schedules.schedule_id"], ondelete="CASCADE",
                                name="fk_schedule_executions_schedule_id_schedules"),
        sa.CheckConstraint("fired_by IN ('schedule', 'catch_up', 'manual')",
                           name=op.f("ck_schedule_executions_fired_by")),
        sa.CheckConstraint("status IN ('dispatched', 'skipped')",
                           name=op.f("ck_schedule_executions_status")),
        sa.PrimaryKeyConstraint("seq", name="pk_schedule_executions"),
    )
    op.create_index("ix_schedule_executions_schedule_id", "schedule_executions",
                    ["schedule_id"])
    op.create_table(
        "scheduling_switch",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("autonomy", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_scheduling_switch"),
    )


def downgrade() -> None:
    op.drop_table("scheduling_switch")
    op.drop_table("schedule_executions")
    op.drop_table("schedules")
