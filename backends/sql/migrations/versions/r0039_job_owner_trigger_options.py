"""Jobs keep their owner, trigger and execution options.

Revision ID: 0039
Revises: 0037
Create Date: 2026-12-07

Spec 0.20.0 (LC-033, LC-035; seed 002 §10.12 and §10.5; issue 35): a submission may name
who the job runs for and what started it, which the executions query filters on, and
execution options the job's body is handed and its record keeps. Existing rows named none
(null). The owners filter reads `owner`, hence its index. After 0037 (the jobs' arguments,
merged first), so the jobs table's revisions stay one line. Written out in full, as every
migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0039"
down_revision = "0037"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("async_jobs", sa.Column("owner", sa.String(255), nullable=True))
    op.add_column("async_jobs", sa.Column("trigger", sa.String(255), nullable=True))
    op.add_column("async_jobs", sa.Column("options", sa.JSON(none_as_null=True),
                                          nullable=True))
    op.create_index(op.f("ix_async_jobs_owner"), "async_jobs", ["owner"])


def downgrade() -> None:
    op.drop_index(op.f("ix_async_jobs_owner"), table_name="async_jobs")
    op.drop_column("async_jobs", "options")
    op.drop_column("async_jobs", "trigger")
    op.drop_column("async_jobs", "owner")
