"""Admission executions keep their timeout and identity; two new end states.

Revision ID: 0031
Revises: 0004
Create Date: 2026-12-01

Spec 0.7.0 (AD-015 to AD-019): an execution's timeout is fixed on arrival and its
identity captured then, both stored so that queued work drains after a restart as it
arrived; a running execution may end as timed_out (its runtime stopped it) or
lease_expired (an orphan's slot reclaimed). Existing rows take the default timeout, 900 s,
and no identity. Batch mode, so that SQLite rebuilds the table to change its CHECK.
Written out in full, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0031"
down_revision = "0004"
branch_labels = None
depends_on = None

OLD_STATES = ("queued", "running", "budget_exhausted", "cancelled", "expired", "finished")
NEW_STATES = ("queued", "running", "budget_exhausted", "cancelled", "expired", "finished",
              "lease_expired", "timed_out")


def one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


# Revision 0004 named its CHECKs in full under the metadata's naming convention, which
# prefixed them again; the database holds that name. This revision names them as the
# models do (op.f: taken as it is).
OLD_STATE_CHECK = "ck_admission_executions_ck_admission_executions_state"


def upgrade() -> None:
    with op.batch_alter_table("admission_executions") as batch:
        batch.add_column(sa.Column("timeout_seconds", sa.Integer(),
                                   server_default=sa.text("900"), nullable=False))
        batch.add_column(sa.Column("identity", sa.String(255), nullable=True))
        batch.drop_constraint(op.f(OLD_STATE_CHECK), type_="check")
        batch.create_check_constraint(op.f("ck_admission_executions_state"),
                                      one_of("state", NEW_STATES))
        batch.create_check_constraint(op.f("ck_admission_executions_timeout"),
                                      "timeout_seconds BETWEEN 60 AND 7200")


def downgrade() -> None:
    with op.batch_alter_table("admission_executions") as batch:
        batch.drop_constraint(op.f("ck_admission_executions_timeout"), type_="check")
        batch.drop_constraint(op.f("ck_admission_executions_state"), type_="check")
        batch.create_check_constraint(op.f("ck_admission_executions_state"),
                                      one_of("state", OLD_STATES))
        batch.drop_column("identity")
        batch.drop_column("timeout_seconds")
