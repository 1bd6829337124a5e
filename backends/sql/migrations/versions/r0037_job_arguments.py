"""Add the jobs' arguments.

Revision ID: 0037
Revises: 0007
Create Date: 2026-12-07

Spec 0.20.0 (LC-036, seed 000's payload_json; issue 35): a job keeps the arguments it was
submitted with, a JSON value, and reads them back as given. Existing rows were given none
(null). JSON text, as the result column: every value the kit draws round-trips through
it on SQLite, PostgreSQL and MariaDB. Written out in full, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0037"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("async_jobs", sa.Column("arguments", sa.JSON(none_as_null=True),
                                          nullable=True))


def downgrade() -> None:
    op.drop_column("async_jobs", "arguments")
