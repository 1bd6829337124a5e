"""Create the idempotency_keys table.

Revision ID: 0003
Revises: 0001
Create Date: 2026-11-29

The idempotency area's own branch from the jobs table's revision (one branch per area;
the store upgrades to "heads"). Written out in full, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0003"
down_revision = "0001"
branch_labels = None
depends_on = None

KEY_STATES = ("in_flight", "completed")


def utc_timestamp() -> sa.DateTime:
    """timestamptz on PostgreSQL; microsecond DATETIME on MariaDB (the store writes UTC)."""
    return sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    states = ", ".join(f"'{state}'" for state in KEY_STATES)
    op.create_table(
        "idempotency_keys",
        sa.Column("scope", sa.String(255), nullable=False),
        sa.Column("idempotency_key", sa.String(255), nullable=False),
        sa.Column("fingerprint", sa.String(255), nullable=False),
        sa.Column("claim_token", sa.String(36), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("created_at", utc_timestamp(), nullable=False),
        sa.Column("claimed_at", utc_timestamp(), nullable=False),
        sa.Column("outcome", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("schema_version", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.CheckConstraint(f"state IN ({states})", name=op.f("ck_idempotency_keys_state")),
        sa.PrimaryKeyConstraint("scope", "idempotency_key", name="pk_idempotency_keys"),
        sa.UniqueConstraint("claim_token", name="uq_idempotency_keys_claim_token"),
    )
    op.create_index("ix_idempotency_keys_created_at", "idempotency_keys", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_idempotency_keys_created_at", table_name="idempotency_keys")
    op.drop_table("idempotency_keys")
