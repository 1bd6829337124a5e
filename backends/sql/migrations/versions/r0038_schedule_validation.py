"""Schedules validate their executions' business outcome.

Revision ID: 0038
Revises: 0035
Create Date: 2026-12-07

Spec 0.20.0 (SC-020..SC-024, seed 002 §10.9; issue 35): a schedule has a validation switch
(off for the schedules before it) and timeout; an execution has an id, a business status
and the id of its validation run; validation runs and the operator alerts of failed
validations are tables of their own. Rows before it have no id and no business status
(null): they ended before validation existed. Batch mode, so that SQLite rebuilds the
tables to add the CHECK. Written out in full, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0038"
down_revision = "0035"
branch_labels = None
depends_on = None


def utc_timestamp() -> sa.DateTime:
    """timestamptz on PostgreSQL; microsecond DATETIME on MariaDB (the store writes UTC)."""
    return sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    with op.batch_alter_table("schedules") as batch:
        batch.add_column(sa.Column("validation", sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
        batch.add_column(sa.Column("validation_timeout", sa.Double(), nullable=True))
    with op.batch_alter_table("schedule_executions") as batch:
        batch.add_column(sa.Column("execution_id", sa.String(36), nullable=True))
        batch.add_column(sa.Column("business_status", sa.String(20), nullable=True))
        batch.add_column(sa.Column("validation_run", sa.String(36), nullable=True))
        batch.create_check_constraint(
            op.f("ck_schedule_executions_business_status"),
            "business_status IN ('pending_validation', 'validated', 'failed_validation',"
            " 'skipped')")
    op.create_table(
        "schedule_validation_runs",
        sa.Column("run_id", sa.String(36), nullable=False),
        sa.Column("schedule_id", sa.String(36), nullable=False),
        sa.Column("validates", sa.String(36), nullable=False),
        sa.Column("started_at", utc_timestamp(), nullable=False),
        sa.Column("timeout_seconds", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_schedule_validation_runs"),
    )
    op.create_index("ix_schedule_validation_runs_schedule_id",
                    "schedule_validation_runs", ["schedule_id"])
    op.create_table(
        "scheduling_alerts",
        sa.Column("seq", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("execution_id", sa.String(36), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_scheduling_alerts"),
    )


def downgrade() -> None:
    op.drop_table("scheduling_alerts")
    op.drop_index("ix_schedule_validation_runs_schedule_id",
                  table_name="schedule_validation_runs")
    op.drop_table("schedule_validation_runs")
    with op.batch_alter_table("schedule_executions") as batch:
        batch.drop_constraint(op.f("ck_schedule_executions_business_status"), type_="check")
        batch.drop_column("validation_run")
        batch.drop_column("business_status")
        batch.drop_column("execution_id")
    with op.batch_alter_table("schedules") as batch:
        batch.drop_column("validation_timeout")
        batch.drop_column("validation")
