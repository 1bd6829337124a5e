"""The fleet ceiling's accepted writes are recorded: the value, who, when.

Revision ID: 0036
Revises: 0031
Create Date: 2026-12-07

Spec 0.20.0 (AD-022, seed 002 §10.8.1's audit-logged ceiling route; issue 35): every
accepted write of the fleet ceiling is kept in write order with the admin who made it
and the time, so that who set the ceiling in force can be read back. Earlier writes were
not recorded; the table starts empty. Written out in full, as every migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0036"
down_revision = "0031"
branch_labels = None
depends_on = None


def utc_timestamp() -> sa.DateTime:
    """As revision 0004 writes its instants: microseconds on MariaDB as well."""
    return sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "admission_ceiling_changes",
        sa.Column("seq", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("value", sa.Integer(), nullable=False),
        sa.Column("set_by", sa.String(255), nullable=True),
        sa.Column("set_at", utc_timestamp(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_admission_ceiling_changes"),
    )


def downgrade() -> None:
    op.drop_table("admission_ceiling_changes")
