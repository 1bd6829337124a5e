"""Reminders created without a key keep the key derived for them.

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-02

Spec 0.9.0 (RM-018, seed 002 §10.14 AC #6): a creation without an idempotency key is
de-duplicated under a key derived from its message and its schedule as given, so that
key is stored with the reminder and looked up by it. It has a column of its own, beside
`idempotency_key`, because a key given and a key derived never answer each other.
Existing rows have none: a retry of a creation made before this migration creates a new
reminder. Written out in full, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("reminders", sa.Column("derived_key", sa.String(64), nullable=True))
    op.create_index("ix_reminders_derived_key", "reminders", ["derived_key"])


def downgrade() -> None:
    op.drop_index("ix_reminders_derived_key", table_name="reminders")
    op.drop_column("reminders", "derived_key")
