"""Create the reminders table.

Revision ID: 0006
Revises: 0001
Create Date: 2026-11-29

The reminders area's own branch from the jobs table's revision (one branch per area; the
store upgrades to "heads"). Written out in full rather than importing the models, as
every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0006"
down_revision = "0001"
branch_labels = None
depends_on = None

REMINDER_STATUSES = ("pending", "firing", "fired", "cancelled", "failed")


def utc_timestamp() -> sa.DateTime:
    """timestamptz on PostgreSQL; microsecond DATETIME on MariaDB (the store writes UTC)."""
    return sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    statuses = ", ".join(f"'{status}'" for status in REMINDER_STATUSES)
    op.create_table(
        "reminders",
        sa.Column("seq", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("reminder_id", sa.String(36), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("created_at", utc_timestamp(), nullable=False),
        sa.Column("fire_at", utc_timestamp(), nullable=False),
        sa.Column("due_at", utc_timestamp(), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("fired_at", utc_timestamp(), nullable=True),
        sa.CheckConstraint(f"status IN ({statuses})", name=op.f("ck_reminders_status")),
        sa.PrimaryKeyConstraint("seq", name="pk_reminders"),
        sa.UniqueConstraint("reminder_id", name="uq_reminders_reminder_id"),
    )
    op.create_index("ix_reminders_created_at", "reminders", ["created_at"])
    op.create_index("ix_reminders_status_due_at", "reminders", ["status", "due_at"])


def downgrade() -> None:
    op.drop_table("reminders")
