"""Add the jobs' fencing token.

Revision ID: 0007
Revises: 0001
Create Date: 2026-12-01

Every claim raises a job's fencing token by one; owner writes and rescues are conditioned on
it (RD-006). Existing rows start at 0; their next claim issues 1. Written out in full, as
every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("async_jobs", sa.Column("fencing_token", sa.BigInteger(),
                                          server_default=sa.text("0"), nullable=False))


def downgrade() -> None:
    op.drop_column("async_jobs", "fencing_token")
