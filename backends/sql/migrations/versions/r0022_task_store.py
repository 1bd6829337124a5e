"""Create the task_records table (seed 004 §1.1, the pluggable TaskStore).

Revision ID: 0022
Revises: 0001
Create Date: 2026-12-01

The store area's own branch from the jobs table's revision (one branch per area; the
store upgrades to "heads"), numbered after its issue. Written out in full rather than
importing the models, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0022"
down_revision = "0001"
branch_labels = ("task_store",)
depends_on = None

STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")


def utc_timestamp() -> sa.DateTime:
    """timestamptz on PostgreSQL; microsecond DATETIME on MariaDB (the store writes UTC)."""
    return sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    statuses = ", ".join(f"'{status}'" for status in STATUSES)
    op.create_table(
        "task_records",
        sa.Column("task_id", sa.String(255), nullable=False),
        sa.Column("module_id", sa.String(255), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("submitted_at", utc_timestamp(), nullable=False),
        sa.Column("started_at", utc_timestamp(), nullable=True),
        sa.Column("completed_at", utc_timestamp(), nullable=True),
        sa.Column("result_json", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("retry_count", sa.Integer(), nullable=False),
        sa.Column("max_retries", sa.Integer(), nullable=False),
        sa.Column("schema_version", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.CheckConstraint(f"status IN ({statuses})", name=op.f("ck_task_records_status")),
        sa.CheckConstraint("retry_count >= 0 AND max_retries >= 0",
                           name=op.f("ck_task_records_retry_counts")),
        sa.PrimaryKeyConstraint("task_id", name="pk_task_records"),
    )
    op.create_index("ix_task_records_completed_at", "task_records", ["completed_at"])
    op.create_index("ix_task_records_status", "task_records", ["status"])


def downgrade() -> None:
    op.drop_index("ix_task_records_status", table_name="task_records")
    op.drop_index("ix_task_records_completed_at", table_name="task_records")
    op.drop_table("task_records")
