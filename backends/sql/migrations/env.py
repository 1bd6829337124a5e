"""Alembic's entry point for the SQL job store's migrations.

The store runs migrations itself (`jobconform.backends.sql.database.migrate`) on a
connection it passes in `config.attributes["connection"]`; there is no alembic.ini.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from jobconform.backends.sql.models import Base

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("the job store's migrations run on a connection passed in"
                       " config.attributes['connection']; see jobconform.backends.sql")
context.configure(connection=connection, target_metadata=Base.metadata)
with context.begin_transaction():
    context.run_migrations()
