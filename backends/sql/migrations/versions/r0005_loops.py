"""Create the agent_loops and agent_loop_runs tables (seed 002 §38.1).

Revision ID: 0005
Revises: 0001
Create Date: 2026-11-29

Written out in full rather than importing the models: a migration must keep creating the
schema as it was at this revision, whatever the models become later.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0005"
down_revision = "0001"
branch_labels = ("loops",)
depends_on = None

LOOP_STATUSES = ("running", "completed", "completed_with_errors", "stopped", "failed",
                 "interrupted")
STOP_REASONS = ("max_runs_reached", "stop_signal_matched", "user_stopped",
                "deadline_exceeded", "budget_exhausted", "no_progress", "error",
                "max_consecutive_failures", "interrupted")
RUN_STATUSES = ("running", "succeeded", "failed", "interrupted")


def utc_timestamp() -> sa.DateTime:
    """timestamptz on PostgreSQL; microsecond DATETIME on MariaDB (the store writes UTC)."""
    return sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


def upgrade() -> None:
    op.create_table(
        "agent_loops",
        sa.Column("loop_id", sa.String(36), nullable=False),
        sa.Column("start_order", sa.BigInteger(), nullable=False),
        sa.Column("message_template", sa.Text(), nullable=False),
        sa.Column("max_runs", sa.Integer(), nullable=False),
        sa.Column("stop_signal", sa.Text(), nullable=True),
        sa.Column("delay_seconds", sa.Double(), nullable=False),
        sa.Column("timeout_per_run", sa.Double(), nullable=False),
        sa.Column("timeout_per_run_given", sa.Double(), nullable=True),
        sa.Column("max_duration_seconds", sa.Integer(), nullable=True),
        sa.Column("max_cost_usd", sa.Double(), nullable=True),
        sa.Column("no_progress_threshold", sa.Integer(), nullable=False),
        sa.Column("on_failure", sa.String(10), nullable=False),
        sa.Column("max_consecutive_failures", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(30), nullable=False),
        sa.Column("stop_reason", sa.String(30), nullable=True),
        sa.Column("runs_completed", sa.Integer(), nullable=False),
        sa.Column("failed_runs", sa.Integer(), nullable=False),
        sa.Column("previous_response", sa.Text(), nullable=False),
        sa.Column("last_response", sa.Text(), nullable=True),
        sa.Column("stop_requested", sa.Boolean(), nullable=False),
        sa.Column("next_run_at", utc_timestamp(), nullable=True),
        sa.Column("cost_warnings", sa.JSON(), nullable=False),
        sa.Column("started_at", utc_timestamp(), nullable=False),
        sa.Column("completed_at", utc_timestamp(), nullable=True),
        sa.PrimaryKeyConstraint("loop_id", name="pk_agent_loops"),
        sa.UniqueConstraint("start_order", name="uq_agent_loops_start_order"),
        sa.CheckConstraint(one_of("status", LOOP_STATUSES), name="ck_agent_loops_status"),
        sa.CheckConstraint(f"stop_reason IS NULL OR {one_of('stop_reason', STOP_REASONS)}",
                           name="ck_agent_loops_stop_reason"),
        sa.CheckConstraint("max_runs BETWEEN 1 AND 100", name="ck_agent_loops_max_runs"),
        sa.CheckConstraint("on_failure IN ('abort', 'continue')",
                           name="ck_agent_loops_on_failure"),
    )
    op.create_table(
        "agent_loop_runs",
        sa.Column("loop_id", sa.String(36), nullable=False),
        sa.Column("run_number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("started_at", utc_timestamp(), nullable=False),
        sa.Column("finished_at", utc_timestamp(), nullable=True),
        sa.Column("response", sa.Text(), nullable=True),
        sa.Column("cost", sa.Double(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["loop_id"], ["agent_loops.loop_id"], ondelete="CASCADE",
                                name="fk_agent_loop_runs_loop_id_agent_loops"),
        sa.PrimaryKeyConstraint("loop_id", "run_number", name="pk_agent_loop_runs"),
        sa.CheckConstraint(one_of("status", RUN_STATUSES), name="ck_agent_loop_runs_status"),
    )


def downgrade() -> None:
    op.drop_table("agent_loop_runs")
    op.drop_table("agent_loops")
