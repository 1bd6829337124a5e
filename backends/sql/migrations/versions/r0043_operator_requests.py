"""The operator queue's requests, unique per agent and request id.

Revision ID: 0043
Revises: 0001
Create Date: 2026-12-07

Spec 0.20.0 (RD-008, seed 002 §10.13; issue 35): a job parks a request for a human in the
operator queue. The row's id is minted by the store; the agent's own request id is unique
per agent, so two agents reusing one id hold two rows and a re-park finds the first.
Written out in full, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0043"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "operator_requests",
        sa.Column("seq", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("queue_id", sa.String(36), nullable=False),
        sa.Column("agent", sa.String(255), nullable=False),
        sa.Column("request_id", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_operator_requests")),
        sa.UniqueConstraint("queue_id", name=op.f("uq_operator_requests_queue_id")),
        sa.UniqueConstraint("agent", "request_id",
                            name=op.f("uq_operator_requests_agent_request_id")),
    )


def downgrade() -> None:
    op.drop_table("operator_requests")
