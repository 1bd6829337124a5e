"""The SQL backend: a job store on SQLAlchemy 2 for SQLite, PostgreSQL and MariaDB."""

from jobconform.backends.sql.backend import DEFAULT_SQL_URL, SqlBackend, SqlRuntime
from jobconform.backends.sql.database import (
    SQL_URL_ENV,
    DatabaseUnavailable,
    DatabaseUrlError,
    SqlStoreError,
    create_store_engine,
    migrate,
)
from jobconform.backends.sql.store import SqlJobStore, UnknownSchemaVersion

__all__ = [
    "DEFAULT_SQL_URL",
    "SQL_URL_ENV",
    "DatabaseUnavailable",
    "DatabaseUrlError",
    "SqlBackend",
    "SqlJobStore",
    "SqlRuntime",
    "SqlStoreError",
    "UnknownSchemaVersion",
    "create_store_engine",
    "migrate",
]
