"""The SQL backend: a job store on SQLAlchemy 2 for SQLite, PostgreSQL and MariaDB.

The names below load on first use (PEP 562): the areas' own SQL modules
(`backends/<area>/sql.py`) import `jobconform.backends.sql.database`, and an eager import
of the backend here would import them back while they are half loaded.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
