"""Keep a job's error whole on MySQL and MariaDB.

Revision ID: 0046
Revises: 0043
Create Date: 2026-12-07

Spec 0.21.0 (LC-039, seed 000's error_message Text column; issue 35): a job's error reads
back in full however long its exception's message. A TEXT column holds 65 535 bytes on
MySQL and MariaDB, which refuse a longer error in strict mode (the job's end is lost) and
cut it silently otherwise; LONGTEXT holds 4 GiB. SQLite's and PostgreSQL's TEXT have no
such limit, so the column changes on MySQL and MariaDB only. Written out in full, as every
migration here is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0046"
down_revision = "0043"
branch_labels = None
depends_on = None


def _on_mysql() -> bool:
    return op.get_bind().dialect.name in ("mysql", "mariadb")


def upgrade() -> None:
    if _on_mysql():
        op.alter_column("async_jobs", "error", existing_type=sa.Text(),
                        type_=mysql.LONGTEXT(), existing_nullable=True)


def downgrade() -> None:
    if _on_mysql():
        op.alter_column("async_jobs", "error", existing_type=mysql.LONGTEXT(),
                        type_=sa.Text(), existing_nullable=True)
