"""Create the async_jobs table and its submission counter.

Revision ID: 0001
Revises:
Create Date: 2026-11-29

Written out in full rather than importing the models: a migration must keep creating the
schema as it was at this revision, whatever the models become later.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")


def utc_timestamp() -> sa.DateTime:
    """timestamptz on PostgreSQL; microsecond DATETIME on MariaDB (the store writes UTC)."""
    return sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    statuses = ", ".join(f"'{status}'" for status in STATUSES)
    op.create_table(
        "async_jobs",
        sa.Column("job_id", sa.String(36), nullable=False),
        sa.Column("submission_order", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("submitted_at", utc_timestamp(), nullable=False),
        sa.Column("started_at", utc_timestamp(), nullable=True),
        sa.Column("finished_at", utc_timestamp(), nullable=True),
        sa.Column("result", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("worker_id", sa.String(255), nullable=True),
        sa.Column("last_heartbeat", utc_timestamp(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("retry_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("max_retries", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("retry_policy", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("next_attempt_at", utc_timestamp(), nullable=True),
        sa.Column("redelivery_count", sa.Integer(), server_default=sa.text("0"),
                  nullable=False),
        sa.Column("alerted", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("poisoned", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("schema_version", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.CheckConstraint(f"status IN ({statuses})", name=op.f("ck_async_jobs_status")),
        sa.PrimaryKeyConstraint("job_id", name="pk_async_jobs"),
        sa.UniqueConstraint("submission_order", name="uq_async_jobs_submission_order"),
    )
    op.create_index("ix_async_jobs_status_submission_order", "async_jobs",
                    ["status", "submission_order"])
    op.create_index("ix_async_jobs_submitted_at", "async_jobs", ["submitted_at"])
    op.create_index("ix_async_jobs_worker_id", "async_jobs", ["worker_id"])
    counter = op.create_table(
        "async_jobs_submission_counter",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("next_submission_order", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_async_jobs_submission_counter_single_row")),
        sa.PrimaryKeyConstraint("id", name="pk_async_jobs_submission_counter"),
    )
    op.bulk_insert(counter, [{"id": 1, "next_submission_order": 1}])


def downgrade() -> None:
    op.drop_table("async_jobs_submission_counter")
    op.drop_index("ix_async_jobs_worker_id", table_name="async_jobs")
    op.drop_index("ix_async_jobs_submitted_at", table_name="async_jobs")
    op.drop_index("ix_async_jobs_status_submission_order", table_name="async_jobs")
    op.drop_table("async_jobs")
