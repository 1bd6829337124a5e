"""Reminders keep the idempotency key they were created with.

Revision ID: 0032
Revises: 0006
Create Date: 2026-12-01

Spec 0.8.0 (RM-017, seed 002 §10.14 AC #6): a creation carrying a key that a live reminder
of the agent was created with answers that reminder instead of creating another, so the
key is stored with the reminder and looked up by it. Existing rows have no key. Written
out in full, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0032"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("reminders", sa.Column("idempotency_key", sa.String(255), nullable=True))
    op.create_index("ix_reminders_idempotency_key", "reminders", ["idempotency_key"])


def downgrade() -> None:
    op.drop_index("ix_reminders_idempotency_key", table_name="reminders")
    op.drop_column("reminders", "idempotency_key")
