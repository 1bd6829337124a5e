"""Create the admission tables: settings, owners, executions, calls, schedules, sequence.

Revision ID: 0004
Revises: 0001
Create Date: 2026-11-29

One branch per area: this one starts from the job store's first revision. Written out in
full rather than importing the models, so that it keeps creating the schema as it was at
this revision.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0004"
down_revision = "0001"
branch_labels = ("admission",)
depends_on = None

EXECUTION_STATES = ("queued", "running", "budget_exhausted", "cancelled", "expired",
                    "finished")
CALL_STATES = ("in_flight", "waiting", "ended", "withdrawn", "budget_exhausted")


def utc_timestamp() -> sa.DateTime:
    """timestamptz on PostgreSQL; microsecond DATETIME on MariaDB (the store writes UTC)."""
    return sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


def upgrade() -> None:
    op.create_table(
        "admission_settings",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("int_value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_admission_settings"),
    )
    op.create_table(
        "admission_owners",
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("parallel_cap", sa.Integer(), nullable=False),
        sa.Column("backlog_depth", sa.Integer(), nullable=False),
        sa.Column("execution_timeout_seconds", sa.Integer(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_admission_owners"),
        sa.UniqueConstraint("seq", name="uq_admission_owners_seq"),
        sa.CheckConstraint("parallel_cap >= 1", name="ck_admission_owners_parallel_cap"),
        sa.CheckConstraint("backlog_depth BETWEEN 1 AND 200",
                           name="ck_admission_owners_backlog_depth"),
        sa.CheckConstraint("execution_timeout_seconds BETWEEN 60 AND 7200",
                           name="ck_admission_owners_execution_timeout"),
    )
    op.create_table(
        "admission_executions",
        sa.Column("execution_id", sa.String(255), nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("arrived_at", utc_timestamp(), nullable=False),
        sa.Column("started_at", utc_timestamp(), nullable=True),
        sa.Column("ended_at", utc_timestamp(), nullable=True),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("execution_id", name="pk_admission_executions"),
        sa.UniqueConstraint("seq", name="uq_admission_executions_seq"),
        sa.CheckConstraint(one_of("state", EXECUTION_STATES),
                           name="ck_admission_executions_state"),
    )
    op.create_index("ix_admission_executions_owner_state_seq", "admission_executions",
                    ["owner", "state", "seq"])
    op.create_table(
        "admission_calls",
        sa.Column("call_id", sa.String(255), nullable=False),
        sa.Column("execution_id", sa.String(255), nullable=False),
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("arrived_at", utc_timestamp(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("call_id", name="pk_admission_calls"),
        sa.UniqueConstraint("seq", name="uq_admission_calls_seq"),
        sa.CheckConstraint(one_of("state", CALL_STATES), name="ck_admission_calls_state"),
    )
    op.create_index("ix_admission_calls_state_seq", "admission_calls", ["state", "seq"])
    op.create_table(
        "admission_schedules",
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("timeout_seconds", sa.Integer(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("owner", "name", name="pk_admission_schedules"),
        sa.UniqueConstraint("seq", name="uq_admission_schedules_seq"),
        sa.CheckConstraint("timeout_seconds BETWEEN 60 AND 7200",
                           name="ck_admission_schedules_timeout"),
    )
    sequence = op.create_table(
        "admission_sequence",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("next_seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_admission_sequence"),
        sa.CheckConstraint("id = 1", name="ck_admission_sequence_single_row"),
    )
    op.bulk_insert(sequence, [{"id": 1, "next_seq": 1}])


def downgrade() -> None:
    op.drop_table("admission_sequence")
    op.drop_table("admission_schedules")
    op.drop_index("ix_admission_calls_state_seq", table_name="admission_calls")
    op.drop_table("admission_calls")
    op.drop_index("ix_admission_executions_owner_state_seq", table_name="admission_executions")
    op.drop_table("admission_executions")
    op.drop_table("admission_owners")
    op.drop_table("admission_settings")
