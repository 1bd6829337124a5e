"""The SQL backend: a job store on SQLAlchemy 2 for SQLite, PostgreSQL and MariaDB.

The names below load on first use (PEP 562): the areas' own SQL modules
(`backends/<area>/sql.py`) import `jobconform.backends.sql.database`, and an eager import
of the backend here would import them back while they are half loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobconform.backends.lazy_names import load_on_first_use

if TYPE_CHECKING:
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

_HOMES = {
    "DEFAULT_SQL_URL": "backend", "SqlBackend": "backend", "SqlRuntime": "backend",
    "SQL_URL_ENV": "database", "DatabaseUnavailable": "database",
    "DatabaseUrlError": "database", "SqlStoreError": "database",
    "create_store_engine": "database", "migrate": "database",
    "SqlJobStore": "store", "UnknownSchemaVersion": "store",
}

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

__getattr__ = load_on_first_use(__name__, _HOMES)
