"""Schedule executions keep how they ended.

Revision ID: 0035
Revises: 0021
Create Date: 2026-12-07

Spec 0.19.0 (SC-019, seed 002 §10.6; issue 35): the scheduler records how a dispatched
execution ended, succeeded, failed or cancelled, once, on the execution's row. Existing
rows have not ended (null). Batch mode, so that SQLite rebuilds the table to add the
CHECK. Written out in full, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0035"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("schedule_executions") as batch:
        batch.add_column(sa.Column("outcome", sa.String(10), nullable=True))
        batch.create_check_constraint(op.f("ck_schedule_executions_outcome"),
                                      "outcome IN ('succeeded', 'failed', 'cancelled')")


def downgrade() -> None:
    with op.batch_alter_table("schedule_executions") as batch:
        batch.drop_constraint(op.f("ck_schedule_executions_outcome"), type_="check")
        batch.drop_column("outcome")
